# User saw: a SIGSEGV at interpreter exit after breaking out of an MpDeviceLoader loop whose
# body called xm.all_reduce (PJRT_DEVICE=CUDA, torchrun with 2 processes); the pending
# all-reduce token kept in a C++ global was freed only after the runtime was torn down.
# Single-process CPU form: the same loop, then exit; a crash shows as a negative return code.
# https://github.com/pytorch/xla/issues/6246
import subprocess
import sys

CHILD = r"""
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.utils.utils as xu
device = xm.xla_device()
loader = pl.MpDeviceLoader(xu.SampleGenerator(data=torch.zeros(1, 12), sample_count=1024), device)
for step, inputs in enumerate(loader):
    xm.all_reduce('sum', [inputs], scale=1.0)
    if step > 10:
        break
print('loop left early', flush=True)
"""
p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=240)
print(p.stdout.strip())
print("child return code:", p.returncode)
if p.returncode < 0:
    print("REPRODUCED: the process died by signal", -p.returncode, "at exit")
    raise SystemExit(1)
if p.returncode != 0:
    print(p.stderr[-800:])
    raise SystemExit(2)
print("clean exit")
