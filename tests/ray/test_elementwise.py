"""The unit suite's elementwise tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_elementwise import *
