"""The unit suite's checkpoint tests, run unchanged on the multi-node Ray cluster (its nodes
share this machine's /tmp, as nodes share NFS or Lustre on a real cluster)."""

from tests.unit.test_checkpoint import *
