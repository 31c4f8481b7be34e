"""torch_xla.amp.autocast on an XLA:CPU device raises AttributeError: no attribute 'device'.

Upstream: no issue or fix found (open).

`torch_xla.amp.autocast(device)` subclasses `torch.amp.autocast_mode.autocast`. For device
kinds it does not support (anything but TPU/NEURON, and CUDA on older releases) it prints
"Warning: AMP only supported for XLA:TPU ... Ignoring autocast." and returns from `__init__`
without calling the parent constructor. The object is still used as a context manager (or
decorator), and torch's `autocast.__enter__`/`__call__` read attributes the parent
constructor would have set, so instead of being ignored the block fails with
`AttributeError: 'autocast' object has no attribute 'device'`.

`--workaround` uses `torch.autocast("xla", dtype=torch.bfloat16)` instead and must report
"not reproduced" (it also checks that bfloat16 autocast is really applied on XLA:CPU).

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  try:
    from torch_xla.amp import autocast
  except ImportError as e:
    print(f"UNTESTABLE: torch_xla.amp.autocast is missing ({e})")
    return UNTESTABLE
  dev = xm.xla_device()
  print(f"INFO: device {dev}, hardware {xm.xla_device_hw(dev)}")
  torch.manual_seed(0)
  model = torch.nn.Linear(8, 8).to(dev)
  x = torch.randn(4, 8).to(dev)
  if workaround:
    with torch.autocast("xla", dtype=torch.bfloat16):
      y = model(x)
    print(f"INFO: workaround torch.autocast('xla', dtype=torch.bfloat16): output {y.dtype}")
    if y.dtype != torch.bfloat16:
      print("ERROR: torch.autocast('xla') did not apply bfloat16 on XLA:CPU")
      return ERROR
    print("NOT REPRODUCED: torch.autocast('xla') works on XLA:CPU")
    return NOT_REPRODUCED
  try:
    with autocast(dev):
      y = model(x)
  except AttributeError as e:
    if "'autocast' object has no attribute" in str(e):
      traceback.print_exc()
      print(f"REPRODUCED: torch_xla.amp.autocast({dev}) on XLA:CPU raised AttributeError: {e}")
      return REPRODUCED
    raise
  print(f"INFO: output dtype inside torch_xla.amp.autocast: {y.dtype}")
  print("NOT REPRODUCED: torch_xla.amp.autocast can be entered on XLA:CPU")
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
