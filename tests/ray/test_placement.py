"""The placement tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_placement import *
