"""The unit suite's binary math tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_binary_math import *
