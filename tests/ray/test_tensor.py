"""The unit suite's tensor metadata tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_tensor import *
