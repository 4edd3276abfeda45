"""The unit suite's joining tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_joining import *
