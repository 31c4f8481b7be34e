"""visualize_tensor_sharding fails when a tile dimension of the sharding has two digits.

Upstream: fixed by pytorch/xla PR 9475 ("Fix spmd sharding visualization when device index
is >= 10").

`torch_xla.distributed.spmd.debugging.visualize_sharding` parses the HLO sharding string,
e.g. `{devices=[16,1]0,1,...,15}`, by taking single characters of the bracket
(`int(spec[1])`, `int(spec[3])`) instead of splitting it on commas. With a mesh axis of 10 or
more devices the character picked is a digit of the wrong number or the comma itself, and the
call raises `ValueError: ('sharding ', '{devices=[16,1]...}', ' is not organized as expected')`.

The record runs it with 16 virtual CPU devices and a tensor sharded 16 ways on dim 0.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=16
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import io
import contextlib
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main() -> int:
  import numpy as np
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  try:
    import torch_xla.distributed.spmd as xs
    from torch_xla.distributed.spmd.debugging import visualize_tensor_sharding
  except ImportError as e:  # the debugging module first ships in 2.2
    print(f"UNTESTABLE: torch_xla.distributed.spmd.debugging is missing ({e})")
    return UNTESTABLE

  xr.use_spmd()
  n = xr.global_runtime_device_count()
  if n < 10:
    print(f"ERROR: needs at least 10 devices, got {n} (the record sets CPU_NUM_DEVICES)")
    return ERROR
  mesh = xs.Mesh(np.arange(n), (n, 1), ("data", "model"))
  t = torch.randn(n, 4).to(xm.xla_device())
  xs.mark_sharding(t, mesh, ("data", None))
  spec = torch_xla._XLAC._get_xla_sharding_spec(t)
  print(f"INFO: {n} devices, sharding {spec}")
  out = io.StringIO()
  try:
    with contextlib.redirect_stdout(out):
      table = visualize_tensor_sharding(t, use_color=False)
  except ValueError as e:
    sys.stdout.write(out.getvalue())
    if "is not organized as expected" in str(e):
      traceback.print_exc()
      print(f"REPRODUCED: visualize_tensor_sharding of {spec[:40]}... raised ValueError: {e}"
            [:400])
      return REPRODUCED
    raise
  rendered = out.getvalue()
  cells = sum(line.count("CPU ") for line in rendered.splitlines())
  print(f"INFO: rendered table with {table.row_count} rows, {cells} device cells")
  if table.row_count != n:
    print(f"REPRODUCED: visualize_tensor_sharding drew {table.row_count} row(s) for a "
          f"{n}-way split of dim 0 (sharding {spec[:40]}...)")
    return REPRODUCED
  print(f"NOT REPRODUCED: visualize_tensor_sharding draws the {n}-way sharding")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    code = main()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
