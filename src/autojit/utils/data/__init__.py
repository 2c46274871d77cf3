"""autojit.utils.data: datasets, samplers and the DataLoader, at torch.utils.data's module paths.

The loader and its iterators live in dataloader.py; the rest of the package is split as torch's
is, so that `from autojit.utils.data.dataloader import DataLoader` works where the torch code
reads `from torch.utils.data.dataloader import DataLoader`.
"""

from .dataloader import *  # noqa: F403
from .dataloader import __all__  # noqa: F401
