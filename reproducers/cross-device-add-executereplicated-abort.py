"""Adding two XLA tensors that live on different devices of one process kills it.

Upstream: pytorch/xla#8973 ("`PjRtComputationClient::ExecuteReplicated()` crash
after RuntimeError"). With several PJRT CPU devices (CPU_NUM_DEVICES=4),
`a = torch.tensor([1.0], device="xla:1")`, `b = torch.tensor([1.0],
device="xla:2")`, then `(a + b).cpu()`. PyTorch's answer for tensors of
different devices is a RuntimeError the caller can catch; here the process
dies instead. The steps run in a child process and the parent judges how it
ended: a signal (abort or segfault) is the bug; a Python exception, or a
result, is not.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import signal
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_TIMEOUT = 150  # below the record timeout (180 s)
FATAL_SIGNALS = {signal.SIGABRT: "SIGABRT", signal.SIGSEGV: "SIGSEGV", signal.SIGBUS: "SIGBUS"}


def child() -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  devices = xm.get_xla_supported_devices()
  print(f"INFO: torch_xla {torch_xla.__version__}, devices {devices}", flush=True)
  if len(devices) < 3:
    print(f"CHILD_UNTESTABLE: needs 3 XLA devices, this process has {len(devices)}", flush=True)
    return UNTESTABLE
  a = torch.tensor([1.0], device="xla:1")
  b = torch.tensor([1.0], device="xla:2")
  print(f"STEP: a on {a.device}, b on {b.device}", flush=True)
  try:
    c = a + b
    print(f"STEP: a + b traced, on {c.device}", flush=True)
    value = c.cpu()
  except RuntimeError as e:
    print(f"CHILD_RAISED: {type(e).__name__}: {str(e).splitlines()[0][:300]}", flush=True)
    return 0
  print(f"CHILD_RESULT: (a + b).cpu() = {value.tolist()}", flush=True)
  return 0


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
  # set before torch_xla is imported (run_forked imports it), as a child process would get them
  os.environ.setdefault("PJRT_DEVICE", "CPU")
  os.environ.setdefault("CPU_NUM_DEVICES", "4")
  rc, out = run_forked(child, timeout=CHILD_TIMEOUT)
  if rc is None:
    sys.stdout.write(out)
    print(f"ERROR: child did not finish within {CHILD_TIMEOUT}s")
    return ERROR
  sys.stdout.write(out)
  lines = out.splitlines()
  steps = [l for l in lines if l.startswith("STEP:")]
  last = steps[-1][len("STEP: "):] if steps else "before the tensors were made"
  died = {-s: n for s, n in FATAL_SIGNALS.items()} | {128 + s: n for s, n in FATAL_SIGNALS.items()}
  if rc in died:
    print(f"REPRODUCED: the process died of {died[rc]} after: {last}")
    return REPRODUCED
  if rc == UNTESTABLE:
    print("UNTESTABLE: fewer than 3 XLA devices")
    return UNTESTABLE
  raised = [l for l in lines if l.startswith("CHILD_RAISED")]
  result = [l for l in lines if l.startswith("CHILD_RESULT")]
  if raised:
    # the process lived on after the error; some releases raise the same error again from their exit hook,
    # so the exit code may be 1: what matters is that the caller got an exception, not a dead process
    print(f"NOT REPRODUCED: adding tensors of xla:1 and xla:2 raised an exception the caller can catch "
          f"(child exit {rc}): {raised[0][len('CHILD_RAISED: '):]}")
    return NOT_REPRODUCED
  if rc == 0 and result:
    print(f"NOT REPRODUCED: the process lived; {result[0][len('CHILD_RESULT: '):]}")
    return NOT_REPRODUCED
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
