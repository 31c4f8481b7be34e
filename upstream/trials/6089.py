# Trial for https://github.com/pytorch/xla/issues/6089
# The user saw torch.arange(3000, device=xla, dtype=torch.float16) never return (an endless loop) for any end
# of 2050 or more, because float16 cannot represent the odd integers above 2048. The call runs in a child
# process with a time limit.
import subprocess
import sys

CHILD = r"""
import torch, torch_xla
import torch_xla.core.xla_model as xm
t = torch.arange(3000, device=xm.xla_device(), dtype=torch.float16)
c = t.cpu()
ref = torch.arange(3000, dtype=torch.float16)
print("done", tuple(c.shape), bool(torch.equal(c, ref)), flush=True)
"""
try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=30)
except subprocess.TimeoutExpired:
    print("REPRODUCED: torch.arange(3000, dtype=float16) did not finish within 30 s")
    raise SystemExit(0)
out = [ln for ln in p.stdout.splitlines() if ln.startswith("done")]
print("child exit:", p.returncode, out, p.stderr.strip().splitlines()[-1:] if p.returncode else "")
print("NOT REPRODUCED: arange returned" if out else "OTHER: the child failed")
