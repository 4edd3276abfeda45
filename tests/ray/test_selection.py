"""The unit suite's selection tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_selection import *
