import pytest

import sharded as st
from sharded.core import dispatch

# every op checks its planner's result against its primitive's pure out_spec
dispatch.CHECK_SPECS = True


@pytest.fixture(scope="package", autouse=True)
def local_session():
    """The in-process executor with 3 workers (so 2 or 5 shards map unevenly onto them)."""
    st.shutdown()
    st.init(executor="local", num_workers=3, min_shard_bytes=0)
    yield
    st.shutdown()


@pytest.fixture
def cli_session():
    """For a test of a command that starts and shuts down its own sessions (``sharded
    bench``...): the package's session comes back after it."""
    st.shutdown()
    yield
    st.shutdown()
    st.init(executor="local", num_workers=3, min_shard_bytes=0)


@pytest.fixture
def spy_runs(monkeypatch):
    """``spy_runs(module)`` wraps ``module.run`` (a worker's one-pass hook, which returns
    None when it declines) and returns the list of whether each call ran."""

    def spy(module):
        ran = []
        real = module.run

        def run(*a):
            got = real(*a)
            ran.append(got is not None)
            return got

        monkeypatch.setattr(module, "run", run)
        return ran

    return spy
