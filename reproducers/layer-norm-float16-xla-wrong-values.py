"""`nn.LayerNorm` on a float16 XLA tensor silently returns wrong values.

Upstream: pytorch/xla#3658. torch_xla implements native_layer_norm with
PyTorch's composite `math_native_layer_norm`, which reshapes the input and
calls native_batch_norm; the XLA batch-norm lowering only computes in float32
when the batch-norm weight is float32, and here the statistics are computed in
float16. Rows with large values (10..19, 20..29) then normalise to visibly
wrong numbers, while PyTorch on the CPU gives the same row for all three.

`--workaround` runs the layer norm in float32 on the XLA device and casts back
to float16, and reports "not reproduced" when that matches the CPU.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
# float16 has ~3 decimal digits; rounding alone stays well below this.
TOL = 5e-3


def main(workaround: bool) -> int:
  import torch
  import torch.nn.functional as F
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()
  x = torch.arange(30, dtype=torch.float32).reshape(3, 10).half()
  want = F.layer_norm(x.float(), (10,)).half().float()
  if workaround:
    got = F.layer_norm(x.to(device).float(), (10,)).half().cpu().float()
    what = "float32 layer_norm on XLA cast to float16 (the workaround)"
  else:
    got = F.layer_norm(x.to(device), (10,)).cpu().float()
    what = "F.layer_norm(float16 XLA tensor)"
  diff = (got - want).abs().max().item()
  print(f"INFO: {what}, rows of arange(30).reshape(3, 10):\n{got}")
  try:  # float16 layer_norm on the CPU is missing in old torch; only reported
    cpu16 = F.layer_norm(x, (10,)).float()
    print(f"INFO: CPU float16 layer_norm max diff from the float32 reference: "
          f"{(cpu16 - want).abs().max().item():.2e}")
  except RuntimeError as e:
    print(f"INFO: float16 layer_norm on the CPU is not available here: {e}")
  print(f"INFO: XLA max diff from the float32 reference: {diff:.2e}")
  if diff > TOL:
    print(f"REPRODUCED: {what} differs from CPU by {diff:.3g} (float16 statistics)")
    return REPRODUCED
  print(f"NOT REPRODUCED: {what} matches the CPU within {TOL}")
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
