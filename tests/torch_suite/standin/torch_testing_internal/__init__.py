"""A stand-in for torch's `torch.testing._internal`, written on torch's public API, so that torch's
own autograd test files run the same way under torch and under autojit's drop-in.

tests/torch_suite/run.py enters these modules into `sys.modules` under torch's names before a test
file is imported; nothing here reaches into either framework's internals.
"""
