"""The unit suite's order-statistics tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_order import *
