"""The unit suite's rounding tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_rounding import *
