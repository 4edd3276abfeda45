"""Log-add-exp pieces of the ``logcumsumexp`` scan (:mod:`..prims.scan`): NumPy's ufunc for
real dtypes; for complex ones torch's rule, which NumPy lacks: the operand with the larger
real part first, ``max + log1p(exp(min - max))``, ``-inf`` absorbing and NaN infectious.

Pure functions of ``xp`` arrays, called from the scan kernels on the workers.
"""

from __future__ import annotations


def logaddexp(xp, a, b, out=None):
    """``log(exp(a) + exp(b))`` elementwise, into ``out`` when given; ``a`` is the earlier
    operand of a scan (two complex ``-inf`` keep its imaginary part, as torch)."""
    if a.dtype.kind != "c" and getattr(b, "dtype", a.dtype).kind != "c":
        return xp.logaddexp(a, b, out=out)
    a, b = xp.broadcast_arrays(xp.asarray(a), xp.asarray(b))
    first = b.real >= a.real
    mx, mn = xp.where(first, b, a), xp.where(first, a, b)
    with xp.errstate(invalid="ignore", over="ignore"):
        r = mx + xp.log1p(xp.exp(mn - mx))
        both_inf = xp.isinf(mn.real) & (mn.real == mx.real)
        if both_inf.any():  # -inf + -inf stays -inf; +inf + +inf has no log1p form
            r = xp.where(both_inf & (mn.real < 0), a, r)
            r = xp.where(both_inf & (mn.real > 0), xp.log(xp.exp(mn) + xp.exp(mx)), r)
        nan = xp.isnan(a) | xp.isnan(b)
        if nan.any():
            r = xp.where(nan, complex(float("nan"), float("nan")), r)
    if out is None:
        return r.astype(a.dtype, copy=False)
    out[...] = r
    return out


def lse_accumulate(xp, a, axis, dtype, out=None):
    """Running log-sum-exp along ``axis`` (complex: one slice at a time, in order, as torch
    folds it; there is no accumulating ufunc for it)."""
    a = a.astype(dtype, copy=False)
    if a.dtype.kind != "c":
        return xp.logaddexp.accumulate(a, axis=axis, out=out)
    if out is None:
        out = xp.empty(a.shape, dtype=a.dtype)
    src, dst = xp.moveaxis(a, axis, 0), xp.moveaxis(out, axis, 0)
    if src.shape[0]:
        dst[0] = src[0]
    for i in range(1, src.shape[0]):  # slices, not items: views even for 1-d lines
        logaddexp(xp, dst[i - 1 : i], src[i : i + 1], out=dst[i : i + 1])
    return out


def lse_total(xp, a, axis, dtype):
    """The log-sum-exp of ``a`` along ``axis`` (keepdims)."""
    a = a.astype(dtype, copy=False)
    if a.dtype.kind == "c":  # the last running value: the same fold as the scan itself
        sl = [slice(None)] * a.ndim
        sl[axis] = slice(-1, None)
        return xp.array(lse_accumulate(xp, a, axis, dtype)[tuple(sl)], copy=True)
    m = xp.max(a, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)  # all -inf or +inf: exp below gives 0 or inf
    return m + xp.log(xp.sum(xp.exp(a - m), axis=axis, keepdims=True))
