"""diagonal_scatter with a negative dim on XLA aborts the process.

Upstream: pytorch/xla#6123 ("Handle negative dim for Diagonal Scatter"),
cherry-picked to the 2.2 branch as pytorch/xla#6129; no separate issue. The
XLA kernel passed dim1/dim2 to the DiagonalViewUpdate IR node without making
them non-negative. Besides calling torch.diagonal_scatter directly, the same
kernel runs when a diagonal view taken with negative dims is modified in place
(`x.diagonal(dim1=-2, dim2=-1).add_(1)`): functionalization turns the
mutation into diagonal_scatter. Each case runs in its own child process,
because on affected releases the failure can abort the process.

`--workaround` runs only the record's workaround, the same in-place update of the diagonal
view with non-negative dims (`x.diagonal(dim1=1, dim2=2).add_(1)`), in a child process, and
reports "not reproduced" when it matches PyTorch on the CPU.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import re
import signal
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3  # child exit code: the failure was raised as a Python exception
CHILD_TIMEOUT = 90  # per case; three cases stay below the record timeout (300 s)
FATAL = re.compile(r"Non-OK-status|Check failed|^F\d{4} ")
TRANSPOSE = re.compile(r"Transpose dimensions \[[-0-9,]*\] are not a permutation of the operand "
                       r"dimensions")
CASES = {
    "op": "torch.diagonal_scatter(zeros(3, 3), ones(3), 0, dim1=-1, dim2=0)",
    "view": "zeros(2, 3, 3).diagonal(dim1=-2, dim2=-1).add_(1)",
}


def child(case: str) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  device = xm.xla_device()

  def run(dev):
    if case == "positive":  # the workaround: the same view with non-negative dims
      x = torch.zeros(2, 3, 3, device=dev)
      x.diagonal(dim1=1, dim2=2).add_(1)
      return x
    if case == "op":
      return torch.diagonal_scatter(
          torch.zeros(3, 3, device=dev), torch.ones(3, device=dev), 0, dim1=-1, dim2=0)
    x = torch.zeros(2, 3, 3, device=dev)
    x.diagonal(dim1=-2, dim2=-1).add_(1)
    return x

  want = run("cpu")
  try:
    got = run(device).cpu()
  except RuntimeError as e:
    traceback.print_exc()
    print(f"CHILD_BUG: {type(e).__name__}: {str(e).splitlines()[0]}", flush=True)
    return CHILD_BUG
  if not torch.equal(got, want):
    print(f"CHILD_WRONG: XLA {got.tolist()} vs CPU {want.tolist()}", flush=True)
    return CHILD_BUG
  print(f"CHILD_OK: {CASES.get(case, case)} matches CPU", flush=True)
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


def run_case(case: str):
  rc, out = run_forked(child, case, timeout=CHILD_TIMEOUT)
  if rc is None:
    return None, out + f"child did not finish within {CHILD_TIMEOUT}s"
  return rc, out


def parent() -> int:
  found, unexpected = [], []
  for case, text in CASES.items():
    rc, out = run_case(case)
    print(f"--- case {case}: {text} (exit {rc})")
    sys.stdout.write(out if rc is not None else out + "\n")
    lines = (out or "").splitlines()
    fatal = [l.strip() for l in lines if FATAL.search(l)]
    if rc == CHILD_BUG:
      msg = next((l for l in lines if l.startswith(("CHILD_BUG", "CHILD_WRONG"))), "")
      found.append(f"{text}: {msg}")
    elif rc in (-signal.SIGABRT, 128 + signal.SIGABRT):
      found.append(f"{text}: child aborted (exit {rc}): {(fatal or ['?'])[0][-300:]}")
    elif rc == 0 and any(l.startswith("CHILD_OK") for l in lines):
      pass
    else:
      unexpected.append(f"{text}: exit {rc}")
  # The workaround is only reported, not judged.
  rc, out = run_case("positive")
  ok = rc == 0 and "CHILD_OK" in (out or "")
  print(f"INFO: workaround zeros(2, 3, 3).diagonal(dim1=1, dim2=2).add_(1) "
        f"{'matches CPU' if ok else f'failed (exit {rc})'}")
  for f in found:
    print(f"REPRODUCED: diagonal_scatter with a negative dim: {f}")
  if found:
    return REPRODUCED
  if unexpected:
    print("ERROR: " + "; ".join(unexpected))
    return ERROR
  print("NOT REPRODUCED: diagonal_scatter with negative dims works on XLA")
  return NOT_REPRODUCED


def parent_workaround() -> int:
  """The workaround: the in-place diagonal update with non-negative dims."""
  text = "zeros(2, 3, 3).diagonal(dim1=1, dim2=2).add_(1)"
  rc, out = run_case("positive")
  print(f"--- workaround: {text} (exit {rc})")
  sys.stdout.write(out if rc is not None else out + "\n")
  lines = (out or "").splitlines()
  if rc == 0 and any(l.startswith("CHILD_OK") for l in lines):
    print(f"NOT REPRODUCED: workaround holds: {text} matches CPU")
    return NOT_REPRODUCED
  same = [l[m.start():].strip() for l in lines for m in [TRANSPOSE.search(l)] if m]
  if same and (rc == CHILD_BUG or rc in (-signal.SIGABRT, 128 + signal.SIGABRT)):
    print(f"REPRODUCED: diagonal_scatter with a negative dim: the workaround {text} "
          f"fails the same way (exit {rc}): {same[0][:300]}")
    return REPRODUCED
  print(f"ERROR: the workaround {text} failed (exit {rc}) without the bug's message")
  return ERROR


if __name__ == "__main__":
  is_child = sys.argv[1:2] == ["--child"]
  try:
    if is_child:
      code = child(sys.argv[2])
    else:
      code = parent_workaround() if sys.argv[1:] == ["--workaround"] else parent()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
