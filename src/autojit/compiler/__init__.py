"""autojit.compile from front to back: the decorator and its inspection (api.py), the ordered
compile stages (stages.py), guards and the reachability walk behind them, symbolic sizes and
dynamic shapes, the compiled backward, and the executable a guarded call runs.

The compiler sits above ir/ and below the code generators: the stages hand a scheduled graph to
a backend that registered itself (backends.py), so nothing here imports codegen/ or cuda/.
"""
