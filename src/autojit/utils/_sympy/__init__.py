"""autojit.utils._sympy: the value-range types of torch.utils._sympy that libraries import with
their export code (transformers' ExecuTorch exporter): `numbers.IntInfinity` and
`value_ranges.ValueRanges`, on plain Python numbers (autojit's symbolic sizes are polynomials of
its own, tensor/symbolic.py, not sympy expressions).
"""
