"""`x.squeeze((1, 3))` (several dims) on XLA keeps a size-1 dimension.

Upstream: pytorch/xla#5751 ("fix squeeze op lowering issue when dim is not in
sorted order"; no separate issue). The XLA squeeze.dims kernel squeezed the
requested dims one after another, each time from the already-squeezed shape,
but interpreted every dim index against the shrinking shape: after dim 1 is
removed from (2, 1, 3, 1), index 3 is out of range and is skipped, so the
result is (2, 3, 1) instead of (2, 3). A negative dim is compared with the
rank as an unsigned number and skipped, so `squeeze((-1,))` ends in a view to
shape () and fails with "Check failed: total_element_count == ...".

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
  x = torch.arange(6, dtype=torch.float32).reshape(2, 1, 3, 1)
  wrong = []
  for dims in [(1, 3), (3, 1), (-1,), (1, -1), (0, 1, 2, 3)]:
    want = x.squeeze(dims)
    try:
      got = x.to(device).squeeze(dims)
      shape = list(got.shape)
      cpu_shape = list(got.cpu().shape)
    except RuntimeError as e:  # an error instead of a result is the bug too
      traceback.print_exc()
      print(f"INFO: x{list(x.shape)}.squeeze({dims}) on XLA raised "
            f"{type(e).__name__}: {str(e).splitlines()[0][:200]}")
      wrong.append(f"x{list(x.shape)}.squeeze({dims}) on XLA raised {type(e).__name__}")
      continue
    print(f"INFO: x{list(x.shape)}.squeeze({dims}): XLA shape {shape} "
          f"(materialized {cpu_shape}), CPU shape {list(want.shape)}")
    if shape != list(want.shape) or cpu_shape != list(want.shape):
      wrong.append(f"x{list(x.shape)}.squeeze({dims}) on XLA gave shape {shape}, "
                   f"expected {list(want.shape)}")

  # Single-dim squeezes (the workaround) are only reported, not judged.
  xd = x.to(device)
  print(f"INFO: workaround x.squeeze(3).squeeze(1) -> {list(xd.squeeze(3).squeeze(1).shape)}, "
        f"x.squeeze() -> {list(xd.squeeze().shape)}")

  if wrong:
    for w in wrong:
      print(f"REPRODUCED: {w}")
    return REPRODUCED
  print("NOT REPRODUCED: squeeze with several dims gives PyTorch's shapes on XLA")
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
