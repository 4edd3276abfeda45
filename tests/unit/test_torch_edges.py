"""Edge cases where torch 2.13 answers and sharded refused or differed (from the OpInfo
comparison's failing samples): empty batches of the norms, ``mode='area'`` of a 5-D input,
a 0-d ``x`` of ``linalg.vander``, ``unfold`` of bool and complex inputs. The expected values
were asked of torch and are written here as literals."""

import numpy as np
import pytest

import sharded as st

F = st.nn.functional


def test_norms_of_an_empty_batch_return_it():
    assert F.group_norm(st.ones(0, 4, 3), 2).shape == (0, 4, 3)
    out = F.group_norm(st.ones(0, 4), 2, st.ones(4), st.ones(4))
    assert out.shape == (0, 4) and out.dtype == st.float32
    assert F.batch_norm(st.ones(0), None, None, training=True).shape == (0,)
    rm, rv = st.zeros(3), st.ones(3)
    assert F.batch_norm(st.ones(0, 3), rm, rv, training=True).shape == (0, 3)
    assert rm.tolist() == [0.0] * 3 and rv.tolist() == [1.0] * 3  # untouched, as torch
    with pytest.raises(st.ArgumentError, match="more than 1 value per channel"):
        F.batch_norm(st.ones(1, 3), None, None, training=True)


def test_area_interpolation_of_a_5d_input():
    x = st.arange(60.0, dtype=st.float64).reshape(1, 2, 3, 2, 5)
    out = F.interpolate(x, size=(2, 1, 3), mode="area")
    want = [8.0, 9.5, 11.0, 18.0, 19.5, 21.0, 38.0, 39.5, 41.0, 48.0, 49.5, 51.0]
    assert out.shape == (1, 2, 2, 1, 3) and out.reshape(-1).tolist() == want


def test_vander_of_a_0d_input_is_one_row():
    assert st.linalg.vander(st.tensor(2.0), N=3).tolist() == [[1.0, 2.0, 4.0]]
    assert st.linalg.vander(st.tensor(2), N=2).tolist() == [[1, 2]]
    for x, n in ((st.tensor(2.0), None), (st.tensor([2.0]), 1), (st.tensor([2.0, 3.0]), 0)):
        with pytest.raises(st.ArgumentError, match="N must be greater than 1"):
            st.linalg.vander(x, N=n)


def test_unfold_of_bool_and_complex_inputs():
    x = st.tensor([[[[True, False, True], [False, True, False]]]])
    out = F.unfold(x, (1, 2), padding=1)
    on0, on1 = {5, 7, 10}, {4, 6, 9}
    want = [[[i in on0 for i in range(16)], [i in on1 for i in range(16)]]]
    assert out.dtype == st.bool and out.tolist() == want
    z = st.tensor([[[1 + 2j, 3 - 1j], [0.5j, 2]]], dtype=st.complex64)
    got = F.unfold(z, 1)
    assert got.dtype == st.complex64
    np.testing.assert_array_equal(got.numpy(), [[1 + 2j, 3 - 1j, 0.5j, 2]])
    with pytest.raises(st.DTypeError, match="im2col"):
        F.unfold(st.ones(1, 1, 2, 2, dtype=st.int64), 1)


