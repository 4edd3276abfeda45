"""``sharded bench --scaling`` on Ray: each row carries Ray's floor, the driver CPU of one
plain actor call of the read's wall time (tiny sizes: the plumbing, not the timings)."""

from sharded.runtime.driver.probe import call_floor
from sharded.tools import bench_scaling


def test_rows_and_table_carry_a_positive_ray_floor():
    rows = bench_scaling.measure(2, ops=4, reads=3, repeat=1)
    assert [r[0] for r in rows] == [1, 2]
    assert all(r[5] is not None and r[5] > 0 for r in rows)
    text = bench_scaling.table(rows, "t").splitlines()
    assert "ray floor ms" in text[1]
    assert [line.split()[-1] for line in text[2:4]] == [f"{r[5]:.2f}" for r in rows]


def test_call_floor_is_driver_cpu_not_wall():
    cpu = call_floor(0.02, repeat=3)
    # the driver does not spin while the actor sleeps 20 ms: its CPU is a fraction of that
    assert 0 < cpu < 0.02
