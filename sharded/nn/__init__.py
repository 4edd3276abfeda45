"""Neural-network building blocks: Parameter, Module, layers and losses.

Data parallelism is the default pattern: layers create their parameters *replicated* on every
worker, inputs are row-sharded, so the forward pass is local on every shard, and backward
all-reduces each parameter's gradient across the workers (see ``sharded.autograd``).
"""

from . import activations, conv, functional, init, loss, utils
from .activations import *  # noqa: F403
from .containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import *  # noqa: F403
from .layers import (
    GELU,
    BatchNorm1d,
    BatchNorm2d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    LogSoftmax,
    SiLU,
    Softmax,
)
from .loss import *  # noqa: F403
from .modules import Linear, Module, Parameter, ReLU, Sigmoid, Tanh

__all__ = [
    "functional",
    "init",
    "utils",
    "Parameter",
    "Module",
    "Linear",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "Identity",
    "Flatten",
    "Dropout",
    "LayerNorm",
    "BatchNorm1d",
    "BatchNorm2d",
    *conv.__all__,
    "Embedding",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "GELU",
    "SiLU",
    "Softmax",
    "LogSoftmax",
    *loss.__all__,
    *activations.__all__,
]
