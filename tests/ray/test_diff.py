"""The unit suite's diff tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_diff import *
