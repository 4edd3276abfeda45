"""The unit suite's scan tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_scan import *
