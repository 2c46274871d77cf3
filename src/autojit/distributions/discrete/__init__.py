"""autojit.distributions.discrete: the distributions over counts and categories (Bernoulli,
Binomial, Categorical, Geometric, NegativeBinomial, Poisson, Multinomial, OneHotCategorical),
one module per distribution at torch's module name, and counted_trials.py, the part Binomial and
NegativeBinomial share.

They build on the shared base classes and helpers of autojit.distributions (distribution.py,
exp_family.py, utils.py, constraints.py); derived/'s relaxed distributions and
MixtureSameFamily build on Bernoulli and Categorical. Each module is also reachable at torch's
path, `autojit.distributions.bernoulli` (the package's __init__ enters it there).
"""
