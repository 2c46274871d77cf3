"""autojit.distributed.nn: collectives that autograd differentiates, at
torch.distributed.nn's path (`autojit.distributed.nn.functional`)."""

from . import functional  # noqa: F401
