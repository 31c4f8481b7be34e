# User saw: calling a collective (xm.all_reduce) on a tensor annotated with mark_sharding in SPMD mode
# aborts in sharding propagation with "hlo_sharding.cc ... Check failed: IsTuple()".
# The thread's code was not in the stored excerpt; this is a minimal guess at the pattern in the title.
# https://github.com/pytorch/xla/issues/6647
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
mesh = xs.Mesh(np.arange(n), (n, 1), ('x', 'y'))
t = torch.ones(n * 2, 4, device=device)
xs.mark_sharding(t, mesh, ('x', None))
y = t * 2
for label, call in [("single tensor", lambda: xm.all_reduce(xm.REDUCE_SUM, y)),
                    ("list of tensors (tuple all-reduce)", lambda: xm.all_reduce(xm.REDUCE_SUM, [y * 1, y * 3]) or None)]:
    try:
        r = call()
        xm.mark_step()
        print(label, ": no error", r.cpu().sum() if r is not None and not isinstance(r, list) else "")
    except Exception as e:
        print(label, "raised:", type(e).__name__, str(e)[:300])
