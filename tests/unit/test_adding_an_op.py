"""The guide's "Adding an op" (``scripts/docs/docs/guide/code.md``) runs. Each ```python
block is executed as the module whose path the text names last before it: a new module in a
fresh namespace, an existing one in a copy of its namespace (as if the block were pasted
there). The op block's ``__all__`` names become ``st`` names (what its family's ``__init__``
does), its docstring examples run, then the test block's tests are called. What the blocks
register (primitive, kernels, methods, ``st`` names) is undone afterwards. The kernels live in
this process: the in-process executor only."""

import doctest
import importlib
import inspect
import re
from pathlib import Path

import pytest

import sharded as st
from sharded.core.registry import PRIMITIVES
from sharded.runtime.worker.core import KERNELS

PAGE = Path(__file__).parents[2] / "scripts" / "docs" / "docs" / "guide" / "code.md"


def section_blocks(title: str) -> list:
    """``(module, code)`` for each ```python block of the page's section ``title``, in order:
    ``module`` is the one whose path (`sharded/...py` or `tests/...py`) the text between the
    previous block and this one names last."""
    text = PAGE.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    pieces = re.split(r"```python\n(.*?)```", text[start : None if end < 0 else end], flags=re.S)
    blocks = []
    for prose, code in zip(pieces[0::2], pieces[1::2]):
        paths = re.findall(r"`((?:sharded|tests)/[\w/]+)\.py`", prose)
        assert paths, f"the page names no module before the block:\n{code}"
        blocks.append((paths[-1].replace("/", "."), code))
    return blocks


def run_block(module: str, code: str, n: int) -> dict:
    """Execute ``code`` as module ``module``; return the names it defines or changes."""
    try:
        ns = dict(vars(importlib.import_module(module)))
    except ModuleNotFoundError as e:
        if e.name != module:
            raise
        ns = {"__name__": module, "__package__": module.rpartition(".")[0]}
    before = dict(ns)
    exec(compile(code, f"{PAGE.name} (Adding an op, block {n})", "exec"), ns)
    return {k: v for k, v in ns.items() if k not in before or before[k] is not v}


@pytest.fixture
def restored():
    """The registry and the tensor's methods as they were before the test."""
    tables = {"prims": dict(PRIMITIVES), "kernels": dict(KERNELS)}
    methods = dict(vars(st.ShardedTensor))
    yield tables
    PRIMITIVES.clear()
    PRIMITIVES.update(tables["prims"])
    KERNELS.clear()
    KERNELS.update(tables["kernels"])
    for name, value in list(vars(st.ShardedTensor).items()):
        if name not in methods:
            delattr(st.ShardedTensor, name)
        elif methods[name] is not value:
            setattr(st.ShardedTensor, name, methods[name])


def _drop(names) -> None:
    """Unregister primitives ``names`` and their kernels, so that a block may define them anew
    (the fixture ``restored`` puts the library's back)."""
    for name in names:
        prim = PRIMITIVES.pop(name, None)
        for k in prim.kernels if prim else ():
            KERNELS.pop(k, None)


def _examples(op: dict) -> list:
    finder = doctest.DocTestFinder()  # module=False: the examples are the page's
    return [
        t
        for name, f in op.items()
        if inspect.isfunction(f)
        for t in finder.find(f, f"{PAGE.name}: {name}", module=False)
    ]


@pytest.mark.parametrize("example", [0, 1], ids=["elementwise factory", "full block"])
def test_adding_an_op(restored, monkeypatch, example):
    blocks = section_blocks("Adding an op")
    assert len(blocks) == 4, [m for m, _ in blocks]
    (op_module, op_code), (test_module, test_code) = blocks[2 * example : 2 * example + 2]
    assert re.fullmatch(r"sharded\.ops\.\w+\.prims(\.\w+)?", op_module), op_module
    assert test_module.startswith("tests.unit.test_"), test_module
    defined = re.findall(r'(?:E\.define|@primitive)\(\s*"(\w+)"', op_code)
    assert defined, "the op block defines no primitive"
    _drop(defined)
    op = run_block(op_module, op_code, 2 * example + 1)
    assert set(defined) <= set(PRIMITIVES), "the op block registers no primitive"
    for name in op.get("__all__", ()):
        monkeypatch.setattr(st, name, op[name], raising=False)
    for name in defined:  # the block's public function, where it has one
        if inspect.isfunction(op.get(name)):
            monkeypatch.setattr(st, name, op[name], raising=False)
    examples = _examples(op)
    assert examples, "the op block's function has no docstring example"
    for ex in examples:
        runner, report = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE), []
        runner.run(ex, out=report.append)
        assert not runner.failures, "".join(report)
    tests = {
        k: f
        for k, f in run_block(test_module, test_code, 2 * example + 2).items()
        if k.startswith("test")
    }
    assert tests, "the test block defines no test"
    for test in tests.values():
        test()
