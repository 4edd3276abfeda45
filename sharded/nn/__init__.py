"""Neural-network building blocks: Parameter, Module, layers and losses.

Data parallelism is the default pattern: layers create their parameters *replicated* on every
worker, inputs are row-sharded, so the forward pass is local on every shard, and backward
all-reduces each parameter's gradient across the workers (see ``sharded.autograd``).
"""

from . import functional
from .modules import (
    CrossEntropyLoss,
    Linear,
    Module,
    MSELoss,
    Parameter,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
)

__all__ = [
    "functional",
    "Parameter",
    "Module",
    "Linear",
    "Sequential",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "MSELoss",
    "CrossEntropyLoss",
]
