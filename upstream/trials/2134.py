# User saw: two xm.all_reduce('sum', [t]) calls on fresh tensors holding 4 gave 32 and then 256
# (the second result compounded the first) on 8 TPU cores with a May 2020 nightly.
# https://github.com/pytorch/xla/issues/2134
# Trial: the same two all-reduces in every process spawned on CPU (CPU_NUM_DEVICES processes or
# threads); a correct run prints world_size*4 twice. Run it under `timeout`: on this machine the
# CPU collectives never complete (2.1.0 waits at the all-reduce rendezvous, 2.9.0 aborts it).
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp


def main(index):
    device = xm.xla_device()
    first = torch.tensor(4.0, device=device)
    xm.all_reduce("sum", [first])
    second = torch.tensor(4.0, device=device)
    xm.all_reduce("sum", [second])
    print(index, "first", first.item(), "second", second.item(), flush=True)


if __name__ == "__main__":
    xmp.spawn(main, args=())
