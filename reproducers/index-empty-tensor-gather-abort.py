"""Indexing an empty XLA tensor with an empty index tensor aborts the process.

Upstream: pytorch/xla#7113 ("`index`: fix index of 0-element tensor by
0-element tensor"; no separate issue). `x[i]` with `x` of shape (0,) (or any
tensor whose indexed dimension has size 0) and a 0-element index is lowered
to an XLA gather whose slice size (1) is larger than the indexed dimension
(0). XLA rejects the gather with "Slice size at index 0 in gather op is out of
range, must be within [0, 1), got 1."; depending on the build this is a
Python RuntimeError or a fatal check that aborts the process. The test runs
in a child process and the parent judges its exit status and output.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import re
import signal
import subprocess
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3  # child exit code: the gather error was raised as an exception
CHILD_TIMEOUT = 150  # below the record timeout (180 s)
GATHER = re.compile(r"Slice size at index \d+ in gather op is out of range")


def child() -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()
  x = torch.rand(0)
  i = torch.randint(0, 10, (0,), dtype=torch.long)
  want = x[i]
  print(f"INFO: CPU x[i] with x.shape={tuple(x.shape)}, i.shape={tuple(i.shape)} "
        f"-> shape {tuple(want.shape)}", flush=True)
  try:
    got = x.to(device)[i.to(device)]
    got_cpu = got.cpu()
  except RuntimeError as e:
    if GATHER.search(str(e)):
      traceback.print_exc()
      print(f"CHILD_BUG: {str(e).splitlines()[0]}", flush=True)
      return CHILD_BUG
    raise
  if tuple(got_cpu.shape) != tuple(want.shape):
    print(f"CHILD_WRONG: XLA result shape {tuple(got_cpu.shape)}", flush=True)
    return ERROR
  print(f"CHILD_OK: XLA x[i] -> shape {tuple(got_cpu.shape)}", flush=True)
  return NOT_REPRODUCED


def parent() -> int:
  try:
    proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--child"],
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
  fatal = [l.strip() for l in lines if GATHER.search(l)]

  if rc == CHILD_BUG:
    print(f"REPRODUCED: indexing an empty tensor with an empty index raised: {fatal[0][:300]}")
    return REPRODUCED
  if rc in (-signal.SIGABRT, 128 + signal.SIGABRT) and fatal:
    print(f"REPRODUCED: child aborted (exit {rc}) on indexing an empty tensor with an "
          f"empty index: {fatal[0][:300]}")
    return REPRODUCED
  if rc == 0 and any(l.startswith("CHILD_OK") for l in lines):
    print("NOT REPRODUCED: indexing an empty tensor with an empty index works on XLA")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {rc} without the gather failure")
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
