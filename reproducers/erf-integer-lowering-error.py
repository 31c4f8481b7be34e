"""`torch.erf` on an integer XLA tensor fails to lower.

Upstream: pytorch/xla#6216 ("Fix erf, atan2 for integers"; no separate issue).
PyTorch promotes integer inputs of erf to the default float type. The XLA Erf
node kept the integer element type and handed the integer operand to xla::Erf,
which only accepts floating-point types, so compiling the graph fails with
"Error while lowering: ... aten::erf ...".

`--workaround` runs the record's workaround instead, `torch.erf(x.float())` on the same int64
tensor, and reports "not reproduced" when it matches PyTorch's `torch.erf(x)` on the CPU.

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

  device = xm.xla_device()
  x = torch.tensor([-2, -1, 0, 1, 2], dtype=torch.int64)
  want = torch.erf(x)
  if workaround:
    return check_workaround(torch, x.to(device), want)
  # The workaround (cast to float first) is only reported, not judged.
  w = torch.erf(x.to(device).float()).cpu()
  print(f"INFO: workaround torch.erf(x.float()) on XLA matches CPU: {torch.allclose(w, want)}")
  try:
    got = torch.erf(x.to(device)).cpu()
  except RuntimeError as e:
    if "aten::erf" not in str(e):
      raise
    traceback.print_exc()
    lines = str(e).splitlines()
    print(f"REPRODUCED: torch.erf(int64 tensor) failed: {lines[0]} "
          f"{' '.join(l.strip() for l in lines[1:2])}")
    return REPRODUCED
  print(f"INFO: XLA erf(int64) -> {got.dtype} {got.tolist()}; CPU {want.dtype} {want.tolist()}")
  if got.dtype != want.dtype or not torch.allclose(got, want):
    print("ERROR: no lowering error, but the result differs from CPU")
    return ERROR
  print("NOT REPRODUCED: torch.erf on an int64 tensor works on XLA")
  return NOT_REPRODUCED


def check_workaround(torch, xx, want) -> int:
  """The workaround: cast the int64 tensor to float before torch.erf."""
  try:
    got = torch.erf(xx.float()).cpu()
  except RuntimeError as e:
    if "aten::erf" not in str(e):
      raise
    traceback.print_exc()
    lines = str(e).splitlines()
    print(f"REPRODUCED: torch.erf(int64 tensor) failed: {lines[0]} "
          f"{' '.join(l.strip() for l in lines[1:2])} (even cast with .float(), the workaround)")
    return REPRODUCED
  print(f"INFO: workaround torch.erf(x.float()) on XLA -> {got.dtype} {got.tolist()}; "
        f"CPU torch.erf(x) {want.dtype} {want.tolist()}")
  if got.dtype != want.dtype or not torch.allclose(got, want):
    print("ERROR: the workaround's result differs from CPU")
    return ERROR
  print("NOT REPRODUCED: workaround holds: torch.erf(x.float()) on XLA matches CPU")
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
