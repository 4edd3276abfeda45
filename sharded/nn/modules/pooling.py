"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``,
``AdaptiveMaxPool1d/2d/3d``, ``MaxUnpool1d/2d/3d`` and ``FractionalMaxPool2d/3d``, each
forwarding to its ``st.nn.functional`` form."""

from __future__ import annotations

from ...errors import ArgumentError
from .. import functional as F
from .module import Module
from .utils import _ntuple

__all__ = [
    "MaxPool1d",
    "MaxPool2d",
    "MaxPool3d",
    "AvgPool1d",
    "AvgPool2d",
    "AvgPool3d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "FractionalMaxPool2d",
    "FractionalMaxPool3d",
]


class _MaxPoolNd(Module):
    _fn = "max_pool2d"

    def __init__(
        self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return getattr(F, self._fn)(
            input, self.kernel_size, self.stride, self.padding, self.dilation,
            ceil_mode=self.ceil_mode, return_indices=self.return_indices,
        )  # fmt: skip

    def extra_repr(self):
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
            f"dilation={self.dilation}, ceil_mode={self.ceil_mode}"
        )


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling (``stride`` defaults to ``kernel_size``).

    Examples
    --------
    >>> import sharded as st
    >>> pool = st.nn.MaxPool2d(2, 2)
    >>> pool
    MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
    >>> pool(st.ones(2, 3, 8, 8)).shape
    sharded.Size([2, 3, 4, 4])
    """

    _fn = "max_pool2d"


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling (``stride`` defaults to ``kernel_size``).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.MaxPool3d(2)(st.ones(2, 3, 4, 6, 8)).shape
    sharded.Size([2, 3, 2, 3, 4])
    """

    _fn = "max_pool3d"


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.MaxPool1d(3)(st.ones(2, 3, 9)).shape
    sharded.Size([2, 3, 3])
    """

    _fn = "max_pool1d"


class _AvgPoolNd(Module):
    _fn = "avg_pool2d"

    def __init__(
        self,
        kernel_size,
        stride=None,
        padding=0,
        ceil_mode=False,
        count_include_pad=True,
        divisor_override=None,
    ):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return getattr(F, self._fn)(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad, self.divisor_override,
        )  # fmt: skip

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AvgPool2d(2)(st.ones(1, 4, 4)).tolist()
    [[[1.0, 1.0], [1.0, 1.0]]]
    """

    _fn = "avg_pool2d"


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling (``count_include_pad``, ``divisor_override`` as 2-D).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AvgPool3d(2, divisor_override=1)(st.ones(1, 2, 2, 4)).tolist()
    [[[[8.0, 8.0]]]]
    """

    _fn = "avg_pool3d"


