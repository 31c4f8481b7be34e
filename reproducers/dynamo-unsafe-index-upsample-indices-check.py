"""torch.compile(backend="openxla") of a nearest-neighbour upsample fails on aten._unsafe_index.

Upstream: pytorch/xla#5819, fixed by pytorch/xla#5707 (first released in 2.2.0).

Under dynamo, AOTAutograd decomposes `F.interpolate(..., mode="nearest")` into index arithmetic
and `aten._unsafe_index.Tensor`. torch_xla 2.1 has no XLA kernel for `_unsafe_index`, so the op
takes the CPU fallback: the fallback moves `self` to the CPU but leaves the XLA index tensors
where they are, and the CPU `_unsafe_index` then calls `at::index`, which dispatches on the XLA
indices to torch_xla's `index` with a CPU `self`. That kernel's check fails with
"Check failed: bridge::IsXlaTensor(self) && indices_on_cpu_or_xla ... indices should be either
on cpu or on the same device as the indexed tensor (XLA)". The dynamo bridge meets it first when
its fallback-node collector runs the FX graph.

`--workaround` writes the same 2x nearest upsample as two `repeat_interleave` calls inside the
compiled function (no `_unsafe_index` in the graph); it must report "not reproduced".

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
BUG_TEXTS = ("indices_on_cpu_or_xla", "indices should be either on cpu or on the same device")


def upsample(x):
  import torch.nn.functional as F
  return F.interpolate(x, scale_factor=2.0, mode="nearest") + 1


def upsample_by_repeat(x):
  return x.repeat_interleave(2, dim=-2).repeat_interleave(2, dim=-1) + 1


def main(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  if not hasattr(torch, "compile"):
    print("UNTESTABLE: torch.compile is missing")
    return UNTESTABLE
  device = xm.xla_device()
  x = torch.arange(16, dtype=torch.float32).reshape(1, 1, 4, 4)
  want = upsample(x)  # eager on the CPU: the reference
  if workaround:
    what = "torch.compile(backend='openxla') of a 2x upsample by repeat_interleave"
    got = torch.compile(upsample_by_repeat, backend="openxla")(x.to(device)).cpu()
  else:
    what = "torch.compile(backend='openxla') of F.interpolate(mode='nearest')"
    try:
      got = torch.compile(upsample, backend="openxla")(x.to(device)).cpu()
    except RuntimeError as e:
      if any(t in str(e) for t in BUG_TEXTS):
        traceback.print_exc()
        lines = [l.strip() for l in str(e).splitlines() if l.strip()]
        print(f"REPRODUCED: {what} failed: {lines[0][:200]}")
        return REPRODUCED
      raise
  if not torch.equal(got, want):
    print(f"ERROR: {what} returned {got.flatten().tolist()}, eager gives {want.flatten().tolist()}")
    return ERROR
  print(f"NOT REPRODUCED: {what} returns the eager result (shape {tuple(got.shape)})")
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
