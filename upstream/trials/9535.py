# User saw: xm.xla_device_kind() after xr.use_spmd() fails with
# "Check failed: string_to_device_.find(device) != string_to_device_.end() ... Unknown device SPMD:0".
# https://github.com/pytorch/xla/issues/9535
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
xr.use_spmd()
try:
    print("device kind:", xm.xla_device_kind())
except Exception as e:
    print(type(e).__name__, str(e).splitlines()[0][:300])
    print([l for l in str(e).splitlines() if 'Unknown device' in l])
