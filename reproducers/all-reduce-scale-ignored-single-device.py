"""xm.all_reduce ignores `scale` when there is only one device.

Upstream: pytorch/xla issue 9670 (open); the no-op came with PR 5342 ("Make all-reduce a no-op
when world size is 1").

`torch_xla.core.xla_model.all_reduce(reduce_type, inputs, scale=...)` returns early when
`runtime.world_size() == 1` (unless the environment variable XLA_ALWAYS_ALLREDUCE is set): a
single tensor comes back as `inputs.clone()` and a list is returned untouched. The documented
`scale` ("a default scaling value to be applied after the reduce") is never applied, so the same
code gives different numbers on one device and on several, e.g. a running-average loss
`xm.all_reduce(REDUCE_SUM, loss_sum, scale=1.0 / ((idx + 1) * world_size))` stays a sum.

The script runs on one CPU device: a single tensor [6.0] with scale 1/3 (expect 2.0) and a list
[[6.0]] with scale 0.5, reduced in place (expect 3.0). `--workaround` sets
XLA_ALWAYS_ALLREDUCE=1, which makes torch_xla run the real all-reduce, scale included.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main(workaround: bool) -> int:
  if workaround:
    os.environ["XLA_ALWAYS_ALLREDUCE"] = "1"
  elif os.environ.get("XLA_ALWAYS_ALLREDUCE"):
    print("ERROR: XLA_ALWAYS_ALLREDUCE is set; the bug needs it unset")
    return ERROR
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__,
        "XLA_ALWAYS_ALLREDUCE", os.environ.get("XLA_ALWAYS_ALLREDUCE"))
  device = xm.xla_device()
  try:
    import torch_xla.runtime as xr
    world = xr.world_size()
  except (ImportError, AttributeError):
    world = xm.xrt_world_size()
  if world != 1:
    print(f"ERROR: world size is {world}; the bug needs a single device")
    return ERROR

  single = xm.all_reduce(xm.REDUCE_SUM, torch.tensor([6.0], device=device), scale=1.0 / 3)
  got_single = single.cpu().item()
  listed = [torch.tensor([6.0], device=device)]
  xm.all_reduce(xm.REDUCE_SUM, listed, scale=0.5)
  got_list = listed[0].cpu().item()
  print(f"INFO: single tensor 6.0 with scale 1/3 -> {got_single} (expected 2.0)")
  print(f"INFO: list [6.0] with scale 0.5, in place -> {got_list} (expected 3.0)")
  bad = []
  if abs(got_single - 2.0) > 1e-5:
    bad.append(f"single tensor returned {got_single} instead of 2.0")
  if abs(got_list - 3.0) > 1e-5:
    bad.append(f"list returned {got_list} instead of 3.0")
  if bad and workaround:
    print(f"ERROR: with XLA_ALWAYS_ALLREDUCE=1 the scale is still not applied: {bad}")
    return ERROR
  if bad:
    print(f"REPRODUCED: xm.all_reduce on one device ignored scale: {'; '.join(bad)}")
    return REPRODUCED
  print("NOT REPRODUCED: xm.all_reduce applied scale on one device")
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
