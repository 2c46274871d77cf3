"""autojit.hub: torch.hub's downloads of pretrained weights and hub models, on autojit.

- `load_state_dict_from_url(url)` downloads a checkpoint once into `get_dir()/checkpoints`
  (checking the sha256 prefix a file name carries, `resnet18-f37072fd.pth`, with
  check_hash=True) and loads it with autojit.load; `download_url_to_file` is the download;
- `load(repo_or_dir, model, *args, source=...)` runs a hub repository's entrypoint: a directory
  holding `hubconf.py` (source="local"), or a GitHub repository "owner/name[:ref]" downloaded
  as a zip into the hub directory (source="github"), whose `hubconf.py` is imported;
  `list` and `help` name and describe its entrypoints;
- `get_dir()` is `$TORCH_HOME/hub` (by default `$XDG_CACHE_HOME/torch/hub`, so that weights
  torch downloaded are found), changed with `set_dir`.

The files are torch's formats (autojit.load reads torch's checkpoints): a hub model written
against torch runs under the drop-in.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import urllib.parse
import zipfile
from urllib.parse import urlparse  # noqa: F401 - torch.hub has it (timm imports it from there)
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]


class _Progress:
    """tqdm's interface where tqdm is not installed: the progress is written to stderr."""

    def __init__(self, total=None, disable=False, unit=None, *args, **kwargs):
        self.total, self.disable, self.unit, self.n = total, disable, unit, 0

    def update(self, n: int) -> None:
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:0.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):0.1f}%")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs) -> None:
        pass

    def write(self, text: str) -> None:
        sys.stderr.write(f"{text}\n")

    def close(self) -> None:
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if not self.disable:
            sys.stderr.write("\n")


try:  # the progress bar torch.hub gives libraries (torch.utils.model_zoo.tqdm)
    from tqdm import tqdm
except ImportError:
    tqdm = _Progress

# A checkpoint's file name may carry the first digits of its sha256: `name-<digits>.ext`.
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 128 * 1024
_hub_dir: str | None = None


def _get_torch_home() -> str:
    """$TORCH_HOME, or $XDG_CACHE_HOME/torch (by default ~/.cache/torch)."""
    cache = os.getenv("XDG_CACHE_HOME", os.path.join("~", ".cache"))
    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(cache, "torch")))


def get_dir() -> str:
    """Where hub repositories and downloaded checkpoints are kept."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d) -> None:
    """Keep hub repositories and checkpoints in `d` from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None,
                         progress: bool = True) -> None:
    """Download `url` to the file `dst` (through a temporary file beside it, moved in place
    once complete); with `hash_prefix`, its sha256 must start with it."""
    dst = os.path.expanduser(dst)
    request = Request(url, headers={"User-Agent": "autojit.hub"})
    with urlopen(request) as response:  # noqa: S310 - the URL is the caller's choice
        length = response.headers.get("Content-Length")
        total = int(length) if length is not None and length.isdigit() else None
        folder = os.path.dirname(os.path.abspath(dst))
        handle = tempfile.NamedTemporaryFile(delete=False, dir=folder,  # noqa: SIM115
                                             prefix=os.path.basename(dst) + ".partial")
        digest = hashlib.sha256() if hash_prefix is not None else None
        done = 0
        try:
            with handle:
                while chunk := response.read(READ_DATA_CHUNK):
                    handle.write(chunk)
                    done += len(chunk)
                    if digest is not None:
                        digest.update(chunk)
                    if progress and total:
                        sys.stderr.write(f"\r{done * 100 // total:3d}% of {total} bytes")
            if progress and total:
                sys.stderr.write("\n")
            if digest is not None and not digest.hexdigest().startswith(hash_prefix):
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                   f'"{digest.hexdigest()}")')
            shutil.move(handle.name, dst)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(handle.name)


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None,
                             progress: bool = True, check_hash: bool = False,
                             file_name: str | None = None, weights_only: bool = False):
    """The object saved at `url` (a state dict, mostly), downloaded into `model_dir` (by
    default `get_dir()/checkpoints`) the first time and read from there after."""
    from .interop.serialization import load as load_file

    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        found = HASH_REGEX.search(name) if check_hash else None
        download_url_to_file(url, cached, found.group(1) if found else None, progress)
    if zipfile.is_zipfile(cached):
        with zipfile.ZipFile(cached) as archive:
            members = archive.infolist()
            if len(members) == 1 and not members[0].filename.endswith("data.pkl") and \
                    "/" not in members[0].filename.rstrip("/"):
                # torch's legacy format: a zip holding one checkpoint file.
                archive.extractall(model_dir)
                cached = os.path.join(model_dir, members[0].filename)
    return load_file(cached, map_location=map_location, weights_only=weights_only)


