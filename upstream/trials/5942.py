# User saw: changing PJRT_DEVICE after the PjRt client was created (CPU -> CUDA -> CPU) raised no error or warning;
# every step still ran on CPU:0 and get_xla_supported_devices(devkind='CUDA') returned None.
# https://github.com/pytorch/xla/issues/5942
# This trial starts the runtime on CPU, then switches PJRT_DEVICE to another kind and runs a step.
import os

os.environ["PJRT_DEVICE"] = "CPU"
import torch
import torch_xla.core.xla_model as xm

seen = []
for kind in ("CPU", "TPU", "CPU"):
    os.environ["PJRT_DEVICE"] = kind
    try:
        try:
            supported = xm.get_xla_supported_devices(devkind=kind)
        except TypeError:  # 2.9 dropped the devkind argument
            supported = xm.get_xla_supported_devices()
        device = xm.xla_device()
        a = torch.rand(5, 5, device=device)
        r = a @ a
        xm.mark_step()
        real = xm.xla_real_devices([str(device)])[0] if hasattr(xm, "xla_real_devices") else str(device)
    except Exception as e:
        print(f"{kind}: raised {type(e).__name__}: {str(e).splitlines()[0]}")
        print("not reproduced: switching the device kind after initialisation is refused")
        raise SystemExit(0)
    seen.append((kind, supported, real))
    print(f"PJRT_DEVICE={kind}: supported={supported} ran on {real}")

if seen[1][2].startswith("CPU"):
    print("REPRODUCED: PJRT_DEVICE switched to TPU after init, the step silently ran on", seen[1][2])
    raise SystemExit(1)
