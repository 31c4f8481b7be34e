"""With XLA_USE_BF16=1, torch.relu of a bfloat16 XLA tensor is reported as torch.float32.

Upstream: https://github.com/pytorch/xla/issues/6403 (open).

XLA_USE_BF16 makes torch_xla store float32 tensors as bfloat16 on the device and report the
device type BF16 back to PyTorch as float32 (`MaybeUpcastToHostTorchType`). A tensor the user
created as bfloat16 keeps its type only while torch_xla remembers it as a logical element type;
ops whose result is built from the IR alone (relu, abs, a Linear layer, ...) lose it, so
`torch.relu(x)` of a bfloat16 `x` says float32 while `x + x` says bfloat16.

`--workaround` runs the same code without XLA_USE_BF16 (the model cast to bfloat16 instead, as the
deprecation warning asks) and must report "not reproduced".

Run: PJRT_DEVICE=CPU python reproducers/xla-use-bf16-bfloat16-relu-reports-float32.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced, 125 = cannot be tested on this
release, anything else = error.
"""

import os
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main(workaround: bool) -> int:
    if workaround:
        os.environ.pop("XLA_USE_BF16", None)
    else:
        os.environ["XLA_USE_BF16"] = "1"
    try:
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
    device = xm.xla_device()
    x = torch.randn(3, device=device, dtype=torch.bfloat16)
    relu = torch.nn.ReLU().to(device).to(torch.bfloat16)
    out = relu(x)
    total = out.float().cpu().sum().item()
    print(f"input {x.dtype}, x + x {(x + x).dtype}, relu(x) {out.dtype} (sum {total:.4f})")
    if out.dtype == torch.float32:
        print(f"XLAKB-REPRODUCED: with XLA_USE_BF16=1 relu of a bfloat16 tensor is reported as {out.dtype}")
        return REPRODUCED
    if out.dtype != torch.bfloat16:
        print(f"error: unexpected dtype {out.dtype}")
        return 2
    print(f"not reproduced ({'no XLA_USE_BF16' if workaround else 'XLA_USE_BF16=1'}): relu keeps bfloat16")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:] == ["--workaround"]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
