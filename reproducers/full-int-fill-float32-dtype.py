"""`torch.full(size, 3)` on an XLA device gives a float32 tensor instead of int64.

Upstream: pytorch/xla#6991; the fix is pytorch/xla#7010 ("Fix torch.full
scalar type"). The XLA lowering of aten::full (PR #5781) used
`at::dtype_or_default(dtype)`, so without an explicit dtype every fill value
(int or bool) produced the default float dtype, while PyTorch infers int64 /
bool from the fill value. The reproducer checks the dtype and then uses the
tensor as an index, which is where a user meets the bug as an error.

`--workaround` runs the same checks with the record's workaround, an explicit dtype
(`torch.full(size, 3, dtype=torch.int64, device=dev)`, `dtype=torch.bool` for True, and an
int64 index tensor), and reports "not reproduced" when the dtypes are PyTorch's and the index
works.

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
  if workaround:
    return check_workaround(torch, xm, device)
  cases = [(3, torch.full((2, 3), 3).dtype), (True, torch.full((2, 3), True).dtype)]
  wrong = []
  for fill, want in cases:
    got = torch.full((2, 3), fill, device=device)
    print(f"INFO: torch.full((2, 3), {fill!r}) on XLA: dtype={got.dtype} "
          f"(CPU: {want}), values={got.cpu().tolist()}")
    if got.dtype != want:
      wrong.append(f"torch.full((2, 3), {fill!r}) gave {got.dtype}, expected {want}")

  # The workaround (an explicit dtype) is only reported, not judged.
  fixed = torch.full((2, 3), 3, dtype=torch.int64, device=device)
  print(f"INFO: with dtype=torch.int64 the XLA result is {fixed.dtype}")

  # What a user sees: an int-filled index tensor is rejected as an index.
  table = torch.arange(10, device=device)
  idx = torch.full((2,), 1, device=device)
  try:
    picked = table[idx]
    xm.mark_step()
    print(f"INFO: indexing with torch.full((2,), 1) works: {picked.cpu().tolist()}")
  except (IndexError, RuntimeError) as e:
    if "indices must be" not in str(e):
      raise
    traceback.print_exc()
    wrong.append(f"indexing with torch.full((2,), 1) failed: "
                 f"{type(e).__name__}: {str(e).splitlines()[0]}")

  if wrong:
    for w in wrong:
      print(f"REPRODUCED: {w}")
    return REPRODUCED
  print("NOT REPRODUCED: torch.full infers int64/bool from the fill value on XLA")
  return NOT_REPRODUCED


def check_workaround(torch, xm, device) -> int:
  """The workaround: pass the dtype to torch.full explicitly."""
  wrong = []
  for fill, dtype in [(3, torch.int64), (True, torch.bool)]:
    want = torch.full((2, 3), fill).dtype
    got = torch.full((2, 3), fill, dtype=dtype, device=device)
    print(f"INFO: workaround torch.full((2, 3), {fill!r}, dtype={dtype}) on XLA: "
          f"dtype={got.dtype} (CPU without dtype: {want}), values={got.cpu().tolist()}")
    if got.dtype != want:
      wrong.append(f"torch.full((2, 3), {fill!r}, dtype={dtype}) gave {got.dtype}, "
                   f"expected {want}")

  table = torch.arange(10, device=device)
  idx = torch.full((2,), 1, dtype=torch.int64, device=device)
  try:
    picked = table[idx]
    xm.mark_step()
    print(f"INFO: indexing with torch.full((2,), 1, dtype=torch.int64) works: "
          f"{picked.cpu().tolist()}")
  except (IndexError, RuntimeError) as e:
    if "indices must be" not in str(e):
      raise
    traceback.print_exc()
    wrong.append(f"indexing with torch.full((2,), 1, dtype=torch.int64) failed: "
                 f"{type(e).__name__}: {str(e).splitlines()[0]}")

  if wrong and " gave torch." in wrong[0]:  # a dtype is still wrong: the bug shows
    for w in wrong:
      print(f"REPRODUCED: {w} (the workaround)")
    return REPRODUCED
  if wrong:
    print(f"ERROR: with the workaround the dtypes are right, but {wrong[0]}")
    return ERROR
  print("NOT REPRODUCED: workaround holds: torch.full with an explicit dtype gives "
        "int64/bool on XLA")
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
