"""The unit suite's tree tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_tree import *
