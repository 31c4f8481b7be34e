"""len() of a ParallelLoader per-device loader raises AttributeError on torch_xla 2.5.0.

Upstream: pytorch/xla#8314; fixed by pytorch/xla#8315 (master) and its r2.5.1 cherry-pick #8317.

The 2.5 release reworked `torch_xla/distributed/parallel_loader.py` so that MpDeviceLoader can
shard dictionaries of tensors (#8202 on master, #8212 on the r2.5 branch). The wrapped
DataLoader moved from `ParallelLoader._loader` to `ParallelLoader._cpu_loader`, but
`ParallelLoader.per_device_samples()` kept reading `self._loader`. `len()` of the
`PerDeviceLoader` that `ParallelLoader.per_device_loader(device)` returns calls it, so it
raises `AttributeError: 'ParallelLoader' object has no attribute '_loader'` (Hugging Face
Trainer and tqdm progress bars take `len()` of the loader before the first step).

The script builds an 8-batch DataLoader, wraps it in `ParallelLoader`, takes `len()` of the
per-device loader (expected: 8) and then iterates it to check that the batches arrive.
`--workaround` takes the length from the wrapped DataLoader instead (`len(train_loader)`).

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
BATCHES = 8


def main(workaround: bool) -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.distributed.parallel_loader as pl

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
  device = xm.xla_device()
  data = torch.utils.data.TensorDataset(torch.randn(BATCHES * 4, 3), torch.arange(BATCHES * 4))
  train_loader = torch.utils.data.DataLoader(data, batch_size=4)
  para_loader = pl.ParallelLoader(train_loader, [device])
  device_loader = para_loader.per_device_loader(device)

  error = None
  if workaround:
    n = len(train_loader)
    print(f"INFO: workaround: length taken from the wrapped DataLoader: {n}")
  else:
    try:
      n = len(device_loader)
    except AttributeError as e:
      if "'_loader'" not in str(e):
        raise
      traceback.print_exc()
      error, n = e, None
  # Drain the loader either way: its worker threads must finish before the
  # interpreter exits (an abandoned ParallelLoader aborts at exit).
  seen = 0
  for x, y in device_loader:
    assert x.device.type == "xla", x.device
    seen += 1
  print(f"INFO: len()={n}, batches iterated={seen}")
  if error is not None:
    print(f"REPRODUCED: len(ParallelLoader.per_device_loader(device)) raised AttributeError: {error}"
          f" (iterating the same loader gave {seen} batches)")
    return REPRODUCED
  if n != BATCHES or seen != BATCHES:
    print(f"ERROR: expected {BATCHES} batches, len() said {n}, iteration gave {seen}")
    return ERROR
  if workaround:
    print("NOT REPRODUCED: workaround holds: len(train_loader) matches the batches the "
          "per-device loader yields")
    return NOT_REPRODUCED
  print("NOT REPRODUCED: len() of the per-device loader works and matches the batches")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    code = main(sys.argv[1:] == ["--workaround"])
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