def test_embedding_max_norm_and_scale_grad_by_freq_as_torch():
    w = st.tensor([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0], [1.0, 1.0]])
    w2 = w.clone().requires_grad_()
    out = F.embedding(st.tensor([[0, 2], [0, 1]]), w2, max_norm=1.0)
    # torch 2.13: the named rows past the norm are rescaled in the table itself
    want_w = [[0.6, 0.8], [0.3, 0.4], [0.6, 0.8], [1.0, 1.0]]
    np.testing.assert_allclose(w2.detach().numpy(), want_w, rtol=1e-6)
    np.testing.assert_allclose(out.detach().numpy()[1, 1], [0.3, 0.4], rtol=1e-6)
    out.sum().backward()
    assert w2.grad.tolist() == [[2.0, 2.0], [1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    w3 = w.clone().requires_grad_()
    out = F.embedding(st.tensor([[0, 2], [0, 0]]), w3, scale_grad_by_freq=True, padding_idx=2)
    (out * st.arange(8.0).reshape(2, 2, 2)).sum().backward()
    want = [[3.3333334922790527, 4.333333492279053], [0, 0], [0, 0], [0, 0]]
    np.testing.assert_allclose(w3.grad.numpy(), want, rtol=1e-6)
    w4 = w.clone()
    F.embedding(st.tensor([0, 3]), w4, max_norm=2.0, norm_type=1.0)
    np.testing.assert_allclose(w4.numpy()[0], [0.8571428, 1.1428571], rtol=1e-6)
    assert w4.numpy()[3].tolist() == [1.0, 1.0]  # norm 2 is not past max_norm 2
    w5 = w.clone()
    bags = F.embedding_bag(st.tensor([[0, 2], [1, 0]]), w5, max_norm=1.0, mode="sum")
    np.testing.assert_allclose(bags.numpy(), [[1.2, 1.6], [0.9, 1.2]], rtol=1e-6)
    emb = st.nn.Embedding(
        10, 3, padding_idx=0, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True
    )
    assert repr(emb) == (
        "Embedding(10, 3, padding_idx=0, max_norm=1.0, norm_type=1.0, scale_grad_by_freq=True)"
    )
    bag = st.nn.EmbeddingBag(10, 3, max_norm=1.0, norm_type=1.0, mode="sum", padding_idx=1)
    assert (
        repr(bag) == "EmbeddingBag(10, 3, max_norm=1.0, norm_type=1.0, mode='sum', padding_idx=1)"
    )
    assert (emb(st.tensor([1, 2])).abs().sum(1) <= 1.0 + 1e-6).all().item()
    # sparse=True: the same values, a dense gradient
    w6 = w.clone().requires_grad_()
    F.embedding(st.tensor([1, 1]), w6, sparse=True).sum().backward()
    assert w6.grad.tolist() == [[0.0, 0.0], [2.0, 2.0], [0.0, 0.0], [0.0, 0.0]]
    # a bag's frequency scaling counts each index in the input (padded bags apart)
    w7 = w.clone().requires_grad_()
    ids, offs = st.tensor([0, 0, 1, 0]), st.tensor([0, 3])
    F.embedding_bag(ids, w7, offs, scale_grad_by_freq=True, mode="sum").sum().backward()
    assert w7.grad.tolist() == [[1.0, 1.0], [1.0, 1.0], [0.0, 0.0], [0.0, 0.0]]


def test_tensordot_broadcasts_contracted_dims_of_size_1():
    # torch 2.13: (1, 1, 1) with (2, 1, 2) over ([0, 1], [2, 0]) sums b over both
    a, b = st.ones(1, 1, 1), st.arange(4.0).reshape(2, 1, 2)
    assert st.tensordot(a, b, ([0, 1], [2, 0])).tolist() == [[6.0]]
    a = st.tensor([2.0, 3.0]).reshape(2, 1, 1).requires_grad_()
    b = st.arange(4.0).reshape(2, 1, 2).requires_grad_()
    r = st.tensordot(a, b, ([0, 1], [2, 0]))
    r.sum().backward()
    assert r.tolist() == [[16.0]]
    assert a.grad.reshape(-1).tolist() == [2.0, 4.0] and b.grad.reshape(-1).tolist() == [
        2.0,
        3.0,
        2.0,
        3.0,
    ]
    with pytest.raises(st.ShapeError, match="do not match"):
        st.tensordot(st.ones(3, 1), st.ones(2, 1), ([0], [0]))


def test_complex_convolutions_and_their_gradients():
    # torch 2.13's values and gradients (a complex conv1d with a bias)
    x = st.tensor([[[1 + 2j, 3 - 1j, 0.5j]]], dtype=st.complex64, requires_grad=True)
    w = st.tensor([[[2 - 1j, 1j]]], dtype=st.complex64, requires_grad=True)
    r = F.conv1d(x, w, st.tensor([1 + 1j], dtype=st.complex64))
    assert r.dtype == st.complex64 and r.tolist() == [[[6 + 7j, 5.5 - 4j]]]
    (r.real.sum() + 2 * r.imag.sum()).backward()
    assert x.grad.tolist() == [[[5j, 2 + 4j, 2 - 1j]]]
    assert w.grad.tolist() == [[[6 + 7j, 2 + 6.5j]]]
    # a transposed convolution of a complex input against the real formula
    xs = np.array([[[[1 + 1j, 2j], [3, 1 - 1j]]]], dtype=np.complex128)
    ws = np.array([[[[1j, 2], [1, -1j]]]], dtype=np.complex128)
    out = F.conv_transpose2d(st.tensor(xs), st.tensor(ws)).numpy()
    want = np.zeros((1, 1, 3, 3), complex)
    for i in range(2):
        for j in range(2):
            want[0, 0, i : i + 2, j : j + 2] += xs[0, 0, i, j] * ws[0, 0]
    np.testing.assert_allclose(out, want, rtol=1e-12)


def test_lstsq_of_a_wide_matrix_has_torchs_gradient():
    # the minimum-norm solution of a full-row-rank A is pinv(A) @ B, which torch
    # differentiates; finite differences agree (real and complex, batched, vector B)
    from sharded.autograd import gradcheck

    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 5))
    b = rng.standard_normal((2, 3, 2))
    for A, B in ((a, b), (a + 1j * rng.standard_normal(a.shape), b + 0.5j)):
        At = st.tensor(A, requires_grad=True)
        Bt = st.tensor(B, requires_grad=True)
        assert gradcheck(lambda x, y: st.linalg.lstsq(x, y).solution, (At, Bt))
    A, B = st.tensor(rng.standard_normal((3, 4)), requires_grad=True), st.tensor([1.0, 2, 3])
    assert gradcheck(lambda x: st.linalg.lstsq(x, B.double()).solution, (A,))


