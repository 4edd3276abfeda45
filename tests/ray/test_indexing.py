"""The unit suite's indexing tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_indexing import *
