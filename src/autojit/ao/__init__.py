"""autojit.ao: torch.ao's namespace, where torch keeps its quantization. autojit quantizes
nothing; ao.quantization holds the two modules float models are written with (QuantStub,
DeQuantStub), which libraries import with their model definitions (torchvision)."""

from . import quantization  # noqa: E402, F401
