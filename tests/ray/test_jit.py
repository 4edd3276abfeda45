"""The unit suite's st.jit tests on the multi-node Ray cluster: traces, replays (transfers
between workers included) and the training step compared with eager runs there."""

from tests.unit.test_jit import *
