"""MkDocs hooks (named by path in mkdocs.yml): generate the record pages at build time.

The repository root is the folder of ``mkdocs.yml``.  Records are read from
``issues/*.yaml``, the reproducers from ``reproducer.path`` and the measured
results from ``bisect/<id>/`` (see :mod:`xlakb.sitegen.data`).  Nothing is
written to ``site/``: pages exist only in memory and in the build output.

mkdocs-static-i18n builds the site once per language (``en`` at ``/``, ``zh``
at ``/zh/``).  Its ``on_files`` only knows files in ``docs_dir``, so our
``on_files`` runs after it (lower priority) and adds the record pages of the
language being built, with the i18n attributes it uses for the language
switcher (``alternates``), so switching language keeps the reader on the record.

Search: Material indexes each page in ``on_page_context``; what is no text to
search for (the home table, the reproducer's source, the matrix table) is put in
after that, in place of ``<!-- xlakb:... -->`` markers.  After the build the index
of all languages is split into one per language (``search/`` and ``zh/search/``)
and the Chinese pages are pointed at theirs, so a reader on the Chinese pages
finds the Chinese records first.
"""

from __future__ import annotations

import gzip
import html
import json
import logging
import os
import re
import shutil
import sys
from pathlib import Path
from urllib.parse import urlsplit

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files
from mkdocs.utils import get_relative_url

try:  # mkdocs imports this file by path; make the package importable from a checkout too
    import xlakb  # noqa: F401
except ImportError:  # pragma: no cover - only without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from xlakb.errors import XlakbError  # noqa: E402
from xlakb.sitegen import data as _data  # noqa: E402
from xlakb.sitegen import render  # noqa: E402

RECORDS_MARKER = "<!-- xlakb:records -->"
TRIAGE_DATA = "assets/triage.json"  # what the paste box matches against (xlakb.triage.export)
PHRASES_DATA = "assets/phrases.json"  # the exact texts the search box looks for first (render.search_phrases)
COUNT_MARKER = "<!-- xlakb:count -->"
DEFAULT_LANG = "en"

_state: dict = {"root": None, "records": None, "by_id": {}, "sources": {}, "markdown": None}


def _root(config) -> Path:
    return Path(config.config_file_path).resolve().parent


def _i18n(config):
    return config.plugins.get("i18n")


def _lang(config) -> str:
    plugin = _i18n(config)
    return getattr(plugin, "current_language", None) or DEFAULT_LANG


def _languages(config) -> list[str]:
    plugin = _i18n(config)
    if plugin is None:
        return [DEFAULT_LANG]
    return [lang.locale for lang in plugin.config.languages if lang.build]


def site_records(config) -> list[_data.SiteRecord]:
    """The bugs: the only records the home table, the coverage page and the counts show."""
    return _state["records"] or []


def site_limitations(config) -> list[_data.SiteRecord]:
    """The limitations releases lifted: their own page, never counted or listed as bugs."""
    return _state.get("limitations") or []


@event_priority(100)
def on_config(config):
    # Material's search loads the jieba user dictionary relative to the working
    # directory; make it absolute so `mkdocs build -f path/to/mkdocs.yml` works anywhere.
    search = config.plugins.get("material/search") or config.plugins.get("search")
    if search is not None:
        user_dict = search.config.get("jieba_dict_user")
        if user_dict and not os.path.isabs(user_dict):
            search.config["jieba_dict_user"] = str(_root(config) / user_dict)
    try:
        import jieba

        jieba.setLogLevel(logging.WARNING)
    except ImportError:
        raise PluginError("jieba is not installed: Chinese search needs it (pip install 'xlakb[site]')") from None
    # mkdocs-static-i18n runs one nested build per extra language with the same
    # config: read the records once, in the default-language build.
    root = _root(config)
    if _state["records"] is None or _state["root"] != root or _lang(config) == DEFAULT_LANG:
        try:
            _state["records"] = _data.load_site_records(root)
        except XlakbError as err:
            raise PluginError(str(err)) from None
        try:
            _state["limitations"] = _data.load_site_records(root, ("limitation",))
        except XlakbError as err:
            raise PluginError(str(err)) from None
        _state["root"] = root
        _state["by_id"] = {r.id: r for r in _state["records"] + _state["limitations"]}
        try:  # the compiled index `xlakb triage` and the paste box read: clustered once, when an input changed
            from xlakb import compiled
            from xlakb.upstream.index import Cluster

            _state["clusters"] = [Cluster.from_json(c) for c in compiled.load(root)["clusters"]]
        except XlakbError as err:
            raise PluginError(str(err)) from None
        _state["sources"] = {}
        _state["markdown"] = None
        _state["not_found"] = {}
        _state["plain_titles"] = {}
    return config


