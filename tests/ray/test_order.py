"""The order-statistics tests on the two-node Ray cluster."""

from tests.unit.test_order import *  # noqa: F401,F403
