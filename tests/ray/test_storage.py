"""The unit suite's storage tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_storage import *
