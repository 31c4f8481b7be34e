"""`pixel_shuffle` on an XLA tensor silently returns wrong values.

Upstream: pytorch/xla#5886 (core ATen opset: lower aten::pixel_shuffle); the
fix is pytorch/xla#6907 ("fix pixel_shuffle return empty"). Before the fix the
XLA kernel re-ran PyTorch's decomposition of pixel_shuffle (reshape, permute,
reshape) through `functionalize_aten_op`; the result has the right shape but
not the input's data. The reproducer compares the XLA result with PyTorch on
the CPU, including upscale_factor=1, where the output must equal the input.

`--workaround` runs the same two cases through the record's workaround instead, the
rearrangement written by hand (`x.reshape(n, c // (r * r), r, r, h, w).permute(0, 1, 4, 2, 5,
3).reshape(n, c // (r * r), h * r, w * r)`), and reports "not reproduced" when both equal
PyTorch's pixel_shuffle on the CPU.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main(workaround: bool) -> int:
  import torch
  import torch.nn.functional as F
  import torch_xla
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()
  if workaround:
    return check_workaround(torch, F, device)
  wrong = []
  for shape, r in [((1, 3, 4, 4), 1), ((1, 8, 4, 4), 2)]:
    x = torch.arange(torch.Size(shape).numel(), dtype=torch.float32).reshape(shape)
    want = F.pixel_shuffle(x, r)
    got = F.pixel_shuffle(x.to(device), r).cpu()
    same = got.shape == want.shape and torch.equal(got, want)
    print(f"INFO: F.pixel_shuffle(x{list(shape)}, {r}): XLA shape {list(got.shape)}, "
          f"first values {got.flatten()[:8].tolist()}, all zeros {bool((got == 0).all())}; CPU shape {list(want.shape)}, "
          f"first values {want.flatten()[:8].tolist()}")
    if not same:
      wrong.append(f"F.pixel_shuffle(x{list(shape)}, {r}) on XLA differs from CPU "
                   f"(max abs diff {(got - want).abs().max().item():g})")

  # The workaround (the same decomposition written with view/permute) is only
  # reported, not judged.
  x = torch.arange(128, dtype=torch.float32).reshape(1, 8, 4, 4)
  n, c, h, w = x.shape
  manual = (x.to(device).reshape(n, c // 4, 2, 2, h, w).permute(0, 1, 4, 2, 5, 3)
            .reshape(n, c // 4, h * 2, w * 2)).cpu()
  print(f"INFO: workaround reshape/permute/reshape equals CPU pixel_shuffle: "
        f"{torch.equal(manual, F.pixel_shuffle(x, 2))}")

  # pixel_unshuffle kept the old kernel (functionalize_aten_op); only reported.
  y = torch.arange(128, dtype=torch.float32).reshape(1, 2, 8, 8)
  un = F.pixel_unshuffle(y.to(device), 2).cpu()
  print(f"INFO: F.pixel_unshuffle on XLA equals CPU: "
        f"{torch.equal(un, F.pixel_unshuffle(y, 2))} (all zeros {bool((un == 0).all())})")

  if wrong:
    for w_ in wrong:
      print(f"REPRODUCED: {w_}")
    return REPRODUCED
  print("NOT REPRODUCED: pixel_shuffle on XLA matches PyTorch on the CPU")
  return NOT_REPRODUCED


def check_workaround(torch, F, device) -> int:
  """The workaround: pixel_shuffle written as reshape/permute/reshape."""

  def manual(x, r):
    n, c, h, w = x.shape
    return (x.reshape(n, c // (r * r), r, r, h, w).permute(0, 1, 4, 2, 5, 3)
            .reshape(n, c // (r * r), h * r, w * r))

  wrong = []
  for shape, r in [((1, 3, 4, 4), 1), ((1, 8, 4, 4), 2)]:
    x = torch.arange(torch.Size(shape).numel(), dtype=torch.float32).reshape(shape)
    want = F.pixel_shuffle(x, r)
    got = manual(x.to(device), r).cpu()
    same = got.shape == want.shape and torch.equal(got, want)
    print(f"INFO: workaround reshape/permute/reshape of x{list(shape)}, r={r}: XLA shape "
          f"{list(got.shape)}, first values {got.flatten()[:8].tolist()}; CPU pixel_shuffle "
          f"shape {list(want.shape)}, first values {want.flatten()[:8].tolist()}")
    if not same:
      diff = ((got - want).abs().max().item() if got.shape == want.shape else "shape differs")
      wrong.append(f"F.pixel_shuffle(x{list(shape)}, {r}) on XLA differs from CPU even written "
                   f"as reshape/permute/reshape (the workaround; max abs diff {diff})")

  if wrong:
    for w_ in wrong:
      print(f"REPRODUCED: {w_}")
    return REPRODUCED
  print("NOT REPRODUCED: workaround holds: the hand-written rearrangement on XLA matches "
        "PyTorch's pixel_shuffle on the CPU")
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