class AvgPool1d(Module):
    """1-D average pooling.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AvgPool1d(2)
    AvgPool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    """

    def __init__(
        self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True
    ):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, 1)
        self.stride = _ntuple(stride if stride is not None else kernel_size, 1)
        self.padding = _ntuple(padding, 1)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(
            input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
            self.count_include_pad,
        )  # fmt: skip

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _Adaptive(Module):
    _fn = "adaptive_avg_pool2d"

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        if self._fn.startswith("adaptive_max"):
            self.return_indices = return_indices

    def forward(self, input):
        if self._fn.startswith("adaptive_max"):
            return getattr(F, self._fn)(input, self.output_size, self.return_indices)
        return getattr(F, self._fn)(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool2d(_Adaptive):
    """Average pooling to a fixed (H, W) (``None`` keeps a size).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AdaptiveAvgPool2d((5, 7))(st.ones(2, 3, 10, 9)).shape
    sharded.Size([2, 3, 5, 7])
    """

    _fn = "adaptive_avg_pool2d"

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool3d(_Adaptive):
    """Average pooling to a fixed (D, H, W) (``None`` keeps a size).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AdaptiveAvgPool3d((2, None, 3))(st.ones(2, 3, 5, 4, 7)).shape
    sharded.Size([2, 3, 2, 4, 3])
    """

    _fn = "adaptive_avg_pool3d"

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveAvgPool1d(_Adaptive):
    """Average pooling to a fixed length.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AdaptiveAvgPool1d(5)
    AdaptiveAvgPool1d(output_size=5)
    """

    _fn = "adaptive_avg_pool1d"

    def __init__(self, output_size):
        super().__init__(output_size)


class AdaptiveMaxPool2d(_Adaptive):
    """Max pooling to a fixed (H, W).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AdaptiveMaxPool2d(1)(st.arange(4.).reshape(1, 2, 2)).tolist()
    [[[3.0]]]
    """

    _fn = "adaptive_max_pool2d"


class AdaptiveMaxPool3d(_Adaptive):
    """Max pooling to a fixed (D, H, W).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AdaptiveMaxPool3d(1)(st.arange(8.).reshape(1, 2, 2, 2)).tolist()
    [[[[7.0]]]]
    """

    _fn = "adaptive_max_pool3d"


class AdaptiveMaxPool1d(_Adaptive):
    """Max pooling to a fixed length.

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.AdaptiveMaxPool1d(3)
    AdaptiveMaxPool1d(output_size=3)
    """

    _fn = "adaptive_max_pool1d"


class _MaxUnpoolNd(Module):
    _fn, _n = "max_unpool2d", 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _ntuple(padding, self._n)

    def forward(self, input, indices, output_size=None):
        return getattr(F, self._fn)(
            input, indices, self.kernel_size, self.stride, self.padding, output_size
        )

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool1d``: the values at the pooling's indices, zeros elsewhere.

    Examples
    --------
    >>> import sharded as st
    >>> out, idx = st.nn.MaxPool1d(2, return_indices=True)(st.tensor([[[1., 3., 2., 5.]]]))
    >>> unpool = st.nn.MaxUnpool1d(2)
    >>> unpool
    MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))
    >>> unpool(out, idx).tolist()
    [[[0.0, 3.0, 0.0, 5.0]]]
    """

    _fn, _n = "max_unpool1d", 1


class MaxUnpool2d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool2d``: the values at the pooling's indices, zeros elsewhere
    (``output_size`` of ``forward`` picks among the sizes a pooling could have come from).

    Examples
    --------
    >>> import sharded as st
    >>> out, idx = st.nn.MaxPool2d(2, return_indices=True)(st.ones(1, 1, 5, 5))
    >>> st.nn.MaxUnpool2d(2)(out, idx, output_size=(5, 5)).shape
    sharded.Size([1, 1, 5, 5])
    """

    _fn, _n = "max_unpool2d", 2


class MaxUnpool3d(_MaxUnpoolNd):
    """Partial inverse of ``MaxPool3d``: the values at the pooling's indices, zeros elsewhere.

    Examples
    --------
    >>> import sharded as st
    >>> out, idx = st.nn.MaxPool3d(2, return_indices=True)(st.ones(1, 1, 2, 4, 4))
    >>> st.nn.MaxUnpool3d(2)(out, idx).shape
    sharded.Size([1, 1, 2, 4, 4])
    """

    _fn, _n = "max_unpool3d", 3


class _FractionalMaxPoolNd(Module):
    _fn, _n, _name = "fractional_max_pool2d", 2, "FractionalMaxPool2d"

    def __init__(
        self,
        kernel_size,
        output_size=None,
        output_ratio=None,
        return_indices=False,
        _random_samples=None,
    ):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = None if output_size is None else _ntuple(output_size, self._n)
        self.output_ratio = None if output_ratio is None else _ntuple(output_ratio, self._n)
        if output_size is None and output_ratio is None:
            raise ArgumentError(
                f"{self._name} requires specifying either an output size, or a pooling ratio"
            )
        if output_size is not None and output_ratio is not None:
            raise ArgumentError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(0 < r < 1 for r in self.output_ratio):
            raise ArgumentError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return getattr(F, self._fn)(
            input,
            self.kernel_size,
            self.output_size,
            self.output_ratio,
            self.return_indices,
            _random_samples=self._random_samples,
        )


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling (see ``st.nn.functional.fractional_max_pool2d``): windows of
    ``kernel_size`` at pseudo-random starts, to ``output_size`` or ``output_ratio`` (in (0, 1))
    of the input's size; ``_random_samples`` (a buffer) fixes the starts.

    Examples
    --------
    >>> import sharded as st
    >>> pool = st.nn.FractionalMaxPool2d(2, output_ratio=0.5)
    >>> pool(st.ones(1, 3, 8, 6)).shape
    sharded.Size([1, 3, 4, 3])
    """


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling (see ``st.nn.functional.fractional_max_pool3d``).

    Examples
    --------
    >>> import sharded as st
    >>> st.nn.FractionalMaxPool3d(2, output_size=3)(st.ones(1, 2, 5, 5, 5)).shape
    sharded.Size([1, 2, 3, 3, 3])
    """

    _fn, _n, _name = "fractional_max_pool3d", 3, "FractionalMaxPool3d"
