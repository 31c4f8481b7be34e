"""`xlakb site build|serve`: MkDocs with the repository's mkdocs.yml, errors as XlakbError."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from ..errors import XlakbError
from ..progress import NullProgress, Progress

DEFAULT_OUT = Path("build") / "site"


class _Collect(logging.Handler):
    """Keeps MkDocs warnings and errors so a failed build can name them."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage().splitlines()[0] if record.getMessage() else "")


def _failure(err: Exception, messages: list[str], strict: bool) -> str:
    """One line: the first problem MkDocs reported, how many more, or the exception itself."""
    seen: list[str] = []
    for m in messages:
        if m and m not in seen:
            seen.append(m)
    if not seen:
        text = str(err).strip()
        return f"site build failed: {text.splitlines()[0] if text else type(err).__name__}"
    more = f" (and {len(seen) - 1} more)" if len(seen) > 1 else ""
    mode = " in strict mode" if strict and "strict mode" in str(err) else ""
    return f"site build failed{mode}: {seen[0][:500]}{more}"


def _quiet_banners() -> None:
    # Material prints an end-of-life banner to stderr on import unless this is set;
    # the library never prints.
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")


def _config_file(root: Path) -> Path:
    path = Path(root) / "mkdocs.yml"
    if not path.is_file():
        raise XlakbError(f"{path}: no mkdocs.yml here", hint="run from the xlakb checkout or pass --root")
    return path


def _imports() -> None:
    missing = []
    for name in ("mkdocs", "material", "mkdocs_static_i18n", "jieba"):
        try:
            __import__(name)
        except ImportError:
            missing.append(name)
    if missing:
        raise XlakbError(f"the site needs {', '.join(missing)}", hint="pip install -e '.[site]'")


def build_site(root: Path, out_dir: Path | None = None, strict: bool = True, progress: Progress | None = None) -> Path:
    """Build the site of the checkout at ``root`` into ``out_dir`` (default ``root/build/site``)."""
    progress = progress or NullProgress()
    root = Path(root).resolve()
    config_file = _config_file(root)
    out = Path(out_dir).resolve() if out_dir else root / DEFAULT_OUT
    if out == (root / "site").resolve():
        raise XlakbError(f"{out}: that is the page source folder", hint="build somewhere else, e.g. build/site")
    _quiet_banners()
    _imports()
    from mkdocs.commands.build import build
    from mkdocs.config import load_config
    from mkdocs.exceptions import MkDocsException

    progress.step(0, 2, f"loading {config_file.name}")
    collect = _Collect()
    logger = logging.getLogger("mkdocs")
    logger.addHandler(collect)
    try:
        config = load_config(config_file=str(config_file), site_dir=str(out), strict=strict)
        progress.step(1, 2, f"building the site into {out}")
        build(config)
    except MkDocsException as err:
        raise XlakbError(_failure(err, collect.messages, strict)) from None
    except OSError as err:
        raise XlakbError(f"site build failed: {err}") from None
    finally:
        logger.removeHandler(collect)
    progress.step(2, 2, f"built {out}")
    return out


def serve_site(root: Path, host: str = "127.0.0.1", port: int = 8000, progress: Progress | None = None) -> None:
    """Serve the site with live reload until interrupted (also rebuilds on record changes)."""
    progress = progress or NullProgress()
    root = Path(root).resolve()
    config_file = _config_file(root)
    _quiet_banners()
    _imports()
    from mkdocs.commands.serve import serve
    from mkdocs.exceptions import MkDocsException

    progress.info(f"serving on http://{host}:{port}/ (Ctrl-C to stop)")
    try:
        serve(config_file=str(config_file), dev_addr=f"{host}:{port}", strict=False, livereload=True)
    except MkDocsException as err:
        raise XlakbError(f"site serve failed: {str(err).strip().splitlines()[0] if str(err).strip() else err}") from None
    except OSError as err:
        raise XlakbError(f"site serve failed on {host}:{port}: {err.strerror or err}", hint="pick another --port") from None
