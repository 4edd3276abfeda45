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

from . import array_api, autograd, cuda, dtypes, fft, nn, optim, special, storage
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
from .dtypes import (
    DType as dtype,  # torch.dtype: isinstance(x.dtype, st.dtype)
)
from .dtypes import (
    bool_ as bool,
)
from .dtypes import (
    result_type_of as result_type,
)
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
from .functional import *  # noqa: F403
from .functional_inplace import *  # noqa: F403
from .functional_misc import *  # noqa: F403
from .functional_stats import *  # noqa: F403
from .info import info, stats, synchronize, trace_memory
from .io import load, save
from .jit import jit
from .layout import Layout
from .nn.activation_fns import (  # torch's top-level activations
    celu,
    celu_,
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
from .ops import linalg, random
from .ops.arithmetic import *  # noqa: F403
from .ops.binary_math import *  # noqa: F403
from .ops.complex_ import *  # noqa: F403
from .ops.conv import conv1d, conv2d  # torch.conv1d/conv2d
from .ops.count import *  # noqa: F403
from .ops.creation import *  # noqa: F403
from .ops.diff import *  # noqa: F403
from .ops.einsum import *  # noqa: F403
from .ops.exp_log import *  # noqa: F403
from .ops.index_ops import *  # noqa: F403
from .ops.index_put import *  # noqa: F403
from .ops.joining import *  # noqa: F403
from .ops.linalg.derived import tensor_norm as norm  # torch.norm, also Tensor.norm
from .ops.linalg.extra import *  # noqa: F403  (torch.det, torch.inverse, ...)
from .ops.linalg.lu_family import lu_unpack  # torch.lu_unpack
from .ops.logical import *  # noqa: F403
from .ops.matmul import *  # noqa: F403
from .ops.order import *  # noqa: F403
from .ops.pool import adaptive_avg_pool1d, avg_pool1d, max_pool1d, max_pool2d  # torch.*
from .ops.random import *  # noqa: F403
from .ops.reduce import *  # noqa: F403
from .ops.reshape import *  # noqa: F403
from .ops.rounding import *  # noqa: F403
from .ops.sampling import *  # noqa: F403
from .ops.scan import *  # noqa: F403
from .ops.scatter import *  # noqa: F403
from .ops.scatter_extra import *  # noqa: F403
from .ops.search import *  # noqa: F403
from .ops.selection import *  # noqa: F403
from .ops.sets import *  # noqa: F403
from .ops.sort import *  # noqa: F403
from .ops.special import *  # noqa: F403
from .ops.splitting import *  # noqa: F403
from .ops.tile import *  # noqa: F403
from .ops.triangular import *  # noqa: F403
from .ops.trig import *  # noqa: F403
from .ops.unary import *  # noqa: F403
from .ops.views import *  # noqa: F403
from .runtime import init, is_initialized, shutdown
from .service import get, list_published, publish, published_entries, unpublish
from .tensor import ShardedTensor, Size, is_tensor, numel

half, double, short, long = float16, float64, int16, int64
cfloat, cdouble = complex64, complex128
float, int = float32, int32  # torch's aliases (the names shadow the builtins here, as in torch)
Tensor = ShardedTensor

__version__ = "0.1.0"
