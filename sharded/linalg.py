"""Matrix products: ``matmul`` (``@``), ``mm``, ``bmm``, ``mv``, ``dot``, ``outer``.

The layout rule lives with the primitive (``ops/matmul.py``): row-split ``@`` replicated is
local; a split contraction dim gives partial products summed by the reduction tree. Here the
torch shape rules: 1-D operands get a dim prepended/appended and removed again, batch dims
broadcast, dtypes promote.
"""

from __future__ import annotations

from . import dtypes as D
from .errors import ShapeError
from .tensor import ShardedTensor, apply


def _t(x):
    if isinstance(x, ShardedTensor):
        return x
    from .creation import tensor
    return tensor(x)


def matmul(input, other):
    """Matrix product with torch's rules for 1-D and batched operands.

    Examples
    --------
    >>> import sharded as st
    >>> a = st.arange(6.).reshape(3, 2)
    >>> (a @ st.tensor([[1.], [1.]])).tolist()
    [[1.0], [5.0], [9.0]]
    """
    a, b = _t(input), _t(other)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"both arguments to matmul need to be at least 1D, but they are "
                         f"{a.ndim}D and {b.ndim}D")
    dt = D.promote_types(a.dtype, b.dtype)
    a, b = a.to(dt), b.to(dt)
    squeeze = []
    if a.ndim == 1:
        a = a.unsqueeze(0)
        squeeze.append(-2)
    if b.ndim == 1:
        b = b.unsqueeze(1)
        squeeze.append(-1)
    if a.shape[-1] != b.shape[-2]:
        raise ShapeError(f"mat1 and mat2 shapes cannot be multiplied "
                         f"({'x'.join(map(str, a.shape))} and {'x'.join(map(str, b.shape))})")
    from .ops.elementwise import broadcast_shapes
    batch = broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    if tuple(a.shape[:-2]) != batch:
        a = a.expand(batch + tuple(a.shape[-2:]))
    lay = a.layout
    if not lay.is_replicated and lay.grid[-1] > 1 and not (
            a.ndim == 2 and b.ndim == 2 and lay.grid[0] == 1):
        a = a.reshard(dim=a.ndim - 2)  # only a plain 2-D product may contract a split dim
    out = apply("matmul", a, b, dt)
    for d in squeeze:
        out = out.squeeze(d)
    return out


def mm(input, mat2):
    """Product of two 2-D tensors.

    Examples
    --------
    >>> import sharded as st
    >>> st.mm(st.eye(2), st.ones(2, 3)).shape
    sharded.Size([2, 3])
    """
    if input.ndim != 2 or mat2.ndim != 2:
        raise ShapeError(f"mm expects 2-D tensors, got {input.ndim}-D and {mat2.ndim}-D")
    return matmul(input, mat2)


def bmm(input, mat2):
    """Batched product of two 3-D tensors with equal batch sizes.

    Examples
    --------
    >>> import sharded as st
    >>> st.bmm(st.ones(4, 2, 3), st.ones(4, 3, 5)).shape
    sharded.Size([4, 2, 5])
    """
    if input.ndim != 3 or mat2.ndim != 3 or input.shape[0] != mat2.shape[0]:
        raise ShapeError(f"bmm expects 3-D tensors with equal batch sizes, got "
                         f"{tuple(input.shape)} and {tuple(mat2.shape)}")
    return matmul(input, mat2)


def mv(input, vec):
    """Matrix-vector product."""
    if input.ndim != 2 or vec.ndim != 1:
        raise ShapeError(f"mv expects a 2-D and a 1-D tensor, got {input.ndim}-D and "
                         f"{vec.ndim}-D")
    return matmul(input, vec)


def dot(input, other):
    """Inner product of two 1-D tensors (a 0-d tensor).

    Examples
    --------
    >>> import sharded as st
    >>> st.dot(st.tensor([1., 2.]), st.tensor([3., 4.])).item()
    11.0
    """
    if input.ndim != 1 or other.ndim != 1 or input.shape != other.shape:
        raise ShapeError(f"dot expects two 1-D tensors of equal size, got "
                         f"{tuple(input.shape)} and {tuple(other.shape)}")
    return matmul(input, other)


def outer(input, vec2):
    """Outer product of two 1-D tensors: ``input[:, None] * vec2[None, :]``.

    Examples
    --------
    >>> import sharded as st
    >>> st.outer(st.tensor([1, 2]), st.tensor([1, 10])).tolist()
    [[1, 10], [2, 20]]
    """
    return input.unsqueeze(1) * vec2.unsqueeze(0)
