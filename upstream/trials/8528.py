# What the user saw: after init_device_mesh("xla", (world_size,)) under SPMD, DeviceMesh.get_rank()
# failed instead of returning the process rank (run under torchrun with 2 processes).
# https://github.com/pytorch/xla/issues/8528
import os
import subprocess
import sys

if "M1_TRIAL_CHILD" not in os.environ:
    env = dict(os.environ, M1_TRIAL_CHILD="1", CPU_NUM_DEVICES="1", MASTER_PORT="29533")
    rc = subprocess.call([sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=2",
                          "--master_port=29533", __file__], env=env)
    print("torchrun exit code", rc)
    sys.exit(rc)

import torch_xla.runtime as xr

try:
    from torch.distributed.device_mesh import init_device_mesh
except ImportError:
    from torch.distributed._tensor.device_mesh import init_device_mesh

xr.use_spmd()
mesh = init_device_mesh("xla", (int(os.environ["WORLD_SIZE"]),))
rank = mesh.get_rank()
print(f"RANK={os.environ['RANK']} get_rank()={rank}", flush=True)
assert rank == int(os.environ["RANK"])
