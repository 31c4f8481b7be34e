"""`as_strided` on a slice of an XLA tensor fails to lower.

Upstream: pytorch/xla#5719; the fix is pytorch/xla#5914 ("Fix `as_strided`
for inputs smaller than the arguments specification"). as_strided addresses
the *storage* of a tensor, so `x[10:].as_strided((20,), (1,), 0)` reads all of
`x`. torch_xla has no storage and applied as_strided to the 10-element slice
itself; the lowering then fails with
    Check failed: storage_offset + slice_size <= input_element_count (20 vs. 10)
The fix makes views remember their base tensor and applies as_strided to it.

`--workaround` calls as_strided on the base tensor itself (`x.as_strided((20,), (1,), 0)`,
the record's workaround) instead of on the slice, and reports "not reproduced" when that
equals PyTorch's `x[10:].as_strided((20,), (1,), 0)`.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHECK = "storage_offset + slice_size <= input_element_count"


def main(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()
  x = torch.arange(20, dtype=torch.float32)
  want = x[10:].as_strided((20,), (1,), 0)
  xx = x.to(device)
  if workaround:
    return check_workaround(torch, xx, want)
  # The workaround (as_strided on the base tensor itself) is only reported.
  base_res = xx.as_strided((20,), (1,), 0).cpu()
  print(f"INFO: workaround x.as_strided((20,), (1,), 0) on the base tensor equals CPU: "
        f"{torch.equal(base_res, want)}")
  try:
    got = xx[10:].as_strided((20,), (1,), 0).cpu()
  except RuntimeError as e:
    if CHECK not in str(e):
      raise
    traceback.print_exc()
    first = next((l.strip() for l in str(e).splitlines() if CHECK in l), "")
    print(f"REPRODUCED: x[10:].as_strided((20,), (1,), 0) failed to lower: {first}")
    return REPRODUCED
  print(f"INFO: XLA result {got.tolist()}")
  if not torch.equal(got, want):
    print(f"ERROR: no lowering error, but the result differs from CPU {want.tolist()}")
    return ERROR
  print("NOT REPRODUCED: as_strided on a slice reads the base tensor like PyTorch")
  return NOT_REPRODUCED


def check_workaround(torch, xx, want) -> int:
  """The workaround: as_strided on the base tensor instead of on the view."""
  try:
    got = xx.as_strided((20,), (1,), 0).cpu()
  except RuntimeError as e:
    if CHECK not in str(e):
      raise
    traceback.print_exc()
    first = next((l.strip() for l in str(e).splitlines() if CHECK in l), "")
    print(f"REPRODUCED: workaround x.as_strided((20,), (1,), 0) on the base tensor also "
          f"failed to lower: {first}")
    return REPRODUCED
  print(f"INFO: workaround x.as_strided((20,), (1,), 0) on the base tensor: {got.tolist()}")
  if not torch.equal(got, want):
    print(f"ERROR: the workaround's result differs from CPU {want.tolist()}")
    return ERROR
  print("NOT REPRODUCED: workaround holds: as_strided on the base tensor equals "
        "PyTorch's x[10:].as_strided((20,), (1,), 0)")
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
