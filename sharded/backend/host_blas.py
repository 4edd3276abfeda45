"""Direct calls into the BLAS and LAPACK that NumPy itself loaded, for what NumPy does not
expose: ``C += alpha A @ B`` in place (gemm with ``beta = 1``, gemv when ``B`` or ``A`` is a
vector), a triangular solve in place (trsm) and an LU panel (getrf).

Why: the distributed LU spends nearly all its time in ``C -= A @ B`` on the trailing matrix.
NumPy's ``matmul`` has no ``beta``, so that costs a temporary product and one more pass over
``C`` (an 8192 x 3840 update by a 256-wide panel: 57 GFLOP/s against gemm's 64 on one thread),
and NumPy has no getrf at all (a recursive LU in NumPy calls: 25 ms for an 8192 x 256 panel,
LAPACK 13 ms).

The library is the one ``threadpoolctl`` reports as NumPy's BLAS (so its thread count is the
worker's, set in :mod:`sharded.runtime.worker.threads`), opened with ``ctypes``; its symbols are
looked up under the names NumPy's wheels (``scipy_`` prefix, ``64_`` suffix: 64-bit integers),
an ILP64 build (``64_``) and a plain LP64 build use. Every function returns ``False``/``None``
when it cannot take the call (no such library or symbol, a dtype or memory layout gemm cannot
address, ``SHARDED_HOST_BLAS=0`` in the worker's environment); the caller then does the same
in NumPy. Results agree with NumPy's to rounding (the same BLAS kernels compute them).
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

_KINDS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}
_KINDS.update({np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"})
_ROW, _COL, _NO, _TRANS = 101, 102, 111, 112  # CBLAS enums
_UPPER, _LOWER, _UNIT, _LEFT = 121, 122, 132, 141
_NAMES = (("scipy_", "64_", ctypes.c_int64), ("", "64_", ctypes.c_int64), ("", "", ctypes.c_int32))
_lock = threading.Lock()
_found: dict = {}


def _library():
    """NumPy's BLAS (when it is OpenBLAS) as a ``ctypes.CDLL``, or None."""
    if "lib" not in _found:
        with _lock:
            lib = None
            if os.environ.get("SHARDED_HOST_BLAS", "1") != "0":
                try:
                    from threadpoolctl import threadpool_info

                    paths = [
                        p["filepath"]
                        for p in threadpool_info()
                        if p.get("user_api") == "blas" and p.get("internal_api") == "openblas"
                    ]
                    lib = ctypes.CDLL(paths[0]) if paths else None
                except (ImportError, OSError):
                    lib = None
            _found["lib"] = lib
    return _found["lib"]


def _symbol(cblas: bool, name: str):
    """``(function, int type)`` for a cblas (``cblas_dgemm``) or Fortran (``dgetrf``) routine."""
    key = (cblas, name)
    if key not in _found:
        lib, hit = _library(), None
        for pre, suf, itype in _NAMES if lib is not None else ():
            sym = f"{pre}cblas_{name}{suf}" if cblas else f"{pre}{name}_{suf or ''}"
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn.restype = None
                hit = (fn, itype)
                break
        _found[key] = hit
    return _found[key]


def _order(a, item):
    """``(row major?, leading dimension)`` of a 2-D array with one unit stride, else None."""
    r, c = a.shape
    s0, s1 = a.strides
    if (s1 == item or c == 1) and s0 % item == 0 and s0 // item >= max(1, c):
        return True, s0 // item
    if (s0 == item or r == 1) and s1 % item == 0 and s1 // item >= max(1, r):
        return False, s1 // item
    return None


def _scalars(kind, dt, *values):
    """BLAS scalar arguments: by value for real kinds, by pointer for complex ones (the
    pointed-to arrays are returned too: they must outlive the call)."""
    if kind in "sd":
        scal = ctypes.c_float if kind == "s" else ctypes.c_double
        return [scal(v) for v in values], None
    held = np.array(values, dt)
    return [ctypes.c_void_p(held.ctypes.data + i * dt.itemsize) for i in range(len(values))], held


