"""autojit.fx.experimental.proxy_tensor: the part of torch.fx.experimental.proxy_tensor that
libraries query at run time. autojit traces through its own tracer (compiler/), not through a
proxy tensor dispatch mode, so no such mode is ever active.
"""

from __future__ import annotations

__all__ = ["get_proxy_mode"]


def get_proxy_mode():
    """The active ProxyTorchDispatchMode: always None, as autojit has none (libraries ask to
    know whether make_fx is tracing them)."""
    return None
