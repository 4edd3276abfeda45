"""The unit suite's set tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_sets import *
