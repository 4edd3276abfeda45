"""The unit suite's autograd API tests (grad modes, hooks, retain_grad, .data, inputs=),
run unchanged on the multi-node Ray cluster."""

from tests.unit.test_autograd_api import *
