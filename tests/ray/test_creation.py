"""The unit suite's creation tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_creation import *
