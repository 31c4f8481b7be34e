# User saw: calling xm.all_to_all while SPMD mode is on aborts at compile with
# "RET_CHECK failure (hlo_verifier.cc) hlo->operand_count() == split_count".
# The thread's own code was not visible in the stored excerpt; this is a minimal guess at the pattern
# named in the title. https://github.com/pytorch/xla/issues/8345
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
t = torch.arange(n * n * 2, dtype=torch.float32).reshape(n * 2, n).to(device)
xs.mark_sharding(t, mesh, ('x', None))
try:
    out = xm.all_to_all(t, split_dimension=0, concat_dimension=1, split_count=n)
    print(out.cpu().shape, "no error")
except Exception as e:
    print("raised:", type(e).__name__, str(e)[:400])
