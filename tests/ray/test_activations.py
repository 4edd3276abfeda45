"""The unit suite's activations tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_activations import *