def _page_uri(folder: str, name: str, lang: str) -> str:
    return f"{folder}/{name}.md" if lang == DEFAULT_LANG else f"{folder}/{name}.{lang}.md"


def _make_file(config, folder: str, name: str, lang: str, content: str | None) -> File:
    """A generated page as mkdocs-static-i18n would have made it from ``<folder>/<name>[.<lang>].md``."""
    f = File.generated(config, _page_uri(folder, name, lang), content=content if content is not None else "")
    prefix = "" if lang == DEFAULT_LANG else f"{lang}/"
    f.dest_uri = f"{prefix}{folder}/{name}/index.html" if config.use_directory_urls else f"{prefix}{folder}/{name}.html"
    f.url = f.dest_uri[: -len("index.html")] if config.use_directory_urls else f.dest_uri
    f.abs_dest_path = os.path.normpath(os.path.join(config.site_dir, f.dest_uri))
    f.name = name
    f.locale = lang
    f.localization = None if lang == DEFAULT_LANG else lang
    f.norm_src_uri = f"{folder}/{name}.md"
    return f


def _generated_pages(config, lang: str):
    """(folder, name, markdown) of every generated page in ``lang``: records and components."""
    contributing = "../contributing.md"  # relative to records/<id>.md
    records = site_records(config)
    for record in records + site_limitations(config):  # a limitation's page says what it is
        yield "records", record.id, render.record_page(record, lang, contributing)
    for component in sorted({r.data["component"] for r in records}):
        yield "components", component, render.component_page(component, records, lang)


@event_priority(-200)  # after mkdocs-static-i18n (-100) has rebuilt the file list
def on_files(files: Files, config) -> Files:
    lang = _lang(config)
    languages = _languages(config)
    added = []
    for folder, name, content in _generated_pages(config, lang):
        page = _make_file(config, folder, name, lang, content)
        alternates = {lang: page}
        for other in languages:
            if other != lang:
                alternates[other] = _make_file(config, folder, name, other, None)
        page.alternates = alternates
        page.locale_alternate_of = lang
        files.append(page)
        added.append(page)
    # the i18n sitemap lists the pages it saw in on_files: add ours
    per_language = getattr(_i18n(config), "i18n_files_per_language", None)
    if isinstance(per_language, dict) and isinstance(per_language.get(lang), list):
        per_language[lang].extend(added)
    return files


def _href(page, config, folder: str, name: str) -> str:
    lang = _lang(config)
    prefix = "" if lang == DEFAULT_LANG else f"{lang}/"
    target = f"{prefix}{folder}/{name}/" if config.use_directory_urls else f"{prefix}{folder}/{name}.html"
    return get_relative_url(target, page.url)


def _record_href(page, config, record_id: str) -> str:
    return _href(page, config, "records", record_id)


def on_page_markdown(markdown: str, page, config, files) -> str:
    if COUNT_MARKER in markdown:
        markdown = markdown.replace(COUNT_MARKER, str(len(site_records(config))))
    if render.MEASUREMENTS_MARKER in markdown:  # what the benchmarks wrote, each figure with its command and date
        markdown = markdown.replace(
            render.MEASUREMENTS_MARKER, render.measurements_page(_data.load_results(_state["root"]), _lang(config)), 1
        )
    if render.LIMITATIONS_MARKER in markdown:  # searchable: a refusal typed in the search box finds its limitation
        markdown = markdown.replace(
            render.LIMITATIONS_MARKER,
            render.limitations_page(site_limitations(config), _lang(config), lambda rid: _record_href(page, config, rid)),
            1,
        )
    if render.REPORTED_MARKER in markdown:  # searchable: an error typed in the search box finds its reports
        markdown = markdown.replace(
            render.REPORTED_MARKER,
            render.reported_page(_state.get("clusters") or [], _lang(config), lambda rid: _record_href(page, config, rid)),
            1,
        )
    return markdown


