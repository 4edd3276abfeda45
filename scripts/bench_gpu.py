#!/usr/bin/env python
"""GPU benchmarks (run on a machine with an NVIDIA GPU and CuPy; Ray is not needed).

Uses the in-process executor with several GPU workers on the visible GPU(s) and prints:
elementwise add of 2^28 float32 on GPU shards as achieved bandwidth against the device's copy
bandwidth (target >= 70%), matmul 16384^2 float32 over GPU shards against one CuPy matmul
(target >= 0.9x), and the tutorial's 5000^2 matmul on CPU shards against GPU shards.
"""

import argparse
import sys

import numpy as np

import sharded as st
from sharded.backend import get_backend
from sharded.tools.timing import median_time


def _time(fn, sync, repeat):
    """Median seconds of ``fn`` followed by ``sync`` (the work is asynchronous)."""
    return median_time(lambda: (fn(), sync()), repeat)


def _add_case(st, be, nw, n, repeat):
    xp = be.xp
    x = st.rand(n, device="cuda", shards=nw)
    y = st.rand(n, device="cuda", shards=nw)
    keep = {}

    def add():
        keep["r"] = None
        keep["r"] = x + y

    t_add = _time(add, st.synchronize, repeat)
    buf = xp.empty(n, dtype=np.float32)
    src = xp.ones(n, dtype=np.float32)
    t_copy = _time(lambda: buf.__setitem__(Ellipsis, src), be.synchronize, repeat)
    bw_add, bw_copy = 3 * 4 * n / t_add, 2 * 4 * n / t_copy
    return (
        f"add {n:,} float32, GB/s (vs device copy)",
        bw_add / 1e9,
        bw_copy / 1e9,
        bw_add / bw_copy,
        ">= 0.70",
    )


def _matmul_case(st, be, nw, m, repeat):
    xp = be.xp
    keep = {}
    a = st.rand(m, m, device="cuda", shards=nw)
    b = st.rand(m, m, device="cuda", layout=st.Layout.replicated())
    t_st = _time(lambda: keep.__setitem__("r", a @ b), st.synchronize, repeat)
    keep.clear()
    ac, bc = xp.random.rand(m, m, dtype=np.float32), xp.random.rand(m, m, dtype=np.float32)
    t_cp = _time(lambda: keep.__setitem__("r", ac @ bc), be.synchronize, repeat)
    return (
        f"matmul {m}^2 float32, TFLOP/s (vs one cupy matmul)",
        2 * m**3 / t_st / 1e12,
        2 * m**3 / t_cp / 1e12,
        t_cp / t_st,
        ">= 0.90",
    )


def _tutorial_case(st, repeat, k=5000):
    keep = {}
    ac, bc = st.rand(k, k, shards=1), st.rand(k, k, shards=1)
    t_cpu = _time(lambda: keep.__setitem__("r", ac @ bc), st.synchronize, max(1, repeat // 2))
    ag, bg = ac.to("cuda"), bc.to("cuda")
    t_gpu = _time(lambda: keep.__setitem__("r", ag @ bg), st.synchronize, repeat)
    return ("tutorial 5000^2 matmul: CPU s / GPU s", t_cpu, t_gpu, t_cpu / t_gpu, "speed-up")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--gpu-workers", type=int, default=2, help="GPU workers per visible GPU")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--log2-add", type=int, default=28)
    p.add_argument("--matmul", type=int, default=16384)
    a = p.parse_args(argv)

    be = get_backend("cuda:0")
    ngpu = be.xp.cuda.runtime.getDeviceCount()
    devices = [f"cuda:{g}" for g in range(ngpu) for _ in range(a.gpu_workers)] + ["cpu"]
    st.init(executor="local", devices=devices)
    nw = len(devices) - 1
    rows = [
        _add_case(st, be, nw, 2**a.log2_add, a.repeat),
        _matmul_case(st, be, nw, a.matmul, a.repeat),
        _tutorial_case(st, a.repeat),
    ]
    print(f"GPU benchmark: {nw} GPU workers on {ngpu} GPU(s)")
    print(f"{'case':52} {'sharded':>10} {'baseline':>10} {'ratio':>8}  target")
    for name, s, b, r, target in rows:
        print(f"{name:52} {s:10.3f} {b:10.3f} {r:8.2f}  {target}")
    st.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
