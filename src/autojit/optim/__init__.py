"""autojit.optim: optimizers and learning-rate schedulers, with torch.optim's names.

optimizer.py holds the base class (parameter groups, state, state dicts); each optimizer has its
module (sgd.py, adam.py, adamw.py, rmsprop.py, adagrad.py, nadam.py, radam.py, adamax.py,
adadelta.py, asgd.py, rprop.py, sparse_adam.py, lbfgs.py, adafactor.py, muon.py),
lr_scheduler.py the schedulers, and
swa_utils.py stochastic weight averaging (AveragedModel, update_bn, SWALR).
Updates are autojit ops under no_grad, so a compiled training step captures them.
"""

from . import lr_scheduler, swa_utils
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .muon import Muon
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "NAdam", "RAdam",
           "Adamax", "Adadelta", "ASGD", "Rprop", "SparseAdam", "LBFGS", "Adafactor", "Muon",
           "lr_scheduler", "swa_utils"]
