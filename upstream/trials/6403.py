# Trial for https://github.com/pytorch/xla/issues/6403
# The user saw, with XLA_USE_FP16=1 (and likewise XLA_USE_BF16=1 with a bfloat16 model), a half-precision
# input passed through nn.ReLU come back with dtype torch.float32 instead of the input's dtype.
# XLA_USE_FP16 was removed after 2.4, so both variants are run, each in its own process.
import os
import subprocess
import sys

CHILD = r"""
import os, torch, torch_xla
import torch_xla.core.xla_model as xm
dt = getattr(torch, os.environ["TRIAL_DTYPE"])
device = xm.xla_device()
m = torch.nn.ReLU().to(device).to(dt)
x = torch.randn(3, device=device, dtype=dt)
y = m(x)
xm.mark_step()
print("input", x.dtype, "output", y.dtype)
"""
hit = False
for flag, dt in (("XLA_USE_FP16", "float16"), ("XLA_USE_BF16", "bfloat16")):
    env = dict(os.environ, **{flag: "1", "TRIAL_DTYPE": dt})
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("input")]
    print(flag, "->", line[-1] if line else out.stderr.strip().splitlines()[-1:])
    if line and "output torch.float32" in line[-1]:
        hit = True
print("REPRODUCED: output upcast to float32" if hit else "NOT REPRODUCED")
