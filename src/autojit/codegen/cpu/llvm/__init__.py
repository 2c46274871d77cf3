"""The CPU backend's LLVM layer: the host's target machine and pass pipeline (host.py), the IR of
one step's expression (expression.py, with complex values in complex.py) that render.py puts in
a kernel's loop nest, and the IR text writer of the table-driven native routines (ir_text.py)."""
