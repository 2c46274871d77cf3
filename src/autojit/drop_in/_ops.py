"""torch._ops under the drop-in: HigherOrderOperator, the base class of torch's Python
operators whose behaviour under each transform and dispatch key is registered with
`py_impl`. A subclass can be defined and instantiated and its rules registered (test files and
libraries do so at import), but calling one raises NotImplementedError: torch dispatches it
through functorch's interpreter stack and its dispatcher, which autojit does not have.
"""

from __future__ import annotations


class HigherOrderOperator:
    """An operator written in Python, its rules registered per transform or dispatch key;
    calling it raises NotImplementedError under autojit."""

    def __init__(self, name: str, *, cacheable: bool = False):
        self._name = name
        self.__name__ = name
        self.cacheable = cacheable
        self.py_kernels: dict = {}

    def name(self) -> str:
        return self._name

    def py_impl(self, key):
        """A decorator that registers its function as this operator's rule for `key` (a
        TransformType, DispatchKey or mode class) and returns the function."""

        def register(fn):
            if key in self.py_kernels:
                raise RuntimeError(f"Trying to override a python impl for {key} on operator "
                                   f"{self._name}")
            self.py_kernels[key] = fn
            return fn

        return register

    def __call__(self, *args, **kwargs):
        raise NotImplementedError(
            f"HigherOrderOperator {self._name!r} cannot be called under autojit: torch runs it "
            "through functorch's interpreter stack and its dispatcher, which autojit does not "
            "have (write the operation as a function of autojit ops, or an autograd.Function)")

    def __str__(self) -> str:
        return self._name


__all__ = ["HigherOrderOperator"]
