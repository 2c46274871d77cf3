"""The primitives of nn.functional: the ops that torch defines with backward formulas of their
own, each one primitive where a composite would be several (activations.py,
hard_activations.py, rectifiers.py, threshold.py, softmax.py, normalization.py, batch_norm.py,
linear.py, convolution.py, pooling.py and the window reads convolution and pooling share
(windows.py), rnn_cells.py, loss.py and nll_loss.py).

Part of the ops layer, on its registry (ops/registry.py); autojit.nn.functional (nn/functional/)
checks the arguments and binds these, and codegen installs the native routines some of them run
eagerly (convolution, batch norm, gelu).
"""
