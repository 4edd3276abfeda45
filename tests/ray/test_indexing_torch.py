"""The unit suite's torch-answer indexing tests, run unchanged on the multi-node Ray cluster."""

from tests.unit.test_indexing_torch import *
