"""The files jit.save writes and jit.load reads: autojit's archives of scripted modules and
functions.

An archive is a zip file laid out as torch's TorchScript archives are at the top (a folder
`archive/`, the extra files under `archive/extra/`), holding what autojit can run again:

- `archive/autojit_script`: the format's version, b"1";
- `archive/module.pt`: autojit.save's file (torch.save's format) of a dict
  `{"kind": ..., "object": ...}`: the scripted module's own module (kind "module" or
  "frozen"), the function a ScriptFunction compiles ("function"), or a ScriptModule subclass's
  instance ("script_module"). Modules pickle as torch.save pickles a whole model, so loading
  one imports its classes, and loading runs what the file names: load archives you trust, as
  with `torch.load(weights_only=False)`;
- `archive/extra/<name>`: each of `_extra_files`.

A TorchScript archive (torch's, with its `code/` folder of TorchScript) cannot be run here:
reading one raises NotImplementedError that says so. jit/__init__.py turns the object back
into a scripted one; this module only reads and writes the files.
"""

from __future__ import annotations

import io
import os
import zipfile

from ..interop.serialization import load as load_object
from ..interop.serialization import save as save_object

__all__ = ["read", "write"]

FOLDER = "archive"
MARKER = f"{FOLDER}/autojit_script"
PAYLOAD = f"{FOLDER}/module.pt"
EXTRA = f"{FOLDER}/extra/"
VERSION = b"1"


def write(payload: dict, f, extra_files=None) -> None:
    """Write the archive of `payload` (and `extra_files`, {name: str or bytes}) to f, a path or
    a binary file object."""
    data = io.BytesIO()  # (torch.save's format aligns its records: a stream that can tell)
    save_object(payload, data)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as handle:
            _write_zip(handle, data, extra_files)
    else:
        _write_zip(f, data, extra_files)


def _write_zip(handle, payload: io.BytesIO, extra_files) -> None:
    with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        archive.writestr(MARKER, VERSION)
        archive.writestr(PAYLOAD, payload.getbuffer())  # (a view: the weights once in memory)
        for name, content in (extra_files or {}).items():
            if isinstance(content, str):
                content = content.encode("utf-8")
            archive.writestr(EXTRA + name, bytes(content))


def read(f, map_location=None, extra_files=None) -> dict:
    """The payload of the archive at f (a path or a binary file object); each key of
    `extra_files` gets the bytes the archive holds under it (b"" where it holds none), as
    torch.jit.load fills them."""
    if isinstance(f, (str, os.PathLike)):
        if not os.path.exists(f):
            raise ValueError(f"The provided filename {os.fspath(f)} does not exist")
        if os.path.isdir(f):
            raise ValueError(f"The provided filename {os.fspath(f)} is a directory")
        with open(f, "rb") as handle:
            return read(handle, map_location, extra_files)
    if not (hasattr(f, "seekable") and f.seekable()):
        f = io.BytesIO(f.read())
    if not zipfile.is_zipfile(f):
        raise RuntimeError("jit.load: the file is not a zip archive, so not a file jit.save "
                           "wrote (PytorchStreamReader failed reading zip archive: failed "
                           "finding central directory)")
    with zipfile.ZipFile(f) as archive:
        names = archive.namelist()
        if MARKER not in names:
            if any("/code/" in name or name.endswith("constants.pkl") for name in names):
                raise NotImplementedError(
                    "jit.load: this is a TorchScript archive (torch.jit.save's, with "
                    "TorchScript code), which autojit cannot run: it has no TorchScript. Load "
                    "the model in torch and save its state_dict (torch.save(model.state_dict(), "
                    "f)), then load that into the model's class here.")
            raise RuntimeError("jit.load: the zip archive holds no scripted module (it was "
                               "not written by jit.save)")
        version = archive.read(MARKER)
        if version != VERSION:
            raise RuntimeError(f"jit.load: archive format {version!r} is newer than this "
                               f"autojit reads ({VERSION!r})")
        payload = load_object(io.BytesIO(archive.read(PAYLOAD)), map_location,
                              weights_only=False)
        if extra_files is not None:
            for name in list(extra_files):
                found = EXTRA + name in names
                extra_files[name] = archive.read(EXTRA + name) if found else b""
    return payload
