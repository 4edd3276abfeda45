"""The unit suite's sampling tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_sampling import *
