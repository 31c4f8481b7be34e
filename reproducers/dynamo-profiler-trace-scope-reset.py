"""torch.compile(backend="openxla") called inside an xp.Trace scope fails: "Expecting scope to be empty".

Upstream: fixed by pytorch/xla PR 6913 ("Fix runtime error when run dynamo with a profiler
scope").

`torch_xla.debug.profiler.Trace` pushes a lazy-tensor IR scope (so ops get the trace name in
their metadata) and pops it on exit. The openxla dynamo bridge calls `xm.mark_step()` while
compiling a graph (`extract_compiled_graph`), and every step marker reset the IR scopes with
`torch::lazy::ScopePusher::ResetScopes()`, which checks that no scope is open. Inside the
Trace one is, so the bridge's step marker raises
`RuntimeError: Expecting scope to be empty but it is build_graph.1`. PR 6913 lets the
bridge's step markers keep the scopes (`mark_step(reset_scope=False)`).

The test runs in a child process (a failed check can end the process) and the parent judges
the child's exit code and output.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import signal
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3
CHILD_TIMEOUT = 240
NEEDLE = "Expecting scope to be empty"


def child() -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.debug.profiler as xp

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  if not hasattr(xp, "Trace"):
    print("UNTESTABLE: torch_xla.debug.profiler.Trace is missing")
    return UNTESTABLE

  def step(a):
    return torch.sin(a) + a

  compiled = torch.compile(step, backend="openxla", fullgraph=True)
  dev = xm.xla_device()
  torch.manual_seed(0)
  t_cpu = torch.randn(2, 3, 4)
  t = t_cpu.to(dev)
  try:
    for i in range(3):
      with xp.Trace("build_graph"):
        t = compiled(t)
      print(f"INFO: iteration {i} done", flush=True)
    got = t.cpu()
  except Exception as e:
    if NEEDLE in str(e):
      traceback.print_exc()
      print(f"CHILD_BUG: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
      return CHILD_BUG
    raise
  expected = t_cpu
  for _ in range(3):
    expected = torch.sin(expected) + expected
  if not torch.allclose(got, expected, atol=1e-4):
    print("ERROR: wrong values (not the bug under test)")
    return ERROR
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


def parent() -> int:
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
    print("REPRODUCED: torch.compile(backend='openxla') inside xp.Trace: " +
          bug[0][len("CHILD_BUG: "):])
    return REPRODUCED
  fatal = [l.strip() for l in lines if NEEDLE in l]
  if rc != 0 and fatal:
    print(f"REPRODUCED: child died (exit {rc}) running torch.compile inside xp.Trace: "
          f"{fatal[0][:300]}")
    return REPRODUCED
  if rc == 0 and "CHILD_OK" in lines:
    print("NOT REPRODUCED: torch.compile(backend='openxla') runs inside xp.Trace scopes")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {rc} without the scope failure")
  return ERROR


if __name__ == "__main__":
  try:
    code = child() if sys.argv[1:] == ["--child"] else parent()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