def _highlighted_source(record: _data.SiteRecord, config) -> str:
    """The reproducer's source as HTML, rendered with the site's Markdown extensions once per build."""
    cache = _state["sources"]
    if record.id not in cache:
        md = _state.get("markdown")
        if md is None:
            import markdown

            md = _state["markdown"] = markdown.Markdown(
                extensions=config.markdown_extensions, extension_configs=config.mdx_configs
            )
        cache[record.id] = md.reset().convert(render.source_block(record))
    return cache[record.id]


@event_priority(-50)  # after Material's search (0) indexed the page
def on_page_context(context, page, config, nav):
    """Put in what is no text to search for: the home table (it repeats every title, and
    searches must land on the records), the reproducer's source and the matrix table."""
    content = page.content or ""
    if "<!-- xlakb:" not in content:
        return context
    lang = _lang(config)
    records = site_records(config)
    if RECORDS_MARKER in content:
        table = render.records_table(records, lang, lambda rid: _record_href(page, config, rid))
        content = content.replace(RECORDS_MARKER, table, 1)
    if render.COVERAGE_MARKER in content:
        table = render.coverage_table(
            records,
            lang,
            lambda rid: _record_href(page, config, rid),
            component_href=lambda c: _href(page, config, "components", c),
        )
        content = content.replace(render.COVERAGE_MARKER, table, 1)
    if render.TRIAGE_MARKER in content:
        prefix = "" if lang == DEFAULT_LANG else f"{lang}/"
        form = render.triage_form(lang, get_relative_url(TRIAGE_DATA, page.url), get_relative_url(f"{prefix}records/", page.url))
        content = content.replace(render.TRIAGE_MARKER, form, 1)
    if render.COMPONENT_MARKER in content and page.file.src_uri.startswith("components/"):
        mine = [r for r in records if r.data["component"] == page.file.name]
        table = render.coverage_table(mine, lang, lambda rid: _record_href(page, config, rid), filters=False)
        content = content.replace(render.COMPONENT_MARKER, table, 1)
    record = _state["by_id"].get(page.file.name) if page.file.src_uri.startswith("records/") else None
    if record is not None:
        if render.SOURCE_MARKER in content:  # a mined record links its upstream test instead
            content = content.replace(render.SOURCE_MARKER, _highlighted_source(record, config), 1)
        content = content.replace(render.MATRIX_MARKER, render.matrix_table(record, lang), 1)
    page.content = content
    return context


def on_serve(server, config, builder):
    root = _root(config)
    for name in ("issues", "limitations", "reproducers", "bisect", "benchmarks/results"):
        path = root / name
        if path.is_dir():
            server.watch(str(path))
    return server


_CONFIG_SCRIPT = re.compile(r'(<script id="__config" type="application/json">)(.*?)(</script>)', re.S)


_LANGUAGE_LINK = re.compile(r'(<a href=")(/[^"]*)(" hreflang="[^"]+" class="md-select__link">)')
_ALTERNATE = re.compile(r'(<link rel="alternate" href=")[^"]*(" hreflang=")([^"]+)(">)')


@event_priority(-200)
def on_post_page(output: str, page, config) -> str:
    """Language links relative to the page (the i18n plugin writes ``/zh/`` without a site_url, which leaves
    a site served from a sub-path), and the pages of a non-default language pointed at that language's
    own search index.

    Material loads ``search/search_index.json`` relative to ``config.base``; for
    ``/zh/...`` pages that base becomes ``/zh/``, where :func:`on_post_build` writes
    the Chinese index whose locations are relative to ``/zh/``.
    """
    output = _LANGUAGE_LINK.sub(
        lambda m: m.group(1) + get_relative_url(m.group(2).lstrip("/") or ".", page.url) + m.group(3), output
    )
    # Material's language switcher reads the sitemap of each <link rel="alternate">: point them at the
    # language roots (where a sitemap is), not at the page in the other language (where none is)
    output = _ALTERNATE.sub(
        lambda m: (
            m.group(1)
            + get_relative_url("." if m.group(3) == DEFAULT_LANG else f"{m.group(3)}/", page.url)
            + m.group(2)
            + m.group(3)
            + m.group(4)
        ),
        output,
    )
    lang = _lang(config)
    if lang == DEFAULT_LANG:
        return output
    output = _made_with(_code_in_plain_titles(_code_in_toc(output), lang), lang)
    return _search_base(_html_lang(output, lang), get_relative_url(f"{lang}/", page.url))


