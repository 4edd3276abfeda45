"""The unit suite's unary tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_unary import *
