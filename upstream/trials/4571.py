# User saw: with several TPU cores (xmp.spawn), calling xm.save() only on the master ordinal
# (`if xm.is_master_ordinal(): xm.save(...)`) usually got stuck inside xm.save() (2.0-era Colab).
# https://github.com/pytorch/xla/issues/4571
import os
import subprocess
import sys
import tempfile


def _mp_fn(index, path):
    import torch
    import torch.nn as nn
    import torch_xla.core.xla_model as xm

    device = xm.xla_device()
    model = nn.Linear(4, 2).to(device)
    xm.mark_step()
    if xm.is_master_ordinal():
        xm.save(model.state_dict(), path)
    xm.mark_step()
    import torch_xla.runtime as xr

    print(f"ordinal {xr.global_ordinal()} of {xr.world_size()} passed the save", flush=True)


def child():
    import torch_xla.distributed.xla_multiprocessing as xmp

    path = os.path.join(tempfile.mkdtemp(), "ckpt.pt")
    xmp.spawn(_mp_fn, args=(path,))
    print("saved:", os.path.exists(path), flush=True)


if __name__ == "__main__":
    if sys.argv[1:] == ["--child"]:
        child()
        raise SystemExit(0)
    try:
        out = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True, timeout=180)
    except subprocess.TimeoutExpired:
        print("BUG: master-only xm.save() did not finish in 180 s (hang)")
        raise SystemExit(1)
    print(out.stdout[-2000:])
    if out.returncode != 0:
        print(out.stderr[-3000:])
        raise SystemExit(2)
    print("no hang: every process passed the master-only xm.save()")
