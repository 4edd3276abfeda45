"""The unit suite's scatter_extra tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_scatter_extra import *
