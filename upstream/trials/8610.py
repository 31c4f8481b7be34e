# Issue 8610: torch.cummax over a 0-sized dimension on an XLA device aborted the process
# ("Aborted (core dumped)") while CUDA returns empty values/indices.
# https://github.com/pytorch/xla/issues/8610
import torch, torch_xla
import torch_xla.core.xla_model as xm

device = xm.xla_device()
for shape in ((0,), (4, 4, 0)):
    try:
        r = torch.cummax(torch.rand(*shape, device=device), -1)
        print(shape, "values:", tuple(r.values.cpu().shape), "indices:", tuple(r.indices.cpu().shape))
    except Exception as e:
        print(shape, "ERROR:", type(e).__name__, str(e)[:400])
