"""Reproducer for issues/dynamo-evicted-graph-cachedcomputation-check.yaml.

A function compiled with torch.compile(backend="openxla") keeps only the hash of its XLA
graph and looks the compiled program up in torch_xla's in-memory LRU compilation cache on
every call. When enough other graphs have been compiled since, the entry has been evicted and
the call fails with "Check failed: cachedComputation" instead of recompiling.
Upstream: pytorch/xla#5967 (open; the benchmarks only enlarged the cache, PR #6509).

The cache is shrunk to one entry (XLA_COMPILATION_CACHE_SIZE=1, set by the record's
environment) so that three small eager graphs evict the compiled one; real models hit it with
the default size (1024, 2048 from 2.4) when they run many distinct graphs. The workaround
variant sets XLA_COMPILATION_CACHE_SIZE large enough for every graph and must not fail.

Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=1 XLA_COMPILATION_CACHE_SIZE=1 python reproducers/dynamo-evicted-graph-cachedcomputation-check.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

import os
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main() -> int:
    os.environ.setdefault("XLA_COMPILATION_CACHE_SIZE", "1")
    try:
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE
    if not hasattr(torch, "compile"):
        print("untestable: torch.compile is missing")
        return UNTESTABLE

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
    print("INFO: XLA_COMPILATION_CACHE_SIZE =", os.environ["XLA_COMPILATION_CACHE_SIZE"])
    device = xm.xla_device()

    def scale_shift(x):
        return torch.sin(x) * 2 + 1

    compiled = torch.compile(scale_shift, backend="openxla")
    x = torch.arange(8, dtype=torch.float32, device=device) / 8
    expected = scale_shift(x.cpu())
    first = compiled(x).cpu()
    print(f"INFO: first call {first[:3].tolist()}")

    # Three different eager graphs, each compiled into the cache after the dynamo graph.
    for i in range(3):
        y = torch.ones(4 + i, device=device) * (i + 3)
        xm.mark_step()
        y.cpu()

    try:
        second = compiled(x).cpu()
    except RuntimeError as err:
        if "cachedComputation" in str(err):
            traceback.print_exc()
            print(f"XLAKB-REPRODUCED: calling the openxla-compiled function again failed: {err}")
            return REPRODUCED
        raise
    if not torch.allclose(second, expected, atol=1e-5):
        print(f"ERROR: wrong result {second.tolist()} (not the bug under test)")
        return 2
    print(f"not reproduced: second call {second[:3].tolist()}")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
