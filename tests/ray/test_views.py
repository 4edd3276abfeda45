"""The unit suite's views tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_views import *
