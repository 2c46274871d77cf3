"""autojit.fx.experimental.proxy_tensor: the part of torch.fx.experimental.proxy_tensor that
libraries query at run time. autojit traces through its own tracer (compiler/), not through a
proxy tensor dispatch mode, so no such mode is ever active, and make_fx, which traces through
one, is the name only: calling it raises NotImplementedError.
"""

from __future__ import annotations

__all__ = ["get_proxy_mode", "make_fx"]


def get_proxy_mode():
    """The active ProxyTorchDispatchMode: always None, as autojit has none (libraries ask to
    know whether make_fx is tracing them)."""
    return None


def make_fx(f, decomposition_table=None, tracing_mode: str = "real",
            _allow_non_fake_inputs: bool = False, **kwargs):
    """torch's tracer of a function into an fx.GraphModule at the level of aten ops, through
    its dispatcher: autojit has no dispatcher to trace through (autojit.compile and
    autojit.ir's make_graph trace autojit's own graph)."""
    raise NotImplementedError(
        "make_fx is not supported by autojit: it traces torch's dispatcher into aten ops, "
        "which autojit does not have (autojit.compile traces a function into autojit's own "
        "graph)")
