"""Run one call in many threads at once, as probes of one process (-j N) do, and collect what they raise."""

from __future__ import annotations

import threading
from collections.abc import Callable


def at_once(call: Callable[[], object], n: int = 8) -> list[BaseException]:
    """Start ``n`` threads calling ``call`` together (a barrier releases them at the same moment); the
    exceptions they raised."""
    errors: list[BaseException] = []
    barrier = threading.Barrier(n)

    def one() -> None:
        barrier.wait()
        try:
            call()
        except Exception as err:  # noqa: BLE001 - the caller asserts there is none
            errors.append(err)

    threads = [threading.Thread(target=one) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
