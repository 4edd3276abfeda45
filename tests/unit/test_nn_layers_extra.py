"""F.conv_transpose1d/2d, F.unfold/fold, F.embedding_bag and F.bilinear and their modules
(ConvTranspose1d/2d, Unfold, Fold, EmbeddingBag, Bilinear) against torch 2.13's values and
gradients (float64; tests/unit/data/nn_extra_torch.npz, written by scripts/torch_refs_nn.py)."""

import numpy as np
import pytest

import sharded as st
from tests.support.nn_cases import REF, cases, replay

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

F = st.nn.functional
FUNCS = ("conv_transpose1d", "conv_transpose2d", "unfold", "fold", "embedding_bag", "bilinear")


@pytest.mark.parametrize("name", cases(FUNCS))
def test_values_and_gradients_match_torch(name):
    replay(name)


@pytest.mark.parametrize(
    "name,split",
    [
        ("ct2d_strided", {"x": (2, 0)}),  # batch split
        ("ct2d", {"x": (2, 2)}),  # split along H
        ("ct1d", {"x": (2, 0)}),
        ("unfold_all", {"x": (2, 0)}),
        ("fold_all", {"x": (2, 0)}),
        ("bilinear", {"a": (2, 0), "b": (2, 0)}),
        ("bag_sum_2d", {"i": (2, 0)}),
        ("bag_sum_weights", {"i": (2, 0), "p": (2, 0)}),
    ],
)
def test_on_split_inputs(name, split):
    replay(name, split)
