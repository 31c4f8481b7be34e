"""Under AMP on XLA, `norm` returns float16 although it computed float32.

Upstream: pytorch/xla#7878 ("Fix `norm` data-type when using AMP"; no separate
issue). Autocast redirects norm.ScalarOpt_dim to norm.ScalarOpt_dim_dtype with
dtype=float32 (norm is an "append dtype" op in the autocast lists). The XLA
kernel computed the norm in float32 but created the result tensor with the
input's dtype, so the tensor claimed to be float16. The reproducer calls the
dtype overload directly, as autocast does on TPU/GPU. Autocast itself is only
printed: on the CPU PJRT device it does not redirect norm, so the AMP step
cannot be shown on CPU (the record's fidelity is "proxy").

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
  torch.manual_seed(0)
  x = torch.rand(10, 10, dtype=torch.float16)
  want = torch.ops.aten.norm.ScalarOpt_dim_dtype(x, p=2, dim=[1], keepdim=True,
                                                 dtype=torch.float32)
  wrong = []
  got = torch.ops.aten.norm.ScalarOpt_dim_dtype(x.to(device), p=2, dim=[1], keepdim=True,
                                                dtype=torch.float32)
  print(f"INFO: aten.norm.ScalarOpt_dim_dtype(float16, dtype=float32): XLA {got.dtype} "
        f"(materialized {got.cpu().dtype}), CPU {want.dtype}; max abs diff "
        f"{(got.cpu().float() - want).abs().max().item():.2e}")
  print("INFO: IR:\n" + torch_xla._XLAC._get_xla_tensors_text([got]).strip())
  if got.dtype != want.dtype:
    wrong.append(f"aten.norm.ScalarOpt_dim_dtype(float16 tensor, dtype=torch.float32) on XLA "
                 f"returned {got.dtype}")

  # Through autocast (reported only): on TPU/GPU autocast redirects
  # aten::norm.ScalarOpt_dim to ScalarOpt_dim_dtype; autocast on the CPU PJRT
  # device does not apply that redirect, so this path cannot show the bug here.
  for amp_dtype in (torch.float16, torch.bfloat16):
    try:
      with torch.autocast("xla", dtype=amp_dtype):
        y = torch.ops.aten.norm.ScalarOpt_dim(x.to(device), 2, [1], True)
        # torch.norm / Tensor.norm go to linalg.vector_norm in this torch: reported only.
        v = torch.norm(x.to(device), p=2, dim=1, keepdim=True)
    except Exception as e:  # noqa: BLE001 - only reported
      print(f"INFO: torch.autocast('xla', dtype={amp_dtype}) is not usable here: "
            f"{type(e).__name__}: {e}")
      continue
    print(f"INFO: under torch.autocast('xla', dtype={amp_dtype}): aten.norm.ScalarOpt_dim"
          f"(float16) -> {y.dtype} (materialized {y.cpu().dtype}); torch.norm(float16) -> "
          f"{v.dtype}")

  if wrong:
    for w in wrong:
      print(f"REPRODUCED: {w}")
    return REPRODUCED
  print("NOT REPRODUCED: aten::norm with dtype=float32 returns a float32 tensor on XLA")
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