def _operands(c, a, b):
    """``(c, a, b)`` as 2-D views, a vector operand as a one-column (or one-row) matrix; None
    when the dims or shapes do not make ``c += a @ b``."""
    if c.ndim == a.ndim == b.ndim == 2:
        pass
    elif a.ndim == 2 and b.ndim == 1 and c.ndim == 1:  # matrix @ vector
        b, c = b[:, None], c[:, None]
    elif a.ndim == 1 and b.ndim == 2 and c.ndim == 1:  # vector @ matrix
        a, c = a[None], c[None]
    else:
        return None
    (m, n), k = c.shape, a.shape[1]
    return (c, a, b) if a.shape == (m, k) and b.shape == (k, n) else None


def _inc(v, item):
    """The BLAS increment of a strided vector (a 2-D view with one dim of 1), or None."""
    n = max(v.shape)
    s = v.strides[0] if v.shape[0] == n and n > 1 else v.strides[1] if n > 1 else item
    return s // item if s > 0 and s % item == 0 else None


def gemm_add(c, a, b, alpha=1.0) -> bool:
    """``c += alpha * (a @ b)`` in place by one BLAS call (``beta = 1``); False (and ``c``
    untouched) when this BLAS cannot take the call, so the caller computes it in NumPy.

    A product with one output column or row (``b`` or ``a`` a vector, 1-D or a 2-D view with
    one column or row) is one gemv: gemm with ``n = 1`` runs at a third of its speed (a
    2000 x 2000 block times a vector, one thread: 2.9 ms against 0.9 ms).

    Examples
    --------
    >>> c, a, b = np.ones((3, 2)), np.ones((3, 4)), np.ones((4, 2))
    >>> gemm_add(c, a, b, -1.0) is False or bool((c == -3).all())
    True
    """
    dt = c.dtype
    kind = _KINDS.get(dt)
    if kind is None or a.dtype != dt or b.dtype != dt:
        return False
    ops = _operands(c, a, b)
    if ops is None:
        return False
    c, a, b = ops
    m, n = c.shape
    k = a.shape[1]
    if m == 0 or n == 0 or k == 0:
        return True
    if not (c.flags.writeable and type(c) is np.ndarray and type(a) is type(b) is np.ndarray):
        return False
    if n == 1 or m == 1:
        return _gemv_add(kind, c, a, b, alpha)
    sym = _symbol(True, kind + "gemm")
    oc, oa, ob = (_order(x, dt.itemsize) for x in (c, a, b))
    if sym is None or oc is None or oa is None or ob is None:
        return False
    fn, it = sym
    if oc[0]:  # row-major C: C = A B as stored
        order, ta, tb = _ROW, (_NO if oa[0] else _TRANS), (_NO if ob[0] else _TRANS)
    else:  # column-major C: the same product, each operand read in its own order
        order, ta, tb = _COL, (_TRANS if oa[0] else _NO), (_TRANS if ob[0] else _NO)
    (al, beta), _held = _scalars(kind, dt, alpha, 1.0)
    fn(
        ctypes.c_int(order), ctypes.c_int(ta), ctypes.c_int(tb),
        it(m), it(n), it(k), al,
        ctypes.c_void_p(a.ctypes.data), it(oa[1]),
        ctypes.c_void_p(b.ctypes.data), it(ob[1]), beta,
        ctypes.c_void_p(c.ctypes.data), it(oc[1]),
    )  # fmt: skip
    return True


def _gemv_add(kind, c, a, b, alpha) -> bool:
    """``c += alpha * (a @ b)`` for an (m, 1) or (1, n) ``c`` (2-D views): one gemv with the
    matrix operand as stored (``y += A x`` or ``y += B^T x``)."""
    dt = c.dtype
    if c.shape[1] == 1:  # y = c[:, 0] += a @ b[:, 0]
        mat, x, trans = a, b, _NO
    else:  # y = c[0] += b^T a[0]
        mat, x, trans = b, a, _TRANS
    sym = _symbol(True, kind + "gemv")
    om, ix, iy = _order(mat, dt.itemsize), _inc(x, dt.itemsize), _inc(c, dt.itemsize)
    if sym is None or om is None or ix is None or iy is None:
        return False
    fn, it = sym
    (al, beta), _held = _scalars(kind, dt, alpha, 1.0)
    r, cols = mat.shape
    fn(
        ctypes.c_int(_ROW if om[0] else _COL), ctypes.c_int(trans), it(r), it(cols), al,
        ctypes.c_void_p(mat.ctypes.data), it(om[1]), ctypes.c_void_p(x.ctypes.data), it(ix),
        beta, ctypes.c_void_p(c.ctypes.data), it(iy),
    )  # fmt: skip
    return True


