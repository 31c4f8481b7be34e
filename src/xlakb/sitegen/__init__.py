"""The bilingual knowledge-base site: record pages generated at build time.

``mkdocs.yml`` (repository root) names :mod:`xlakb.sitegen.hooks` by path; the
hooks read ``issues/*.yaml``, the reproducers and the measured results under
``bisect/`` (:mod:`xlakb.sitegen.data`) and render one page per record and
language (:mod:`xlakb.sitegen.render`).  :mod:`xlakb.sitegen.build` wraps
``mkdocs build`` / ``mkdocs serve`` for ``xlakb site build|serve``.
"""
