"""The unit suite's complex-dtype tests on the multi-node Ray cluster (4 workers over 2
nodes): real/imag views and view_as_real live in remote workers' stores, and complex blocks
travel between workers and through the tree combines."""

from tests.unit.test_complex import *
