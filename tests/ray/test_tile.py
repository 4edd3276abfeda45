"""The unit suite's shape-function tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_tile import *
