"""The unit suite's lr_scheduler tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_lr_scheduler import *
