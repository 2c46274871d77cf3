"""autojit.fx.passes.infra: the base of fx passes (pass_base.py: PassBase, PassResult)."""
