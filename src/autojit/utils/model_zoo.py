"""autojit.utils.model_zoo: torch.utils.model_zoo, the older home of torch.hub's checkpoint
download (`load_url`) and of its progress bar (`tqdm`), which libraries still import."""

from __future__ import annotations

from ..hub import load_state_dict_from_url as load_url
from ..hub import tqdm

__all__ = ["load_url", "tqdm"]
