# Issue 6415: back-propagating through xm.all_to_all (inside xmp.spawn training) raised NotImplementedError
# because the collective had no autograd formula.  https://github.com/pytorch/xla/issues/6415
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp

def _mp_fn(index):
    device = xm.xla_device()
    n = xm.xrt_world_size() if hasattr(xm, "xrt_world_size") else 1
    x = torch.randn(4 * n, 3, device=device, requires_grad=True)
    try:
        y = xm.all_to_all(x, split_dimension=0, concat_dimension=0, split_count=n)
        y.sum().backward()
        xm.mark_step()
        print("rank", index, "grad:", tuple(x.grad.cpu().shape))
    except Exception as e:
        print("rank", index, "ERROR:", type(e).__name__, str(e)[:300])

if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=(), nprocs=1)  # one process is enough to reach the autograd formula
