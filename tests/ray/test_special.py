"""The special-function tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_special import *
