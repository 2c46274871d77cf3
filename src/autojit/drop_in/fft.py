"""torch.fft under the drop-in: its function names, so that libraries which import them (for
an autocorrelation or a convolution) import; autojit has no complex tensors, so calling one
raises NotImplementedError naming it.
"""

from __future__ import annotations

_NAMES = ("fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
          "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
          "rfftfreq", "fftshift", "ifftshift")


def _missing(name: str):
    def function(*args, **kwargs):
        raise NotImplementedError(f"torch.fft.{name} is missing from autojit: autojit has no "
                                  "complex tensors, so it has no Fourier transforms")

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"torch.fft.{name}: raises NotImplementedError (no complex tensors)."
    return function


globals().update({name: _missing(name) for name in _NAMES})
__all__ = list(_NAMES)
