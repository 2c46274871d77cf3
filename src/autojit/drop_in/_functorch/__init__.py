"""torch._functorch under the drop-in: the private modules behind torch.func and functorch that
programs and tests import names from, on autojit.func. eager_transforms (the transforms and
`_slice_argnums`), make_functional (functorch's module API: make_functional, functional_init,
ensembles), deprecated (functorch's names, with torch's FutureWarning), autograd_function
(CtxWithSavedTensors, reductify_leaf), utils (`enable_single_level_autograd_function`,
`argnums_t`). A module torch has here that is not listed (vmap, pyfunctorch, apis) is missing,
and importing it fails as its absence would.
"""
