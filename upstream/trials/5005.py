# What the user saw: with PJRT_DEVICE=CPU and CPU_NUM_DEVICES > 1, xm.all_reduce inside xmp.spawn
# never returned (collectives hang on XLA:CPU).
# https://github.com/pytorch/xla/issues/5005  (same script in https://github.com/pytorch/xla/issues/9089)
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp


def _reduce(rank):
    t = torch.tensor([[rank]], dtype=torch.int32, device=xm.xla_device())
    r = xm.all_reduce(xm.REDUCE_SUM, t)
    print(f"{rank}: after sum reduction: {r.cpu().tolist()}", flush=True)


if __name__ == "__main__":
    xmp.spawn(_reduce)
    print("OK: all_reduce returned")
