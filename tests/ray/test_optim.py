"""The unit suite's optim tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_optim import *
