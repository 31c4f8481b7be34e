"""Reproducer for issues/int64-scalar-add-int32-long-shift-left-error.yaml.

Adding a rank-0 int64 CPU tensor (e.g. `torch.tensor(1)`) to an int32 XLA tensor gives an
int32 tensor whose XLA value is s64; casting it with `.long()` then fails while lowering the
cast: the sign-extension mask in convert_ops.cpp shifts an s64 mask by an s32 amount, and the
XLA builder rejects "Binary op shift-left with different element types: s64[] and s32[]".
Upstream: pytorch/xla#6538 (open).

`--workaround` adds a Python int instead of the 0-d int64 tensor (`t.item()`), which must work.

Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=1 python reproducers/int64-scalar-add-int32-long-shift-left-error.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main(workaround: bool) -> int:
    try:
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
    device = xm.xla_device()
    ids = torch.tensor([[478, 1896, 1097, 299, 373]], dtype=torch.int32, device=device)
    step = torch.tensor(1)  # rank-0 int64 tensor on the CPU
    if workaround:
        step = step.item()
    try:
        summed = step + ids
        print(f"INFO: dtype of the sum: {summed.dtype}")
        out = summed.long().cpu()
    except RuntimeError as err:
        if "shift-left with different element types" in str(err):
            traceback.print_exc()
            one_line = " ".join(str(err).split())
            print(f"XLAKB-REPRODUCED: .long() of int64 scalar + int32 tensor failed to lower: {one_line}")
            return REPRODUCED
        raise
    expected = [[479, 1897, 1098, 300, 374]]
    if out.dtype != torch.int64 or out.tolist() != expected:
        print(f"ERROR: unexpected result {out.dtype} {out.tolist()} (not the bug under test)")
        return 2
    print(f"not reproduced: (int64 scalar + int32 tensor).long() = {out.tolist()}")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:] == ["--workaround"]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
