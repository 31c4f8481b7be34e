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


def run_forked(fn, *args, timeout: float):
  """Run fn(*args) in a child forked from this process once torch and torch_xla are imported (the runtime
  not yet started, as a fresh process has it): a crash (abort, segfault) ends only the child, and the
  child does not pay the import again. Returns (exit code, or -signal; None past `timeout` seconds, the
  child killed) and the child's stdout and stderr as one text, as subprocess.run(stderr=STDOUT) would."""
  import select
  import time
  import torch  # noqa: F401  imported once, before the fork
  import torch_xla  # noqa: F401
  sys.stdout.flush()
  sys.stderr.flush()
  r, w = os.pipe()
  pid = os.fork()
  if pid == 0:  # the child: its output into the pipe, its exit as an interpreter's (atexit handlers run)
    code = ERROR
    try:
      os.close(r)
      os.dup2(w, 1)
      os.dup2(w, 2)
      os.close(w)
      import faulthandler
      faulthandler.enable()
      code = fn(*args)
    except SystemExit as e:
      code = e.code if isinstance(e.code, int) else ERROR
    except BaseException:
      traceback.print_exc()
    finally:
      try:
        import atexit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
      finally:
        os._exit(code if isinstance(code, int) else ERROR)
  os.close(w)
  chunks, deadline, killed = [], time.monotonic() + timeout, False
  while True:
    left = deadline - time.monotonic()
    if left <= 0:
      os.kill(pid, signal.SIGKILL)
      killed = True
      break
    if select.select([r], [], [], left)[0]:
      data = os.read(r, 65536)
      if not data:
        break
      chunks.append(data)
  os.close(r)
  _, status = os.waitpid(pid, 0)
  out = b"".join(chunks).decode("utf-8", "replace")
  if killed:
    return None, out
  return (-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)), out


def parent() -> int:
  rc, out = run_forked(child, timeout=CHILD_TIMEOUT)
  if rc is None:
    sys.stdout.write(out)
    print(f"ERROR: child did not finish within {CHILD_TIMEOUT}s")
    return ERROR
  sys.stdout.write(out)
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
