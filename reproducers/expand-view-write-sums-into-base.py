"""Writing into an expanded view of an XLA tensor silently sums the broadcast rows into the base.

Upstream: pytorch/xla#5839 (closed 2025-04-28 as no longer reproducible on nightly). The
thread points at the same bug in PyTorch's functionalization, pytorch/pytorch#114302 (the
inverse of `expand` used when a write to the view is replayed onto the base tensor sums
over the expanded dimension), answered by pytorch/pytorch#114538.

`x = arange(6); y = x.expand(2, 6); y[0, 0] = 5` must leave every row equal to
[5, 1, 2, 3, 4, 5] (the two rows share x's storage). On an affected XLA release the rows
of y, and x itself, become [5, 2, 4, 6, 8, 10]: row 0 after the write plus row 1 before it.

`--workaround` writes into the base tensor (`x[0] = 5`) instead of through the expanded
view and reports "not reproduced" when the view then reads the same as on the CPU.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def run(torch, device, through_view: bool):
  x = torch.arange(6, device=device)
  y = x.expand(2, *x.shape)
  if through_view:
    y[0, 0] = 5
  else:
    x[0] = 5
  return x.cpu(), y.cpu()


def main(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  device = xm.xla_device()
  through_view = not workaround
  want_x, want_y = run(torch, "cpu", through_view)
  got_x, got_y = run(torch, device, through_view)
  what = "y[0, 0] = 5 through x.expand(2, 6)" if through_view else "x[0] = 5 on the base of x.expand(2, 6)"
  print(f"INFO: {what}: CPU y {want_y.tolist()} x {want_x.tolist()}")
  print(f"INFO: {what}: XLA y {got_y.tolist()} x {got_x.tolist()}")
  if torch.equal(got_y, want_y) and torch.equal(got_x, want_x):
    print(f"NOT REPRODUCED: {what} on XLA matches the CPU")
    return NOT_REPRODUCED
  print(f"REPRODUCED: {what} on XLA differs from the CPU: x became {got_x.tolist()} "
        f"instead of {want_x.tolist()}")
  return REPRODUCED


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
