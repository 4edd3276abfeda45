"""The unit suite's nn loss/container tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_nn_losses import *
