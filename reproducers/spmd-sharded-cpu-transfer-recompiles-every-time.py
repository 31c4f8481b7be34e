"""Under SPMD, every .cpu() of a sharded tensor compiles a new XLA program, even for the same shape and sharding.

Upstream: pytorch/xla#9751 ("Why does ReplicateShardedData perform an uncached
compile+device execute on each sharded output to return to host", open) and
pytorch/xla#7943 ("Copy data from TPU to CPU increases CompileTime").

Moving a tensor whose data is sharded to the host goes through
`PjRtComputationClient::ReplicateShardedData`, which builds a small "add zero, output
replicated" XLA computation and compiles it on every call; nothing caches it. The
script shards a (16, 8) tensor on a 4-device CPU mesh, computes on it, syncs, and then
calls `.cpu()` on the sharded result, several times with the same shape and sharding,
and reads the `CompileTime` metric around each transfer. With `--workaround` the result
is first replicated inside the step graph (`xs.mark_sharding(r, mesh, (None, None))` on
`y + 0` before the sync), so `.cpu()` finds replicated data and compiles nothing.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
TRANSFERS = 4


def main(workaround: bool) -> int:
  import numpy as np
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.debug.metrics as met
  import torch_xla.runtime as xr

  try:
    import torch_xla.distributed.spmd as xs
  except ImportError:
    try:
      import torch_xla.experimental.xla_sharding as xs
    except ImportError as e:
      print(f"UNTESTABLE: no sharding API in torch_xla {torch_xla.__version__}: {e}")
      return UNTESTABLE
  if not hasattr(xr, "use_spmd"):
    print(f"UNTESTABLE: torch_xla {torch_xla.__version__} has no xr.use_spmd")
    return UNTESTABLE

  print(f"INFO: torch_xla {torch_xla.__version__}, workaround={workaround}")
  xr.use_spmd()
  n = xr.global_runtime_device_count()
  mesh = xs.Mesh(np.arange(n), (n, 1), ("data", "model"))
  device = xm.xla_device()

  def compiles():
    data = met.metric_data("CompileTime")
    return data[0] if data else 0

  per_transfer, wrong = [], 0
  for i in range(TRANSFERS):
    x = torch.arange(16 * 8, dtype=torch.float32).reshape(16, 8) + i
    xd = x.to(device)
    xs.mark_sharding(xd, mesh, ("data", None))
    y = xd * 2
    if workaround:
      y = y + 0
      xs.mark_sharding(y, mesh, (None, None))
    xm.mark_step()
    before = compiles()
    got = y.cpu()
    per_transfer.append(compiles() - before)
    if not torch.equal(got, x * 2):
      wrong += 1
  print(f"INFO: XLA compilations during each .cpu(): {per_transfer}; "
        f"CompileTime samples in total: {compiles()}")
  if wrong:
    print(f"ERROR: {wrong} of {TRANSFERS} transfers returned wrong values (not the bug under test)")
    return ERROR
  later = per_transfer[1:]
  if all(c >= 1 for c in later):
    print(f"REPRODUCED: .cpu() of a sharded tensor compiled a new XLA program on every transfer "
          f"({sum(per_transfer)} compilations for {TRANSFERS} transfers of the same shape and sharding)")
    return REPRODUCED
  print(f"NOT REPRODUCED: repeated .cpu() of the same sharded shape compiled {sum(later)} time(s) "
        f"after the first transfer")
  return NOT_REPRODUCED


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
