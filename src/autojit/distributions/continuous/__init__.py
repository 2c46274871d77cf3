"""autojit.distributions.continuous: the univariate continuous distributions given by their own
density (Normal, Uniform, Exponential, Gamma, Chi2, Beta, Cauchy, Laplace, StudentT,
FisherSnedecor, GeneralizedPareto, VonMises, ContinuousBernoulli), one module per distribution
at torch's module name.

They build on the shared base classes and helpers of autojit.distributions (distribution.py,
exp_family.py, utils.py, constraints.py); derived/ transforms several of them into others, and
kl.py registers their divergences. Each module is also reachable at torch's path,
`autojit.distributions.normal` (the package's __init__ enters it there).
"""
