"""autojit.fx.experimental: torch.fx.experimental's modules that libraries import:
symbolic_shapes (guards on autojit's symbolic sizes) and proxy_tensor (the proxy tensor mode
autojit does not have)."""
