"""Reproducer for issues/argmax-argmin-empty-tensor-returns-zero.yaml.

argmax()/argmin() of a tensor with no elements has no answer; PyTorch raises
IndexError ("Expected reduction dim to be specified for input.numel() == 0").
On an XLA device the same calls return index 0 as if the tensor had an element.
The reference behaviour is taken from the CPU run in the same process.

Run: PJRT_DEVICE=CPU python reproducers/argmax-argmin-empty-tensor-returns-zero.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced (and the output
matches the record's reproducer.signatures), 125 = cannot be tested on this
release, anything else = error.
"""

# Report: https://github.com/pytorch/xla/issues/887 (torch.max of an empty tensor
# returned a value instead of raising; max/min now raise, argmax/argmin still do not).

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main() -> int:
    try:
        import torch
        import torch_xla.core.xla_model as xm
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    device = xm.xla_device()
    silent = []
    for name in ("argmax", "argmin"):
        try:
            getattr(torch.empty(0), name)()
        except (IndexError, RuntimeError) as err:
            print(f"cpu {name}() of an empty tensor raises: {str(err).splitlines()[0]}")
        else:
            print(f"untestable: this torch returns a value for {name}() of an empty tensor on CPU")
            return UNTESTABLE
        try:
            got = getattr(torch.empty(0, device=device), name)().cpu()
        except (IndexError, RuntimeError) as err:
            print(f"xla {name}() of an empty tensor raises: {str(err).splitlines()[0]}")
            continue
        print(f"xla {name}() of an empty tensor returns {got.item()} (shape {tuple(got.shape)})")
        silent.append(f"{name}()={got.item()}")
    if silent:
        print(
            "XLAKB-REPRODUCED: argmax/argmin of an empty XLA tensor return an index "
            f"instead of raising: {', '.join(silent)}"
        )
        return REPRODUCED
    print("not reproduced: argmax/argmin of an empty XLA tensor raise as on CPU")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
