"""scripts/gpt_train.py's GPT trained on sharded against torch: the tiny run recorded in
tests/unit/data/gpt_torch.npz (``python scripts/gpt_train.py --write-test-refs`` where torch
is) replayed from the same initial weights and batches, split along the batch and along the
sequence: every step's loss, and the held-out loss of the final weights, match torch's."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

import sharded as st

pytestmark = pytest.mark.ray_mirror  # these tests run on the Ray cluster too (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gpt_train", ROOT / "scripts" / "gpt_train.py")
gpt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpt)

REF = np.load(Path(__file__).parent / "data" / "gpt_torch.npz")
CFG = json.loads(str(REF["cfg"]))
INIT = {k[5:]: REF[k] for k in REF.files if k.startswith("init/")}
TOKENS = REF["tokens"]


@pytest.mark.parametrize(
    "dtype, split",
    [("float64", "batch"), ("float64", "seq"), ("float32", "batch")],
)
def test_training_matches_torch(dtype, split):
    losses, _, state = gpt.sharded_train(CFG, INIT, TOKENS, dtype, split)
    rtol = gpt.TOL[dtype]
    np.testing.assert_allclose(losses, REF[f"{dtype}/losses"], rtol=rtol, atol=0)
    assert losses[-1] < losses[0]  # it learns
    # the final state_dict, under torch's names, reloads and scores the held-out batch as
    # torch's final weights do
    assert set(state) == set(INIT)
    model = gpt.sharded_model(CFG, state, dtype)
    held_out = gpt.sharded_loss(model, TOKENS[-1], split).item()
    np.testing.assert_allclose(held_out, REF[f"{dtype}/eval_loss"], rtol=rtol, atol=0)


def test_split_layouts_stay_split():
    """With the sequence split, the logits stay split along the sequence (attention does not
    gather the whole sequence onto one worker)."""
    model = gpt.sharded_model(CFG, INIT, "float64")
    x = st.tensor(TOKENS[0, :, :-1].astype(np.int64), shards=2, dim=1)
    logits = model(x)
    assert logits.layout.grid[1] == 2, logits.layout
    x = st.tensor(TOKENS[0, :, :-1].astype(np.int64), shards=2, dim=0)
    assert model(x).layout.grid[0] == 2


def test_readme_example():
    """README's "Training a transformer" block runs and learns (it asserts so itself)."""
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## Training a transformer\n")
    code = text[start:].split("```python\n", 1)[1].split("```", 1)[0]
    ns = {"__name__": "readme_example"}
    exec(compile(code, "README.md (Training a transformer)", "exec"), ns)
    assert ns["loss"].item() < 1.5
