# What the user saw: dist.broadcast_object_list on the "xla" process group (PJRT runtime) raised
# instead of broadcasting the Python objects.
# https://github.com/pytorch/xla/issues/5492
# Here: a one-process "xla" group (world size 1); broadcasting from rank 0 should leave the list
# as it is.
import torch
import torch.distributed as dist
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_backend  # noqa: F401

print("torch_xla", torch_xla.__version__, "torch", torch.__version__)
dist.init_process_group("xla", init_method="xla://")
dev = xm.xla_device()
objs = [{"date": "2023-08-24"}, 42]
try:
    dist.broadcast_object_list(objs, src=0)
    print("OK", objs)
except Exception as e:
    import traceback; traceback.print_exc(); print("ERROR:", type(e).__name__, str(e)[:500])
    raise SystemExit(1)
