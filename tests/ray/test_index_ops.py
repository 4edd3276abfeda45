"""The unit suite's index_*/masked_*/nonzero tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_index_ops import *
