"""Reproducer for issues/embedding-bag-max-negative-clamped-to-zero.yaml.

F.embedding_bag(..., mode="max") on XLA with a weight that does not require grad (the
`_embedding_bag_forward_only` path, lowered to XLA since 2.4) starts each bag's running
maximum at 0.0 instead of -inf, so a bag whose true maximum is negative comes out as 0.0.
No error is raised: the result is silently wrong. Upstream: pytorch/xla#7588 (open).

`--workaround` keeps the weight requiring grad (as a trainable nn.EmbeddingBag does) and
runs under torch.no_grad(): PyTorch then dispatches to `_embedding_bag`, which torch_xla
does not lower, and the CPU fallback gives the right maxima.

Run: PJRT_DEVICE=CPU CPU_NUM_DEVICES=1 python reproducers/embedding-bag-max-negative-clamped-to-zero.py
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
        import torch.nn.functional as F
        import torch_xla
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__)
    device = xm.xla_device()
    # Two bags of two rows each; every entry of the second bag is negative, so its
    # maximum is negative too. The first bag mixes signs.
    weight = torch.tensor(
        [[1.0, -2.0, 0.5], [-1.0, 3.0, -0.5], [-4.0, -5.0, -6.0], [-2.0, -1.5, -3.0]]
    )
    indices = torch.tensor([0, 1, 2, 3])
    offsets = torch.tensor([0, 2])
    expected = F.embedding_bag(indices, weight, offsets, mode="max")  # eager CPU

    xw = weight.to(device)
    if workaround:
        xw.requires_grad_(True)
        with torch.no_grad():
            got = F.embedding_bag(indices.to(device), xw, offsets.to(device), mode="max")
    else:
        got = F.embedding_bag(indices.to(device), xw, offsets.to(device), mode="max")
    got = got.detach().cpu()
    print(f"eager CPU: {expected.tolist()}")
    print(f"XLA:       {got.tolist()}")
    if torch.allclose(expected, got):
        print("not reproduced: embedding_bag mode='max' on XLA matches eager")
        return NOT_REPRODUCED
    clamped = (expected < 0) & (got == 0)
    if bool(((got == expected) | clamped).all()) and bool(clamped.any()):
        print(
            "XLAKB-REPRODUCED: embedding_bag mode='max' on XLA returned 0.0 where the "
            f"bag maximum is negative ({int(clamped.sum())} entries)"
        )
        return REPRODUCED
    print("ERROR: XLA result differs from eager in another way (not the bug under test)")
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:] == ["--workaround"]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
