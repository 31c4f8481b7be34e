"""Integer torch.pow with a negative exponent on XLA gives -1 for a zero base
(PyTorch gives 0) and does not refuse a negative Python-int exponent.

Upstream: pytorch/xla#6750. PR #5919 ("Don't fallback for pow", first in 2.2.0)
sends integer pow straight to xla::Pow instead of the CPU fallback; XLA's
integer pow does not follow PyTorch for negative exponents.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main() -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()
  x = torch.tensor([-3, -2, -1, 0, 1])
  e = torch.tensor(-1)
  want = torch.pow(x, e)
  got = torch.pow(x.to(device), e.to(device)).cpu()
  print(f"INFO: pow({x.tolist()}, tensor(-1)) CPU {want.tolist()} XLA {got.tolist()}")
  try:
    scalar = torch.pow(x.to(device), -1).cpu().tolist()
    print(f"INFO: pow(x, -1) on XLA returned {scalar} (PyTorch raises)")
  except RuntimeError as err:
    print(f"INFO: pow(x, -1) on XLA raised: {str(err).splitlines()[0][:120]}")
  if not torch.equal(got, want):
    print(f"REPRODUCED: integer pow on XLA gave {got.tolist()}, expected {want.tolist()}")
    return REPRODUCED
  print("NOT REPRODUCED: integer pow with a negative exponent matches PyTorch on XLA")
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
