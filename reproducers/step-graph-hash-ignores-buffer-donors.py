"""A cached step graph compiled with buffer donation is reused for a graph that must not donate.

Upstream: pytorch/xla issue 8464, fixed by PR 8467 (master) and PR 8503 (r2.6 cherry-pick).

At a step marker torch_xla decides which input buffers can be donated to outputs
(input/output aliasing) only after the graph hash has been computed, and the donation list
is not part of the hash. `t1.add_(t0)` and `t2 = t1 + t0` lower to the same IR (an add of
the same two parameters), so the second step gets the executable compiled for the first one,
including the donation of t1's buffer, although t1 is still live. Afterwards t1 points at a
donated buffer: reading it fails with
`INVALID_ARGUMENT: CopyToHostAsync() called on deleted or donated buffer` on PJRT CPU (other
runtimes may instead return the wrong value t1=4).

The test runs in a child process and the parent judges its exit code and output.

`--workaround` runs the child with XLA_ENABLE_PARAM_ALIASING=0 and must then report
"not reproduced".

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
DONATED = re.compile(r"called on deleted or donated buffer|Check failed: HasValue\(\)")


def child() -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  dev = xm.xla_device()
  t0 = torch.tensor([1], device=dev)
  t1 = torch.tensor([2], device=dev)
  xm.mark_step()
  t1.add_(t0)  # step 1: t1's old buffer may be donated to its new value
  xm.mark_step()
  t2 = t1 + t0  # step 2: same IR hash as step 1, but t1 must stay alive
  xm.mark_step()
  try:
    got_t1 = t1.item()
    got_t2 = t2.item()
  except RuntimeError as e:
    if DONATED.search(str(e)):
      traceback.print_exc()
      print(f"CHILD_BUG: {str(e).splitlines()[0]}", flush=True)
      return CHILD_BUG
    raise
  print(f"INFO: t1={got_t1} t2={got_t2} (expected 3 and 4)")
  if (got_t1, got_t2) != (3, 4):
    print(f"CHILD_BUG: wrong values after reusing the aliased graph: t1={got_t1}, "
          f"t2={got_t2}, expected 3 and 4", flush=True)
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
    print("REPRODUCED: step graph reused with the donation of a live buffer: " +
          bug[0][len("CHILD_BUG: "):])
    return REPRODUCED
  fatal = [l.strip() for l in lines if DONATED.search(l)]
  if rc != 0 and fatal:
    print(f"REPRODUCED: child died (exit {rc}) on a donated buffer: {fatal[0][:300]}")
    return REPRODUCED
  if rc == 0 and "CHILD_OK" in lines:
    print("NOT REPRODUCED: the step graphs with and without donation are kept apart")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {rc} without the donated-buffer failure")
  return ERROR


if __name__ == "__main__":
  args = sys.argv[1:]
  try:
    code = child() if "--child" in args else parent("--workaround" in args)
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
