"""A pt2e-quantized conv (default convert_pt2e) cannot be exported to StableHLO: uniform_dequantize gets a plain i8 tensor.

Upstream: pytorch/xla#6567 (closed upstream; still failing on 2.9.0).

`convert_pt2e` folds the weight's quantize op by default (`fold_quantize=True`): the weight
becomes an int8 constant read by `dequantize_per_tensor`. torch_xla lowers every dequantize to
a custom call that the HLO -> MHLO importer turns into `mhlo.uniform_dequantize`, whose operand
must have a quantized type; only the output of torch_xla's own quantize custom call has one, so
the folded int8 weight fails the op's verifier and the conversion check raises.

`--workaround` converts with `convert_pt2e(..., fold_quantize=False)` and must report
"not reproduced".

Run: PJRT_DEVICE=CPU python reproducers/export-pt2e-folded-int8-weight-uniform-dequantize.py
Exit codes (as git bisect): 0 = not reproduced, 1 = reproduced, 125 = untestable, else error.
"""

import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE = 0, 1, 125


def main(workaround: bool) -> int:
    try:
        import torch
        from torch.ao.quantization.quantize_pt2e import convert_pt2e, prepare_pt2e
        from torch.ao.quantization.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer,
            get_symmetric_quantization_config,
        )
        from torch_xla import stablehlo
    except ImportError as err:
        print(f"untestable: {err}")
        return UNTESTABLE

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.ReLU()).eval()
    args = (torch.randn(1, 3, 8, 8),)
    if hasattr(torch.export, "export_for_training"):
        captured = torch.export.export_for_training(model, args).module()
    else:  # torch 2.1 to 2.4
        from torch._export import capture_pre_autograd_graph

        captured = capture_pre_autograd_graph(model, args)
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    prepared = prepare_pt2e(captured, quantizer)
    prepared(*args)  # calibrate
    if workaround:
        try:
            converted = convert_pt2e(prepared, fold_quantize=False)
        except TypeError:  # torch 2.1: no fold_quantize, and nothing is folded
            converted = convert_pt2e(prepared)
    else:
        converted = convert_pt2e(prepared)  # the default folds the weight to int8
    exported = torch.export.export(converted, args)
    try:
        text = stablehlo.exported_program_to_stablehlo(exported).get_stablehlo_text("forward")
    except RuntimeError as err:
        msg = str(err)
        if "HLO -> MHLO conversion failed" in msg and "uniform_dequantize" in msg:
            print(msg.splitlines()[0])
            print(
                "XLAKB-REPRODUCED: exported_program_to_stablehlo: HLO -> MHLO conversion "
                "failed on mhlo.uniform_dequantize of the folded int8 weight"
            )
            return REPRODUCED
        raise
    print(f"INFO: uniform_dequantize ops in the module: {text.count('uniform_dequantize')}")
    print("not reproduced: the quantized conv was exported to StableHLO")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:] == ["--workaround"]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
