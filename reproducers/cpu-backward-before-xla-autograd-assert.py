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

The script (in a child process, so each case starts a fresh interpreter) runs a small CPU
backward, then a backward on XLA. `--workaround` calls `xm.xla_device()` (which starts the
runtime) before the CPU backward.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import subprocess
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


def parent(workaround: bool) -> int:
  cmd = [sys.executable, os.path.abspath(__file__), "--child"]
  if workaround:
    cmd.append("--workaround")
  try:
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", timeout=CHILD_TIMEOUT)
  except subprocess.TimeoutExpired:
    print(f"ERROR: child did not finish within {CHILD_TIMEOUT}s")
    return ERROR
  sys.stdout.write(proc.stdout)
  lines = proc.stdout.splitlines()
  if proc.returncode == CHILD_BUG:
    msg = [l for l in lines if l.startswith("CHILD_BUG:")][0][len("CHILD_BUG: "):]
    print(f"REPRODUCED: backward on XLA after a CPU backward failed: {msg}")
    return REPRODUCED
  if proc.returncode == 0 and any(l.startswith("CHILD_OK:") for l in lines):
    print("NOT REPRODUCED: backward on XLA works after a CPU backward")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {proc.returncode} without a verdict")
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
