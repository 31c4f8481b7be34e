"""torch.compile(backend="openxla") of a function that returns a CPU tensor fails: Check failed: xtensor.

Upstream: pytorch/xla#5722, fixed by pytorch/xla#6170 (first released in 2.3.0).

The compiled function computes on XLA and moves its result to the host, `(x + x).cpu()`.
The dynamo bridge of torch_xla 2.1 sorts the FX nodes into "runs on XLA" and "falls back"
by looking only at each node's tensor arguments; the `.cpu()` node (`aten._to_copy` to the
CPU) has an XLA argument, so it stays in the XLA partition, whose output is then a CPU
tensor. `extract_graph_helper` hashes the partition's outputs with
`torch_xla._XLAC._get_graph_hash`, which requires XLA tensors, and fails with
"Check failed: xtensor ... Input tensor is not an XLA tensor: CPUFloatType".

`--workaround` compiles only the XLA computation and calls `.cpu()` on the compiled
function's result, outside the compiled region; it must report "not reproduced".

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
BUG_TEXTS = ("Check failed: xtensor", "Input tensor is not an XLA tensor")


def double(x):
  return x + x


def double_to_cpu(x):
  return (x + x).cpu()


def main(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  if not hasattr(torch, "compile"):
    print("UNTESTABLE: torch.compile is missing")
    return UNTESTABLE
  device = xm.xla_device()
  x = torch.arange(5, dtype=torch.float32, device=device)
  want = double_to_cpu(x)  # eager: the reference
  if workaround:
    got = torch.compile(double, backend="openxla")(x).cpu()
    what = "torch.compile(backend='openxla') of x + x, then .cpu() outside"
  else:
    what = "torch.compile(backend='openxla') of a function returning (x + x).cpu()"
    try:
      got = torch.compile(double_to_cpu, backend="openxla")(x)
    except RuntimeError as e:
      if any(t in str(e) for t in BUG_TEXTS):
        traceback.print_exc()
        last = [l.strip() for l in str(e).splitlines() if l.strip()]
        print(f"REPRODUCED: {what} failed: {last[0][:200]} ... {last[-1][:200]}")
        return REPRODUCED
      raise
  if got.device.type != "cpu" or not torch.equal(got, want):
    print(f"ERROR: {what} returned {got} on {got.device}, eager gives {want}")
    return ERROR
  print(f"NOT REPRODUCED: {what} returns the eager result {got.tolist()}")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    code = main(sys.argv[1:] == ["--workaround"])
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
