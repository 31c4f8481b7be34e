"""FSDPv2 + SPMD with XLA_DISABLE_FUNCTIONALIZATION=1 fails with a `has_sharding` check.

Upstream: pytorch/xla#8607; the fix is pytorch/xla#8578 ("Fix mark_sharding logic").

With functionalization disabled, `xs.mark_sharding` on a tensor that is still
an IR value and is a view (FSDPv2 marks the output of every wrapped module; a
Linear applied to a 3-D activation returns such a view) attaches the sharding
to the view-update node instead of the `CustomSharding` node. The HLO then has
a `custom-call(... "Sharding")` without a sharding attribute and XLA's
sharding propagation rejects it (`instruction->has_sharding()`). Depending on
the build this is a CHECK (process abort) or a RET_CHECK (RuntimeError), so the
model runs in a child process and the parent judges its exit status and output.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4 XLA_DISABLE_FUNCTIONALIZATION=1
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import os
import re
import signal
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_BUG = 3  # child exit code: the has_sharding failure was raised as an exception
CHILD_TIMEOUT = 210  # below the record timeout (240 s); normal runs take ~10-20 s
HAS_SHARDING = re.compile(r"has_sharding\(\)")


def child() -> int:
  import numpy as np
  import torch
  import torch.nn as nn
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr

  try:
    import torch_xla.distributed.spmd as xs
    from torch_xla.experimental.spmd_fully_sharded_data_parallel import (
        SpmdFullyShardedDataParallel as FSDPv2)
  except ImportError as e:  # FSDPv2 / torch_xla.distributed.spmd do not exist yet
    print(f"UNTESTABLE: FSDPv2 is not available in this release ({e})")
    return UNTESTABLE

  xr.use_spmd()
  n = xr.global_runtime_device_count()
  mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))
  device = xm.xla_device()

  class Mlp(nn.Module):  # transformer-style block: Linear on a 3-D activation

    def __init__(self):
      super().__init__()
      self.fc1 = nn.Linear(16, 32)
      self.fc2 = nn.Linear(32, 16)

    def forward(self, x):
      return self.fc2(torch.relu(self.fc1(x)))

  model = FSDPv2(Mlp().to(device), mesh=mesh)
  specs = [torch_xla._XLAC._get_xla_sharding_spec(p) for p in model.parameters()]
  sharded = sum(1 for s in specs if s.startswith("{devices="))
  print(f"INFO: {sharded}/{len(specs)} parameters sharded by FSDPv2: {specs}")

  x = torch.randn(2 * n, 6, 16).to(device)
  xs.mark_sharding(x, mesh, ("fsdp", None, None))
  opt = torch.optim.SGD(model.parameters(), lr=0.1)
  try:
    for _ in range(2):
      loss = model(x).sum()
      loss.backward()
      opt.step()
      opt.zero_grad()
      xm.mark_step()
    value = loss.item()
  except RuntimeError as e:
    if HAS_SHARDING.search(str(e)):
      traceback.print_exc()
      print(f"CHILD_BUG: {str(e).splitlines()[0]}", flush=True)
      return CHILD_BUG
    raise
  print(f"CHILD_OK: two FSDPv2 training steps ran, loss={value:.4f}")
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
  # The child has this process's environment as it is (torch_xla is imported here with it): the record's
  # environment.env sets XLA_DISABLE_FUNCTIONALIZATION=1, and a settings bisection
  # (xlakb bisect --source settings) varies it, so nothing is forced here.
  print(f"INFO: XLA_DISABLE_FUNCTIONALIZATION={os.environ.get('XLA_DISABLE_FUNCTIONALIZATION', '(unset)')}")
  rc, out = run_forked(child, timeout=CHILD_TIMEOUT)
  if rc is None:
    sys.stdout.write(out)
    print(f"ERROR: child did not finish within {CHILD_TIMEOUT}s")
    return ERROR
  sys.stdout.write(out)
  lines = out.splitlines()

  if rc == UNTESTABLE:
    return UNTESTABLE
  if rc == CHILD_BUG:
    print("REPRODUCED: FSDPv2 step failed "
          "the has_sharding() check (raised as an error)")
    return REPRODUCED
  # Older builds abort: either the CHECK in HloInstruction::sharding()
  # ("Check failed: has_sharding()") or a fatal "Non-OK-status" wrapping the
  # RET_CHECK of sharding propagation.
  aborted = rc in (-signal.SIGABRT, 128 + signal.SIGABRT)
  fatal = [l.strip() for l in lines if HAS_SHARDING.search(l)]
  fatal.sort(key=lambda l: ("Check failed" not in l, "Non-OK-status" not in l))
  if aborted and fatal:
    print(f"REPRODUCED: child aborted (exit {rc}) with: {fatal[0][:300]}")
    return REPRODUCED
  if rc == 0 and any(l.startswith("CHILD_OK") for l in lines):
    print("NOT REPRODUCED: FSDPv2 trains (XLA_DISABLE_FUNCTIONALIZATION="
          f"{os.environ.get('XLA_DISABLE_FUNCTIONALIZATION', 'unset')})")
    return NOT_REPRODUCED
  print(f"ERROR: child exited with {rc} without the has_sharding failure")
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
