# Trial for https://github.com/pytorch/xla/issues/8422
# The user saw xm.save() of a subset of tensors run its sync like a step marker, donating the old buffer of
# an in-place-updated tensor that a pending computation still needs; the following mark_step() then failed
# with "Check failed: HasValue()" in PjRtData::GetHandle(). The steps run in a child process.
import subprocess
import sys

CHILD = r"""
import os, torch, torch_xla
import torch_xla.core.xla_model as xm
d = xm.xla_device()
t0 = torch.tensor([1], device=d)
t1 = torch.tensor([2], device=d)
xm.mark_step()
t2 = t0 + t1
t1.add_(1)
xm.save(t1, os.devnull)
xm.mark_step()
print("t2", t2.cpu().tolist(), "t1", t1.cpu().tolist(), flush=True)
"""
p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=200)
out = [ln for ln in p.stdout.splitlines() if ln.startswith("t2")]
err = [ln for ln in p.stderr.splitlines() if "Check failed" in ln]
print("child exit:", p.returncode, out, err[:1])
if err:
    print("REPRODUCED: mark_step after xm.save used a donated buffer")
elif out and out[-1] == "t2 [3] t1 [3]":
    print("NOT REPRODUCED: t2 = 3 and t1 = 3")
else:
    print("OTHER:", p.stderr.strip().splitlines()[-1:])
