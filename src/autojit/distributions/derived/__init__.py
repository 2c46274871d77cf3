"""autojit.distributions.derived: the distributions made from another distribution. By a
transform: TransformedDistribution and its families (LogNormal, LogisticNormal, Pareto,
Weibull, Gumbel, Kumaraswamy, InverseGamma, RelaxedBernoulli, RelaxedOneHotCategorical, and
through folded.py's fold at zero HalfNormal and HalfCauchy); by reading batch dims as event dims
(Independent); by mixing (MixtureSameFamily). One module per distribution at torch's module
name.

They sit on top of the other groups: each takes its base from continuous/ or discrete/ and its
maps from transforms.py. Each module is also reachable at torch's path,
`autojit.distributions.log_normal` (the package's __init__ enters it there).
"""
