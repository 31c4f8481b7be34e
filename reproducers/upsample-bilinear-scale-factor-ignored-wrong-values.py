"""Reproducer for issues/upsample-bilinear-scale-factor-ignored-wrong-values.yaml.

Run: PJRT_DEVICE=CPU python reproducers/upsample-bilinear-scale-factor-ignored-wrong-values.py [--workaround]
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# What the reporter saw (https://github.com/pytorch/xla/issues/8897, filed 2025-03-27, XLA:CUDA):
# nn.Upsample(scale_factor=1.5, mode="bilinear", align_corners=False) on arange(9).view(1, 1, 3, 3) gives
# [0.0, 0.625, 1.375, 2.0] as its first row on the XLA device, where PyTorch gives [0.0, 0.5, 1.1667, 1.8333].
# No error is raised. The output size (floor(3 * 1.5) = 4) is not 1.5 times the input, and torch_xla
# interpolates with the size ratio 3/4 instead of the requested scale 1/1.5.
# --workaround: pass recompute_scale_factor=True, so that PyTorch itself uses the size ratio as well.

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
    kwargs = dict(scale_factor=1.5, mode="bilinear", align_corners=False)
    if "--workaround" in sys.argv[1:]:
        kwargs["recompute_scale_factor"] = True
    device = xm.xla_device()
    a = torch.arange(9, dtype=torch.float32).view(1, 1, 3, 3)
    expected = torch.nn.functional.interpolate(a, **kwargs)
    got = torch.nn.functional.interpolate(a.to(device), **kwargs).cpu()
    print(f"PyTorch row 0: {[round(v, 4) for v in expected[0, 0, 0].tolist()]}")
    print(f"XLA row 0:     {[round(v, 4) for v in got[0, 0, 0].tolist()]}")
    if got.shape != expected.shape:
        print(f"ERROR: shapes differ ({tuple(got.shape)} vs {tuple(expected.shape)}), not the bug under test")
        return ERROR
    diff = (got - expected).abs().max().item()
    if diff <= 1e-4:
        print("not reproduced: bilinear upsampling on XLA matches PyTorch")
        return NOT_REPRODUCED
    print(
        "XLAKB-REPRODUCED: bilinear upsampling with a non-integral scale_factor and align_corners=False "
        f"differs from PyTorch on XLA (max abs diff {diff:.4f})"
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
