"""torch_xla's experimental while_loop fails when the condition ignores some carried values.

Upstream: pytorch/xla#8566 (closed without a fix; the code is unchanged up to 2.9.0).

`torch_xla.experimental.fori_loop.while_loop` traces `cond_fn` and `body_fn` into two
XLA computations. Their parameters are the tensors the traced graph happens to read,
numbered in the order the lowering meets them, and `buildforiloop` only appends
placeholder parameters after them, taking the placeholders' shapes from the carried
values by position. A condition that reads only the third of four carried values gets
that value as parameter 0, so the shapes no longer line up and XLA refuses the While:
"The parameter of condition and body, the result of the body, and init must all have
the same shape". torch_xla 2.5 aborts the process on it (a fatal check while building
the computation); 2.9 raises it as a RuntimeError. The step runs in a forked child and
the parent judges its exit status and output.

`--workaround` runs the same loop as a Python loop on the host (the condition read back
each iteration) and must report "not reproduced".

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import signal
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3  # child exit code: the shape error was raised as an exception
CHILD_TIMEOUT = 150  # below the record timeout (240 s)
SHAPE_ERROR = ("The parameter of condition and body, the result of the body, "
               "and init must all have the same shape")


def loop_inputs(device):
  import torch
  # Four carried values; the condition reads only A, the body changes only A.
  x = torch.tensor(10, device=device)
  y = torch.tensor(1, device=device)
  a = torch.tensor([-30], device=device)
  b = torch.tensor([-25], device=device)
  return x, y, a, b


def cond_fn(x, y, a, b):
  import torch
  return torch.all(a < 0)


def body_fn(x, y, a, b):
  return x, y, a - b, b


EXPECTED = [10, 1, 20, -25]  # -30 -> -5 -> 20: two iterations


def child() -> int:
  import torch_xla.core.xla_model as xm
  from torch_xla.experimental.fori_loop import while_loop

  device = xm.xla_device()
  try:
    res = while_loop(cond_fn, body_fn, loop_inputs(device))
    got = [int(r.cpu().reshape(-1)[0]) for r in res]
  except RuntimeError as e:
    if SHAPE_ERROR in str(e):
      traceback.print_exc()
      print(f"CHILD_BUG: {str(e).splitlines()[0][:400]}", flush=True)
      return CHILD_BUG
    raise
  if got != EXPECTED:
    print(f"CHILD_WRONG: while_loop returned {got}, expected {EXPECTED}", flush=True)
    return ERROR
  print(f"CHILD_OK: while_loop returned {got}", flush=True)
  return NOT_REPRODUCED


def workaround() -> int:
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()
  carried = loop_inputs(device)
  while bool(cond_fn(*carried).cpu()):  # the condition is read back on the host
    carried = body_fn(*carried)
  got = [int(r.cpu().reshape(-1)[0]) for r in carried]
  if got != EXPECTED:
    print(f"ERROR: the host loop returned {got}, expected {EXPECTED}")
    return ERROR
  print(f"NOT REPRODUCED: a host-side Python loop returns {got}")
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


def has_while_loop() -> bool:
  try:
    from torch_xla.experimental.fori_loop import while_loop  # noqa: F401
  except ImportError as e:  # releases before the experimental while_loop
    print(f"UNTESTABLE: torch_xla.experimental.fori_loop.while_loop is missing ({e})")
    return False
  return True


def parent() -> int:
  rc, out = run_forked(child, timeout=CHILD_TIMEOUT)
  sys.stdout.write(out)
  if rc is None:
    print(f"ERROR: child did not finish within {CHILD_TIMEOUT}s")
    return ERROR
  lines = out.splitlines()
  shape = [l.strip() for l in lines if SHAPE_ERROR in l]
  if rc == CHILD_BUG:
    print(f"REPRODUCED: while_loop with a condition that ignores carried values raised: "
          f"{shape[0][:400]}")
    return REPRODUCED
  if rc in (-signal.SIGABRT, 128 + signal.SIGABRT) and shape:
    print(f"REPRODUCED: child aborted (exit {rc}) building a while_loop whose condition "
          f"ignores carried values: {shape[0][:400]}")
    return REPRODUCED
  if rc == 0 and any(l.startswith("CHILD_OK") for l in lines):
    print("NOT REPRODUCED: while_loop runs with a condition that ignores carried values")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {rc} without the shape error")
  return ERROR


if __name__ == "__main__":
  try:
    if not has_while_loop():
      code = UNTESTABLE
    elif sys.argv[1:] == ["--workaround"]:
      code = workaround()
    else:
      code = parent()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
