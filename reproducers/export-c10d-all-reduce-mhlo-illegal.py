"""Exporting a module that calls torch.distributed.all_reduce to StableHLO fails to legalize mhlo.all_reduce.

Upstream: pytorch/xla#8854; fixed by the OpenXLA pin update pytorch/xla#8908 (in 2.8.0).

`torch.export` records `dist.all_reduce` as `_c10d_functional.all_reduce`. torch_xla lowers it
(`BuildAllReduce`) to one HLO all-reduce over a tuple: the tensor and a pseudo-token. The
MHLO -> StableHLO legalization of the OpenXLA that torch_xla carried up to 2.7 refused
multi-operand all_reduce, so `exported_program_to_stablehlo` raised
"MHLO -> StableHLO conversion failed" after MLIR printed
"failed to legalize operation 'mhlo.all_reduce' that was explicitly marked illegal".

Run: PJRT_DEVICE=CPU python reproducers/export-c10d-all-reduce-mhlo-illegal.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced, 125 = untestable, else error.
"""

import os
import socket
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def main() -> int:
    try:
        import torch
        import torch.distributed as dist
        from torch_xla.stablehlo import exported_program_to_stablehlo
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    os.environ.setdefault("MASTER_ADDR", "localhost")
    os.environ.setdefault("MASTER_PORT", str(free_port()))
    dist.init_process_group("gloo", world_size=1, rank=0)
    try:

        class SumAcrossRanks(torch.nn.Module):
            def forward(self, x):
                dist.all_reduce(x, op=dist.ReduceOp.SUM)
                return x

        try:
            exported = torch.export.export(SumAcrossRanks(), (torch.rand(4, 3),))
        except Exception as err:  # torch.export of this release cannot trace the collective
            first = (str(err).strip().splitlines() or [""])[0][:200]
            print(f"untestable: torch.export cannot trace dist.all_reduce here: {type(err).__name__}: {first}")
            return UNTESTABLE
        try:
            text = exported_program_to_stablehlo(exported).get_stablehlo_text()
        except RuntimeError as err:
            msg = str(err)
            if "MHLO -> StableHLO conversion failed" in msg and "all-reduce" in msg:
                print(msg.splitlines()[0])
                print(
                    "XLAKB-REPRODUCED: exported_program_to_stablehlo: MHLO -> StableHLO "
                    "conversion failed on the all-reduce of dist.all_reduce"
                )
                return REPRODUCED
            raise
        if "stablehlo.all_reduce" not in text:
            print(f"error: converted, but no stablehlo.all_reduce in:\n{text}")
            return 2
        print("not reproduced: the StableHLO module holds a stablehlo.all_reduce")
        return NOT_REPRODUCED
    finally:
        dist.destroy_process_group()


if __name__ == "__main__":
    try:
        sys.exit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
