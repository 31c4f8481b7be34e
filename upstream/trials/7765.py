# Issue 7765: calling xm.xla_real_devices() (to check for a TPU) before xmp.spawn() makes spawn fail with
# "RuntimeError: Runtime is already initialized. Do not use the XLA device before calling xmp.spawn."
# except when nprocs=1. https://github.com/pytorch/xla/issues/7765
import torch, torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp

def _mp_fn(index):
    print("worker", index, xm.xla_device())

if __name__ == "__main__":
    try:
        real = xm.xla_real_devices()
    except TypeError:  # older releases need the device list
        real = xm.xla_real_devices(xm.get_xla_supported_devices())
    print("real devices:", real)
    for nprocs in (1, None):
        try:
            xmp.spawn(_mp_fn, nprocs=nprocs)
            print("nprocs=%s: spawn ok" % nprocs)
        except Exception as e:
            print("nprocs=%s: ERROR:" % nprocs, type(e).__name__, str(e)[:300])
