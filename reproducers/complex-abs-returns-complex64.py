"""Reproducer for issues/complex-abs-returns-complex64.yaml.

Run: PJRT_DEVICE=CPU python reproducers/complex-abs-returns-complex64.py [--workaround]
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# What the user saw (https://github.com/pytorch/xla/issues/3302, filed 2022-01-17, torch_xla 1.9 on TPU):
# x.abs() on a complex64 XLA tensor that requires grad raised
#   RuntimeError: abs does not support automatic differentiation for outputs with complex dtype.
# The cause is that torch.abs of a complex XLA tensor returns complex64 (magnitudes + 0j) where PyTorch
# returns float32. This script checks the dtype without autograd, then the autograd error.
# --workaround: cast the result to the real dtype with .to(torch.float32).

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main() -> int:
    try:
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
    workaround = "--workaround" in sys.argv[1:]
    device = xm.xla_device()
    t = torch.tensor([3.0 + 4.0j, 1.0 - 2.0j])
    expected = t.abs()
    out = t.to(device).abs()
    if workaround:
        out = out.to(torch.float32)
    got = out.cpu()
    print(f"PyTorch: {expected.dtype} {expected.tolist()}")
    print(f"XLA:     {got.dtype} {got.tolist()}")
    if got.dtype == expected.dtype and torch.allclose(got, expected):
        print("not reproduced: abs of a complex64 XLA tensor is float32, as in PyTorch")
        return NOT_REPRODUCED
    if got.dtype != torch.complex64 or not torch.allclose(got.real, expected):
        print(f"ERROR: unexpected result {got.dtype} {got.tolist()}, not the bug under test")
        return ERROR
    grad_msg = "(autograd not reached)"
    try:
        t.to(device).requires_grad_().abs()
        grad_msg = "abs with requires_grad did not raise"
    except RuntimeError as err:
        if "does not support automatic differentiation for outputs with complex dtype" not in str(err):
            raise
        grad_msg = f"with requires_grad: {err}"
    print(f"XLAKB-REPRODUCED: torch.abs of a complex64 XLA tensor returned complex64, not float32; {grad_msg}")
    return REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(ERROR)  # an unexpected crash is an error, never "reproduced"
