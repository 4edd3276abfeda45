"""The unit suite's samplers tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_samplers import *
