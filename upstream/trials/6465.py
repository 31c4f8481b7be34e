# Issue 6465: in SPMD mode, creating an "xla" process group (to use torch.distributed.checkpoint) raised
# "AssertionError: XLA backend is not supported with SPMD. Please use a CPU process group instead."
# https://github.com/pytorch/xla/issues/6465
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
import torch.distributed as dist
import torch_xla.distributed.xla_backend  # registers the "xla" backend

try:
    import torch_xla.experimental.pjrt_backend  # registers pjrt:// on older releases
except ImportError:
    pass

xr.use_spmd()
try:
    try:
        dist.init_process_group("xla", init_method="pjrt://")
    except RuntimeError as e:
        if "rendezvous handler" not in str(e):
            raise
        dist.init_process_group("xla", init_method="xla://")  # newer name of the same init method
    print("xla process group created, world size", dist.get_world_size())
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:300])
