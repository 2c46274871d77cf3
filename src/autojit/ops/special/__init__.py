"""The special functions of the ops layer: the primitives run through their NumPy impls
(functions.py, with the impls NumPy lacks in numpy_impls.py), torch.special's functions that
SciPy computes (scipy_impls.py), the orthogonal polynomials (polynomials.py), and gcd, lcm and
the incomplete gamma functions (number_functions.py).

On the ops registry (ops/registry.py); autojit.special (special.py) names them as torch.special
does, and compiled code calls their impls as externs.
"""
