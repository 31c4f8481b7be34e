"""Reproducer for issues/complex128-readback-drops-imaginary-part.yaml.

Run: PJRT_DEVICE=CPU python reproducers/complex128-readback-drops-imaginary-part.py [--workaround]
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# What the report saw (https://github.com/pytorch/xla/issues/3551, filed 2022-05-05): PyTorch's type-promotion
# test for addcmul/addcdiv with float64 and complex128 operands gave different results on XLA.
# Here: a complex128 tensor moved to XLA and read back (or any complex128 result, such as addcmul's) comes
# back with its imaginary part set to zero, with no error.
# --workaround: use complex64 (and float32) instead of complex128 (and float64).

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
    dtype = torch.complex64 if workaround else torch.complex128
    device = xm.xla_device()
    a = torch.tensor([1.0, 2.0], dtype=torch.float32 if workaround else torch.float64)
    b = torch.tensor([1.0 + 2.0j, 3.0 - 1.0j], dtype=dtype)
    c = torch.tensor([2.0 + 1.0j, 1.0 + 1.0j], dtype=dtype)
    cases = {
        "round trip": (b, b.to(device).cpu()),
        "addcmul": (
            torch.addcmul(a, b, c, value=2),
            torch.addcmul(a.to(device), b.to(device), c.to(device), value=2).cpu(),
        ),
    }
    bad = []
    for name, (expected, got) in cases.items():
        print(f"{name}: PyTorch {expected.dtype} {expected.tolist()}; XLA {got.dtype} {got.tolist()}")
        if got.dtype == expected.dtype and torch.allclose(got, expected):
            continue
        if got.is_complex() and torch.allclose(got.real, expected.real) and not got.imag.any():
            bad.append(name)
            continue
        print(f"ERROR: unexpected {name} result, not the bug under test")
        return ERROR
    if not bad:
        print(f"not reproduced: {dtype} values keep their imaginary part")
        return NOT_REPRODUCED
    print(f"XLAKB-REPRODUCED: complex128 values read back from XLA lost their imaginary part ({', '.join(bad)})")
    return REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(ERROR)  # an unexpected crash is an error, never "reproduced"
