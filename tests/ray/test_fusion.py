"""The unit suite's fusion tests on the multi-node Ray cluster: the tiny-block settings and
the fusion switch travel to the actors as commands, fused and unfused runs compared there."""

from tests.unit.test_fusion import *
