"""BLAS and LAPACK calls that NumPy does not expose, through SciPy's wrappers
(:mod:`scipy.linalg.blas`, :mod:`scipy.linalg.lapack`): ``C += alpha A @ B`` in place (gemm
with ``beta = 1``, gemv when ``B`` or ``A`` is a vector), a triangular solve in place (trsm)
and an LU panel (getrf).

Why: the distributed LU spends nearly all its time in ``C -= A @ B`` on the trailing matrix.
NumPy's ``matmul`` has no ``beta``, so that costs a temporary product and one more pass over
``C`` (an 8192 x 3840 update by a 256-wide panel: 57 GFLOP/s against gemm's 64 on one thread),
and NumPy has no getrf at all (a recursive LU in NumPy calls: 25 ms for an 8192 x 256 panel,
LAPACK 13 ms).

SciPy's wrappers take Fortran-order arrays: a C-order operand is passed as its transpose with
the transpose flag set (no copy), and a C-order ``C`` is updated as ``C^T += B^T A^T``. They
take no leading dimension, so an output that is a strided view (the LU's trailing update
``m[p:, c0:c1]`` of a wider block) goes to the same routine of SciPy's Cython BLAS
(:mod:`scipy.linalg.cython_blas`, by ``ctypes``) with its leading dimension instead of being
copied in and out. SciPy loads its own OpenBLAS; when it is first needed its thread count is
set to NumPy's (the worker's share, :mod:`sharded.runtime.worker.threads`), and later
``threadpool_limits`` calls reach both libraries.

Every function returns ``False``/``None`` when it cannot take the call (a dtype BLAS has no
routine for, ``SHARDED_HOST_BLAS=0`` in the worker's environment, SciPy missing); the caller
then does the same in NumPy.

Measured (one thread, float64, the median of 5 runs in one process), against the former
``ctypes`` calls into NumPy's OpenBLAS found by symbol name; results equal to the bit but for
the copied trsm (1e-14):

=================================================  ========  ==============  ===========
case                                               NumPy's   SciPy wrapper   used now
=================================================  ========  ==============  ===========
gemv ``c += A x``, A 2000 x 2000 C order           0.96 ms   0.83 ms         wrapper
gemm ``C += A B``, 2000 x 256 x 2000, C order      34.9 ms   34.9 ms         wrapper
gemm, C a view ``m[256:, 512:2048]`` of 4096^2     50.7 ms   59.1 ms (copy)  Cython 49.6
trsm 1024 x 1024 unit lower, C order               19.5 ms   19.7 ms         wrapper
trsm, B a view ``m[:256, 512:2048]``               2.42 ms   5.37 ms (copy)  Cython 2.40
getrf 4096 x 256, F order                          6.63 ms   6.67 ms         wrapper
=================================================  ========  ==============  ===========
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

_KINDS = {np.dtype(np.float32): "s", np.dtype(np.float64): "d"}
_KINDS.update({np.dtype(np.complex64): "c", np.dtype(np.complex128): "z"})
_lock = threading.Lock()
_found: dict = {}


def _scipy():
    """``(scipy.linalg.blas, scipy.linalg.lapack)``, or None when disabled or missing.

    SciPy's OpenBLAS is not NumPy's: on first use it gets NumPy's thread count, so a worker
    that set its share before SciPy was loaded keeps that share for both."""
    if "lib" not in _found:
        with _lock:
            mods = None
            if os.environ.get("SHARDED_HOST_BLAS", "1") != "0":
                try:
                    from threadpoolctl import ThreadpoolController, threadpool_info

                    from ..runtime.worker.threads import limit

                    pools = threadpool_info()
                    before = [p["num_threads"] for p in pools if p["user_api"] == "blas"]
                    from scipy.linalg import blas, lapack

                    if before:
                        limit(ThreadpoolController().select(user_api="blas"), max(before))
                    mods = (blas, lapack)
                except ImportError:
                    mods = None
            _found["lib"] = mods
    return _found["lib"]


def load() -> bool:
    """Load SciPy's BLAS and LAPACK now (about 0.15 s of imports, which the first product
    that accumulates, or the first LU panel, would pay otherwise); whether they are there.
    A worker calls it on a thread of its own once it has taken its cores.

    Examples
    --------
    >>> load() in (True, False)
    True
    """
    return _scipy() is not None


def _routine(kind, name, lapack=False):
    mods = _scipy()
    return None if mods is None else getattr(mods[1 if lapack else 0], kind + name)


def _fortran(x):
    """``(array, transposed?)``: ``x`` itself when Fortran ordered, else its transpose when C
    ordered (the flag says so), else a Fortran copy."""
    if x.flags.f_contiguous:
        return x, 0
    if x.flags.c_contiguous:
        return x.T, 1
    return np.asfortranarray(x), 0


def _into(dst, result) -> None:
    """Put a wrapper's result in ``dst`` unless it was computed there (a strided ``dst``
    is copied by the wrapper)."""
    if result is not dst and not np.shares_memory(result, dst):
        dst[...] = result


def _strided(kind, name):
    """The Fortran BLAS routine ``name`` of SciPy's :mod:`scipy.linalg.cython_blas` (the
    same library as its wrappers) as a ``ctypes`` function of pointers, or None.

    Only for an output that is a strided view (a block of a wider matrix, as the LU's
    trailing update ``m[p:, c0:c1]``): the wrappers take no leading dimension, so they
    would copy it in and out. Measured (one thread; see the module's table): trsm of a
    256 x 1536 view 2.4 ms here against 5.4 ms through the wrapper, gemm into a
    3840 x 1536 view 51 ms against 59 ms."""
    key = kind + name
    if key not in _found:
        fn = None
        try:
            from scipy.linalg import cython_blas

            cap = ctypes.py_object(cython_blas.__pyx_capi__[key])
            api = ctypes.pythonapi
            api.PyCapsule_GetName.restype = ctypes.c_char_p
            api.PyCapsule_GetName.argtypes = [ctypes.py_object]
            api.PyCapsule_GetPointer.restype = ctypes.c_void_p
            api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
            ptr = api.PyCapsule_GetPointer(cap, api.PyCapsule_GetName(cap))
            fn = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * _NARGS[name])(ptr)
        except (ImportError, KeyError, ValueError):
            fn = None
        _found[key] = fn
    return _found[key]


_NARGS = {"gemm": 13, "trsm": 11}


def _colmajor(x):
    """``(x's buffer, b"N" or b"T", leading dim)``: ``x`` as BLAS reads a column-major
    operand (a row-major ``x`` is the transpose of its buffer read by columns); None when
    ``x`` has no unit stride."""
    (r, c), item = x.shape, x.itemsize
    s0, s1 = x.strides
    if (s0 == item or r == 1) and s1 > 0 and s1 % item == 0 and s1 // item >= max(1, r):
        return x, b"N", s1 // item
    if (s1 == item or c == 1) and s0 > 0 and s0 % item == 0 and s0 // item >= max(1, c):
        return x, b"T", s0 // item
    return None


def _call(fn, dt, *args) -> None:
    """Call a Fortran BLAS routine: every argument by pointer (bytes: a flag, int: a
    dimension, float/complex: a scalar, ndarray: its data)."""
    held, ptrs = [], []
    for v in args:
        if isinstance(v, bytes):
            v = ctypes.c_char(v)
        elif isinstance(v, int):
            v = ctypes.c_int(v)
        elif not isinstance(v, np.ndarray):
            v = np.array([v], dt)
        held.append(v)
        ptrs.append(v.ctypes.data if isinstance(v, np.ndarray) else ctypes.addressof(v))
    fn(*ptrs)


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


def gemm_add(c, a, b, alpha=1.0) -> bool:
    """``c += alpha * (a @ b)`` in place by one BLAS call (``beta = 1``); False (and ``c``
    untouched) when BLAS cannot take the call, so the caller computes it in NumPy.

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
    if 0 in c.shape or a.shape[1] == 0:
        return True
    if not (c.flags.writeable and type(c) is np.ndarray and type(a) is type(b) is np.ndarray):
        return False
    if min(c.strides) < 0 or _scipy() is None:
        return False
    if 1 in c.shape:
        return _gemv_add(kind, c, a, b, alpha)
    if not c.flags.f_contiguous and c.strides[0] >= c.strides[1]:
        c, a, b = c.T, b.T, a.T  # row order: C^T += B^T A^T, C^T in Fortran order
    m, n = c.shape
    if not c.flags.f_contiguous:
        fn, oc = _strided(kind, "gemm"), _colmajor(c)
        if fn is not None and oc is not None and oc[1] == b"N":
            (fa, ta, la), (fb, tb, lb) = (_colmajor(x) or _colmajor(x.copy("F")) for x in (a, b))
            _call(fn, c.dtype, ta, tb, m, n, a.shape[1], alpha, fa, la, fb, lb, 1.0, c, oc[2])
            return True
    fa, ta = _fortran(a)
    fb, tb = _fortran(b)
    out = c if c.flags.f_contiguous else np.asfortranarray(c)
    r = _routine(kind, "gemm")(alpha, fa, fb, 1.0, out, ta, tb, overwrite_c=1)
    _into(c, r)
    return True


def _gemv_add(kind, c, a, b, alpha) -> bool:
    """``c += alpha * (a @ b)`` for an (m, 1) or (1, n) ``c`` (2-D views): one gemv with the
    matrix operand as stored (``y += A x`` or ``y += B^T x``)."""
    if c.shape[1] == 1:  # y = c[:, 0] += a @ b[:, 0]
        mat, x, y, trans = a, b[:, 0], c[:, 0], 0
    else:  # y = c[0] += b^T a[0]
        mat, x, y, trans = b, a[0], c[0], 1
    fm, t = _fortran(mat)
    r = _routine(kind, "gemv")(alpha, fm, x, 1.0, y, trans=trans ^ t, overwrite_y=1)
    _into(y, r)
    return True


def trsm_unit_lower(lo, x) -> bool:
    """``x = L^-1 x`` in place, ``L`` the unit lower triangle of the square ``lo`` (what lies
    on and above its diagonal is not read), by one trsm call; False (``x`` untouched) when
    BLAS cannot take the call.

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
    if _scipy() is None:
        return False
    if not (x.flags.c_contiguous or x.flags.f_contiguous):
        fn, ox, ol = _strided(kind, "trsm"), _colmajor(x), _colmajor(lo)
        if fn is not None and ox is not None and ol is not None:
            # a row-major x: solve X^T = X^T L^-T from the right on its buffer
            side = b"L" if ox[1] == b"N" else b"R"
            uplo = b"L" if ol[1] == b"N" else b"U"  # a row-major L reads as upper U = L^T
            trans = b"T" if (ol[1] == b"N") != (side == b"L") else b"N"
            mm, nn = (m, n) if side == b"L" else (n, m)
            _call(fn, dt, side, uplo, trans, b"U", mm, nn, 1.0, lo, ol[2], x, ox[2])
            return True
    fl, tl = _fortran(lo)  # transposed: the unit *upper* triangle of the array passed
    fn = _routine(kind, "trsm")
    if x.flags.c_contiguous and not x.flags.f_contiguous:  # X^T = X^T L^-T: from the right
        r = fn(1.0, fl, x.T, side=1, lower=1 - tl, trans_a=1 - tl, diag=1, overwrite_b=1)
        _into(x.T, r)
    else:
        r = fn(1.0, fl, x, side=0, lower=1 - tl, trans_a=tl, diag=1, overwrite_b=1)
        _into(x, r)
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
    if (s0 != item and m > 1) or s1 <= 0 or s1 % item:
        return None  # not column-major
    if _scipy() is None:
        return None
    if m == 0 or n == 0:
        return np.zeros(0, np.int64), -1
    lu, piv, info = _routine(kind, "getrf", lapack=True)(a, overwrite_a=1)
    if info < 0:  # an argument LAPACK rejected: a bug here, not in the data
        raise ValueError(f"getrf rejected argument {-info} for a {m} x {n} block")
    _into(a, lu)
    return piv.astype(np.int64), (info - 1 if info > 0 else -1)


def lapack(name, dtype):
    """SciPy's LAPACK wrapper ``name`` for ``dtype`` (``lapack("sytrf", float64)`` is
    ``dsytrf``), for routines NumPy has no counterpart of (the LDL and compact-QR factors):
    not switched off by ``SHARDED_HOST_BLAS``, as there is no NumPy path to fall back to.

    Examples
    --------
    >>> qr, tau, work, info = lapack("geqrf", np.float64)(np.array([[3.0], [4.0]]))
    >>> qr.ravel().tolist(), tau.tolist(), info
    ([-5.0, 0.5], [1.6], 0)
    """
    from scipy.linalg import lapack as lib

    return getattr(lib, _KINDS[np.dtype(dtype)] + name)
