"""The unit suite's st.jit API tests (decorators, guards, graphs, exceptions) on the
multi-node Ray cluster."""

from tests.unit.test_jit_api import *
