# Issue 8314: on torch-xla 2.5.0, len() of a ParallelLoader per-device loader raised
# "AttributeError: 'ParallelLoader' object has no attribute '_loader'" (member renamed to _cpu_loader).
# https://github.com/pytorch/xla/issues/8314
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl

device = xm.xla_device()
ds = torch.utils.data.TensorDataset(torch.randn(16, 3), torch.randn(16))
loader = torch.utils.data.DataLoader(ds, batch_size=4)
try:
    per_dev = pl.ParallelLoader(loader, [device]).per_device_loader(device)
    print("len:", len(per_dev))
    for xb, yb in per_dev:
        pass
    print("iterated ok, last batch sum:", xb.cpu().sum())
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:400])
