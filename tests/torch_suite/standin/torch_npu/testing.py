"""Nothing: the accelerator's testing helpers."""
