"""torch.compile(backend="openxla_eval") of a function that updates a view of its input in place
fails with `Check failed: HasValue()` / "buffer with shape ... is null".

Upstream: https://github.com/pytorch/xla/issues/5179 (reported as a hang with the 2.0 wheels).

The compiled function is `b = a.t(); b.mul_(2.0); return b`. Before compiling, the Dynamo bridge
runs the graph once on the real inputs to find ops that need a CPU fallback, then tries to undo
the in-place update on the inputs and drops every pending IR on the device. The update made
through the view is not undone, so the input keeps a placeholder buffer, and the sync at the top
of `extract_graph_helper` fails on it.

`--workaround` writes the update out of place (`a.t() * 2.0`) and must report "not reproduced".

Run: PJRT_DEVICE=CPU python reproducers/dynamo-openxla-eval-inplace-on-input-view-buffer-null.py
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
    device = xm.xla_device()

    def in_place(a):
        b = a.t()
        b.mul_(2.0)
        return b

    def out_of_place(a):
        return a.t() * 2.0

    fn = out_of_place if workaround else in_place
    try:
        compiled = torch.compile(fn, backend="openxla_eval")
    except Exception as err:  # the backend name is missing on this release
        print(f"untestable: backend openxla_eval unavailable: {err}")
        return UNTESTABLE

    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    try:
        out = compiled(x.to(device)).cpu()
    except RuntimeError as err:
        text = str(err)
        if "HasValue()" in text or "is null" in text:
            traceback.print_exc()
            first = text.strip().splitlines()[0]
            print(f"XLAKB-REPRODUCED: openxla_eval in-place update of an input view failed: {first}")
            return REPRODUCED
        raise
    expected = x.t() * 2.0
    if not torch.allclose(out, expected):
        print(f"error: compiled result {out.tolist()} differs from eager {expected.tolist()}")
        return 2
    print(f"not reproduced ({'out of place' if workaround else 'in place'}): {out.tolist()}")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:] == ["--workaround"]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
