# Trial for https://github.com/pytorch/xla/issues/8973
# The user saw a process crash in PjRtComputationClient::ExecuteReplicated() after adding tensors made on
# two different XLA devices (xla:1 + xla:2) instead of getting a Python error.
# The add runs in a child process; dying of a signal is the user's crash, an exception or a value is not.
import subprocess
import sys

CHILD = r"""
import torch, torch_xla
a = torch.tensor([1.0], device="xla:1")
b = torch.tensor([1.0], device="xla:2")
try:
    print("value", (a + b).cpu().tolist(), flush=True)
except RuntimeError as e:
    print("raised", str(e).splitlines()[0][:200], flush=True)
"""
p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=200)
lines = [ln for ln in p.stdout.splitlines() if ln.startswith(("value", "raised"))]
checks = [ln for ln in p.stderr.splitlines() if "Check failed" in ln]
print("child exit:", p.returncode, lines[-1:] or "", checks[:1])
if p.returncode < 0:
    print("REPRODUCED: the process died of signal", -p.returncode)
else:
    print("NOT REPRODUCED: the process lived")
