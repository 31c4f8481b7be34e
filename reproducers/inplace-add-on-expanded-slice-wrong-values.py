"""Reproducer for issues/inplace-add-on-expanded-slice-wrong-values.yaml.

Run: PJRT_DEVICE=CPU python reproducers/inplace-add-on-expanded-slice-wrong-values.py [--workaround]
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# What the user saw (https://github.com/pytorch/xla/issues/8917, filed 2025-04-01, torch_xla 2.6.0 on TPU):
# `idx = torch.arange(n, device=xla).expand(bs, -1); idx[:, -k:] += k` printed values that are not
# arange(n) with k added to its last k entries. PyTorch on the CPU refuses that write with
# "unsupported operation: more than one element of the written-to tensor refers to a single memory
# location"; torch_xla raises nothing and returns other numbers.
# --workaround: clone the expanded tensor before writing into it, as PyTorch's message advises.

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
BS, N, K = 4, 16, 6


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
    expected = torch.arange(N)
    expected[-K:] += K

    idx = torch.arange(N, device=device).expand(BS, -1)
    if workaround:
        idx = idx.clone()
    try:
        idx[:, -K:] += K
        xm.mark_step()
        got = idx.cpu()
    except RuntimeError as err:
        if "more than one element of the written-to tensor" in str(err):
            print(f"not reproduced: torch_xla refuses the write as PyTorch does: {str(err).splitlines()[0]}")
            return NOT_REPRODUCED
        raise
    print(f"expected row: {expected.tolist()}")
    print(f"XLA rows:     {got.tolist()}")
    if all(torch.equal(row, expected) for row in got):
        print("not reproduced: every row holds arange(n) with k added to its last k entries")
        return NOT_REPRODUCED
    print(
        "XLAKB-REPRODUCED: in-place add on a slice of an expand()-ed XLA tensor raised nothing and "
        f"returned wrong values (row 0: {got[0].tolist()})"
    )
    return REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(ERROR)  # an unexpected crash is an error, never "reproduced"
