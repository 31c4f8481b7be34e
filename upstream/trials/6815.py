# User saw: under xmp.spawn (PJRT, TPU), iterating an MpDeviceLoader over a DataLoader with
# num_workers=1 that wraps an IterDataPipe (IterableWrapper(range(20))) froze; the stack after
# Ctrl-C showed threads waiting in lock.acquire().
# CPU form: first one process (no spawn), then the reporter's xmp.spawn layout, each in a
# subprocess with a timeout; a timeout is reported as the hang.
# https://github.com/pytorch/xla/issues/6815
import os
import subprocess
import sys
import tempfile

SINGLE = r"""
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data.datapipes.iter import IterableWrapper
dl = torch.utils.data.DataLoader(IterableWrapper(range(20)), batch_size=2, num_workers=1)
n = sum(1 for _ in pl.MpDeviceLoader(dl, xm.xla_device()))
print('single process: batches', n, flush=True)
"""

SPAWN = r"""
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
from torch.utils.data.datapipes.iter import IterableWrapper

def _mp_fn(rank):
    dl = torch.utils.data.DataLoader(IterableWrapper(range(20)), batch_size=2, num_workers=1)
    n = sum(1 for _ in pl.MpDeviceLoader(dl, xm.xla_device()))
    print('rank', rank, 'batches', n, flush=True)

if __name__ == '__main__':
    xmp.spawn(_mp_fn, args=())
    print('spawn done', flush=True)
"""

hung = []
tmp = tempfile.mkdtemp()
for name, code in (("single", SINGLE), ("spawn", SPAWN)):
    path = os.path.join(tmp, name + ".py")  # xmp.spawn re-imports the main module from a file
    with open(path, "w") as f:
        f.write(code)
    try:
        p = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=150)
        print(name, "rc", p.returncode, "|", " ".join(p.stdout.split())[:300])
        if p.returncode != 0:
            print(p.stderr[-600:])
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        print(name, "TIMEOUT after 150 s |", " ".join(out.split())[:300])
        hung.append(name)
if hung:
    print("REPRODUCED: MpDeviceLoader over an IterDataPipe DataLoader (num_workers=1) hung:", hung)
    raise SystemExit(1)
print("no hang")
