"""The unit suite's sort tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_sort import *
