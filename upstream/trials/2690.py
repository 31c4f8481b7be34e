# User saw: host memory grow a little every epoch until the VM ran out of memory, when each epoch
# walked an MpDeviceLoader with `enumerate(islice(loader, 0, train_steps))` (so no pass ran to the
# end of the data); torch_xla of early 2021 on a TPU VM.
# https://github.com/pytorch/xla/issues/2690
# Trial: the same early-stopping pattern, five epochs of three batches; prints the number of live
# ParallelLoader threads after each epoch (a leak shows as 2, 4, 6, ...; fixed shows a steady 2).
import itertools
import os
import threading

import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl


def loader_threads():
    n = 0
    for t in threading.enumerate():
        owner = getattr(getattr(t, "_target", None), "__self__", None)
        if type(owner).__name__ == "ParallelLoader":
            n += 1
    return n


device = xm.xla_device()
data = torch.utils.data.TensorDataset(torch.randn(64 * 8, 16), torch.arange(64 * 8))
loader = pl.MpDeviceLoader(torch.utils.data.DataLoader(data, batch_size=8), device)
counts = []
for epoch in range(5):
    for step, (x, y) in enumerate(itertools.islice(loader, 0, 3)):
        (x.sum() + y.sum()).item()
    xm.mark_step()
    counts.append(loader_threads())
    print("epoch", epoch, "live ParallelLoader threads", counts[-1], flush=True)
print("LEAK" if counts[-1] > counts[0] else "NO LEAK", counts, flush=True)
os._exit(0)  # abandoned loader threads can block interpreter exit on leaking releases
