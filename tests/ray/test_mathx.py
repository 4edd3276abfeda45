"""The unit suite's mathx tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_mathx import *
