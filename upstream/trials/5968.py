# User saw (after moving from XRT to PJRT): xm.get_memory_info(device) raises
# "RuntimeError: ./torch_xla/csrc/runtime/pjrt_computation_client.h:137 : GetMemoryInfo not implemented".
# https://github.com/pytorch/xla/issues/5968
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
try:
    info = xm.get_memory_info(device)
    print("memory info:", info)
except Exception as e:
    print(type(e).__name__ + ":", str(e).splitlines()[0][:300])
