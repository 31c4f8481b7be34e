# Trial for https://github.com/pytorch/xla/issues/8499
# The user saw a 0-dim constant tensor lose its read-only mark across mark_step(); an in-place update then
# donated the cached buffer, and the next torch.tensor(42) got the corrupted buffer: the step crashed
# (Check failed: HasValue()) or read 43 instead of 42. The steps run in a child process.
import subprocess
import sys

CHILD = r"""
import torch, torch_xla
import torch_xla.core.xla_model as xm
d = xm.xla_device()
t0 = torch.tensor(42, device=d)
xm.mark_step()
t0.add_(1)
xm.mark_step()
t1 = torch.tensor(42, device=d)
xm.mark_step()
t1.add_(1)
xm.mark_step()
print("t1", t1.item(), flush=True)
"""
p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=200)
out = [ln for ln in p.stdout.splitlines() if ln.startswith("t1")]
err = [ln for ln in p.stderr.splitlines() if "HasValue" in ln or "Check failed" in ln]
print("child exit:", p.returncode, out, err[:1])
if err or p.returncode != 0 or (out and out[-1] != "t1 43"):
    print("REPRODUCED: the cached constant was donated (crash or wrong value)")
else:
    print("NOT REPRODUCED: t1 is 43 as expected")
