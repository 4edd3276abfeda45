"""The unit suite's interop tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_interop import *
