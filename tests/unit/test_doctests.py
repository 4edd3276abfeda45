"""Every docstring example of the ``sharded`` package runs, on the in-process executor.

The tools (benchmarks, demo), the Ray executor and the CuPy backend are left out: their
examples need Ray, a GPU or minutes. Each example starts from a live local session of two
workers (an example that calls ``st.init`` itself gets none, so its own call is the first).
"""

import doctest
import importlib
import pkgutil

import pytest

import sharded as st

EXCLUDED = ("sharded.tools", "sharded.runtime.driver.ray_executor", "sharded.backend.cupy_")

FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def _modules():
    names = ["sharded"] + [m.name for m in pkgutil.walk_packages(st.__path__, "sharded.")]
    return [
        importlib.import_module(n)
        for n in sorted(names)
        if not any(n == e or n.startswith(e + ".") for e in EXCLUDED)
    ]


def _examples():
    finder = doctest.DocTestFinder(exclude_empty=True)
    seen, out = set(), []
    for mod in _modules():
        for test in finder.find(mod, mod.__name__):
            # a function re-exported by another module is found there too: run it once
            key = (test.filename, test.lineno, test.name.rsplit(".", 1)[-1])
            if test.examples and key not in seen:
                seen.add(key)
                out.append(test)
    return out


EXAMPLES = _examples()


@pytest.fixture(scope="module", autouse=True)
def two_local_workers():
    """Doctests see two workers (as the docs' ``st.init`` does); the package's other tests
    get their three-worker session back afterwards."""
    st.shutdown()
    st.init(executor="local", num_workers=2)
    yield
    st.shutdown()
    st.init(executor="local", num_workers=3, min_shard_bytes=0)


@pytest.mark.parametrize("test", EXAMPLES, ids=[t.name for t in EXAMPLES])
def test_docstring_example(test):
    if "st.init(" in test.docstring:  # the example starts its own session
        st.shutdown()
    elif not st.is_initialized():
        st.init(executor="local", num_workers=2)
    runner, report = doctest.DocTestRunner(optionflags=FLAGS), []
    try:
        runner.run(test, out=report.append)
    finally:
        if not st.is_initialized():  # the example shut its session down
            st.init(executor="local", num_workers=2)
    assert not runner.failures, "".join(report)
