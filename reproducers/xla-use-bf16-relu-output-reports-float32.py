"""Reproducer for issues/xla-use-bf16-relu-output-reports-float32.yaml.

Run: PJRT_DEVICE=CPU XLA_USE_BF16=1 python reproducers/xla-use-bf16-relu-output-reports-float32.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# What the user saw (https://github.com/pytorch/xla/issues/6403, filed 2024-01-29): with XLA_USE_BF16=1
# (or XLA_USE_FP16=1) a model moved to bfloat16 (float16) takes a bfloat16 input and nn.ReLU hands back a
# tensor whose dtype reads torch.float32. No error is raised; the wrong dtype then spreads through type
# promotion and dtype checks.
# The workaround variant runs with XLA_USE_BF16=0: the model is converted to bfloat16 directly, as the
# flag's deprecation message advises.

import os
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2

os.environ.setdefault("XLA_USE_BF16", "1")  # read once, when torch_xla first needs a dtype


def main() -> int:
    try:
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__,
          "XLA_USE_BF16", os.environ.get("XLA_USE_BF16"))
    device = xm.xla_device()
    relu = torch.nn.ReLU().to(device).to(torch.bfloat16)
    x = torch.randn(3, device=device, dtype=torch.bfloat16)
    y = relu(x)
    xm.mark_step()
    print(f"input dtype {x.dtype}, nn.ReLU output dtype {y.dtype}")
    if x.dtype == torch.bfloat16 and y.dtype == torch.float32:
        print("XLAKB-REPRODUCED: nn.ReLU on a bfloat16 XLA tensor returned a tensor reporting torch.float32")
        return REPRODUCED
    if y.dtype == x.dtype:
        print("not reproduced: the output keeps the input's dtype")
        return NOT_REPRODUCED
    print(f"ERROR: unexpected dtypes (input {x.dtype}, output {y.dtype}), not the bug under test")
    return ERROR


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(ERROR)  # an unexpected crash is an error, never "reproduced"
