"""The Array API standard (2024.12) namespace of sharded: ``x.__array_namespace__()``.

The functions take and return :class:`~sharded.tensor.ShardedTensor` (no wrapper class); where
the standard's answer differs from torch's (promotion of 0-d arrays, ``axis=()``, ``sum`` of
ints, ``unique_*``, ``squeeze`` of a non-1 dim...), this namespace follows the standard and
``sharded``'s own functions keep torch's. ``linalg`` is the extension of the same name.

Examples
--------
>>> import sharded as st
>>> x = st.arange(6, shards=2)
>>> xp = x.__array_namespace__()
>>> xp.sum(xp.reshape(x, (2, 3)), axis=1).tolist()
[3, 12]
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ..core.registry import bind
from ..errors import ArgumentError
from . import fft, linalg
from ._creation import *  # noqa: F403
from ._creation import __all__ as _creation_all
from ._dtypes import (
    astype,
    bool,
    can_cast,
    complex64,
    complex128,
    finfo,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    result_type,
    uint8,
)
from ._elementwise import *  # noqa: F403
from ._elementwise import __all__ as _elementwise_all
from ._info import __array_namespace_info__
from ._manip import *  # noqa: F403
from ._manip import __all__ as _manip_all
from ._stats import *  # noqa: F403
from ._stats import __all__ as _stats_all

__array_api_version__ = "2024.12"

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan
newaxis = None

if complex64 is None:  # sharded has no complex dtypes yet: do not advertise the names
    del complex64, complex128

_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


@bind("__array_namespace__")
def __array_namespace__(self, /, *, api_version=None):
    """This namespace (``api_version`` may name any version up to 2024.12).

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2).__array_namespace__().__name__
    'sharded.array_api'
    """
    if api_version is not None and api_version not in _VERSIONS:
        raise ArgumentError(f"api_version {api_version!r} is not supported; one of {_VERSIONS}")
    return _THIS


@bind("to_device")
def to_device(self, device, /, *, stream=None):
    """The array moved to ``device`` (the same array if it is there already).

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(2).to_device("cpu").device
    device(type='cpu')
    """
    if stream is not None:
        raise ArgumentError(f"stream={stream!r}: sharded has no streams to order the copy on")
    return self if device == self.device else self.to(device)


@bind("__complex__")
def __complex__(self, /):
    """The value of a one-element array as a Python complex.

    Examples
    --------
    >>> import sharded as st
    >>> complex(st.tensor([2.0]))
    (2+0j)
    """
    return complex(self.item())


@bind("__dlpack__")
def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """A DLPack capsule of a host copy of the data (the shards live in other processes).

    Examples
    --------
    >>> import numpy as np, sharded as st
    >>> np.from_dlpack(st.arange(3)).tolist()
    [0, 1, 2]
    """
    if copy is False:
        raise BufferError("sharded arrays cannot be exported without a copy")
    a = self.detach().numpy()
    kw = {} if max_version is None else {"max_version": max_version}
    return a.__dlpack__(**kw)


@bind("__dlpack_device__")
def __dlpack_device__(self, /):
    """``(kDLCPU, 0)``: exported data is a host copy.

    Examples
    --------
    >>> import sharded as st
    >>> st.ones(1).__dlpack_device__()
    (1, 0)
    """
    return np.empty(0).__dlpack_device__()


_THIS = sys.modules[__name__]

__all__ = (
    ["__array_namespace_info__", "astype", "can_cast", "finfo", "iinfo", "isdtype"]
    + ["result_type", "bool", "int8", "int16", "int32", "int64", "uint8", "float32", "float64"]
    + ["e", "pi", "inf", "nan", "newaxis", "linalg", "fft"]
    + _creation_all
    + _elementwise_all
    + _manip_all
    + _stats_all
)
