"""autojit.distributions.multivariate: the distributions over vectors and matrices with a
covariance or correlation structure (MultivariateNormal, LowRankMultivariateNormal, Dirichlet,
Wishart, LKJCholesky), one module per distribution at torch's module name.

They build on the shared base classes and helpers of autojit.distributions and on the linear
algebra of the ops layer (Cholesky factors, triangular solves). Each module is also reachable at
torch's path, `autojit.distributions.multivariate_normal` (the package's __init__ enters it
there).
"""
