"""The unit suite's reshape and expand tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_reshape import *
