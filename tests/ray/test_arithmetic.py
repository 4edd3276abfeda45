"""The unit suite's arithmetic tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_arithmetic import *
