"""The unit suite's conv/pool tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_conv import *
