"""torch.compile(backend="openxla") of a function returning `x.expand(...)` of its input fails when the
result is used: "Error while lowering: aten::as_strided ... Check failed: storage_offset +
slice_size <= input_element_count (6 vs. 3)".

Upstream: https://github.com/pytorch/xla/issues/5837 (closed), https://github.com/pytorch/pytorch/issues/120336.

The output aliases the input, so AOTAutograd rebuilds it from the input after the compiled graph
runs (`gen_alias_from_base`). With torch 2.1 that falls back to `input.as_strided(size, stride)`
using the output's size and strides; XLA tensors report contiguous strides (3, 1) for the expanded
[2, 3] tensor instead of (0, 1), so the as_strided asks for 6 elements of a 3-element tensor and its
lowering fails.

`--workaround` returns `x.expand(...).clone()` (no alias of the input) and must report "not reproduced".

Run: PJRT_DEVICE=CPU python reproducers/dynamo-expand-output-as-strided-lowering-error.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced, 125 = cannot be tested on this
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

    def expand_view(x):
        return x.expand(2, *x.shape)

    def expand_copy(x):
        return x.expand(2, *x.shape).clone()

    compiled = torch.compile(expand_copy if workaround else expand_view, backend="openxla")
    x = torch.arange(3, device=xm.xla_device())
    try:
        got = compiled(x).cpu()
    except RuntimeError as err:
        text = " ".join(str(err).split())
        if "aten::as_strided" in text and "storage_offset + slice_size <= input_element_count" in text:
            print(text[:400])
            print("XLAKB-REPRODUCED: returning x.expand(...) from torch.compile(backend='openxla') fails to lower aten::as_strided")
            return REPRODUCED
        raise
    if got.tolist() != [[0, 1, 2], [0, 1, 2]]:
        print(f"error: wrong result {got.tolist()}")
        return 2
    print(f"not reproduced ({'clone' if workaround else 'view'}): {got.tolist()}")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:] == ["--workaround"]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
