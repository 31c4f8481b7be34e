"""Under SPMD, torch.compile(backend="openxla") retraces on every call when an input has no sharding annotation.

Upstream: pytorch/xla#9755 ("SPMD: spurious retrace every step due to sharding spec
mismatch for unsharded tensors"), open; proposed fix pytorch/xla#9757 (not merged).

The dynamo bridge records the sharding specs of the graph inputs when it traces
(`extract_graph_helper`) and, on each later call, compares them with the specs of the
new inputs; a difference means "the input sharding changed" and it traces again. The
recorded spec of an input that the user never annotated is '{replicated}' (the trace
builds an IR node for it, and that node carries the replicated sharding of its device
data), while a fresh input of the next call still reports '' (no node yet). The two
strings never match, so every call re-runs `extract_graph_helper`. The script compiles a
small function over a linear layer whose weight is sharded on a 4-device CPU mesh, calls
it with a fresh, unannotated input several times and counts how often
`extract_graph_helper` runs. With `--workaround` each input is first annotated as
replicated with `xs.mark_sharding(x, mesh, (None, None))`, so both sides read
'{replicated}' and the cached graph is reused.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CALLS = 6


def main(workaround: bool) -> int:
  import numpy as np
  import torch
  import torch.nn as nn
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr

  try:
    import torch_xla.distributed.spmd as xs
  except ImportError:
    import torch_xla.experimental.xla_sharding as xs
  try:
    import torch_xla._dynamo.dynamo_bridge as bridge
  except ImportError:
    try:
      import torch_xla.core.dynamo_bridge as bridge
    except ImportError as e:
      print(f"UNTESTABLE: no dynamo bridge in torch_xla {torch_xla.__version__}: {e}")
      return UNTESTABLE
  if not hasattr(xr, "use_spmd") or not hasattr(bridge, "extract_graph_helper"):
    print(f"UNTESTABLE: torch_xla {torch_xla.__version__} lacks use_spmd or extract_graph_helper")
    return UNTESTABLE

  print(f"INFO: torch_xla {torch_xla.__version__}, workaround={workaround}")
  xr.use_spmd()
  n = xr.global_runtime_device_count()
  mesh = xs.Mesh(np.arange(n), (n, 1), ("data", "model"))

  traces = {"n": 0}
  original = bridge.extract_graph_helper

  def counting_extract_graph_helper(*args, **kwargs):
    traces["n"] += 1
    return original(*args, **kwargs)

  bridge.extract_graph_helper = counting_extract_graph_helper

  device = xm.xla_device()
  torch.manual_seed(0)
  lin = nn.Linear(16, 16)
  ref_lin = nn.Linear(16, 16)
  ref_lin.load_state_dict(lin.state_dict())
  lin = lin.to(device)
  xs.mark_sharding(lin.weight, mesh, ("data", None))

  @torch.compile(backend="openxla")
  def step(x):
    return lin(x).relu().sum(dim=-1)

  per_call, specs_at_call, wrong = [], [], 0
  for i in range(CALLS):
    x_cpu = torch.randn(2 * n, 16)
    x = x_cpu.to(device)  # fresh device data, no sharding annotation
    if workaround:
      xs.mark_sharding(x, mesh, (None, None))
    specs_at_call.append(torch_xla._XLAC._get_xla_sharding_spec(x))
    before = traces["n"]
    y = step(x)
    xm.mark_step()
    per_call.append(traces["n"] - before)
    want = ref_lin(x_cpu).relu().sum(dim=-1)
    if not torch.allclose(y.cpu(), want, atol=1e-4, rtol=1e-4):
      wrong += 1
  print(f"INFO: extract_graph_helper runs per call: {per_call}")
  print(f"INFO: input sharding spec when each call starts: {specs_at_call}; "
        f"after the last call: {torch_xla._XLAC._get_xla_sharding_spec(x)!r}")
  if wrong:
    print(f"ERROR: {wrong} of {CALLS} compiled results differ from PyTorch on CPU (not the bug under test)")
    return ERROR
  later = per_call[1:]
  if all(c >= 1 for c in later):
    print(f"REPRODUCED: under SPMD the openxla-compiled function was retraced on every call "
          f"({sum(later)} extract_graph_helper runs in {len(later)} calls after the first) "
          f"although the unannotated input's sharding never changed")
    return REPRODUCED
  print(f"NOT REPRODUCED: the compiled graph was reused; extract_graph_helper ran {sum(later)} "
        f"time(s) in {len(later)} calls after the first")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    code = main("--workaround" in sys.argv[1:])
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
