# User saw: importing torch_xla.distributed.xla_multiprocessing printed
#   UserWarning: Device capability of xla unspecified, assuming `cpu` and `cuda`.
#   Please specify it via the `devices` argument of `register_backend`.
# (nightly of 2024-01-03). https://github.com/pytorch/xla/issues/6251
# This trial imports the module with warnings recorded and reports whether that warning is emitted.
import warnings

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import torch_xla.distributed.xla_multiprocessing  # noqa: F401

hits = [str(w.message) for w in caught if "Device capability of xla unspecified" in str(w.message)]
if hits:
    print("REPRODUCED:", hits[0])
    raise SystemExit(1)
print("not reproduced: no device-capability warning on import")
