# User saw: running test_operations.py with the graph-dump and op-by-op variables
# (XLA_SAVE_TENSORS_FILE, XLA_SAVE_TENSORS_FMT=hlo, XLA_GET_TENSORS_OPBYOP=1,
# XLA_SYNC_TENSORS_OPBYOP=1) crashed several tests, TestParallelLoader with a SIGSEGV in
# xla::XlaBuilder::Build (2022 master, XRT).
# https://github.com/pytorch/xla/issues/3485
# Trial: a ParallelLoader loop and one plain step, run in child processes under those variables;
# prints how each child ended (2.1.0: the step raises "ExecuteChained not implemented" and the
# loader child dies by a signal; later releases ignore the op-by-op variables).
import os
import subprocess
import sys
import tempfile

LOADER = """
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
dev = xm.xla_device()
ds = torch.utils.data.TensorDataset(torch.randn(32, 4), torch.arange(32))
para = pl.ParallelLoader(torch.utils.data.DataLoader(ds, batch_size=8), [dev])
for x, y in para.per_device_loader(dev):
    ((x * 2).sum() + y.sum()).item()
    xm.mark_step()
print("loader done")
"""
STEP = """
import torch, torch_xla
import torch_xla.core.xla_model as xm
t = (torch.ones(3, 3, device=xm.xla_device()) + 1).sum()
xm.mark_step()
print("step value", t.item())
"""
with tempfile.TemporaryDirectory() as tmp:
    env = dict(
        os.environ,
        PJRT_DEVICE="CPU",
        XLA_SAVE_TENSORS_FMT="hlo",
        XLA_SAVE_TENSORS_FILE=os.path.join(tmp, "g.hlo"),
        XLA_GET_TENSORS_OPBYOP="1",
        XLA_SYNC_TENSORS_OPBYOP="1",
    )
    for name, code in (("step", STEP), ("loader", LOADER)):
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=200)
        tail = [ln for ln in (p.stdout + p.stderr).splitlines() if "Warning" not in ln][-1:]
        print(name, "exit", p.returncode, tail)
