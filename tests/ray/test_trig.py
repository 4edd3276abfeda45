"""The unit suite's trig tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_trig import *
