"""The unit suite's stored-program tests (the worker's compiled st.jit programs, traced
reductions as tree commands) on the multi-node Ray cluster."""

from tests.unit.test_program import *
