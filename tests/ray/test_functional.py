"""The unit suite's functional tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_functional import *