# ---- hub repositories -------------------------------------------------------------------------

def _parse_repo(github: str) -> tuple:
    owner_name, _, ref = github.partition(":")
    if "/" not in owner_name:
        raise ValueError(f'Invalid input: repo_or_dir should be of format "repo_owner/repo_name[:'
                         f'ref]" with ref being optional, but got {github}')
    owner, name = owner_name.split("/", 1)
    return owner, name, ref or None


def _github_dir(github: str, force_reload: bool, verbose: bool) -> str:
    """The directory of a GitHub repository's snapshot in the hub directory, downloaded (as
    the zip GitHub serves for a branch, tag or commit) if missing or `force_reload`."""
    owner, name, ref = _parse_repo(github)
    ref = ref or "main"
    hub = get_dir()
    os.makedirs(hub, exist_ok=True)
    folder = os.path.join(hub, "_".join((owner, name, ref.replace("/", "_"))))
    if os.path.exists(folder) and not force_reload:
        if verbose:
            sys.stderr.write(f"Using cache found in {folder}\n")
        return folder
    archive = os.path.join(hub, f"{ref.replace('/', '_')}.zip")
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    sys.stderr.write(f'Downloading: "{url}" to {archive}\n')
    download_url_to_file(url, archive, progress=False)
    with zipfile.ZipFile(archive) as zipped:
        top = zipped.infolist()[0].filename.split("/")[0]
        extracted = os.path.join(hub, top)
        shutil.rmtree(extracted, ignore_errors=True)
        zipped.extractall(hub)
    os.remove(archive)
    shutil.rmtree(folder, ignore_errors=True)
    shutil.move(extracted, folder)
    return folder


def _hubconf(repo_or_dir: str, source: str, force_reload: bool, verbose: bool):
    """The hubconf module of a repository, imported with its directory on sys.path, after
    checking that its `dependencies` are importable."""
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    folder = repo_or_dir if source == "local" else _github_dir(repo_or_dir, force_reload,
                                                                  verbose)
    path = os.path.join(folder, MODULE_HUBCONF)
    if not os.path.exists(path):
        raise FileNotFoundError(f"Cannot find {MODULE_HUBCONF} in {folder}")
    sys.path.insert(0, folder)
    try:
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(folder)
    missing = [name for name in getattr(module, VAR_DEPENDENCY, [])
               if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entrypoint(module, model: str):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    function = getattr(module, model, None)
    if function is None or not callable(function):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return function


def list(github: str, force_reload: bool = False, skip_validation: bool = False,  # noqa: A001
         trust_repo=None, verbose: bool = True) -> list:
    """The names of the entrypoints a hub repository's hubconf.py defines."""
    module = _hubconf(github, "github", force_reload, verbose)
    return [name for name in dir(module)
            if callable(getattr(module, name)) and not name.startswith("_")]


def help(github: str, model: str, force_reload: bool = False,  # noqa: A001
         skip_validation: bool = False, trust_repo=None) -> str:
    """The docstring of a hub repository's entrypoint `model`."""
    return _entrypoint(_hubconf(github, "github", force_reload, True), model).__doc__


def load(repo_or_dir: str, model: str, *args, source: str = "github", trust_repo=None,
         force_reload: bool = False, verbose: bool = True, skip_validation: bool = False,
         **kwargs):
    """`model(*args, **kwargs)` from a hub repository's hubconf.py: a GitHub repository
    "owner/name[:ref]" (source="github") or a local directory (source="local")."""
    module = _hubconf(repo_or_dir, source.lower(), force_reload, verbose)
    return _entrypoint(module, model)(*args, **kwargs)
