# User saw: building a U64 (also U16/U32) scalar with torch_xla's XLA builder raised
# "RuntimeError: torch_xla/csrc/tensor_util.cpp:705 : Tensor type not supported: CPUUInt64Type"
# on torch_xla 2.7 (nightly), after the builder started mapping U16/U32/U64 to torch's unsigned types.
# Also checks moving uint16/32/64 tensors to the XLA device and back.
# https://github.com/pytorch/xla/issues/9074
import torch
import torch_xla.core.xla_builder as xb
import torch_xla.core.xla_model as xm

device = xm.xla_device()
bad = []
for name in ("U16", "U32", "U64"):
    try:
        xb.Op.scalar(xb.create_builder("b" + name), 1, dtype=getattr(xb.Type, name))
        print(name, "builder scalar ok")
    except RuntimeError as e:
        print(name, "ERROR", str(e).splitlines()[0][:200])
        bad.append(name)
for name in ("uint16", "uint32", "uint64"):
    dt = getattr(torch, name, None)
    if dt is None:
        print(name, "not in this torch")
        continue
    back = torch.tensor([1, 2, 3], dtype=dt).to(device).cpu()
    print(name, "round trip", back.tolist())
if bad:
    print("REPRODUCED: Tensor type not supported for", bad)
    raise SystemExit(1)
print("all unsigned builder scalars work")
