# torch.compile(backend="openxla") of foo(x) = x.expand(2, *x.shape) returned a tensor whose
# printing failed with "Error while lowering: aten::as_strided ... Check failed: storage_offset +
# slice_size <= input_element_count (6 vs. 3)". https://github.com/pytorch/xla/issues/5837
import torch
import torch_xla  # noqa: F401
import torch_xla.core.xla_model as xm


@torch.compile(backend="openxla")
def foo(x):
    return x.expand(2, *x.shape)


x = torch.arange(3, device=xm.xla_device())
try:
    out = foo(x).cpu()
except RuntimeError as e:
    print("BUG:", " ".join(str(e).split())[:300])
    raise SystemExit(1)
print("result", out.tolist())
if out.tolist() != [[0, 1, 2], [0, 1, 2]]:
    print("BUG: wrong result")
    raise SystemExit(1)
print("OK")
