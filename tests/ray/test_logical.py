"""The unit suite's logical tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_logical import *
