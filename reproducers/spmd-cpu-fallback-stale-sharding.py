"""SPMD: the result of an op that falls back to the CPU keeps a stale sharding, then breaks.

Upstream: fixed by pytorch/xla PR 8386 ("Fix the fallback op in SPMD").

Ops without an XLA lowering (here `torch.polar`, complex output) run on the CPU and the
result is copied back into the XLA tensor with `XLATensor::UpdateFromTensor`. Under SPMD
that function kept the tensor's previous sharding spec (the placeholder output of the op was
marked replicated). At the next sync the host data is not uploaded; instead the tensor gets
an empty sharded placeholder (`Data Shape: c64[0]`), and the next computation that reads it
fails with `expected parameter 1 of size 0` (or similar, naming the empty shape).

The record runs it with 4 virtual CPU devices. The test runs in a child process and the
parent judges the child's exit code and output.

`--workaround` calls `xs.clear_sharding()` on the fallback result right after the op and must
then report "not reproduced".

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import re
import signal
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3
CHILD_TIMEOUT = 200
EMPTY = re.compile(r"of size 0|c64\[0\]")


def child(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  if not hasattr(xr, "use_spmd"):
    print("UNTESTABLE: torch_xla.runtime.use_spmd is missing")
    return UNTESTABLE
  xr.use_spmd()
  dev = xm.xla_device()
  dim, end = 16, 64
  xm.mark_step()
  freqs = 1.0 / (10000.0**(torch.arange(0, dim, 2, device=dev)[:(dim // 2)].float() / dim))
  t = torch.arange(end, device=dev)
  freqs = torch.outer(t, freqs).float()
  cis = torch.polar(torch.ones_like(freqs), freqs)  # no XLA lowering: CPU fallback
  if workaround:
    try:
      import torch_xla.distributed.spmd as xs
    except ImportError:  # 2.1
      import torch_xla.experimental.xla_sharding as xs
    xs.clear_sharding(cis)
    print("INFO: workaround: xs.clear_sharding() on the fallback result")
  print("INFO: after fallback: " +
        " | ".join(torch_xla._XLAC._get_xla_tensor_debug_info(cis).split("\n")[1:8]))
  xm.mark_step()
  info = torch_xla._XLAC._get_xla_tensor_debug_info(cis)
  print("INFO: after sync: " + " | ".join(l.strip() for l in info.split("\n")))
  expected = torch.polar(torch.ones(end, dim // 2),
                         torch.outer(torch.arange(end).float(),
                                     1.0 / (10000.0**(torch.arange(0, dim, 2).float() / dim))))
  try:
    y = (cis * 2).real  # a computation that reads the fallback result on the device
    xm.mark_step()
    got = y.cpu()
  except RuntimeError as e:
    if EMPTY.search(str(e)):
      traceback.print_exc()
      print(f"CHILD_BUG: {str(e).splitlines()[0]}", flush=True)
      return CHILD_BUG
    raise
  if tuple(got.shape) != (end, dim // 2) or not torch.allclose(got, (expected * 2).real,
                                                               atol=1e-4):
    print(f"CHILD_BUG: wrong result shape/values after the CPU fallback: {tuple(got.shape)}",
          flush=True)
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
    print("REPRODUCED: SPMD computation on the result of a CPU-fallback op: " +
          bug[0][len("CHILD_BUG: "):])
    return REPRODUCED
  fatal = [l.strip() for l in lines if "of size 0" in l]
  if rc != 0 and fatal:
    print(f"REPRODUCED: child died (exit {rc}) reading a CPU-fallback result: {fatal[0][:300]}")
    return REPRODUCED
  if rc == 0 and "CHILD_OK" in lines:
    print("NOT REPRODUCED: the CPU-fallback result is uploaded and used correctly under SPMD")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {rc} without the empty-shape failure")
  return ERROR


if __name__ == "__main__":
  try:
    args = sys.argv[1:]
    workaround = "--workaround" in args
    code = child(workaround) if "--child" in args else parent(workaround)
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
