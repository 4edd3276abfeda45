"""st.masked against torch.masked (tests/unit/data/masked_torch.npz, written by
scripts/torch_refs_masked.py: the tests never import torch): every function on whole and
split inputs, with an element mask that fully masks a row, a broadcast row mask and no mask;
keepdim, dtype=, integer inputs, the fills of fully masked slices and float64 gradients."""

import json
from pathlib import Path

import numpy as np
import pytest

import sharded as st
from sharded.errors import ArgumentError, ArgumentTypeError, DimError, DTypeError, ShapeError

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

REF = np.load(Path(__file__).parent / "data" / "masked_torch.npz")
INF = float("inf")


def _tuples(v):
    return tuple(_tuples(e) for e in v) if isinstance(v, list) else v


# the cases of scripts/torch_refs_masked.py, recorded with their values:
# (key, function, input, args, kwargs)
CASES = [(k, f, x, _tuples(a), kw) for k, f, x, a, kw in json.loads(str(REF["cases"]))]
INPUT_DTYPES = {"x": np.float64, "x32": np.float32, "xi": np.int64}


def _inputs(name, shards, requires_grad=False):
    data = REF["xi"] if name == "xi" else REF["x"].astype(INPUT_DTYPES[name])
    return st.tensor(data, shards=shards, requires_grad=requires_grad)


def _call(fn, x, args, kw, shards):
    kw = dict(kw)
    if "mask" in kw:  # the mask split too when the input is (the broadcast row mask: whole)
        m = REF[kw["mask"]]
        kw["mask"] = st.tensor(m, shards=shards if m.ndim == 2 else None)
    if "dtype" in kw:
        kw["dtype"] = getattr(st, kw["dtype"])
    return getattr(st.masked, fn)(x, *args, **kw)


def _same(got, exp, rtol=1e-12):
    """Equal values with NaN where torch's is and the same infinities."""
    got, exp = np.asarray(got), np.asarray(exp)
    assert got.shape == exp.shape
    np.testing.assert_allclose(
        got.astype(np.float64), exp.astype(np.float64), rtol=rtol, atol=1e-12
    )


@pytest.mark.parametrize("shards", [None, 2])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_dtypes_and_fills(case, shards):
    key, fn, name, args, kw = case
    y = _call(fn, _inputs(name, shards), args, kw, shards)
    exp = REF[key]
    assert y.dtype.np == exp.dtype, (y.dtype, exp.dtype)
    _same(y.numpy(), exp, rtol=1e-6 if exp.dtype == np.float32 else 1e-12)


GRAD_CASES = [c for c in CASES if f"{c[0]}/grad" in REF.files]


@pytest.mark.parametrize("shards", [None, 2])
@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_float64_gradients(case, shards):
    key, fn, name, args, kw = case
    x = _inputs(name, shards, requires_grad=True)
    y = _call(fn, x, args, kw, shards)
    finite = st.isfinite(y).detach()
    w = st.tensor(REF[f"w/{key}"]) * finite
    (st.where(finite, y, 0.0) * w).sum().backward()
    _same(x.grad.numpy(), REF[f"{key}/grad"])


@pytest.mark.parametrize("shards", [None, 2])
def test_logaddexp_masks_each_operand(shards):
    a = st.tensor(REF["x"], shards=shards, requires_grad=True)
    b = st.tensor(REF["x"][::-1].copy(), requires_grad=True)
    m = st.tensor(REF["m"], shards=shards)
    y = st.masked.logaddexp(a, b, input_mask=m, other_mask=st.tensor(REF["r"]))
    _same(y.detach().numpy(), REF["logaddexp"])
    finite = st.isfinite(y).detach()
    st.where(finite, y, 0.0).sum().backward()
    _same(a.grad.numpy(), REF["logaddexp/grad_a"])
    _same(b.grad.numpy(), REF["logaddexp/grad_b"])


def test_no_mask_is_the_plain_reduction():
    x = st.tensor(REF["x"], shards=2)
    assert st.masked.sum(x).item() == pytest.approx(x.sum().item())
    assert st.masked.amax(x, ()).item() == x.amax().item()
    np.testing.assert_allclose(st.masked.softmax(x, 1).numpy(), st.softmax(x, 1).numpy())


def test_int_softmax_with_a_float_dtype():
    xi = st.tensor(REF["xi"], shards=2)
    y = st.masked.softmax(xi, 1, dtype=st.float64, mask=st.tensor(REF["r"]))
    x = st.tensor(REF["xi"].astype(np.float64))
    _same(y.numpy(), st.masked.softmax(x, 1, mask=st.tensor(REF["r"])).numpy())
    assert y.numpy()[:, 1].tolist() == [0.0, 0.0, 0.0]


def test_bad_calls_raise_typed_errors():
    x = st.tensor(REF["x"])
    with pytest.raises(ShapeError, match=r"\(3, 4\)"):
        st.masked.sum(x, 1, mask=st.tensor([True, False, True]))
    with pytest.raises(ShapeError, match="more dims"):
        st.masked.sum(x, mask=st.ones((2, 3, 4), dtype=st.bool))
    with pytest.raises(DimError, match="dim 2"):
        st.masked.sum(x, 2)
    with pytest.raises(ArgumentError, match="more than once"):
        st.masked.amax(x, (1, -1))
    with pytest.raises(DTypeError, match="int64"):
        st.masked.mean(st.tensor(REF["xi"]), 1)
    with pytest.raises(DTypeError, match="int64"):
        st.masked.softmax(st.tensor(REF["xi"]), 1)
    with pytest.raises(DTypeError, match="int64"):
        st.masked.norm(st.tensor(REF["xi"]), 2.0, 1)
    with pytest.raises(ArgumentTypeError, match="None"):
        st.masked.norm(x, None, 1)
    with pytest.raises(ArgumentError, match="one of unbiased and correction"):
        st.masked.var(x, 1, unbiased=True, correction=1)
    with pytest.raises(ArgumentError, match="fully masked"):
        st.masked.median(st.tensor(REF["xi"]), 1, mask=st.tensor(REF["m"]))
    with pytest.raises(ArgumentTypeError, match="ndarray"):
        st.masked.sum(REF["x"], 1)


def test_complex_logsumexp_and_a_0d_mean():
    # torch 2.13: complex slices fill with -inf (a fully masked one gives -inf+0j); a 0-d
    # input's dim 0 is its one element
    x = st.tensor([[1 + 1j, 2 - 1j], [0.5j, 3]], dtype=st.complex128, shards=2)
    got = st.masked.logsumexp(x, 1, mask=st.tensor([[True, False], [True, True]])).tolist()
    assert got[0] == 1 + 1j
    assert got[1] == pytest.approx(3.0430261277608053 + 0.022865966096667j, rel=1e-14)
    got = st.masked.logsumexp(x, 1, mask=st.tensor([[False, False], [True, True]])).tolist()
    assert got[0] == complex(-np.inf, 0)
    y = st.masked.mean(st.tensor(2.5, dtype=st.float64), 0, keepdim=True)
    assert y.shape == () and y.item() == 2.5
