"""A cached scalar constant loses its read-only mark and is overwritten by buffer aliasing.

Upstream: pytorch/xla issue 8499, fixed by PR 8505 (master) and PR 8508 (r2.6 cherry-pick);
the path that drops the read-only bit was added by PR 6642 ("Skip the execution if all
pending IRs are device data").

torch_xla keeps small constants such as `torch.tensor(42, device=xla)` in a DataCache and
hands out the same device buffer to every tensor created from the same value. Those buffers
are marked read-only so that input/output aliasing never donates them. On affected releases
`xm.mark_step()` on a tensor whose IR is plain device data re-stamps the buffer's info with
read_only=false. An in-place op on that tensor then donates the cached buffer and writes the
result into it; the next tensor built from the same constant gets the consumed buffer and
the step that uses it fails with `Check failed: HasValue()` (or reads a wrong value).

The test runs in a child process (a failed runtime CHECK can end the process on some builds)
and the parent judges the child's exit code and output.

`--workaround` runs the same child with input/output aliasing turned off
(XLA_ENABLE_PARAM_ALIASING=0) and must then report "not reproduced".

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import re
import subprocess
import signal
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3  # child: the bug showed as a Python exception or a wrong value
CHILD_TIMEOUT = 200
HAS_VALUE = re.compile(r"Check failed: HasValue\(\)")


def child() -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  dev = xm.xla_device()
  try:
    t0 = torch.tensor(42, device=dev)  # DataCache hands out a shared read-only buffer
    xm.mark_step()  # affected: the buffer's info is reset with read_only=false
    t0.add_(1)  # affected: the cached buffer is donated and overwritten (43)
    xm.mark_step()
    t1 = torch.tensor(42, device=dev)  # same constant -> same cached buffer
    xm.mark_step()
    t1.add_(1)
    xm.mark_step()
    got_t0, got_t1 = t0.item(), t1.item()
  except RuntimeError as e:
    if HAS_VALUE.search(str(e)):
      traceback.print_exc()
      print(f"CHILD_BUG: {str(e).splitlines()[0]}", flush=True)
      return CHILD_BUG
    raise
  print(f"INFO: t0={got_t0} t1={got_t1} (expected 43 and 43)")
  if got_t0 != 43 or got_t1 != 43:
    print(f"CHILD_BUG: cached constant 42 was overwritten by an aliased in-place update: "
          f"t0={got_t0}, t1={got_t1}, expected 43", flush=True)
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
  if workaround:  # a variable torch_xla may read at import: the child is a new interpreter
    print("INFO: workaround check, child runs with XLA_ENABLE_PARAM_ALIASING=0")
    try:
      proc = subprocess.run([sys.executable, __file__, "--child"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, errors="replace",
                            timeout=CHILD_TIMEOUT, env=dict(os.environ, XLA_ENABLE_PARAM_ALIASING="0"))
    except subprocess.TimeoutExpired:
      print(f"ERROR: child did not finish within {CHILD_TIMEOUT}s")
      return ERROR
    rc, out = proc.returncode, proc.stdout
  else:
    rc, out = run_forked(child, timeout=CHILD_TIMEOUT)
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
    print("REPRODUCED: reusing a cached scalar constant after an aliased in-place update: "
          + bug[0][len("CHILD_BUG: "):])
    return REPRODUCED
  fatal = [l.strip() for l in lines if HAS_VALUE.search(l)]
  if rc != 0 and fatal:
    print(f"REPRODUCED: child died (exit {rc}) with: {fatal[0][:300]}")
    return REPRODUCED
  if rc == 0 and "CHILD_OK" in lines:
    print("NOT REPRODUCED: cached constants stay intact across aliased in-place updates")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {rc} without the HasValue failure")
  return ERROR


if __name__ == "__main__":
  is_child = sys.argv[1:] == ["--child"]
  try:
    code = child() if is_child else parent(sys.argv[1:] == ["--workaround"])
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
