"""autojit.backends.quantized: torch's quantized engine setting. autojit has no quantized
kernels (torch.ao.quantization's QuantStub and DeQuantStub only), so `supported_engines` is
["none"] and `engine` is "none"; setting another engine raises torch's error for an engine it
was not built with. Programs read these to skip their quantized paths (torchvision's model
tests check `"fbgemm" in supported_engines`)."""

from __future__ import annotations

import sys
import types


class _QuantizedEngine(types.ModuleType):
    """The module, whose `engine` is a property, as torch's is."""

    supported_engines = ["none"]

    @property
    def engine(self) -> str:
        return "none"

    @engine.setter
    def engine(self, name: str) -> None:
        if name != "none":
            raise RuntimeError(f"quantized engine {str(name).upper()} is not supported")


sys.modules[__name__].__class__ = _QuantizedEngine
