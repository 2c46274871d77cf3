"""The linear algebra functions torch removed in 1.9 and still keeps as names that raise:
`torch.lstsq`, `symeig`, `eig`, `solve` and `matrix_rank` (and the Tensor methods of the first
four), each raising torch's RuntimeError with the replacement it names. Old code and its
tutorials still call them: the message, not an AttributeError, is what tells the user what to
write instead. tensor_names.py puts the methods on Tensor; functional.py exports the functions.
"""

from __future__ import annotations

_REMOVED = "This function was deprecated since version 1.9 and is now removed."

_MESSAGES = {
    "lstsq": (
        f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition "
        "in the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\n"
        "The returned solution in `torch.lstsq` stored the residuals of the solution in the "
        "last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the "
        "residuals are in the field 'residuals' of the returned named tuple.\n\n"
        "The unpacking of the solution, as in\n"
        "X, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\n"
        "X = torch.linalg.lstsq(A, B).solution"),
    "symeig": (
        f"{_REMOVED} The default behavior has changed from using the upper triangular portion "
        "of the matrix by default to using the lower triangular portion.\n\n"
        "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\n"
        "and\n\n"
        "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')"),
    "eig": (
        f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\n"
        "L, _ = torch.eig(A) should be replaced with:\n"
        "L_complex = torch.linalg.eigvals(A)\n\n"
        "and\n\n"
        "L, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)"),
    "solve": (
        f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the LU "
        "factorization.\n\n"
        "To get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` "
        "or `torch.lu_unpack`.\n"
        "X = torch.solve(B, A).solution should be replaced with:\n"
        "X = torch.linalg.solve(A, B)"),
    "matrix_rank": (
        f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
        "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'."),
}


def _removed(name: str):
    message = _MESSAGES[name]

    def function(*args, **kwargs):
        raise RuntimeError(message)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"Removed from torch in 1.9: raises, naming what replaces it.\n\n{message}"
    return function


lstsq, symeig, eig, solve, matrix_rank = (_removed(name) for name in _MESSAGES)
# Tensor keeps the first four as methods, as torch's does.
METHODS = {"lstsq": lstsq, "symeig": symeig, "eig": eig, "solve": solve}
