"""torch.where with operands of different dtypes fails to lower on XLA: Error while lowering aten::where.

Upstream: pytorch/xla#6479; the lowering error is fixed by pytorch/xla#6303 (first released in 2.3.0).

`torch.where(mask, a, b)` with `a` in bfloat16 and `b` in float32 (as when a bf16 model is
masked with a float32 fill) reaches torch_xla's `where` kernel without PyTorch's type
promotion. On 2.1 its lowering hands the two branches to `XlaHelpers::PromoteShapes`, which
insists on equal element types, so compiling the graph raises "Error while lowering: ...
aten::where ... Check failed: xla::ShapeUtil::SameElementType(shape1, shape2)". The script
also prints whether the result's dtype agrees with PyTorch on the CPU (from 2.3 on the
lowering succeeds, but the result keeps the first branch's dtype); only the lowering error
is judged.

`--workaround` casts both branches to `torch.result_type(a, b)` before `torch.where` and must
report "not reproduced" (the result must equal PyTorch's on the CPU, dtype included).

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
  device = xm.xla_device()
  mask = torch.tensor([True, False, True, False])
  a = torch.arange(4, dtype=torch.bfloat16)  # bfloat16 branch
  b = torch.full((4,), -0.5)  # float32 branch
  want = torch.where(mask, a, b)  # PyTorch on the CPU: float32 [0, -0.5, 2, -0.5]
  xa, xb = a.to(device), b.to(device)
  if workaround:
    common = torch.result_type(xa, xb)
    got = torch.where(mask.to(device), xa.to(common), xb.to(common)).cpu()
    if got.dtype != want.dtype or not torch.equal(got, want):
      print(f"ERROR: the workaround returned {got} ({got.dtype}), PyTorch gives {want} ({want.dtype})")
      return ERROR
    print(f"NOT REPRODUCED: torch.where after casting both branches to {common} "
          f"matches PyTorch: {got.tolist()} ({got.dtype})")
    return NOT_REPRODUCED
  try:
    got = torch.where(mask.to(device), xa, xb).cpu()
  except RuntimeError as e:
    text = str(e)
    if "Error while lowering" in text and "aten::where" in text:
      traceback.print_exc()
      lines = [l.strip() for l in text.splitlines() if l.strip()]
      check = next((l for l in lines if "Check failed" in l), "")
      print(f"REPRODUCED: torch.where(mask, bfloat16, float32) failed to lower: {lines[0][:200]} "
            f"{check[:200]}")
      return REPRODUCED
    raise
  agree = got.dtype == want.dtype and torch.equal(got, want)
  print(f"INFO: XLA result {got.tolist()} ({got.dtype}); PyTorch on the CPU {want.tolist()} "
        f"({want.dtype}): {'the same' if agree else 'DIFFERENT (no type promotion)'}")
  print("NOT REPRODUCED: torch.where(mask, bfloat16, float32) lowers on XLA")
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
