# What the user saw: xmp.spawn(fn, nprocs=N) for N other than 1 printed a warning that nprocs is ignored and
# ran on all devices instead.
# https://github.com/pytorch/xla/issues/7633  (only the replies are stored; here nprocs=2 with 4 CPU devices)
import warnings

import torch_xla.core.xla_model as xm
import torch_xla.distributed.xla_multiprocessing as xmp


def _fn(index):
    print(f"process {index}: device {xm.xla_device()}", flush=True)


if __name__ == "__main__":
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            xmp.spawn(_fn, nprocs=2)
        except Exception as e:  # newer releases refuse nprocs other than 1 or None
            print(f"raised {type(e).__name__}: {e}")
    for w in caught:
        if "nprocs" in str(w.message):
            print("warning:", w.message)
