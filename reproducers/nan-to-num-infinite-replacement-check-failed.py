"""torch.nan_to_num on an XLA tensor refuses an infinite nan/posinf/neginf replacement.

Upstream: pytorch/xla#8674 (open).

PyTorch accepts any number as the replacement for NaN, +inf and -inf, infinities included
(`torch.nan_to_num(x, nan=-inf)` turns NaNs into -inf). XLANativeFunctions::nan_to_num
(torch_xla/csrc/aten_xla_type.cpp) first checks that every replacement lies in the finite
range [lowest, max] of the tensor's dtype, so an infinite one fails that XLA_CHECK and the
call raises RuntimeError before anything is computed.

`--workaround` builds the same result from torch.where and must report "not reproduced"
(it also compares the values with PyTorch's on the CPU).

Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=1 python reproducers/nan-to-num-infinite-replacement-check-failed.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced, 125 = cannot be tested on
this release, anything else = error.
"""

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def main(workaround: bool) -> int:
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
    device = xm.xla_device()
    inf = float("inf")
    x = torch.tensor([float("nan"), inf, -inf, 1.5, -2.0])
    want = torch.nan_to_num(x, nan=-inf, posinf=inf, neginf=-inf)
    xd = x.to(device)

    if workaround:
        out = torch.where(torch.isnan(xd), torch.full_like(xd, -inf), xd)
        got = out.cpu()
        print(f"INFO: torch.where workaround on XLA gave {got.tolist()}, PyTorch {want.tolist()}")
        if not torch.equal(got, want):
            print("ERROR: the workaround's values differ from PyTorch's")
            return ERROR
        print("NOT REPRODUCED: the torch.where workaround matches torch.nan_to_num on the CPU")
        return NOT_REPRODUCED

    try:
        got = torch.nan_to_num(xd, nan=-inf, posinf=inf, neginf=-inf).cpu()
    except RuntimeError as err:
        text = str(err)
        if "replacement" in text and ("must be in the range" in text or "min_max.min" in text):
            print(text)
            first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
            print(f"REPRODUCED: torch.nan_to_num on XLA refused an infinite replacement: {first}")
            return REPRODUCED
        raise
    print(f"INFO: XLA gave {got.tolist()}, PyTorch {want.tolist()}")
    if not torch.equal(got, want):
        print("ERROR: nan_to_num ran on XLA but its values differ from PyTorch's")
        return ERROR
    print("NOT REPRODUCED: torch.nan_to_num accepts infinite replacements on XLA")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:] == ["--workaround"])
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        print("ERROR: unexpected exception (not the bug under test)")
        code = ERROR
    sys.stdout.flush()
    sys.exit(code)
