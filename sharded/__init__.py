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

from . import dtypes
from .dtypes import (
    DType,
    bool_ as bool,  # noqa: A004 - torch's name
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
from .errors import (
    ArgumentError,
    BackendUnavailable,
    DimError,
    DTypeError,
    LayoutMismatch,
    OpFailed,
    SessionClosed,
    ShapeError,
    ShardedError,
    ShardingError,
    WorkerLost,
)
from .layout import Layout
from .runtime import init, is_initialized, shutdown
from .tensor import ShardedTensor, Size
from . import methods as _methods  # noqa: F401,E402 - binds operators onto ShardedTensor
from .creation import *  # noqa: F401,F403,E402
from .functional import *  # noqa: F401,F403,E402
from .functional import abs, all, any, max, min, pow, sum  # noqa: A004,E402
from .info import info, stats, synchronize  # noqa: E402

half, double, short, long = float16, float64, int16, int64
Tensor = ShardedTensor

__version__ = "0.1.0"
