"""The unit suite's search tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_search import *