# the theme's footer line, in English whatever the page's language
_MADE_WITH = re.compile(
    r'Made with\s*(<a href="https://squidfunk\.github\.io/mkdocs-material/"[^>]*>\s*Material for MkDocs\s*</a>)'
)


def _made_with(output: str, lang: str) -> str:
    return _MADE_WITH.sub(lambda m: render.UI[lang]["made_with"].format(link=m.group(1)), output, 1)


_HEADING = re.compile(r'<h([1-6]) id="([^"]+)"[^>]*>(.*?)(?:<a class="headerlink"[^>]*>.*?</a>)?</h\1>', re.S)


def _code_in_toc(output: str) -> str:
    """The table of contents shows a heading as the heading does: the theme prints its text only, so a heading that
    quotes an error (the reported page's) lost its code there; on a Chinese page that left English outside code."""
    for m in _HEADING.finditer(output):
        inner = m.group(3)
        if "<code>" not in inner:
            continue
        link = re.compile(
            rf'(<a href="#{re.escape(m.group(2))}" class="md-nav__link">\s*<span class="md-ellipsis">)\s*[^<]*?\s*(</span>)'
        )
        output = link.sub(lambda x, inner=inner: x.group(1) + inner.strip() + x.group(2), output)
    return output


def _code_in_plain_titles(output: str, lang: str) -> str:
    """A record title as the theme prints it without markup (the header, the tags page, the navigation) shown with
    its code, as the record page's <h1> shows it: a quoted error is code, not English prose on a Chinese page.
    (<title> and the description cannot hold markup: they keep the plain text.)"""
    if lang not in _state["plain_titles"]:  # the same for every page of a build: made once
        titles = {}
        for record in _state["by_id"].values():
            title = record.data["title"][lang]
            if "`" in title:
                titles[render.plain(title)] = render._inline_md_code(html.escape(title, quote=False))
        alternatives = "|".join(re.escape(t) for t in sorted(titles, key=len, reverse=True))
        _state["plain_titles"][lang] = (titles, re.compile(r"(>\s*)(" + alternatives + r")(\s*<)") if titles else None)
    titles, pattern = _state["plain_titles"][lang]
    if pattern is None:
        return output
    return pattern.sub(lambda m: m.group(1) + titles[m.group(2)] + m.group(3), output)


def _html_lang(output: str, lang: str) -> str:
    """The page's language as BCP 47 names the script: the Chinese pages are Simplified Chinese."""
    return output.replace('<html lang="zh"', '<html lang="zh-Hans"', 1) if lang == "zh" else output


def _search_base(output: str, base: str) -> str:
    """Material's ``base`` (where it loads ``search/search_index.json`` from) set to ``base``."""
    match = _CONFIG_SCRIPT.search(output)
    if not match:
        return output
    try:
        app = json.loads(match.group(2))
    except ValueError:
        return output
    app["base"] = base
    text = json.dumps(app, ensure_ascii=False).replace("<", "\\u003c")  # never close the script early
    return output[: match.start(2)] + text + output[match.end(2) :]


_NOT_FOUND_HEAD = "<h1>404 - Not found</h1>"
_LANGUAGE_LINK_OF = re.compile(r'(<a href=")[^"]*(" hreflang="([^"]+)" class="md-select__link">)')
_ALTERNATE_ANY = re.compile(r'(<link rel="alternate" href=")[^"]*(" hreflang=")([^"]+)(">)')


