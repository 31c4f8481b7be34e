# User saw: under xmp.spawn(nprocs=8), a loop over an MpDeviceLoader that wraps a plain iterator
# hung when the program had no xm.rendezvous and no xm.optimizer_step (TPU, February 2021).
# https://github.com/pytorch/xla/issues/2796
# Trial: the same loop in every spawned process on CPU; each process prints DONE when its loop ends.
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp


class Counter:
    def __init__(self, n=16):
        self.i, self.n = 0, n

    def __len__(self):
        return self.n

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return torch.ones(100, 100) * self.i


def main(index):
    device = xm.xla_device()
    net = torch.nn.Linear(100, 1).to(device)
    loss = 0
    for batch in pl.MpDeviceLoader(Counter(), device):
        loss = loss + net(batch)
        xm.mark_step()
    print(index, "DONE", loss.sum().item(), flush=True)


if __name__ == "__main__":
    xmp.spawn(main, args=())
