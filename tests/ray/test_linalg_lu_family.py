"""The unit suite's LU-family tests (lu, lu_factor, lu_solve, lu_unpack), run unchanged on the
multi-node Ray cluster."""

from tests.unit.test_linalg_lu_family import *
