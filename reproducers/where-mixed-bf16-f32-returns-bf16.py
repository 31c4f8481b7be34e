"""torch.where(cond, bfloat16, float32) on an XLA device returns bfloat16; eager PyTorch returns float32.

Upstream: no report of the dtype found; pytorch/xla#6479 is the lowering crash that the same
call hits on 2.1/2.2 (record where-mixed-dtype-lowering-error).

Eager PyTorch promotes the two value tensors of `torch.where` to their common dtype
(bfloat16 with float32 gives float32). torch_xla's `where` kernel does no type promotion and
gives the result the dtype of its first value tensor, so the float32 values are rounded to
bfloat16. The dtype is judged on the lazy tensor, before the graph runs, so releases whose
lowering of the mixed call fails (2.1, 2.2) are judged too; their lowering error is printed
as INFO only, being the other record's bug.

`--workaround` casts both value tensors to `torch.result_type(a, b)` first and must report
"not reproduced".

Run: PJRT_DEVICE=CPU python reproducers/where-mixed-bf16-f32-returns-bf16.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced, 125 = untestable, else error.
"""

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main(workaround: bool) -> int:
    try:
        import torch
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    cond = torch.tensor([True, False, True, False])
    a = torch.tensor([1.5, 2.5, 3.5, 4.5], dtype=torch.bfloat16)
    b = torch.tensor([1.0001, 2.0001, 3.0001, 4.0001], dtype=torch.float32)
    expected = torch.where(cond, a, b)  # eager CPU: float32, values of b kept
    print(f"eager CPU: dtype {expected.dtype}, values {expected.tolist()}")

    device = xm.xla_device()
    xa, xb = a.to(device), b.to(device)
    if workaround:  # promote by hand, as eager PyTorch would
        dtype = torch.result_type(xa, xb)
        xa, xb = xa.to(dtype), xb.to(dtype)
    got = torch.where(cond.to(device), xa, xb)
    values = None
    try:
        values = got.cpu().tolist()
    except RuntimeError as err:
        if "SameElementType" not in str(err):
            raise
        print(f"INFO: this release cannot run the mixed call: {str(err).splitlines()[0]}")
    print(f"XLA:       dtype {got.dtype}, values {values}")
    if got.dtype != expected.dtype:
        print(
            f"XLAKB-REPRODUCED: torch.where(bf16, f32) on XLA returned {got.dtype}, "
            f"eager PyTorch returns {expected.dtype}"
        )
        return REPRODUCED
    if values != expected.tolist():
        print("error: same dtype as eager but different values")
        return 2
    print("not reproduced: torch.where on XLA promotes like eager PyTorch")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:] == ["--workaround"]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
