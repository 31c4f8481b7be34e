"""`torch.pow(bf16_tensor, 3.0)` on XLA returns float32 instead of bfloat16.

Upstream: pytorch/xla#6521; the fix is pytorch/xla#6745 ("Fix type promotion
for `pow`"). Before the fix the XLA pow(Tensor, Scalar) kernel built the
exponent as an F32 constant and let the IR shape decide the result type, so a
bfloat16 (or float16) base was promoted to float32. PyTorch keeps the tensor's
dtype for a Python-float exponent. The values differ as well: PyTorch rounds
the result to bfloat16 (7**3 -> 344), the XLA result is the exact 343.0.

`--workaround` runs the record's workaround instead, the result cast back with
`torch.pow(x, 3.0).to(x.dtype)`, and reports "not reproduced" when that keeps bfloat16 and
float16 (the values are only compared loosely: the record notes they may round differently).

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
    return check_workaround(torch, device)
  wrong = []
  for dtype in (torch.bfloat16, torch.float16):
    x = torch.arange(10).to(dtype)
    want = torch.pow(x, 3.0)
    got = torch.pow(x.to(device), 3.0)
    if dtype == torch.bfloat16:  # the IR shows the promoted pow node
      ir = torch_xla._XLAC._get_xla_tensors_text([got])
      print("INFO: IR of the result:\n" + "\n".join(
          l for l in ir.splitlines() if "aten::pow" in l))
    got_cpu = got.cpu()
    print(f"INFO: torch.pow({dtype} tensor, 3.0): XLA dtype={got.dtype} "
          f"values={got_cpu.tolist()}; CPU dtype={want.dtype} values={want.tolist()}")
    if got.dtype != want.dtype or got_cpu.dtype != want.dtype:
      wrong.append(f"torch.pow({dtype} tensor, 3.0) on XLA returned {got.dtype} "
                   f"(materialized {got_cpu.dtype}), expected {want.dtype}")

  # The workaround (cast back) is only reported, not judged.
  x = torch.arange(10).to(torch.bfloat16).to(device)
  print(f"INFO: workaround torch.pow(x, 3.0).to(x.dtype) -> "
        f"{torch.pow(x, 3.0).to(x.dtype).dtype}")

  if wrong:
    for w in wrong:
      print(f"REPRODUCED: {w}")
    return REPRODUCED
  print("NOT REPRODUCED: pow with a float scalar exponent keeps bfloat16/float16 on XLA")
  return NOT_REPRODUCED


def check_workaround(torch, device) -> int:
  """The workaround: cast the result of pow back to the input's dtype."""
  wrong, off = [], []
  for dtype in (torch.bfloat16, torch.float16):
    x = torch.arange(10).to(dtype)
    want = torch.pow(x, 3.0)
    xx = x.to(device)
    got = torch.pow(xx, 3.0).to(xx.dtype)
    got_cpu = got.cpu()
    print(f"INFO: workaround torch.pow({dtype} tensor, 3.0).to(x.dtype): XLA dtype={got.dtype} "
          f"values={got_cpu.tolist()}; CPU torch.pow dtype={want.dtype} values={want.tolist()}")
    if got.dtype != want.dtype or got_cpu.dtype != want.dtype:
      wrong.append(f"torch.pow({dtype} tensor, 3.0) on XLA returned {got.dtype} "
                   f"(materialized {got_cpu.dtype}) even after .to(x.dtype) (the workaround), "
                   f"expected {want.dtype}")
    elif not torch.allclose(got_cpu.float(), want.float(), rtol=1e-2):
      off.append(f"{dtype}: {got_cpu.tolist()} vs CPU {want.tolist()}")

  if wrong:
    for w in wrong:
      print(f"REPRODUCED: {w}")
    return REPRODUCED
  if off:
    print("ERROR: the workaround keeps the dtype, but the values are off by more than 1%: "
          + "; ".join(off))
    return ERROR
  print("NOT REPRODUCED: workaround holds: torch.pow(x, 3.0).to(x.dtype) keeps "
        "bfloat16/float16 on XLA")
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
