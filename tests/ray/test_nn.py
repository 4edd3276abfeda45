"""The unit suite's nn tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_nn import *