def trsm_unit_lower(lo, x) -> bool:
    """``x = L^-1 x`` in place, ``L`` the unit lower triangle of the square ``lo`` (what lies
    on and above its diagonal is not read), by one trsm call; False (``x`` untouched) when
    this BLAS cannot take the call.

    Examples
    --------
    >>> lo, x = np.array([[1.0, 9.0], [2.0, 1.0]]), np.array([[1.0], [3.0]])
    >>> trsm_unit_lower(lo, x) is False or x.ravel().tolist() == [1.0, 1.0]
    True
    """
    dt = x.dtype
    kind = _KINDS.get(dt)
    if kind is None or lo.dtype != dt or lo.ndim != 2 or x.ndim != 2:
        return False
    m, n = x.shape
    if lo.shape != (m, m):
        return False
    if m == 0 or n == 0:
        return True
    if not (x.flags.writeable and type(x) is np.ndarray and type(lo) is np.ndarray):
        return False
    sym = _symbol(True, kind + "trsm")
    ox, ol = _order(x, dt.itemsize), _order(lo, dt.itemsize)
    if sym is None or ox is None or ol is None:
        return False
    fn, it = sym
    # a block stored in the other order is its transpose in this one: upper, transposed
    same = ox[0] == ol[0]
    uplo, trans = (_LOWER, _NO) if same else (_UPPER, _TRANS)
    (alpha,), _held = _scalars(kind, dt, 1.0)
    fn(
        ctypes.c_int(_ROW if ox[0] else _COL), ctypes.c_int(_LEFT), ctypes.c_int(uplo),
        ctypes.c_int(trans), ctypes.c_int(_UNIT), it(m), it(n), alpha,
        ctypes.c_void_p(lo.ctypes.data), it(ol[1]), ctypes.c_void_p(x.ctypes.data), it(ox[1]),
    )  # fmt: skip
    return True


def getrf(a):
    """LU with partial pivoting of a column-major block in place (LAPACK getrf: ``a = P L U``);
    returns ``(piv, zero)``, ``piv[i]`` the 0-based row swapped with row ``i`` and ``zero``
    the index of the first exactly zero pivot or -1; None when LAPACK cannot take it.

    Examples
    --------
    >>> a = np.asfortranarray([[0.0, 1.0], [2.0, 3.0]])
    >>> piv, zero = getrf(a) or (np.array([1, 1]), -1)  # (None: no LAPACK here)
    >>> piv.tolist(), zero
    ([1, 1], -1)
    """
    dt = a.dtype
    kind = _KINDS.get(dt)
    if kind is None or a.ndim != 2 or type(a) is not np.ndarray or not a.flags.writeable:
        return None
    m, n = a.shape
    item, (s0, s1) = dt.itemsize, a.strides
    ld = s1 // item if n > 1 else m
    if (s0 != item and m > 1) or s1 % item or ld < max(1, m):
        return None  # not column-major
    sym = _symbol(False, kind + "getrf")
    if sym is None:
        return None
    if m == 0 or n == 0:
        return np.zeros(0, np.int64), -1
    fn, it = sym
    ipiv = np.zeros(min(m, n), np.int64 if it is ctypes.c_int64 else np.int32)
    mm, nn, ld, info = it(m), it(n), it(ld), it(0)
    fn(
        ctypes.byref(mm), ctypes.byref(nn), ctypes.c_void_p(a.ctypes.data), ctypes.byref(ld),
        ctypes.c_void_p(ipiv.ctypes.data), ctypes.byref(info),
    )  # fmt: skip
    if info.value < 0:  # an argument LAPACK rejected: a bug here, not in the data
        raise ValueError(f"getrf rejected argument {-info.value} for a {m} x {n} block")
    return ipiv.astype(np.int64) - 1, (info.value - 1 if info.value > 0 else -1)
