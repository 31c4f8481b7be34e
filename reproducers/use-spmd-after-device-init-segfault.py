"""Asking for the XLA device before xr.use_spmd() makes the first computation on host data segfault.

Upstream: pytorch/xla#9735 ("Calling `torch_xla.device()` or setting random
seed before `use_spmd()` produces SIGSEGV for unmarked tensors"). With several
PJRT CPU devices (CPU_NUM_DEVICES=4): `xm.xla_device()`, then `xr.use_spmd()`,
then `x = torch.arange(4.0).to(xm.xla_device())` and `(x * 2).cpu()`. The
first call fixes the device setup before SPMD is on; use_spmd() then takes its
"force SPMD" path (it warns "Replicating tensors already initialized on
non-virtual XLA device"), and data copied to the device afterwards is not
placed on the SPMD virtual device. The steps run in a child process and the
parent judges how it ended: a signal (segfault or abort) is the bug; the right
values, or an exception the caller can catch, are not.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import signal
import subprocess
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_TIMEOUT = 150  # below the record timeout (180 s)
FATAL_SIGNALS = {signal.SIGSEGV: "SIGSEGV", signal.SIGABRT: "SIGABRT", signal.SIGBUS: "SIGBUS"}
WANT = [0.0, 2.0, 4.0, 6.0]


def child() -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  try:
    import torch_xla.runtime as xr
    use_spmd = xr.use_spmd
  except (ImportError, AttributeError) as e:
    print(f"CHILD_UNTESTABLE: no torch_xla.runtime.use_spmd in torch_xla {torch_xla.__version__}: {e}", flush=True)
    return UNTESTABLE

  print(f"INFO: torch_xla {torch_xla.__version__}", flush=True)
  print(f"STEP: xm.xla_device() before use_spmd() -> {xm.xla_device()}", flush=True)
  try:
    use_spmd()
    print("STEP: xr.use_spmd() returned", flush=True)
    x = torch.arange(4.0).to(xm.xla_device())
    print("STEP: host tensor moved to the device", flush=True)
    got = (x * 2).cpu().tolist()
  except RuntimeError as e:
    print(f"CHILD_RAISED: {type(e).__name__}: {str(e).splitlines()[0][:300]}", flush=True)
    return 0
  print(f"CHILD_RESULT: (x * 2).cpu() = {got}", flush=True)
  return 0


def parent() -> int:
  env = dict(os.environ)
  env.setdefault("PJRT_DEVICE", "CPU")
  env.setdefault("CPU_NUM_DEVICES", "4")
  try:
    proc = subprocess.run([sys.executable, "-X", "faulthandler", os.path.abspath(__file__), "--child"],
                          env=env,
                          stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT,
                          text=True,
                          errors="replace",
                          timeout=CHILD_TIMEOUT)
  except subprocess.TimeoutExpired:
    print(f"ERROR: child did not finish within {CHILD_TIMEOUT}s")
    return ERROR
  out = proc.stdout
  sys.stdout.write(out)
  rc = proc.returncode
  lines = out.splitlines()
  steps = [l for l in lines if l.startswith("STEP:")]
  last = steps[-1][len("STEP: "):] if steps else "before the first step"
  died = {-s: n for s, n in FATAL_SIGNALS.items()} | {128 + s: n for s, n in FATAL_SIGNALS.items()}
  if rc in died:
    print(f"REPRODUCED: the process died of {died[rc]} after: {last}")
    return REPRODUCED
  if rc == UNTESTABLE:
    print("UNTESTABLE: this release has no torch_xla.runtime.use_spmd")
    return UNTESTABLE
  raised = [l for l in lines if l.startswith("CHILD_RAISED")]
  result = [l for l in lines if l.startswith("CHILD_RESULT")]
  if raised:
    print(f"NOT REPRODUCED: an exception the caller can catch (child exit {rc}): {raised[0][len('CHILD_RAISED: '):]}")
    return NOT_REPRODUCED
  if rc == 0 and result:
    if result[0].endswith(str(WANT)):
      print(f"NOT REPRODUCED: the computation ran; {result[0][len('CHILD_RESULT: '):]}")
      return NOT_REPRODUCED
    print(f"ERROR: wrong values, not the crash under test; {result[0][len('CHILD_RESULT: '):]} (want {WANT})")
    return ERROR
  print(f"ERROR: child exited with {rc} without dying of a signal")
  return ERROR


if __name__ == "__main__":
  is_child = sys.argv[1:] == ["--child"]
  try:
    code = child() if is_child else parent()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
