"""torch.compile(backend="openxla") of a function that updates in place two inputs that are views of
one tensor (`key_cache, value_cache = kv_cache`) writes to the wrong place (2.5) or fails while
compiling (2.1: IndexError in `create_synthetic_base_metadata`; 2.9: `assert synthetic_base_info is
not None`).

Upstream: https://github.com/pytorch/xla/issues/8832 (open).

XLA tensors report storage offset 0 for every view, so AOTAutograd's overlap check
(`compute_overlapping_inputs`) takes the two non-overlapping halves `kv_cache[0]` and `kv_cache[1]`
for overlapping inputs and routes them through its synthetic-base path. With torch 2.5 the value
rows then land in the key half and the value half stays zero; with torch 2.1 and 2.9 compilation
stops with an error in that path.

`--workaround` gives the function two separate cache tensors instead of two views of one tensor
and must report "not reproduced".

Run: PJRT_DEVICE=CPU python reproducers/dynamo-aliased-input-views-mutation-wrong-result.py
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

    def write_to_kv_cache(key, value, key_cache, value_cache, slots):
        key_cache.flatten(0, 2).index_copy_(0, slots, key.flatten(0, 2))
        value_cache.flatten(0, 2).index_copy_(0, slots, value.flatten(0, 2))

    def run(fn):
        if workaround:
            key_cache = torch.zeros((8, 16, 4, 64), device=device)
            value_cache = torch.zeros((8, 16, 4, 64), device=device)
        else:
            kv_cache = torch.zeros((2, 8, 16, 4, 64), device=device)
            key_cache, value_cache = kv_cache
        torch.manual_seed(0)
        kv = torch.empty(1, 3, 2, 4, 64).uniform_(-1, 1).to(device)
        key, value = kv.unbind(dim=2)
        fn(key, value, key_cache, value_cache, torch.arange(12, device=device))
        xm.mark_step()
        return key_cache.cpu(), value_cache.cpu()

    eager = run(write_to_kv_cache)
    compiled_fn = torch.compile(write_to_kv_cache, backend="openxla")
    try:
        compiled = run(compiled_fn)
    except Exception as err:  # torch._dynamo wraps it in BackendCompilerFailed
        tb = traceback.format_exc()
        if "synthetic_base" in tb:
            traceback.print_exc()
            errors = [ln for ln in tb.splitlines() if ln[:1].isalpha() and ("Error" in ln.split(":")[0])]
            last = (errors[-1] if errors else type(err).__name__)[:200]
            print(
                "XLAKB-REPRODUCED: in-place update of two views of one tensor under "
                f"torch.compile(backend='openxla') failed in AOTAutograd's synthetic-base path: {last}"
            )
            return REPRODUCED
        raise
    key_ok = torch.equal(compiled[0], eager[0])
    value_ok = torch.equal(compiled[1], eager[1])
    print(f"key cache as eager: {key_ok}, value cache as eager: {value_ok}, value cache all zero: {bool((compiled[1] == 0).all())}")
    if not (key_ok and value_ok):
        print("XLAKB-REPRODUCED: in-place update of two views of one tensor under torch.compile(backend='openxla') gave a wrong result")
        return REPRODUCED
    print(f"not reproduced ({'separate caches' if workaround else 'views of one cache'})")
    return NOT_REPRODUCED


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:] == ["--workaround"]))
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        sys.exit(2)  # an unexpected crash is an error, never "reproduced"
