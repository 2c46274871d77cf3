"""autojit.fx.passes: graph passes over fx GraphModules (torch.fx.passes): shape_prop
(ShapeProp, which records each node's tensor metadata) and infra.pass_base (PassBase,
PassResult)."""
