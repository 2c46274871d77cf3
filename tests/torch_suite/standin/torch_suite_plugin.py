"""pytest plugin of the torch suite (`-p torch_suite_plugin`): with TORCH_SUITE_FRAMEWORK=autojit
it installs autojit's drop-in first; under either framework it then enters the stand-in modules
as `torch.testing._internal.*` (and the accelerator package the test files import), before any
test file is imported."""

from __future__ import annotations

import importlib
import os
import sys

if os.environ.get("TORCH_SUITE_FRAMEWORK", "torch") == "autojit":
    import autojit.drop_in

    autojit.drop_in.install()

import torch  # noqa: E402
import torch.testing  # noqa: E402

_STANDIN = "torch_testing_internal"
_MODULES = ("common_utils", "common_device_type", "common_dtype", "common_cuda",
            "common_methods_invocations", "logging_tensor")

package = importlib.import_module(_STANDIN)
sys.modules["torch.testing._internal"] = package
torch.testing._internal = package
for _name in _MODULES:
    module = importlib.import_module(f"{_STANDIN}.{_name}")
    sys.modules[f"torch.testing._internal.{_name}"] = module
    setattr(package, _name, module)
sys.modules.setdefault("common_utils", importlib.import_module("functorch_common_utils"))
importlib.import_module("torch_npu")
# torch_npu registers its device module as torch.npu; here it reports no device
torch.npu = sys.modules["torch_npu"].npu
