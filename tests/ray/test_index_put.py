"""The unit suite's index_put tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_index_put import *
