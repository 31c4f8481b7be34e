# User saw: lowering aten::where with operands of different dtypes crashes during lowering (seen
# e.g. running Gemma on TPU). The stored thread excerpt does not show the original code; this script
# tries torch.where with mixed operand dtypes as a guess. https://github.com/pytorch/xla/issues/6479
import torch, torch_xla
import torch_xla.core.xla_model as xm
device = xm.xla_device()
mask = torch.tensor([True, False, True], device=device)
cases = {
    "bf16 vs f32 tensor": (torch.ones(3, dtype=torch.bfloat16, device=device), torch.zeros(3, device=device)),
    "f32 vs 0-d f64 tensor": (torch.ones(3, device=device), torch.tensor(-1.0, dtype=torch.float64, device=device)),
    "bf16 vs python float": (torch.ones(3, dtype=torch.bfloat16, device=device), float("-inf")),
    "int64 vs f32": (torch.ones(3, dtype=torch.int64, device=device), torch.zeros(3, device=device)),
    "f16 vs 0-d f32 cpu": (torch.ones(3, dtype=torch.float16, device=device), torch.tensor(0.5)),
}
for k, (a, b) in cases.items():
    try:
        r = torch.where(mask, a, b)
        print(k, "->", r.dtype, r.cpu().tolist())
    except Exception as e:
        print(k, "raised:", type(e).__name__, str(e)[:250])
