"""``rms_norm``, ``group_norm`` and ``instance_norm`` (torch's functional forms), composed of
sharded reductions and elementwise ops; their gradients come from those ops'."""

from __future__ import annotations

from .. import dtypes as D
from ..autograd import no_grad
from ..errors import ArgumentError, ShapeError
from ..ops.elementwise.prims.exp_log import rsqrt

__all__ = ["rms_norm", "group_norm", "instance_norm"]


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``input / sqrt(mean(input**2) + eps) * weight`` over the trailing ``normalized_shape``
    dims; ``eps`` None is the machine epsilon of ``input``'s dtype (torch's ``rms_norm``).

    Examples
    --------
    >>> import sharded as st
    >>> y = st.nn.functional.rms_norm(st.tensor([[3., 4.]]), (2,), eps=0.0)
    >>> [round(v, 4) for v in y[0].tolist()]
    [0.8485, 1.1314]
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    if k == 0 or input.ndim < k or tuple(input.shape[input.ndim - k :]) != shape:
        raise ShapeError(
            f"rms_norm: given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size {list(input.shape)}"
        )
    if eps is None:
        eps = D.finfo(input.dtype).eps
    dims = tuple(range(input.ndim - k, input.ndim))
    out = input * rsqrt((input * input).mean(dims, keepdim=True) + eps)
    return out if weight is None else out * weight


def _affine(out, weight, bias, C):
    """Per-channel scale and shift of an (N, C, *) result."""
    shape = (1, C) + (1,) * (out.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalize an (N, C, *) input over each group of ``C // num_groups`` channels (and
    every spatial position), then scale and shift per channel (torch's ``group_norm``).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[[1.], [3.], [10.], [30.]]])
    >>> st.nn.functional.group_norm(x, 2, eps=0.0).reshape(-1).tolist()
    [-1.0, 1.0, -1.0, 1.0]
    """
    if input.ndim < 2 or input.shape[1] % num_groups:
        raise ShapeError(
            "group_norm: expected an (N, C, *) input with C divisible by num_groups, but got "
            f"input of shape {list(input.shape)} and num_groups={num_groups}"
        )
    N, C = input.shape[0], input.shape[1]
    if input.numel() == 0:  # no group has elements: torch returns the empty input's shape
        return _affine(input * 1, weight, bias, C)
    x = input.reshape(N, num_groups, -1)
    mu = x.mean(-1, keepdim=True)
    d = x - mu
    out = (d * rsqrt((d * d).mean(-1, keepdim=True) + eps)).reshape(tuple(input.shape))
    return _affine(out, weight, bias, C)


def instance_norm(
    input,
    running_mean=None,
    running_var=None,
    weight=None,
    bias=None,
    use_input_stats=True,
    momentum=0.1,
    eps=1e-5,
):
    """Normalize each channel of each sample of an (N, C, *) input over its spatial dims
    (with ``use_input_stats``; the running statistics, if given, are then updated in place
    with the batch's mean of the per-instance mean and unbiased variance), or by
    ``running_mean``/``running_var`` (torch's ``instance_norm``).

    Examples
    --------
    >>> import sharded as st
    >>> x = st.tensor([[[1., 3.], [10., 30.]]])
    >>> st.nn.functional.instance_norm(x, eps=0.0).tolist()
    [[[-1.0, 1.0], [-1.0, 1.0]]]
    """
    if input.ndim < 3:
        raise ShapeError(
            f"instance_norm: expected an (N, C, *) input of 3 or more dims, got shape "
            f"{list(input.shape)}"
        )
    C = input.shape[1]
    dims = tuple(range(2, input.ndim))
    shape = (1, C) + (1,) * (input.ndim - 2)
    if use_input_stats:
        count = input.numel() // (input.shape[0] * C)
        if count <= 1:
            raise ArgumentError(
                "Expected more than 1 spatial element when training, got input size "
                f"{list(input.shape)}"
            )
        mu = input.mean(dims, keepdim=True)
        d = input - mu
        var = (d * d).mean(dims, keepdim=True)
        with no_grad():  # the running statistics are buffers, outside the graph
            if running_mean is not None:
                m = mu.detach().reshape(-1, C).mean(0)
                running_mean.mul_(1 - momentum).add_(m, alpha=momentum)
            if running_var is not None:
                unbiased = var.detach().reshape(-1, C).mean(0) * (count / (count - 1))
                running_var.mul_(1 - momentum).add_(unbiased, alpha=momentum)
    else:
        if running_mean is None or running_var is None:
            raise ArgumentError(
                "instance_norm: running_mean and running_var are needed without use_input_stats"
            )
        d = input - running_mean.reshape(shape)
        var = running_var.reshape(shape)
    return _affine(d * rsqrt(var + eps), weight, bias, C)
