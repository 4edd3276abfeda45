"""The bad-call property test on the multi-node Ray cluster, with fewer examples (the
mixed-session test stays in-process: it shuts the session down)."""

from tests.unit.test_bad_calls import CASES, run_bad_calls


def test_bad_calls_raise_typed_errors_and_change_nothing_on_ray():
    seen = run_bad_calls(80)
    assert sum(seen.values()) >= 80 and len(seen) >= len(CASES) // 2
