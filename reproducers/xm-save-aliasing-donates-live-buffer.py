"""xm.save() runs an aliasing sync that donates a buffer a pending computation still needs.

Upstream: pytorch/xla issue 8422, fixed by PR 8484 (master) and PR 8504 (r2.6 cherry-pick).

`xm.save()` (and `torch_xla.utils.serialization.save`) moves the tensors to the CPU with
`_xla_sync_multi(tensors, ..., sync_xla_data=True)`. That flag makes the partial sync behave
like a step marker, so input/output aliasing is applied: the buffer of a tensor updated in
place is donated to the result, although other live tensors (here `t2 = t0 + t1`, still
pending) read the old buffer. The next `xm.mark_step()` then fails with
`Check failed: HasValue()` on the donated buffer (or computes with the wrong value).

The test runs in a child process and the parent judges its exit code and output.

`--workaround` calls `xm.mark_step()` right before `xm.save()` (nothing is pending when the
save syncs) and must then report "not reproduced".

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import re
import signal
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3  # child: the bug showed as a Python exception or a wrong value
CHILD_TIMEOUT = 200
HAS_VALUE = re.compile(r"Check failed: HasValue\(\)")


def child(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  dev = xm.xla_device()
  t0 = torch.tensor([1], device=dev)
  t1 = torch.tensor([2], device=dev)
  xm.mark_step()
  t2 = t0 + t1  # pending; reads t1's current buffer
  t1.add_(1)  # in-place update of t1, also pending
  try:
    if workaround:
      print("INFO: workaround: xm.mark_step() before xm.save()")
      xm.mark_step()
    xm.save(t1, os.devnull)  # affected: syncs t1 with aliasing, donating its old buffer
    print("INFO: xm.save returned")
    xm.mark_step()  # affected: t2 needs the donated buffer
    got = t2.item()
  except RuntimeError as e:
    if HAS_VALUE.search(str(e)):
      traceback.print_exc()
      print(f"CHILD_BUG: {str(e).splitlines()[0]}", flush=True)
      return CHILD_BUG
    raise
  print(f"INFO: t2={got} t1={t1.item()} (expected 3 and 3)")
  if got != 3:
    print(f"CHILD_BUG: t2 = t0 + t1 computed {got} after xm.save(t1), expected 3", flush=True)
    return CHILD_BUG
  print("CHILD_OK", flush=True)
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


def parent(workaround: bool) -> int:
  rc, out = run_forked(child, workaround, timeout=CHILD_TIMEOUT)
  if rc is None:
    sys.stdout.write(out)
    print(f"ERROR: child did not finish within {CHILD_TIMEOUT}s")
    return ERROR
  sys.stdout.write(out)
  lines = out.splitlines()
  if rc == UNTESTABLE:
    return UNTESTABLE
  bug = [l for l in lines if l.startswith("CHILD_BUG")]
  if rc == CHILD_BUG and bug:
    print("REPRODUCED: step after xm.save() of an in-place updated tensor: " +
          bug[0][len("CHILD_BUG: "):])
    return REPRODUCED
  fatal = [l.strip() for l in lines if HAS_VALUE.search(l)]
  if rc != 0 and fatal:
    print(f"REPRODUCED: child died (exit {rc}) after xm.save() with: {fatal[0][:300]}")
    return REPRODUCED
  if rc == 0 and "CHILD_OK" in lines:
    print("NOT REPRODUCED: xm.save() does not donate buffers that pending tensors still read")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {rc} without the HasValue failure")
  return ERROR


if __name__ == "__main__":
  args = sys.argv[1:]
  workaround = "--workaround" in args
  try:
    code = child(workaround) if "--child" in args else parent(workaround)
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
