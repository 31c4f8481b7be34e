# User saw: mark_sharding on a view of an index_select result, then viewing it again, fails at compile
# with "RET_CHECK failure (sharding_propagation.cc) instruction->has_sharding() Sharding instruction
# must have a sharding attribute". Scaled down from 32 TPU devices to the CPU devices available.
# https://github.com/pytorch/xla/issues/8662
import numpy as np
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
try:
    import torch_xla.distributed.spmd as xs
except ImportError:
    import torch_xla.experimental.xla_sharding as xs
xr.use_spmd()
device = xm.xla_device()
n = xr.global_runtime_device_count()
mesh = xs.Mesh(np.arange(n), (1, 1, n), ('data', 'other', 'model'))

for vocab, d in [(64, 16), (4096, 512)]:
    idx = torch.zeros((1, d), dtype=torch.int64).to(device)
    w = torch.randn((vocab, d), dtype=torch.float32).to(device)
    xs.mark_sharding(w, mesh, ("model", None))
    w = torch.index_select(w, 0, idx.view(-1)).view(1, d, d)
    xs.mark_sharding(w, mesh, ("data", "model", None))
    w = w.view(1, d, d)
    try:
        print((vocab, d), tuple(w.cpu().shape), "no error")
    except Exception as e:
        print((vocab, d), "raised:", type(e).__name__, str(e)[:400])
