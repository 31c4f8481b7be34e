"""An exception raised by the wrapped DataLoader (a Dataset's __getitem__, a collate function, a
dead DataLoader worker) inside MpDeviceLoader / ParallelLoader never reaches the training loop:
up to 2.5 the loop then waits forever; from 2.6 the epoch just ends early, without an error.

Upstream: https://github.com/pytorch/xla/issues/2574 (2020: a DataLoader error printed only as
"Exception in thread Thread-1: ... parallel_loader.py ... in _loader_worker").

`ParallelLoader._loader_worker` runs `next()` on the wrapped DataLoader in a background thread.
Nothing there catches an exception: the thread dies, Python prints its traceback to stderr, and
the consumer (`PerDeviceLoader.next`, blocked on the device queue) is never told. Up to 2.5.1 the
queues are not closed either, so the loop blocks forever. 2.6.0 (PR 8039) wrapped the worker in
`try/finally`, which closes the queues: the consumer now sees the end of the data and stops the
epoch after the batches already loaded. Only errors of the host-to-device transfer go through
`_exception_queue` and are re-raised.

The script runs, in a child process with a time limit, one epoch of an MpDeviceLoader over a
64-sample dataset whose sample 20 raises ValueError (batch size 4: batch 6 of 16 fails).
Expected (as with a plain DataLoader): the ValueError is raised in the loop. Reproduced when the
child hangs past the limit, or when the epoch ends without an error after fewer than 16 batches.
`--workaround` iterates the DataLoader itself and moves each batch with `.to(device)`; the
ValueError then reaches the loop.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""

import os
import subprocess
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_TIMEOUT = 60
BATCHES = 16


def child(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.distributed.parallel_loader as pl

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__, flush=True)

  class Flaky(torch.utils.data.Dataset):

    def __len__(self):
      return 64

    def __getitem__(self, i):
      if i == 20:
        raise ValueError("sample 20 is corrupt")
      return torch.full((2,), float(i))

  device = xm.xla_device()
  loader = torch.utils.data.DataLoader(Flaky(), batch_size=4)
  seen = 0
  try:
    if workaround:
      for batch in loader:
        batch = batch.to(device)
        seen += 1
    else:
      for batch in pl.MpDeviceLoader(loader, device):
        seen += 1
  except ValueError as e:
    print(f"CHILD_RAISED: {type(e).__name__}: {e} after {seen} batches", flush=True)
    os._exit(0)
  print(f"CHILD_ENDED: the epoch ended without an error after {seen} of {BATCHES} batches",
        flush=True)
  os._exit(0)  # leave at once: a dead loader thread must not keep the process alive


def parent(workaround: bool) -> int:
  cmd = [sys.executable, os.path.abspath(__file__), "--child"] + (["--workaround"] if workaround else [])
  env = dict(os.environ)
  env.setdefault("PJRT_DEVICE", "CPU")
  try:
    # stdout (the verdict lines) and stderr (the dying loader thread's traceback) apart, so
    # that the two never interleave in one line.
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=CHILD_TIMEOUT)
  except subprocess.TimeoutExpired as e:
    out = (e.stdout or b"").decode("utf-8", "replace")
    err = (e.stderr or b"").decode("utf-8", "replace")
    sys.stdout.write(err[-2000:] + out[-1000:])
    thread_err = "_loader_worker" in err and "sample 20 is corrupt" in err
    print(f"REPRODUCED: a Dataset error inside MpDeviceLoader hangs the loop: no further batch and no "
          f"error for {CHILD_TIMEOUT}s"
          f"{' (the ValueError was only printed by the loader thread)' if thread_err else ''}")
    return REPRODUCED
  out = proc.stdout.decode("utf-8", "replace")
  err = proc.stderr.decode("utf-8", "replace")
  sys.stdout.write(err[-2000:] + out[-1000:])
  ended = [line[len("CHILD_ENDED: "):] for line in out.splitlines() if line.startswith("CHILD_ENDED: ")]
  raised = [line[len("CHILD_RAISED: "):] for line in out.splitlines() if line.startswith("CHILD_RAISED: ")]
  if ended:
    print("REPRODUCED: a Dataset error inside MpDeviceLoader ended the epoch silently: " + ended[0])
    return REPRODUCED
  if raised and proc.returncode == 0:
    print("NOT REPRODUCED: the Dataset's ValueError reached the training loop (" + raised[0] + ")")
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
