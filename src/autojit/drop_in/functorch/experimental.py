"""functorch.experimental under the drop-in: functionalize and replace_all_batch_norm_modules_
(autojit.func's).
"""

from __future__ import annotations

from ...func import functionalize, replace_all_batch_norm_modules_

__all__ = ["functionalize", "replace_all_batch_norm_modules_"]
