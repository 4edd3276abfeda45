"""sharded: a PyTorch-style tensor whose storage is split across Ray worker actors.

Examples
--------
>>> import sharded as st
>>> st.init(executor="local", num_workers=2)  # doctest: +ELLIPSIS
Session(...)
>>> x = st.arange(6, dtype=st.float64, shards=2)
>>> (x * 2 + 1).sum().item()
36.0
"""

from . import ops  # noqa: I001  (first: see the comment in sharded/ops/__init__.py)
from . import amp, array_api, autograd, cuda, dtypes, fft, linalg, masked, nn, optim, signal
from . import special
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from . import storage
from .autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .devices import device, get_default_device
from .display import set_printoptions
from .dtypes import (
    DType,
    can_cast,
    complex64,
    complex128,
    finfo,
    bfloat16,
    float16,
    float32,
    float64,
    get_default_dtype,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
)
from .dtypes import DType as dtype
from .dtypes import bool_ as bool
from .dtypes import result_type_of as result_type
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    BackendUnavailable,
    CheckpointError,
    DimError,
    DivisionByZero,
    DTypeError,
    EmptyReduction,
    IndexDTypeError,
    IndexOutOfRange,
    LayoutMismatch,
    OpFailed,
    OutOfMemory,
    PlacementFailed,
    PublishedNotFound,
    PublishedReadOnly,
    SessionClosed,
    ShapeError,
    ShardedError,
    ShardingError,
    StateDictError,
    TraceError,
    UnsupportedArgument,
    UnsupportedDType,
    ValueOverflow,
    ViewError,
    WaitTimeout,
    WorkerLost,
)
from .info import info, stats, synchronize, trace_memory
from .io import load, save
from .jit.api import jit
from .layout import Layout
from .nn.functional import (
    celu,
    celu_,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    hardshrink,
    prelu,
    rrelu,
    rrelu_,
    selu,
    selu_,
    threshold,
    threshold_,
)
from .nn.functional import torch_dropout as dropout
from .nn.functional import torch_dropout_ as dropout_
from .nn._nn_extra import channel_shuffle, constant_pad_nd, pdist
from .nn._nn_extra import torch_alpha_dropout as alpha_dropout
from .nn._nn_extra import torch_feature_alpha_dropout as feature_alpha_dropout
from .nn._sampling import affine_grid_generator, grid_sampler, grid_sampler_2d, grid_sampler_3d
from .ops import *  # noqa: F403  (every family's top-level functions)
from .ops import random
from .runtime import init, is_initialized, shutdown
from .service import get, list_published, publish, published_entries, unpublish
from .tensor import ShardedTensor, Size, is_tensor, numel

half, double, short, long = float16, float64, int16, int64
cfloat, cdouble = complex64, complex128
float, int = float32, int32  # torch's aliases (the names shadow the builtins here, as in torch)
Tensor = ShardedTensor

__version__ = "0.1.0"
