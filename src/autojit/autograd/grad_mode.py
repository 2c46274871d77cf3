"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode.

Each works as a context manager and as a decorator (of a generator function too: each step of
the generator runs in the mode); set_grad_enabled also acts when called as a plain function.
The flag lives in the thread-local state (tensor/state.py), so modes are per thread.
"""

from __future__ import annotations

import functools
import inspect
import warnings

from ..tensor.state import state


def is_grad_enabled() -> bool:
    return state.grad_enabled


def is_inference_mode_enabled() -> bool:
    return state.inference


class _GradModeContext:
    """Base: a context manager that also decorates functions (a fresh context per call)."""

    def _fresh(self):
        return type(self)()

    def clone(self):
        """A new mode object like this one (torch's clone)."""
        return self._fresh()

    def __call__(self, function):
        if inspect.isclass(function):
            # torch still takes a class (its construction runs in the mode), warning
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. You "
                "should only decorate functions or methods. To preserve the current behavior of "
                "class decoration, you can directly decorate the `__init__` method and nothing "
                "else.", FutureWarning, stacklevel=2)
            cls = function

            def function(*args, **kwargs):
                return cls(*args, **kwargs)
        if inspect.isgeneratorfunction(function):
            return self._wrap_generator(function)

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with self._fresh():
                return function(*args, **kwargs)

        return wrapper

    def _wrap_generator(self, function):
        """A generator function decorated: as in torch, each step of the generator runs in the
        mode, and the code that iterates it in its own."""
        @functools.wraps(function)
        def generator(*args, **kwargs):
            with self._fresh():
                inner = function(*args, **kwargs)
            try:
                with self._fresh():
                    response = inner.send(None)
                while True:
                    try:
                        request = yield response
                    except GeneratorExit:
                        with self._fresh():
                            inner.close()
                        raise
                    except BaseException as error:
                        with self._fresh():
                            response = inner.throw(error)
                    else:
                        with self._fresh():
                            response = inner.send(request)
            except StopIteration as stop:
                return stop.value

        return generator


class _NoParameterContext(_GradModeContext):
    """A mode without parameters, which also decorates used bare: `@no_grad` as well as
    `@no_grad()` (torch's `no_grad(orig_func=None)`)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        if not callable(orig_func):
            raise TypeError(f"{cls.__name__}() takes a function to decorate or nothing, not "
                            f"{type(orig_func).__name__}")
        return cls()(orig_func)

    def __init__(self, orig_func=None):
        pass


class no_grad(_NoParameterContext):  # noqa: N801 - torch's name
    """Disable gradient recording: results of ops do not require grad.

    Works as a context manager and as a decorator:

    >>> import autojit
    >>> x = autojit.tensor([1.0, 2.0], requires_grad=True)
    >>> with autojit.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    >>> @autojit.no_grad()
    ... def double(t):
    ...     return t * 2
    >>> double(x).requires_grad
    False
    >>> @autojit.no_grad  # bare, too
    ... def triple(t):
    ...     return t * 3
    >>> triple(x).requires_grad
    False
    """

    def __enter__(self):
        self._previous = state.grad_enabled
        state.grad_enabled = False
        return None

    def __exit__(self, *exc):
        state.grad_enabled = self._previous
        return False


class enable_grad(_NoParameterContext):  # noqa: N801
    """Enable gradient recording, also inside no_grad.

    >>> import autojit
    >>> x = autojit.tensor([1.0, 2.0], requires_grad=True)
    >>> with autojit.no_grad():
    ...     with autojit.enable_grad():
    ...         y = x * 2
    >>> y.requires_grad
    True
    """

    def __enter__(self):
        self._previous = state.grad_enabled
        state.grad_enabled = True
        return None

    def __exit__(self, *exc):
        state.grad_enabled = self._previous
        return False


class set_grad_enabled(_GradModeContext):  # noqa: N801
    """Set grad mode to `mode`: at once when called, restored on leaving a with-block.

    >>> import autojit
    >>> x = autojit.tensor([1.0, 2.0], requires_grad=True)
    >>> with autojit.set_grad_enabled(False):
    ...     y = x * 2
    >>> y.requires_grad, autojit.is_grad_enabled()
    (False, True)
    >>> _ = autojit.set_grad_enabled(False)
    >>> autojit.is_grad_enabled()
    False
    >>> _ = autojit.set_grad_enabled(True)
    """

    def __init__(self, mode: bool):
        if mode.__class__ is not bool:
            raise TypeError(f"set_grad_enabled(): argument 'enabled' (position 1) must be "
                            f"bool, not {type(mode).__name__}")
        self._previous = state.grad_enabled
        self.mode = mode
        state.grad_enabled = self.mode

    def _fresh(self):
        return set_grad_enabled(self.mode)

    def __call__(self, function):
        state.grad_enabled = self._previous  # used as a decorator: do not change the mode now
        return super().__call__(function)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        state.grad_enabled = self._previous
        return False


class inference_mode(_GradModeContext):  # noqa: N801
    """no_grad that also marks the tensors it creates as inference tensors.

    >>> import autojit
    >>> x = autojit.tensor([1.0, 2.0], requires_grad=True)
    >>> with autojit.inference_mode():
    ...     y = x * 2
    >>> y.requires_grad, y.is_inference()
    (False, True)
    """

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # used bare as a decorator: `@inference_mode`

    def __init__(self, mode: bool = True):
        self.mode = bool(mode)

    def _fresh(self):
        return inference_mode(self.mode)

    def __call__(self, function=None):
        if function is None or isinstance(function, bool):
            return inference_mode(self.mode if function is None else function)
        return super().__call__(function)

    def __enter__(self):
        # As torch's InferenceMode guard: inference_mode(False) turns inference off and grad
        # mode on, also inside an inference_mode() block.
        self._previous = (state.grad_enabled, state.inference)
        state.grad_enabled = not self.mode
        state.inference = self.mode
        return None

    def __exit__(self, *exc):
        state.grad_enabled, state.inference = self._previous
        return False


class set_multithreading_enabled(_GradModeContext):  # noqa: N801 - torch's name
    """Whether backward may run on the autograd engine's device threads; a context manager,
    or a setting when called alone, as torch's.

    Accepted and remembered (`is_multithreading_enabled`); it changes nothing, since autojit's
    engine always runs backward on the calling thread, as torch's does for CPU tensors.
    """

    def __init__(self, mode: bool) -> None:
        global _multithreading
        self._previous, self.mode = _multithreading, bool(mode)
        _multithreading = self.mode

    def _fresh(self):
        return set_multithreading_enabled(self.mode)

    def __call__(self, function):
        global _multithreading
        _multithreading = self._previous  # used as a decorator: do not change the mode now
        return super().__call__(function)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        global _multithreading
        _multithreading = self._previous
        return False


_multithreading = True


def is_multithreading_enabled() -> bool:
    """What set_multithreading_enabled last set (True at first)."""
    return _multithreading
