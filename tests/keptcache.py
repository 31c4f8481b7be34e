"""The one place where test runs keep downloads a later run reuses on purpose."""

from __future__ import annotations

import os
from pathlib import Path


def kept_test_cache() -> Path:
    """The real-wheel suites' uv package cache (``uv/``) and the Docker runner's wheelhouse
    (``wheelhouse/``): ``$XLAKB_TEST_CACHE``, default ``~/.cache/xlakb-tests``; never the user's
    caches. ``rm -rf`` it to start from nothing."""
    explicit = os.environ.get("XLAKB_TEST_CACHE")
    return Path(explicit) if explicit else Path.home() / ".cache" / "xlakb-tests"