@pytest.mark.parametrize("shards", [1, 2])
def test_lstsq_residuals_and_singular_values_have_torchs_gradient(shards):
    # a batch of tall systems (one NumPy lstsq per matrix): the residuals are differentiable
    # in torch, not only the solution; the singular values are not (literals from torch)
    a = [[[1.0, 2], [3, 1], [0, 1], [2, 2]], [[2.0, 0], [1, 1], [1, 3], [0, 1]]]
    b = [[[1.0], [0], [2], [1]], [[0.0], [1], [1], [3]]]
    A = st.tensor(a, dtype=st.float64, shards=shards, requires_grad=True)
    B = st.tensor(b, dtype=st.float64, shards=shards, requires_grad=True)
    r = st.linalg.lstsq(A, B, driver="gelsd")
    np.testing.assert_allclose(r.residuals.tolist(), [[1.4237288135593225], [6.48]], rtol=1e-12)
    assert not r.singular_values.requires_grad
    (r.residuals.sum() + r.singular_values.sum()).backward()
    ga = [
        [[-0.4274633725940821, 1.015225509910945], [0.20683711577133018, -0.4912381499569091]],
        [[0.8411376041367423, -1.9977018098247628], [-0.09652398735995396, 0.2292444699798906]],
        [[0.0576, -0.3264], [0.1056, -0.5984]],
        [[-0.2208, 1.2512], [0.5568, -3.1552]],
    ]
    np.testing.assert_allclose(A.grad.numpy(), np.reshape(ga, (2, 4, 2)), atol=1e-12)
    gb = [[-1.0508474576271185, 0.5084745762711866, 2.0677966101694913, -0.23728813559322015]]
    gb.append([0.48, 0.88, -1.84, 4.64])
    np.testing.assert_allclose(B.grad.numpy(), np.reshape(gb, (2, 4, 1)), atol=1e-12)


def test_eig_eigenvector_gradient():
    # torch's linalg_eig_backward: finite differences of a phase-invariant function of the
    # unit-norm eigenvectors (and the eigenvalues) agree, real and complex input
    from sharded.autograd import gradcheck

    rng = np.random.default_rng(5)
    w = st.tensor(rng.standard_normal((3, 3)))

    def f(a):
        lam, v = st.linalg.eig(a)
        return (v.abs() ** 2 * w).sum() + (lam * lam).real.sum()

    for A in (rng.standard_normal((3, 3)), rng.standard_normal((3, 3)) + 1j * rng.random((3, 3))):
        assert gradcheck(f, (st.tensor(A, requires_grad=True),))


def test_pinv_hermitian_reads_the_lower_triangle():
    # torch 2.13: [[1, 2], [3, 4]] with hermitian=True is the inverse of [[1, 3], [3, 4]]
    a = st.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=st.float64)
    np.testing.assert_allclose(
        st.linalg.pinv(a, hermitian=True).numpy(), [[-0.8, 0.6], [0.6, -0.2]], rtol=1e-12
    )
    s = st.tensor([[2.0, 7.0], [0.0, 0.0]], dtype=st.float64)  # lower: diag(2, 0), rank 1
    assert st.linalg.pinv(s, hermitian=True).tolist() == [[0.5, 0.0], [0.0, 0.0]]
