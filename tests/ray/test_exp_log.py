"""The unit suite's exp_log tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_exp_log import *
