"""A backward pass on CPU before the XLA runtime starts breaks every later backward on XLA.

Upstream: pytorch/xla#4174 (open; confirmed cause, workaround: initialize the XLA device first).

PyTorch's autograd engine creates its per-device worker queues once, on the first
`backward()` of the process, sized by the device count each registered backend reports at
that moment. `import torch_xla` no longer starts the XLA runtime, and the XLA backend reports 0
devices until the runtime starts. If the first backward of the process runs on CPU tensors (a
sanity check, a CPU reference model, a unit test, a library warm-up) before anything touched
the XLA device, the engine is left with no queue for XLA devices, and the first `backward()`
on XLA tensors fails its internal bounds check:
`RuntimeError: 0 <= device.index() && device.index() < static_cast<c10::DeviceIndex>(device_ready_queues_.size()) INTERNAL ASSERT FAILED at ".../torch/csrc/autograd/engine.cpp"`.

The script (in a child process forked once torch and torch_xla are imported, before anything
starts the runtime or runs a backward: a fresh interpreter's state) runs a small CPU
backward, then a backward on XLA. `--workaround` calls `xm.xla_device()` (which starts the
runtime) before the CPU backward.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import signal
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3
CHILD_TIMEOUT = 200
ASSERT_TEXT = "device_ready_queues_.size()"


def child(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__, flush=True)
  if workaround:
    device = xm.xla_device()
    print(f"INFO: workaround: XLA device {device} initialized before the CPU backward")
  # 1. A plain CPU backward: the first backward of this process.
  w = torch.randn(4, 4, requires_grad=True)
  (w * 2).sum().backward()
  print(f"INFO: CPU backward ok, grad sum {w.grad.sum().item():.1f}", flush=True)
  # 2. The same on XLA.
  device = xm.xla_device()
  model = torch.nn.Linear(4, 2).to(device)
  x = torch.randn(3, 4, device=device)
  try:
    model(x).sum().backward()
    xm.mark_step()
  except RuntimeError as e:
    if ASSERT_TEXT in str(e):
      traceback.print_exc()
      print(f"CHILD_BUG: {str(e).splitlines()[0]}", flush=True)
      return CHILD_BUG
    raise
  grad = model.weight.grad
  print(f"CHILD_OK: XLA backward ok, weight grad shape {tuple(grad.shape)} on {grad.device}",
        flush=True)
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
  if rc == CHILD_BUG:
    msg = [l for l in lines if l.startswith("CHILD_BUG:")][0][len("CHILD_BUG: "):]
    print(f"REPRODUCED: backward on XLA after a CPU backward failed: {msg}")
    return REPRODUCED
  if rc == 0 and any(l.startswith("CHILD_OK:") for l in lines):
    print("NOT REPRODUCED: backward on XLA works after a CPU backward")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {rc} without a verdict")
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
