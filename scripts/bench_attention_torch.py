"""torch's CPU reference for the attention case of ``sharded bench``: forward and backward
of ``scaled_dot_product_attention`` at (4, 8, L, 64) float32, on as many threads as sharded
has workers (one BLAS thread each). Run it where torch is installed:

    python scripts/bench_attention_torch.py --attn-len 4096 --threads 2
"""

import argparse
import resource
import statistics
import time

import torch


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--attn-len", type=int, default=4096)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    shape = (4, 8, a.attn_len, 64)
    q, k, v = (torch.randn(shape, requires_grad=True) for _ in range(3))
    g = torch.randn(shape)

    def step():
        for t in (q, k, v):
            t.grad = None
        torch.nn.functional.scaled_dot_product_attention(q, k, v).backward(g)

    step()  # warm-up
    times = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"torch {torch.__version__} sdpa fwd+bwd {'x'.join(map(str, shape))} f32, "
        f"{a.threads} threads: {statistics.median(times):.3f} s (median of {a.repeat}); "
        f"peak RSS {peak:.0f} MiB"
    )


if __name__ == "__main__":
    main()
