"""The unit suite's triangular tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_triangular import *
