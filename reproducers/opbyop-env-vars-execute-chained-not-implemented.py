"""On torch_xla 2.1, the documented op-by-op debug variables break every step:
`XLA_SYNC_TENSORS_OPBYOP=1` makes each sync fail with `ExecuteChained not implemented`.

Upstream: https://github.com/pytorch/xla/issues/3485 (2022: the HLO-dump and op-by-op variables
together crash several tests of test_operations.py, TestParallelLoader with a SIGSEGV). The
op-by-op path was deleted by PR 5639 (first in 2.2.0); later releases ignore the variables.

TROUBLESHOOTING.md of 2.1.0 still documents `XLA_GET_TENSORS_OPBYOP` and
`XLA_SYNC_TENSORS_OPBYOP` (lower each IR node to its own computation and chain-execute them). With
`XLA_SYNC_TENSORS_OPBYOP=1`, `SyncTensorsGraph` takes `SyncTensorsGraphOpByOp`, whose executor calls
`ComputationClient::ExecuteChained`; the PJRT client, the only runtime of 2.1, implements it as a
bare "not implemented" error. So the first `xm.mark_step()` (or `.cpu()` of a pending tensor)
raises `RuntimeError: ...pjrt_computation_client.h:122 : ExecuteChained not implemented`.

Step 1 (the verdict) runs a one-line computation in a child process started with
`XLA_SYNC_TENSORS_OPBYOP=1` and looks for that error. Step 2 (information only) runs the report's
whole set of variables (`XLA_SAVE_TENSORS_FILE`, `XLA_SAVE_TENSORS_FMT=hlo` and both op-by-op
switches) over a small `ParallelLoader` loop and prints how that child ended: on 2.1.0 it dies by
a signal (SIGSEGV, sometimes SIGABRT), as the report's TestParallelLoader did.
`--workaround` runs both steps without the op-by-op variables (the HLO dump alone) and must then
report "not reproduced".

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""

import os
import signal
import subprocess
import sys
import tempfile
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHILD_TIMEOUT = 150

STEP_CHILD = """
import torch, torch_xla
import torch_xla.core.xla_model as xm
dev = xm.xla_device()
x = torch.ones(4, 4, device=dev)
y = (x * 2 + 1).sum()
xm.mark_step()
print("CHILD_VALUE", y.item(), flush=True)
"""

LOADER_CHILD = """
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
dev = xm.xla_device()
data = torch.utils.data.TensorDataset(torch.randn(32, 4), torch.arange(32))
para = pl.ParallelLoader(torch.utils.data.DataLoader(data, batch_size=8), [dev])
total = 0.0
for x, y in para.per_device_loader(dev):
  total += ((x * 2).sum() + y.sum()).item()
  xm.mark_step()
print("CHILD_LOADER_DONE", flush=True)
"""


def run_child(code: str, extra_env: dict) -> tuple:
  env = dict(os.environ)
  for key in ("XLA_SYNC_TENSORS_OPBYOP", "XLA_GET_TENSORS_OPBYOP", "XLA_SAVE_TENSORS_FILE",
              "XLA_SAVE_TENSORS_FMT"):
    env.pop(key, None)
  env.update(extra_env)
  env.setdefault("PJRT_DEVICE", "CPU")
  try:
    proc = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=CHILD_TIMEOUT)
  except subprocess.TimeoutExpired as e:
    out = (e.stdout or b"").decode("utf-8", "replace")
    return None, out
  return proc.returncode, proc.stdout.decode("utf-8", "replace")


def describe(rc) -> str:
  if rc is None:
    return f"did not finish within {CHILD_TIMEOUT}s"
  if rc < 0:
    try:
      return f"was killed by {signal.Signals(-rc).name}"
    except ValueError:
      return f"was killed by signal {-rc}"
  return f"exited with {rc}"


def main(workaround: bool) -> int:
  import torch
  import torch_xla

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__, flush=True)
  with tempfile.TemporaryDirectory() as tmp:
    dump = {"XLA_SAVE_TENSORS_FILE": os.path.join(tmp, "graphs.hlo"), "XLA_SAVE_TENSORS_FMT": "hlo"}
    opbyop = {"XLA_GET_TENSORS_OPBYOP": "1", "XLA_SYNC_TENSORS_OPBYOP": "1"}
    step_env = {} if workaround else {"XLA_SYNC_TENSORS_OPBYOP": "1"}
    loader_env = dict(dump) if workaround else {**dump, **opbyop}
    print(f"INFO: step 1 env {step_env}", flush=True)
    rc1, out1 = run_child(STEP_CHILD, step_env)
    print(f"INFO: step 2 env {sorted(loader_env)}", flush=True)
    rc2, out2 = run_child(LOADER_CHILD, loader_env)

  err = [line.strip() for line in out1.splitlines() if "ExecuteChained not implemented" in line]
  step_ok = rc1 == 0 and "CHILD_VALUE 48.0" in out1
  loader_ok = rc2 == 0 and "CHILD_LOADER_DONE" in out2
  print(f"INFO: step 1 child {describe(rc1)}; step 2 (ParallelLoader, HLO dump"
        f"{'' if workaround else ' + op-by-op'}) child {describe(rc2)}", flush=True)
  if err:
    print(out1.strip()[-1500:])
    print(f"REPRODUCED: with XLA_SYNC_TENSORS_OPBYOP=1 the step fails: {err[-1]}; the report's "
          f"variables over a ParallelLoader: the child {describe(rc2)}")
    return REPRODUCED
  if step_ok and loader_ok:
    print("NOT REPRODUCED: the steps run with the variables set (op-by-op ignored or working)")
    return NOT_REPRODUCED
  print(out1.strip()[-1500:])
  print(out2.strip()[-1500:])
  print("ERROR: a child failed without the bug's message")
  return ERROR


if __name__ == "__main__":
  try:
    code = main("--workaround" in sys.argv[1:])
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
