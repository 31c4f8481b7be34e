# The user wrote key/value rows into a KV cache (views key_cache, value_cache = kv_cache unbound
# along dim 0) with index_copy_ inside torch.compile(backend="openxla"), after marking the caches
# as buffer donors with torch.ops.xla.dynamo_set_buffer_donor_, and the cache contents differed
# from the same function run eagerly. The stored excerpt cuts the script after slot_mapping; the
# rest (12 slots, compare compiled against eager) is filled in here.
# https://github.com/pytorch/xla/issues/8832
import sys

import torch
import torch_xla  # noqa: F401
import torch_xla.core.xla_model as xm

try:
    import torch_xla.experimental.custom_kernel  # noqa: F401
except ImportError:
    pass
# --no-donor leaves the donor calls out (they are not needed for the bug, and 2.1.0 lacks the op)
donor = "--no-donor" not in sys.argv
if donor and not hasattr(torch.ops.xla, "dynamo_set_buffer_donor_"):
    print("untestable: no torch.ops.xla.dynamo_set_buffer_donor_")
    raise SystemExit(125)


def write_to_kv_cache(key, value, key_cache, value_cache, slot_mapping):
    if donor:
        torch.ops.xla.dynamo_set_buffer_donor_(key_cache, True)
        torch.ops.xla.dynamo_set_buffer_donor_(value_cache, True)
    key = key.flatten(0, 2)
    value = value.flatten(0, 2)
    key_cache = key_cache.flatten(0, 2)
    value_cache = value_cache.flatten(0, 2)
    key_cache.index_copy_(0, slot_mapping, key)
    value_cache.index_copy_(0, slot_mapping, value)


def run(fn):
    device = xm.xla_device()
    torch.manual_seed(0)
    kv_cache = torch.zeros((2, 8, 16, 4, 64), dtype=torch.float, device=device)
    key_cache, value_cache = kv_cache
    kv = torch.empty(1, 3, 2, 4, 64, dtype=torch.float).uniform_(-1, 1).to(device)
    key, value = kv.unbind(dim=2)
    slot_mapping = torch.arange(12, device=device)
    fn(key, value, key_cache, value_cache, slot_mapping)
    xm.mark_step()
    return kv_cache.cpu()


eager = run(write_to_kv_cache)
compiled = run(torch.compile(write_to_kv_cache, backend="openxla"))
print("eager nonzero:", int((eager != 0).sum()), "compiled nonzero:", int((compiled != 0).sum()))
if not torch.equal(eager, compiled):
    print("BUG: compiled KV cache differs from eager")
    raise SystemExit(1)
print("OK")
