"""Printing the output of a module called on an XLAShardedTensor raises AttributeError: global_tensor.

Upstream: pytorch/xla issue 5798, fixed by PR 5807 ("[SPMD] fix bug with
XLAShardedTensor.__repr__").

`xs.mark_sharding` returns an `XLAShardedTensor`, a torch.Tensor subclass that wraps the
sharded global XLA tensor in its `global_tensor` attribute. Feeding it to a module keeps the
subclass on the result (PyTorch's default `__torch_function__` converts results to the
caller's subclass without running its constructor), so the result is an XLAShardedTensor
without `global_tensor`, and `XLAShardedTensor.__repr__` (`f"XLAShardedTensor({self.global_tensor})"`)
fails: `print(out)` raises `AttributeError: global_tensor`.

The record runs it with 4 virtual CPU devices.

`--workaround` checks the record's two workarounds instead of printing `out`: (1) call the
model on the original tensor, which carries the sharding annotation in place (`model(x)` after
`xs.mark_sharding(x, ...)`), and print that output; (2) print `out.cpu()` instead of `out`.
It reports "not reproduced" when both print and `out.cpu()` holds the values of `model(x)`.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main(workaround: bool) -> int:
  import numpy as np
  import torch
  import torch.nn as nn
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  try:
    import torch_xla.distributed.spmd as xs
    from torch_xla.distributed.spmd import XLAShardedTensor
  except ImportError:  # 2.1 keeps SPMD under torch_xla.experimental
    try:
      import torch_xla.experimental.xla_sharding as xs
      from torch_xla.experimental.xla_sharded_tensor import XLAShardedTensor
    except ImportError as e:
      print(f"UNTESTABLE: no SPMD sharding module in this release ({e})")
      return UNTESTABLE

  xr.use_spmd()
  n = xr.global_runtime_device_count()
  dev = xm.xla_device()
  mesh = xs.Mesh(np.arange(n), (1, n), ("x", "y"))
  torch.manual_seed(0)
  model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 8)).to(dev)
  x = torch.randn(16, 16).to(dev)
  xst = xs.mark_sharding(x, mesh, (0, 1))
  print(f"INFO: mark_sharding returned {type(xst).__name__}")
  out = model(xst)
  print(f"INFO: module output type {type(out).__name__}, "
        f"has global_tensor: {hasattr(out, 'global_tensor')}")
  if workaround:
    return check_workaround(torch, model, x, out, XLAShardedTensor)
  try:
    text = str(out)
  except AttributeError as e:
    if "global_tensor" in str(e):
      traceback.print_exc()
      print(f"REPRODUCED: printing the module output (an XLAShardedTensor) raised "
            f"AttributeError: {e}")
      return REPRODUCED
    raise
  expected = model(x).cpu()
  got = out.cpu()
  if isinstance(got, XLAShardedTensor):
    got = got.global_tensor.cpu() if hasattr(got, "global_tensor") else got
  if not torch.allclose(torch.as_tensor(got), expected, atol=1e-5):
    print("ERROR: module output on the sharded input differs from the unsharded one")
    return ERROR
  print("INFO: repr head: " + text.splitlines()[0][:120])
  print("NOT REPRODUCED: the output of a module called on an XLAShardedTensor prints")
  return NOT_REPRODUCED


def check_workaround(torch, model, x, out, XLAShardedTensor) -> int:
  """The workarounds: call the model on the annotated tensor itself, or print out.cpu()."""
  ways = [("model(x) on the annotated tensor itself", lambda: model(x)),
          ("out.cpu() instead of out", lambda: out.cpu())]
  shown = []
  for label, make in ways:
    kind = type(out).__name__
    try:
      value = make()
      kind = type(value).__name__
      text = str(value)
    except AttributeError as e:
      if "global_tensor" not in str(e):
        raise
      traceback.print_exc()
      print(f"REPRODUCED: printing the module output (an {kind}) raised AttributeError: {e} "
            f"(workaround: {label})")
      return REPRODUCED
    print(f"INFO: workaround {label}: type {kind}, repr head: {text.splitlines()[0][:120]}")
    shown.append(value)

  def data(t):
    t = t.cpu()
    if isinstance(t, XLAShardedTensor) and hasattr(t, "global_tensor"):
      t = t.global_tensor.cpu()
    return torch.as_tensor(t)

  if not torch.allclose(data(shown[1]), data(shown[0]), atol=1e-5):
    print("ERROR: out.cpu() differs from the output of model(x) on the annotated tensor")
    return ERROR
  print("NOT REPRODUCED: workaround holds: the output of model(x) on the annotated tensor "
        "and out.cpu() both print")
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
