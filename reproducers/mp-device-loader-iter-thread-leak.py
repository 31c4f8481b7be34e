"""Each `iter(MpDeviceLoader)` leaves the previous ParallelLoader's threads (and the device batches
they hold) alive when an epoch is not run to the end.

Upstream: fixed by pytorch/xla PR 8039 ("parallel_loader: Fix TPU memory leak when calling
__iter__").

`MpDeviceLoader.__iter__` builds a new `ParallelLoader` (one host loader thread plus
`host_to_device_transfer_threads` transfer threads, each with prefetch queues of device
batches) and never closes the previous one. When the previous epoch stopped early (a `break`
after N steps, `next(iter(loader))` for a sample batch, an evaluation loop cut short), its
threads stay blocked on a full queue forever, holding the batches they already sent to the
device. Every later `iter()` adds another set: host threads and device memory grow until the
run dies (an out-of-memory crash on TPU). The fix makes `__iter__` close the previous
ParallelLoader, which joins its threads.

The script (in a child process, forked once torch and torch_xla are imported, because
abandoned loader threads may hang or abort the process) calls `iter()` on one MpDeviceLoader five times, takes two batches each time, and counts the
live ParallelLoader threads after each round. Expected: the count stays at one loader's worth.
`--workaround` builds a `ParallelLoader` per round itself and calls `close()` on the previous one
before starting the next round.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import re
import signal
import sys
import threading
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
ROUNDS = 5
CHILD_TIMEOUT = 200


def loader_threads():
  # ParallelLoader starts its threads with target=self._loader_worker / self._worker.
  out = []
  for t in threading.enumerate():
    target = getattr(t, "_target", None)
    owner = getattr(target, "__self__", None)
    if owner is not None and type(owner).__name__ == "ParallelLoader":
      out.append((t, owner))
  return out


def child(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.debug.metrics as met
  import torch_xla.distributed.parallel_loader as pl

  def live_xla_tensors():
    created = met.counter_value("CreateXlaTensor") or 0
    destroyed = met.counter_value("DestroyXlaTensor") or 0
    return created - destroyed

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__, flush=True)
  device = xm.xla_device()
  data = torch.utils.data.TensorDataset(torch.randn(64 * 4, 8), torch.arange(64 * 4))
  train_loader = torch.utils.data.DataLoader(data, batch_size=4)  # 64 batches
  loader = pl.MpDeviceLoader(train_loader, device)
  counts = []
  prev = None
  for rnd in range(ROUNDS):
    if workaround:
      # User-side fix: drive a ParallelLoader directly and close the previous one.
      if prev is not None:
        prev.close()
        for t, owner in loader_threads():
          if owner is prev:
            t.join(timeout=30)
      prev = pl.ParallelLoader(train_loader, [device])
      it = prev.per_device_loader(device)
    else:
      it = iter(loader)
    for _ in range(2):
      x, y = next(it)
      assert x.device.type == "xla"
    xm.mark_step()
    live = loader_threads()
    owners = {id(o) for _, o in live}
    counts.append(len(live))
    del x, y
    print(f"INFO: after iter() #{rnd + 1}: {len(live)} live ParallelLoader threads "
          f"from {len(owners)} ParallelLoader object(s); live XLA tensors: {live_xla_tensors()}",
          flush=True)
  per_loader = counts[0]
  if counts[-1] > per_loader:
    print(f"CHILD_BUG: live loader threads grew from {per_loader} to {counts[-1]} "
          f"over {ROUNDS} iter() calls", flush=True)
  else:
    print(f"CHILD_OK: live loader threads stayed at {counts[-1]} over {ROUNDS} iter() calls",
          flush=True)
  # Let the current epoch finish so the last loader's threads end normally.
  for _ in it:
    pass
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
  bug = [l for l in lines if l.startswith("CHILD_BUG:")]
  ok = [l for l in lines if l.startswith("CHILD_OK:")]
  if bug:
    note = "" if rc == 0 else f"; the child then exited with {rc}"
    print(f"REPRODUCED: MpDeviceLoader leaks ParallelLoader threads across iter() calls: "
          f"{bug[0][len('CHILD_BUG: '):]}{note}")
    return REPRODUCED
  if ok and rc == 0:
    print("NOT REPRODUCED: iter() on MpDeviceLoader closes the previous ParallelLoader")
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
