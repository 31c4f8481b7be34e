"""FSDPv2 (SPMD) cannot wrap a module that owns a scalar (0-d) parameter.

Upstream: pytorch/xla#8522, fixed by pytorch/xla#8613.

On affected releases `_prepare_spmd_partition_spec` returns a *list* for the
empty partition spec of a 0-d parameter, and `Mesh.get_op_sharding` (an
lru_cache'd method) raises `TypeError: unhashable type: 'list'` while
SpmdFullyShardedDataParallel.__init__ calls `mark_sharding` on it.

Run with: PJRT_DEVICE=CPU CPU_NUM_DEVICES=4
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main() -> int:
  import numpy as np
  import torch
  import torch.nn as nn
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr

  try:
    import torch_xla.distributed.spmd as xs
  except ImportError as e:  # releases before torch_xla.distributed.spmd
    print(f"UNTESTABLE: torch_xla.distributed.spmd is missing ({e})")
    return UNTESTABLE
  try:
    from torch_xla.experimental.spmd_fully_sharded_data_parallel import (
        SpmdFullyShardedDataParallel as FSDPv2)
  except ImportError as e:  # FSDPv2 did not exist yet
    print(f"UNTESTABLE: FSDPv2 module is missing ({e})")
    return UNTESTABLE

  xr.use_spmd()
  n = xr.global_runtime_device_count()
  mesh = xs.Mesh(np.arange(n), (n, 1), ("fsdp", "model"))

  class WithScalar(nn.Module):

    def __init__(self):
      super().__init__()
      self.fc = nn.Linear(8, 8)
      self.scale = nn.Parameter(torch.tensor(2.0))  # 0-d parameter

    def forward(self, x):
      return self.fc(x) * self.scale

  device = xm.xla_device()
  model = WithScalar().to(device)
  try:
    model = FSDPv2(model, mesh=mesh)
  except TypeError as e:
    if "unhashable type: 'list'" in str(e):
      traceback.print_exc()
      print(f"REPRODUCED: FSDPv2 failed on a 0-d parameter: TypeError: {e}")
      return REPRODUCED
    raise

  # Fixed releases: the wrap succeeds; run one step to be sure the model works.
  x = torch.randn(4 * n, 8, device=device)
  loss = model(x).sum()
  loss.backward()
  xm.mark_step()
  spec = torch_xla._XLAC._get_xla_sharding_spec(model.module.scale)
  print(f"NOT REPRODUCED: FSDPv2 wrapped the 0-d parameter "
        f"(sharding {spec or '<none>'!r}), loss={loss.item():.4f}")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    code = main()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
