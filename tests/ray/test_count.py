"""The unit suite's count tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_count import *
