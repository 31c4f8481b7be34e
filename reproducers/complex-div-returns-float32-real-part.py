"""Reproducer for issues/complex-div-returns-float32-real-part.yaml.

Run: PJRT_DEVICE=CPU python reproducers/complex-div-returns-float32-real-part.py [--workaround]
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# What the user saw (https://github.com/pytorch/xla/issues/4519, filed 2023-01-26, torch_xla 1.12/1.13 on TPU):
# torch.tensor(12.0116+0.5259j, device=xla) / 1 printed tensor(12.0116) with dtype torch.float32: the quotient
# lost its complex dtype and its imaginary part, with no error. PyTorch keeps complex64.
# --workaround: multiply by the reciprocal of the real divisor instead of dividing.

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
    expected = t / 2
    x = t.to(device)
    got = (x * (1 / 2) if workaround else x / 2).cpu()
    print(f"PyTorch: {expected.dtype} {expected.tolist()}")
    print(f"XLA:     {got.dtype} {got.tolist()}")
    if got.dtype == expected.dtype and torch.allclose(got, expected):
        print("not reproduced: the quotient keeps its complex dtype and value")
        return NOT_REPRODUCED
    if got.dtype == torch.float32 and torch.allclose(got, expected.real):
        print(
            "XLAKB-REPRODUCED: dividing a complex64 XLA tensor returned float32 holding only the real part "
            f"({got.tolist()} instead of {expected.tolist()})"
        )
        return REPRODUCED
    print(f"ERROR: unexpected result {got.dtype} {got.tolist()}, not the bug under test")
    return ERROR


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(ERROR)  # an unexpected crash is an error, never "reproduced"
