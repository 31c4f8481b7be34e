# User saw: the DataLoader's own error (a worker dying after MemoryError) printed only as
# "Exception in thread Thread-1: ... parallel_loader.py ... in _loader_worker" while training an
# ImageNet model through ParallelLoader on TPU (torch_xla 1.x, October 2020).
# https://github.com/pytorch/xla/issues/2574
# Trial: an MpDeviceLoader epoch over a Dataset whose sample 20 raises ValueError, run in a child
# process with a 60 s limit; prints whether the error reached the loop, the epoch ended early
# without it, or the loop hung.
import subprocess
import sys

CHILD = """
import os, torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
class Flaky(torch.utils.data.Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        if i == 20:
            raise ValueError("sample 20 is corrupt")
        return torch.ones(2) * i
n = 0
try:
    for b in pl.MpDeviceLoader(torch.utils.data.DataLoader(Flaky(), batch_size=4), xm.xla_device()):
        n += 1
    print("epoch ended without an error after", n, "of 16 batches", flush=True)
except ValueError as e:
    print("the loop got the error:", e, flush=True)
os._exit(0)
"""
try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    print(p.stdout.strip().splitlines()[-1])
except subprocess.TimeoutExpired:
    print("the loop hung: no further batch and no error for 60 s")
