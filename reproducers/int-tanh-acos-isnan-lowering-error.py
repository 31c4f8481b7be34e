"""`torch.tanh`, `torch.acos` and `torch.isnan` on integer XLA tensors fail to lower.

Upstream: pytorch/xla#6166 (tanh), #6224 (acos) and #6110 (isnan), with their
2.2 cherry-picks #6329, #6238 and #6173; no separate issues. PyTorch accepts
integer inputs for these ops (tanh and acos return float32, isnan returns
bool). The XLA lowerings handed the integer operand to XLA builders that only
take floating-point types, so compiling the graph failed with
"Error while lowering: ... XLA builder error: INVALID_ARGUMENT: ...".

`--workaround` runs the record's workaround instead, each op on `x.float()` (the same int64
tensor cast first), and reports "not reproduced" when all three match PyTorch's result for the
int64 tensor on the CPU (dtype and values).

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
  if workaround:
    return check_workaround(torch, x, device)
  failed, wrong = [], []
  for name in ("tanh", "acos", "isnan"):
    fn = getattr(torch, name)
    want = fn(x)
    try:
      got = fn(x.to(device)).cpu()
    except RuntimeError as e:
      if f"aten::{name}" not in str(e):
        raise
      traceback.print_exc()
      lines = str(e).splitlines()
      failed.append(f"torch.{name}(int64 tensor) failed: {lines[0]} "
                    f"{' '.join(l.strip() for l in lines[1:2])}")
      continue
    same = got.dtype == want.dtype and torch.allclose(
        got.double(), want.double(), equal_nan=True)
    print(f"INFO: torch.{name}(int64) on XLA -> {got.dtype} {got.tolist()}; "
          f"CPU {want.dtype} {want.tolist()}")
    if not same:
      wrong.append(f"torch.{name}(int64) differs from CPU")

  # The workaround (cast to float first) is only reported, not judged.
  xf = x.to(device).float()
  ok = all(torch.allclose(getattr(torch, n)(xf).cpu().double(),
                          getattr(torch, n)(x).double(), equal_nan=True)
           for n in ("tanh", "acos", "isnan"))
  print(f"INFO: workaround with x.float() matches CPU for all three ops: {ok}")

  if failed:
    for f in failed:
      print(f"REPRODUCED: {f}")
    return REPRODUCED
  if wrong:
    print("ERROR: no lowering error, but " + "; ".join(wrong))
    return ERROR
  print("NOT REPRODUCED: tanh, acos and isnan accept int64 tensors on XLA")
  return NOT_REPRODUCED


def check_workaround(torch, x, device) -> int:
  """The workaround: cast the int64 tensor to float before each op."""
  failed, wrong = [], []
  xf = x.to(device).float()
  for name in ("tanh", "acos", "isnan"):
    fn = getattr(torch, name)
    want = fn(x)
    try:
      got = fn(xf).cpu()
    except RuntimeError as e:
      if f"aten::{name}" not in str(e):
        raise
      traceback.print_exc()
      lines = str(e).splitlines()
      failed.append(f"torch.{name}(int64 tensor) failed: {lines[0]} "
                    f"{' '.join(l.strip() for l in lines[1:2])} (even cast with .float(), "
                    f"the workaround)")
      continue
    same = got.dtype == want.dtype and torch.allclose(
        got.double(), want.double(), equal_nan=True)
    print(f"INFO: workaround torch.{name}(x.float()) on XLA -> {got.dtype} {got.tolist()}; "
          f"CPU torch.{name}(x) {want.dtype} {want.tolist()}")
    if not same:
      wrong.append(f"torch.{name}(x.float()) differs from CPU")

  if failed:
    for f in failed:
      print(f"REPRODUCED: {f}")
    return REPRODUCED
  if wrong:
    print("ERROR: the workaround runs, but " + "; ".join(wrong))
    return ERROR
  print("NOT REPRODUCED: workaround holds: tanh, acos and isnan of x.float() match CPU")
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
