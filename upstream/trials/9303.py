# Issue 9303: in a notebook the XLA device was touched before xmp.spawn(nprocs=None), and spawn raised
# "RuntimeError: Runtime is already initialized. Do not use the XLA device before calling xmp.spawn."
# https://github.com/pytorch/xla/issues/9303
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp

def _mp_fn(index):
    print("worker", index, xm.xla_device())

if __name__ == "__main__":
    device = xm.xla_device()
    t = torch.ones(2, device=device)
    print("before spawn:", t.cpu())
    try:
        xmp.spawn(_mp_fn, args=(), nprocs=None)
        print("spawn returned without error")
    except Exception as e:
        print("ERROR:", type(e).__name__, str(e)[:400])
