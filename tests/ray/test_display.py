"""The unit suite's display tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_display import *
