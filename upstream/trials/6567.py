# Issue 6567: exporting a pt2e (XNNPACK symmetric) quantized conv model to StableHLO failed: the int8 weight
# constant followed by a dequantize gave "'mhlo.uniform_dequantize' op operand #0 must be tensor of ...
# uniform quantized ... values, but got 'tensor<32x3x3x3xi8>'".  https://github.com/pytorch/xla/issues/6567
import torch, torch_xla
import torch_xla.core.xla_model as xm
from torch_xla import stablehlo

try:
    from torch.ao.quantization.quantize_pt2e import prepare_pt2e, convert_pt2e
    from torch.ao.quantization.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
except ImportError as e:
    print("UNTESTABLE: pt2e XNNPACK quantizer not importable:", e); raise SystemExit

m = torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3), torch.nn.ReLU()).eval()
args = (torch.randn(1, 3, 16, 16),)
try:
    try:
        gm = torch.export.export_for_training(m, args).module()
    except AttributeError:
        from torch._export import capture_pre_autograd_graph
        gm = capture_pre_autograd_graph(m, args)
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    gm = prepare_pt2e(gm, q)
    gm(*args)
    gm = convert_pt2e(gm)
    ep = torch.export.export(gm, args)
    txt = stablehlo.exported_program_to_stablehlo(ep).get_stablehlo_text("forward")
    print("exported; uniform_dequantize present:", "uniform_dequantize" in txt)
except Exception as e:
    print("ERROR:", type(e).__name__, str(e)[:500])
