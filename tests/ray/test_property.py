"""The property test on the multi-node Ray cluster, with fewer programs."""

from tests.unit.test_property import run_programs


def test_random_programs_match_numpy_on_ray():
    assert run_programs(40) > 40
