"""An overlapping as_strided window over an XLA tensor fails to lower.

Upstream: pytorch/xla#5835 (and the older #2238); the fix is pytorch/xla#6697, the re-land of
#6624 ("Make `as_strided_copy` materialize a new tensor with `index`").

`as_strided((2, 3), (2, 1), 0)` on the 5 elements [0, 1, 2, 3, 4] asks for the overlapping
windows [[0, 1, 2], [2, 3, 4]]: six output elements read from five. Before the fix torch_xla
lowered as_strided as "take size-product contiguous elements from the offset, reshape, and
permute by stride order", which only describes non-overlapping layouts, and its lowering
checks that the six elements fit in the input:
    Check failed: storage_offset + slice_size <= input_element_count (6 vs. 5)
When the windows do fit (the same call on 10 elements) the old lowering returns contiguous
rows, [[0, 1, 2], [3, 4, 5]], a wrong result; that is reported too.
The tensor here is not a view, so this is not the slice-of-a-view case of
issues/as-strided-view-lowering-error.yaml (fixed earlier, in 2.2.0).

`--workaround` gathers the same windows with an index tensor built on the CPU
(`x.reshape(-1)[torch.arange(x.numel()).as_strided(size, stride, offset).to(device)]`) and
reports "not reproduced" when that equals PyTorch's result.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2
CHECK = "storage_offset + slice_size <= input_element_count"
SIZE, STRIDE, OFFSET = (2, 3), (2, 1), 0


def main(workaround: bool) -> int:
    import torch
    import torch_xla
    import torch_xla.core.xla_model as xm

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
    device = xm.xla_device()
    x = torch.arange(5, dtype=torch.float32)
    want = x.as_strided(SIZE, STRIDE, OFFSET)  # [[0, 1, 2], [2, 3, 4]]
    xx = x.to(device)
    if workaround:
        return check_workaround(torch, xx, want, device)
    # Same cause, no error: when the windows fit in the tensor's element count, affected
    # releases return contiguous rows instead of overlapping ones (a silent wrong result).
    y = torch.arange(10, dtype=torch.float32)
    y_want = y.as_strided(SIZE, STRIDE, OFFSET)
    y_got = y.to(device).as_strided(SIZE, STRIDE, OFFSET).cpu()
    wrong = not torch.equal(y_got, y_want)
    print(f"INFO: arange(10).as_strided({SIZE}, {STRIDE}, {OFFSET}) on XLA: {y_got.tolist()}, "
          f"CPU: {y_want.tolist()}, equal: {not wrong}")
    # For 1-D sliding windows, unfold is the other workaround; only reported here.
    print(f"INFO: x.unfold(0, 3, 2) on XLA: {xx.unfold(0, 3, 2).cpu().tolist()}")
    try:
        got = xx.as_strided(SIZE, STRIDE, OFFSET).cpu()
    except RuntimeError as e:
        if CHECK not in str(e):
            raise
        traceback.print_exc()
        first = next((line.strip() for line in str(e).splitlines() if CHECK in line), "")
        print(f"REPRODUCED: overlapping x.as_strided({SIZE}, {STRIDE}, {OFFSET}) on a "
              f"{x.numel()}-element tensor failed to lower: {first}")
        return REPRODUCED
    print(f"INFO: XLA result {got.tolist()}")
    if wrong:
        print(f"REPRODUCED: overlapping as_strided({SIZE}, {STRIDE}, {OFFSET}) returned wrong "
              f"values {y_got.tolist()} instead of {y_want.tolist()}")
        return REPRODUCED
    if not torch.equal(got, want):
        print(f"ERROR: no lowering error, but the result differs from CPU {want.tolist()}")
        return ERROR
    print("NOT REPRODUCED: overlapping as_strided windows equal PyTorch's result")
    return NOT_REPRODUCED


def check_workaround(torch, xx, want, device) -> int:
    """The workaround: gather the windows with an index tensor computed on the CPU."""
    index = torch.arange(xx.numel()).as_strided(SIZE, STRIDE, OFFSET)
    try:
        got = xx.reshape(-1)[index.to(device)].cpu()
    except RuntimeError as e:
        if CHECK not in str(e):
            raise
        traceback.print_exc()
        print("REPRODUCED: the workaround (indexing with a CPU-built index) also failed "
              f"to lower: {CHECK}")
        return REPRODUCED
    print(f"INFO: workaround x.reshape(-1)[index]: {got.tolist()}")
    if not torch.equal(got, want):
        print(f"ERROR: the workaround's result differs from CPU {want.tolist()}")
        return ERROR
    print("NOT REPRODUCED: workaround holds: indexing with "
          "torch.arange(n).as_strided(size, stride, offset) equals PyTorch's as_strided")
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
