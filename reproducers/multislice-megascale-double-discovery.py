"""Proxy reproducer: multi-slice MegaScale discovery runs twice while tracing flash attention.

Upstream: pytorch/xla issue 8812, fixed by PR 8609 (first time) and PR 8819 (after the
regression brought in by PR 8654).

Background. On a multi-slice TPU job, torch_xla's own PJRT client performs the MegaScale
(DCN) device discovery. torch_xla traces Pallas kernels such as flash attention with JAX
(`jax.jit(kernel).lower(...)` in `trace_pallas`). Lowering makes JAX create its own TPU
backend; libtpu then runs MegaScale discovery a second time, which hangs or fails, unless
the environment variable SKIP_MEGASCALE_PJRT_CLIENT=true is set at that moment.
PR 8609 set the variable around the JAX lowering. PR 8654 moved it into a
`requires_jax` decorator whose context manager *removed* the variable on exit; since the
decorated `trace_pallas` calls the decorated `to_jax_shape_dtype_struct`, the inner exit
removed the variable before `jax.jit(...).lower(...)` ran. PR 8819 made the context
manager restore the previous value.

What this proxy does (CPU only, no TPU, no real JAX needed):
  * it replaces the `jax` package by an in-process stand-in that records, at every call
    which would make real JAX initialise a backend (jit(...).lower, jax.devices, ...),
    the value of SKIP_MEGASCALE_PJRT_CLIENT, and models libtpu: the first backend
    initialisation without SKIP_MEGASCALE_PJRT_CLIENT=true is a second MegaScale discovery;
  * it then traces torch_xla's real flash attention (torch_xla.experimental.custom_kernel,
    SPMD with a 4-device mesh and a partition_spec) on lazy XLA CPU tensors, without
    executing the TPU custom call.
It cannot check the real libtpu/MegaScale behaviour on a multi-slice TPU job.

Exit codes: 0 not reproduced, 1 reproduced, 125 untestable in this release, 2 error.
"""
import os
import sys
import time
import traceback
import types
import importlib.abc
import importlib.machinery

ENV = "SKIP_MEGASCALE_PJRT_CLIENT"

# --------------------------------------------------------------------------------------
# Stand-in for the `jax` package.
# --------------------------------------------------------------------------------------
_events = []  # (what, value of SKIP_MEGASCALE_PJRT_CLIENT)
_backend = {"initialised": False, "env": None, "via": None}


def _backend_touch(what):
  value = os.environ.get(ENV)
  _events.append((what, value))
  if not _backend["initialised"]:
    # Real JAX creates its PJRT clients once, on first need; libtpu reads the variable then.
    _backend.update(initialised=True, env=value, via=what)


class _Anything:
  """Permissive placeholder for any jax attribute the proxy does not model."""

  def __init__(self, name):
    self._name = name

  def __call__(self, *args, **kwargs):
    return _Anything(self._name + "()")

  def __getattr__(self, name):
    if name.startswith("__"):
      raise AttributeError(name)
    return _Anything(self._name + "." + name)

  def __repr__(self):
    return "<jax-stub %s>" % self._name

  def __hash__(self):
    return hash(self._name)

  def __eq__(self, other):
    return isinstance(other, _Anything) and other._name == self._name


class _StubModule(types.ModuleType):

  def __getattr__(self, name):
    if name.startswith("__"):
      raise AttributeError(name)
    value = _Anything(self.__name__ + "." + name)
    setattr(self, name, value)
    return value


class _ShapeDtypeStruct:

  def __init__(self, shape, dtype, *args, **kwargs):
    self.shape = tuple(shape)
    self.dtype = dtype

  def __hash__(self):
    return hash((self.shape, str(self.dtype)))

  def __eq__(self, other):
    return (isinstance(other, _ShapeDtypeStruct) and self.shape == other.shape and
            str(self.dtype) == str(other.dtype))

  def __repr__(self):
    return "ShapeDtypeStruct(%s, %s)" % (self.shape, self.dtype)


def _fake_compiler_ir():
  # Just the structure torch_xla's _extract_backend_config walks:
  # module.body.operations[i].body.blocks[0].operations[j].{name, backend_config.value}
  ns = types.SimpleNamespace
  call = ns(
      name="stablehlo.custom_call",
      backend_config=ns(value='{"custom_call_config": {"body": "cHJveHk="}}'))
  func = ns(body=ns(blocks=[ns(operations=[call])]))
  return ns(body=ns(operations=[func]), operation=ns(get_asm=lambda *a, **k: ""))


class _Lowered:

  def compiler_ir(self, *args, **kwargs):
    return _fake_compiler_ir()

  def as_text(self, *args, **kwargs):
    return ""


class _Jitted:

  def __init__(self, fun):
    self._fun = fun

  def lower(self, *args, **kwargs):
    _backend_touch("jax.jit(...).lower")
    return _Lowered()

  def __call__(self, *args, **kwargs):
    _backend_touch("jax.jit(...)()")
    raise RuntimeError("jax stub: executing JAX code is outside this proxy")


class _Config:
  jax_default_matmul_precision = None
  jax_enable_x64 = False

  def update(self, *args, **kwargs):
    pass

  def read(self, name):
    return getattr(self, name, None)

  def __getattr__(self, name):
    if name.startswith("__"):
      raise AttributeError(name)
    return None


