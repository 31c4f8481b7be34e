"""`torch.view_as_real` on XLA keeps the complex XLA type (and view_as_complex the real one).

Upstream: pytorch/xla#8370 ("Fix XLA type of the view_as_real") and
pytorch/xla#8382 ("Fix incorrect xla type for view_as_complex"); no separate
issues. The IR nodes built for view_as_real / view_as_complex copied the
input's XLA shape and only added/removed the trailing dimension of size 2, so
view_as_real of a complex64 tensor was typed c64[4,2] inside torch_xla (the
Python dtype still said float32), and view_as_complex of float32[4, 2] was
typed f32[4]. The reproducer reads the XLA type with the debug API
(torch_xla._XLAC._get_xla_tensor_debug_info) and prints the IR, then runs a
few ops on the result to show what the wrong type does downstream.

Run with: PJRT_DEVICE=CPU
Exit codes: 0 not reproduced, 1 reproduced, 125 untestable here, 2 error.
"""
import re
import sys
import traceback

NOT_REPRODUCED, REPRODUCED, UNTESTABLE, ERROR = 0, 1, 125, 2


def xla_type(torch_xla, t):
  info = torch_xla._XLAC._get_xla_tensor_debug_info(t)
  m = re.search(r"XLA ?Shape: (\S+)", info) or re.search(r"\b([a-z]+\d+\[[\d,]*\])", info)
  return (m.group(1) if m else "?"), info


def main() -> int:
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm

  if not hasattr(torch_xla._XLAC, "_get_xla_tensor_debug_info"):
    print("UNTESTABLE: torch_xla._XLAC._get_xla_tensor_debug_info is missing")
    return UNTESTABLE
  device = xm.xla_device()
  torch.manual_seed(0)
  wrong = []

  z = torch.randn(4, dtype=torch.complex64)
  real = torch.view_as_real(z.to(device))
  rtype, info = xla_type(torch_xla, real)
  print(f"INFO: view_as_real(complex64[4]): dtype {real.dtype}, XLA type {rtype}")
  print("INFO: debug info:\n" + info.strip())
  print("INFO: IR:\n" + torch_xla._XLAC._get_xla_tensors_text([real]).strip())
  if "f32[4,2]" not in info:
    wrong.append(f"view_as_real(complex64[4]) has XLA type {rtype}, expected f32[4,2]")

  f = torch.randn(4, 2)
  cplx = torch.view_as_complex(f.to(device))
  ctype, cinfo = xla_type(torch_xla, cplx)
  print(f"INFO: view_as_complex(float32[4, 2]): dtype {cplx.dtype}, XLA type {ctype}")
  if "c64[4]" not in cinfo:
    wrong.append(f"view_as_complex(float32[4, 2]) has XLA type {ctype}, expected c64[4]")

  # Downstream effects, only reported.
  for name, fn in [("(real * 2).cpu()", lambda r: (r * 2).cpu()),
                   ("real.max().cpu()", lambda r: r.max().cpu()),
                   ("torch.relu(real).cpu()", lambda r: torch.relu(r).cpu())]:
    try:
      out = fn(torch.view_as_real(z.to(device)))
    except RuntimeError as e:
      traceback.print_exc()
      print(f"INFO: {name} raised {type(e).__name__}: {str(e).splitlines()[0][:200]}")
      continue
    ref = fn(torch.view_as_real(z))
    same = out.dtype == ref.dtype and torch.allclose(out, ref)
    print(f"INFO: {name} -> dtype {out.dtype} (CPU {ref.dtype}), same as CPU: {same}")

  # Candidate workarounds, only reported: the XLA type of each.
  zd = z.to(device)
  for name, fn in [("torch.stack([z.real, z.imag], -1)",
                    lambda: torch.stack([zd.real, zd.imag], dim=-1)),
                   ("torch.view_as_real(z) * 1", lambda: torch.view_as_real(zd) * 1),
                   ("torch.view_as_real(z).double().float()",
                    lambda: torch.view_as_real(zd).double().float()),
                   ("torch.view_as_real(z.cpu()).to(device)",
                    lambda: torch.view_as_real(z).to(device))]:
    try:
      t = fn()
      # No relu here: on 2.1/2.2 relu of a complex-typed result aborts the process.
      ok = torch.equal(t.cpu(), torch.view_as_real(z))
      print(f"INFO: candidate {name}: XLA type {xla_type(torch_xla, t)[0]}, equals CPU {ok}")
    except RuntimeError as e:
      print(f"INFO: candidate {name} raised {str(e).splitlines()[0][:150]}")

  if wrong:
    for w in wrong:
      print(f"REPRODUCED: {w}")
    return REPRODUCED
  print("NOT REPRODUCED: view_as_real / view_as_complex results carry the right XLA types")
  return NOT_REPRODUCED


if __name__ == "__main__":
  try:
    code = main()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = ERROR
  sys.stdout.flush()
  sys.exit(code)
