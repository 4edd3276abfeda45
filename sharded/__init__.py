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

from . import autograd, dtypes, gradients, kernels, nn, optim
from . import methods as _methods
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .creation import *  # noqa: F403
from .dtypes import (
    DType,
    float16,
    float32,
    float64,
    get_default_dtype,
    int8,
    int16,
    int32,
    int64,
    promote_types,
    set_default_dtype,
    uint8,
)
from .dtypes import (
    bool_ as bool,
)
from .errors import (
    ArgumentError,
    BackendUnavailable,
    DimError,
    DTypeError,
    IndexOutOfRange,
    LayoutMismatch,
    OpFailed,
    SessionClosed,
    ShapeError,
    ShardedError,
    ShardingError,
    ViewError,
    WorkerLost,
)
from .functional import *  # noqa: F403
from .functional import abs, all, any, max, min, pow, sum
from .info import info, stats, synchronize, trace_memory
from .layout import Layout
from .ops import linalg
from .ops.einsum import einsum, tensordot
from .ops.matmul import bmm, dot, inner, matmul, mm, mv, outer, vdot
from .runtime import init, is_initialized, shutdown
from .shape import (
    broadcast_to,
    cat,
    chunk,
    clone,
    flatten,
    flip,
    narrow,
    permute,
    reshape,
    roll,
    select,
    split,
    squeeze,
    stack,
    swapaxes,
    t,
    transpose,
    unbind,
    unsqueeze,
)
from .tensor import ShardedTensor, Size

half, double, short, long = float16, float64, int16, int64
Tensor = ShardedTensor
concatenate = cat

__version__ = "0.1.0"
