"""The unit suite's gather/scatter tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_scatter import *