@event_priority(-200)
def on_post_template(output: str, template_name: str, config) -> str:
    """The 404 page of each language (every language's build writes ``404.html``; :func:`on_post_build` puts each
    where it belongs: ``404.html`` and ``zh/404.html``): the paste box and a search of the records, its language
    switch leading to the other language's 404 page. Its addresses are from the site's root, as the page is served
    at whatever address was not found."""
    if template_name != "404.html":
        return output
    lang = _lang(config)
    base = urlsplit(config.site_url or "/").path or "/"
    base = base if base.endswith("/") else base + "/"

    def root(code: str) -> str:
        return base + ("" if code == DEFAULT_LANG else f"{code}/")

    if _NOT_FOUND_HEAD not in output:
        raise PluginError(f"the theme's 404 page no longer has {_NOT_FOUND_HEAD}: update on_post_template")
    output = output.replace(_NOT_FOUND_HEAD, render.not_found_page(lang, base), 1)
    output = output.replace("<title>", f"<title>{html.escape(render.UI[lang]['not_found']['title'])} - ", 1)
    output = _LANGUAGE_LINK_OF.sub(lambda m: m.group(1) + root(m.group(3)) + "404.html" + m.group(2), output)
    output = _ALTERNATE_ANY.sub(lambda m: m.group(1) + root(m.group(3)) + m.group(2) + m.group(3) + m.group(4), output)
    output = _html_lang(output, lang)
    if lang != DEFAULT_LANG:
        output = _search_base(output, root(lang))
        output = _made_with(output, lang)
    _state.setdefault("not_found", {})[lang] = output
    return output


@event_priority(-200)  # after mkdocs-static-i18n wrote the index of all languages
def on_post_build(config) -> None:
    plugin = _i18n(config)
    if plugin is not None and getattr(plugin, "building", False):
        return  # a nested per-language build; the outer one splits the index
    site = Path(config.site_dir)
    from xlakb import compiled
    from xlakb.upstream.signature import export_rules

    data = site / TRIAGE_DATA  # the paste box reads the index `xlakb triage` reads (built once, kept beside the cache)
    data.parent.mkdir(parents=True, exist_ok=True)
    index = compiled.load(_state["root"])
    triage_data = dict(index["triage"])
    triage_data["upstream"] = {"rules": export_rules(), "clusters": index["clusters"]}
    by_id = _state["by_id"]  # an answer says what the bug is, in the record's words, before how it was matched
    triage_data["records"] = [
        {**r, "summary": by_id[r["id"]].data["summary"]} if r["id"] in by_id else r for r in triage_data["records"]
    ]
    # 3.1 MB as plain JSON; packed 1.1 MB, and 0.22 MB gzipped beside it (what the page loads where the browser can
    # unzip: DecompressionStream), whatever compression the server does or does not do
    text = json.dumps(_data.pack_triage(triage_data), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    data.write_bytes(text)
    data.with_name(data.name + ".gz").write_bytes(gzip.compress(text, 9, mtime=0))
    phrases = site / PHRASES_DATA
    phrases.write_text(
        json.dumps(render.search_phrases(site_records(config), _languages(config)), ensure_ascii=False, separators=(",", ":")),
        "utf-8",
    )
    for lang, page in (_state.get("not_found") or {}).items():  # one 404 page per language
        target = site / ("" if lang == DEFAULT_LANG else lang) / "404.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, "utf-8")
    icon = site / "assets" / "images" / "favicon.png"  # browsers ask for /favicon.ico whatever the page links
    if icon.is_file() and not (site / "favicon.ico").exists():
        shutil.copyfile(icon, site / "favicon.ico")
    for lang in _languages(config):  # Material's language switcher reads the sitemap beside each language's pages
        if lang != DEFAULT_LANG:
            for name in ("sitemap.xml", "sitemap.xml.gz"):
                if (site / name).is_file() and (site / lang).is_dir():
                    shutil.copyfile(site / name, site / lang / name)
    path = site / "search" / "search_index.json"
    if not path.is_file():
        return
    index = json.loads(path.read_text("utf-8"))
    others = [lang for lang in _languages(config) if lang != DEFAULT_LANG]
    split: dict[str, list] = {lang: [] for lang in [DEFAULT_LANG] + others}
    for doc in index.get("docs", []):
        location = doc.get("location", "")
        for lang in others:
            if location == lang or location.startswith(f"{lang}/"):
                split[lang].append({**doc, "location": location[len(lang) + 1 :]})
                break
        else:
            split[DEFAULT_LANG].append(doc)
    for lang, docs in split.items():
        target = site / ("" if lang == DEFAULT_LANG else lang) / "search" / "search_index.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps({**index, "docs": docs}, ensure_ascii=False, separators=(",", ":")), "utf-8")
