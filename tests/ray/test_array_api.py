"""The unit suite's Array API namespace tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_array_api import *
