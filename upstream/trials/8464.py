# Trial for https://github.com/pytorch/xla/issues/8464
# The user saw two graphs that differ only in whether a buffer may be donated (t1.add_(t0), then t2 = t1 + t0)
# hash to the same cached computation, so the second one aliased t2 to t1: it printed t1=4, t2=4
# (their newer plugin refused the donated buffer). Expected t1=3, t2=4. The steps run in a child process.
import subprocess
import sys

CHILD = r"""
import torch, torch_xla
import torch_xla.core.xla_model as xm
d = xm.xla_device()
t0 = torch.tensor([1], device=d)
t1 = torch.tensor([2], device=d)
xm.mark_step()
t1.add_(t0)
xm.mark_step()
t2 = t1 + t0
xm.mark_step()
print("t1", t1.item(), "t2", t2.item(), flush=True)
"""
p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=200)
out = [ln for ln in p.stdout.splitlines() if ln.startswith("t1")]
err = [ln for ln in p.stderr.splitlines() if "Check failed" in ln]
print("child exit:", p.returncode, out, err[:1])
if out and out[-1] == "t1 3 t2 4":
    print("NOT REPRODUCED: t1=3, t2=4")
else:
    print("REPRODUCED: the cached step aliased t2 to t1 (wrong value or donated-buffer error)")
