"""xm.xla_device_kind() raises "Unknown device SPMD:0" once SPMD is on.

Upstream: pytorch/xla#9535 ("Fail to get device kind after use_spmd call"), open.

`xm.xla_device_kind()` (new in torch_xla 2.6) asks the runtime client for the
kind of the current device. After `xr.use_spmd()` the current device is the
SPMD:0 virtual device, which the PJRT client does not know, so
`PjRtComputationClient::StringToPjRtDevice` fails its check and the call raises
`RuntimeError: ... Check failed: string_to_device_.find(device) !=
string_to_device_.end() ... Unknown device SPMD:0` instead of naming the kind of
the devices SPMD runs on.

`--workaround` asks for the kind in a short child process that does not turn
SPMD on, then turns SPMD on here and runs one step: it must report "not
reproduced" and a non-empty kind.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import subprocess
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
ASK_KIND = "import torch_xla.core.xla_model as xm; print('KIND=' + xm.xla_device_kind())"


def kind_from_child() -> str:
  """The device kind as a process without SPMD sees it (the workaround)."""
  env = {k: v for k, v in os.environ.items() if k not in ("XLA_USE_SPMD", "XLA_AUTO_SPMD")}
  out = subprocess.run([sys.executable, "-c", ASK_KIND], env=env, capture_output=True, text=True,
                       timeout=120)
  kinds = [l[len("KIND="):] for l in out.stdout.splitlines() if l.startswith("KIND=")]
  if out.returncode != 0 or not kinds:
    print(out.stdout + out.stderr)
    raise RuntimeError(f"the child asking for the device kind failed (exit {out.returncode})")
  return kinds[-1]


def main(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr

  print(f"INFO: torch_xla {getattr(torch_xla, '__version__', '?')}")
  if not hasattr(xm, "xla_device_kind"):
    print("UNTESTABLE: torch_xla.core.xla_model.xla_device_kind is missing (added in 2.6)")
    return UNTESTABLE

  if workaround:
    kind = kind_from_child()
    xr.use_spmd()
    x = torch.arange(8.0).to(xm.xla_device())
    total = (x * 2).sum().item()
    print(f"INFO: SPMD on, {xr.global_runtime_device_count()} devices, sum {total}")
    if not kind or total != 56.0:
      print(f"ERROR: workaround gave kind {kind!r}, sum {total}")
      return ERROR
    print(f"NOT REPRODUCED: the device kind, asked in a child process without SPMD: {kind!r}")
    return NOT_REPRODUCED

  xr.use_spmd()
  try:
    kind = xm.xla_device_kind()
  except RuntimeError as e:
    if "Unknown device SPMD:0" in str(e):
      first = str(e).splitlines()[0]
      print(f"INFO: {first}")
      print("REPRODUCED: xm.xla_device_kind() after xr.use_spmd() raised RuntimeError: Unknown device SPMD:0")
      return REPRODUCED
    raise
  print(f"NOT REPRODUCED: xm.xla_device_kind() after xr.use_spmd() returned {kind!r}")
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
