"""The interface's words in both languages (``data/ui.yaml``, shared by the CLI, triage and the site), read
once per process with libyaml's loader."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def ui() -> dict:
    import yaml

    text = (resources.files("xlakb") / "data" / "ui.yaml").read_text("utf-8")
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
