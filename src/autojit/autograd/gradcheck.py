"""gradcheck and gradgradcheck (placeholder; see the full implementation)."""


class GradcheckError(RuntimeError):
    pass


def gradcheck(*args, **kwargs):
    raise NotImplementedError


def gradgradcheck(*args, **kwargs):
    raise NotImplementedError
