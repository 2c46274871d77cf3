"""autojit.optim: optimizers and learning-rate schedulers, with torch.optim's names.

optimizer.py holds the base class (parameter groups, state, state dicts); each optimizer has its
module (sgd.py, adam.py, adamw.py, rmsprop.py, adagrad.py), and lr_scheduler.py the schedulers.
Updates are autojit ops under no_grad, so a compiled training step captures them.
"""

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
