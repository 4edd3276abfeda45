"""repr of tensors against torch 2.x's exact strings (torch's ``_Formatter``), with our
documented ``shards=N`` part removed before comparing."""

import re

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)


def _r(t):
    return re.sub(r",?\s*shards=\d+( \(replicated\))?", "", repr(t))


CASES = [
    (lambda: st.tensor(1.5), "tensor(1.5000)"),
    (lambda: st.tensor([1.0, 2.0], shards=2), "tensor([1., 2.])"),
    (lambda: st.tensor([True, False]), "tensor([ True, False])"),
    (lambda: st.tensor([1, -2, 300], shards=2), "tensor([  1,  -2, 300])"),
    (lambda: st.zeros(2, 0, dtype=st.int64), "tensor([], size=(2, 0), dtype=sharded.int64)"),
    (lambda: st.zeros(0, dtype=st.bool), "tensor([], dtype=sharded.bool)"),
    (lambda: st.zeros(0), "tensor([])"),
    (lambda: st.tensor([1.0, 2.0], dtype=st.float64), "tensor([1., 2.], dtype=sharded.float64)"),
    (lambda: st.tensor([float("nan"), float("inf"), 1.0]), "tensor([nan, inf, 1.])"),
    (lambda: st.tensor([-0.0, 1.0]), "tensor([-0., 1.])"),
    (lambda: st.tensor([-0.0, 0.0]), "tensor([-0., 0.])"),
    (lambda: st.tensor([complex(float("nan"), 1), 1 + 0j]), "tensor([nan+1.j, 1.+0.j])"),
    (lambda: st.tensor([100000.0, 1.0]), "tensor([1.0000e+05, 1.0000e+00])"),
    (lambda: st.tensor([1e-5, 1.0]), "tensor([1.0000e-05, 1.0000e+00])"),
    (lambda: st.arange(1001, shards=3), "tensor([   0,    1,    2,  ...,  998,  999, 1000])"),
    (
        lambda: st.arange(2000.0, shards=3),
        "tensor([0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 1.9970e+03, 1.9980e+03,\n"
        "        1.9990e+03])",
    ),
    (
        lambda: st.arange(40.0, shards=3) / 7,
        "tensor([0.0000, 0.1429, 0.2857, 0.4286, 0.5714, 0.7143, 0.8571, 1.0000, 1.1429,\n"
        "        1.2857, 1.4286, 1.5714, 1.7143, 1.8571, 2.0000, 2.1429, 2.2857, 2.4286,\n"
        "        2.5714, 2.7143, 2.8571, 3.0000, 3.1429, 3.2857, 3.4286, 3.5714, 3.7143,\n"
        "        3.8571, 4.0000, 4.1429, 4.2857, 4.4286, 4.5714, 4.7143, 4.8571, 5.0000,\n"
        "        5.1429, 5.2857, 5.4286, 5.5714])",
    ),
    (
        lambda: st.tensor(np.arange(24.0).reshape(2, 3, 4), dtype=st.float32, shards=2),
        "tensor([[[ 0.,  1.,  2.,  3.],\n         [ 4.,  5.,  6.,  7.],\n"
        "         [ 8.,  9., 10., 11.]],\n\n        [[12., 13., 14., 15.],\n"
        "         [16., 17., 18., 19.],\n         [20., 21., 22., 23.]]])",
    ),
    (lambda: st.tensor([1.0, 2.0], requires_grad=True), "tensor([1., 2.], requires_grad=True)"),
    (
        lambda: st.tensor([1.0, 2.0], requires_grad=True) * 2,
        "tensor([2., 4.], grad_fn=<MulBackward0>)",
    ),
]


@pytest.mark.parametrize("make, want", CASES, ids=[str(i) for i in range(len(CASES))])
def test_repr_matches_torch(make, want):
    assert _r(make()) == want


def test_printoptions_as_torch():
    try:
        st.set_printoptions(sci_mode=False)
        assert _r(st.tensor([1e-9, 2.0])) == "tensor([0.0000, 2.0000])"
        assert _r(st.tensor([1e9, 2.0])) == "tensor([1000000000.,          2.])"
        st.set_printoptions(sci_mode=None, threshold=5, edgeitems=2)
        assert _r(st.arange(20.0).reshape(4, 5)) == (
            "tensor([[ 0.,  1.,  ...,  3.,  4.],\n        [ 5.,  6.,  ...,  8.,  9.],\n"
            "        [10., 11.,  ..., 13., 14.],\n        [15., 16.,  ..., 18., 19.]])"
        )
        st.set_printoptions(profile="default", linewidth=40)
        assert _r(st.arange(12.0)) == (
            "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,\n         6.,  7.,  8.,  9., 10., 11.])"
        )
        x = st.tensor([1.0, 2.0], requires_grad=True) * 2
        assert _r(x) == "tensor([2., 4.],\n       grad_fn=<MulBackward0>)"
    finally:
        st.set_printoptions(profile="default", sci_mode=None)
