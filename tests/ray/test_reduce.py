"""The unit suite's reduce tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_reduce import *
