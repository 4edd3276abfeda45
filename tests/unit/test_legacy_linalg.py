"""torch's older ``st.lu``, ``st.lu_solve`` and ``st.triangular_solve`` against torch 2.13's
values and float64 gradients (tests/unit/data/legacy_linalg_torch.npz, written by
scripts/torch_refs_legacy_linalg.py), on whole and batch-split inputs, and their errors."""

from pathlib import Path

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

REF = np.load(Path(__file__).parent / "data" / "legacy_linalg_torch.npz")


def _close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def _inputs(shards):
    a = st.from_numpy(REF["a"], shards=shards).requires_grad_()
    return a, st.from_numpy(REF["b"], shards=shards).requires_grad_()


@pytest.mark.parametrize("shards", [1, 2])
def test_lu_and_lu_solve_match_torch(shards):
    a, b = _inputs(shards)
    lu, piv = st.lu(a)
    assert piv.dtype == st.int32 and lu.dtype == st.float64
    _close(lu.detach().numpy(), REF["lu"])
    np.testing.assert_array_equal(piv.numpy(), REF["piv"])
    x = st.lu_solve(b, lu, piv)
    _close(x.detach().numpy(), REF["lu_solve"])
    (x * st.from_numpy(REF["g"])).sum().backward()
    _close(a.grad.numpy(), REF["lu_solve/da"])
    _close(b.grad.numpy(), REF["lu_solve/db"])
    lu2, piv2 = a.detach().lu()  # the method form
    _close(lu2.numpy(), REF["lu"])
    _close(b.detach().lu_solve(lu2, piv2).numpy(), REF["lu_solve"])


def test_lu_get_infos_reports_singular_matrices():
    lu, piv, info = st.lu(st.from_numpy(REF["sing/a"]), get_infos=True)
    assert info.dtype == st.int32
    _close(lu.numpy(), REF["sing/lu"])
    assert piv.tolist() == REF["sing/piv"].tolist() and info.tolist() == REF["sing/info"].tolist()
    assert len(st.lu(st.from_numpy(REF["sing/a"]))) == 2  # no error without get_infos either


@pytest.mark.parametrize("shards", [1, 2])
@pytest.mark.parametrize(
    "name, kw",
    [("tri_u", {}), ("tri_lt", {"upper": False, "transpose": True}),
     ("tri_unit", {"unitriangular": True})],
)  # fmt: skip
def test_triangular_solve_matches_torch(shards, name, kw):
    a, b = _inputs(shards)
    out = st.triangular_solve(b, a, **kw)
    assert out._fields == ("solution", "cloned_coefficient")
    _close(out.solution.detach().numpy(), REF[name])
    np.testing.assert_array_equal(out.cloned_coefficient.detach().numpy(), REF["a"])
    ((out.solution * st.from_numpy(REF["g"])).sum() + out.cloned_coefficient.sum()).backward()
    _close(a.grad.numpy(), REF[f"{name}/da"])
    _close(b.grad.numpy(), REF[f"{name}/db"])
    _close(b.detach().triangular_solve(a.detach(), **kw)[0].numpy(), REF[name])


def test_legacy_solver_errors():
    a = st.eye(3, dtype=st.float64)
    with pytest.raises(st.errors.ShapeError, match=r"2 or more dimensions. Got size: \[3\]"):
        st.lu(st.ones(3))
    with pytest.raises(st.errors.ShapeError, match="Expected b to have at least 2 dimensions"):
        st.triangular_solve(st.ones(3, dtype=st.float64), a)
    with pytest.raises(st.errors.ShapeError, match="square matrices"):
        st.triangular_solve(st.ones(3, 1, dtype=st.float64), a[:2])
    with pytest.raises(st.errors.DTypeError, match="same dtype"):
        st.triangular_solve(st.ones(3, 1), a)
    with pytest.raises(st.errors.ShapeError):
        st.lu_solve(st.ones(3, dtype=st.float64), *st.lu(a))