def _populate(module):
  name = module.__name__
  if name == "jax":
    module.ShapeDtypeStruct = _ShapeDtypeStruct
    module.jit = lambda fun=None, *a, **k: _Jitted(fun)
    module.config = _Config()
    module.__version__ = "0.0.0+xlakb.proxy"
    for fn in ("devices", "local_devices", "device_count", "local_device_count",
               "process_index", "process_count", "default_backend", "device_put",
               "make_mesh"):

      def touch(*a, _fn=fn, **k):
        _backend_touch("jax." + _fn)
        if _fn in ("devices", "local_devices"):
          return []
        if _fn in ("device_count", "local_device_count", "process_count"):
          return 1
        if _fn == "process_index":
          return 0
        return _Anything("jax." + _fn + "()")

      setattr(module, fn, touch)
  elif name == "jax.numpy":
    for dt in ("float32", "float64", "float16", "bfloat16", "int32", "int64",
               "int16", "int8", "uint8", "bool_", "float8_e4m3fn", "float8_e5m2",
               "uint32", "uint16", "complex64"):
      setattr(module, dt, "jnp." + dt)
  elif name in ("jax.lib.xla_bridge", "jax._src.xla_bridge", "jax.extend.backend"):
    for fn in ("get_backend", "backends", "default_backend"):
      setattr(module, fn,
              lambda *a, _fn=fn, _n=name, **k: (_backend_touch(_n + "." + _fn),
                                                _Anything(_fn))[1])


class _JaxStubFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):

  def find_spec(self, fullname, path=None, target=None):
    if fullname == "torchax" or fullname.startswith("torchax."):
      # torchax (installed with torch_xla >= 2.8) is built on real JAX and cannot run on
      # the stand-in; hide it, as on a machine without JAX (torch_xla then skips it).
      raise ModuleNotFoundError("No module named %r (hidden by the jax stand-in)" % fullname,
                                name=fullname)
    if fullname in ("jax", "jaxlib") or fullname.startswith(("jax.", "jaxlib.")):
      return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
    return None

  def create_module(self, spec):
    module = _StubModule(spec.name)
    module.__path__ = []
    return module

  def exec_module(self, module):
    _populate(module)


def _install_jax_stub():
  for key in [k for k in sys.modules if k in ("jax", "jaxlib", "torchax") or
              k.startswith(("jax.", "jaxlib.", "torchax."))]:
    del sys.modules[key]
  sys.meta_path.insert(0, _JaxStubFinder())


# --------------------------------------------------------------------------------------


def main():
  t0 = time.time()
  os.environ.pop(ENV, None)  # a pre-set value would hide the bug
  import numpy as np
  import torch
  import torch_xla
  import torch_xla.core.xla_model as xm
  import torch_xla.runtime as xr
  try:
    import torch_xla.distributed.spmd as xs
    from torch_xla.experimental import custom_kernel
  except ImportError as e:
    print("UNTESTABLE: SPMD / Pallas custom kernels missing in this release: %s" % e)
    return 125
  if not hasattr(custom_kernel, "flash_attention") or not hasattr(
      custom_kernel, "trace_pallas"):
    print("UNTESTABLE: torch_xla.experimental.custom_kernel has no "
          "flash_attention/trace_pallas in this release")
    return 125
  try:
    import inspect
    params = inspect.signature(custom_kernel.flash_attention).parameters
  except (TypeError, ValueError):
    params = {}
  if "partition_spec" not in params or "mesh" not in params:
    print("UNTESTABLE: flash_attention has no partition_spec/mesh (SPMD) support "
          "in this release")
    return 125

  print("torch_xla", getattr(torch_xla, "__version__", "?"), "torch", torch.__version__,
        "custom_kernel from", custom_kernel.__file__)
  xr.use_spmd()
  n = xr.global_runtime_device_count()
  device = xm.xla_device()  # torch_xla's own runtime client: discovery no. 1
  mesh = xs.Mesh(np.arange(n), (n, 1, 1, 1), ("data", "head", "seq", "dim"))
  if hasattr(xs, "set_global_mesh"):
    xs.set_global_mesh(mesh)

  _install_jax_stub()

  torch.manual_seed(0)
  q = torch.randn(n, 2, 128, 128).to(device)
  k = torch.randn(n, 2, 128, 128).to(device)
  v = torch.randn(n, 2, 128, 128).to(device)
  # Trace only (lazy tensors); the TPU custom call is never compiled or executed on CPU.
  out = custom_kernel.flash_attention(
      q, k, v, causal=False, partition_spec=("data", None, None, None), mesh=mesh)
  if not isinstance(out, torch.Tensor):
    out = out[0]
  assert tuple(out.shape) == tuple(q.shape), out.shape

  for what, value in _events:
    print("JAX backend access during flash attention tracing: %s with %s=%r" %
          (what, ENV, value))
  print("elapsed %.1fs" % (time.time() - t0))
  if not _backend["initialised"]:
    print("NOT REPRODUCED: flash attention tracing never asked JAX for a backend")
    return 0
  if _backend["env"] != "true":
    print("REPRODUCED: MegaScale device discovery would run a second time: JAX backend "
          "initialised by %s while %s was %r (not 'true') during flash attention "
          "tracing" % (_backend["via"], ENV, _backend["env"]))
    return 1
  print("NOT REPRODUCED: JAX backend initialised by %s with %s='true'; libtpu skips the "
        "second MegaScale client" % (_backend["via"], ENV))
  return 0


if __name__ == "__main__":
  try:
    code = main()
  except SystemExit:
    raise
  except BaseException:
    traceback.print_exc()
    print("ERROR: unexpected exception (not the bug under test)")
    code = 2
  sys.stdout.flush()
  sys.exit(code)
