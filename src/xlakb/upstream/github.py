"""Harvesting upstream's issues, pull requests and their comments through the GitHub REST API.

``GET /repos/{repo}/issues?state=all&sort=updated&direction=asc&since=...`` (issues and pull requests, oldest
update first, 100 a page, following the ``Link: rel="next"`` header), and each one's comments. The token
comes from ``GITHUB_TOKEN`` or ``GH_TOKEN`` (without one GitHub allows 60 requests an hour). Conditional
requests: the first page's ``ETag`` is kept, so a refresh with nothing new costs one 304. Rate limits are
waited out with the wait shown (primary: ``X-RateLimit-Remaining: 0`` until ``X-RateLimit-Reset``;
secondary: ``Retry-After``); a 5xx is tried again, five times with growing pauses. The harvest is resumable:
``upstream/harvest.json`` keeps the ``updated_at`` of the last report stored, and reports are saved as they
come, so a killed run starts again from there.

Library code: raises XlakbError naming the URL, prints nothing (progress goes to a Progress).
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import XlakbError
from ..progress import NullProgress, Progress
from . import store

API = "https://api.github.com"
STATE = Path("upstream") / "harvest.json"
_NEXT = re.compile(r'<([^>]+)>;\s*rel="next"')


def token_from_environment() -> str | None:
    for name in ("GITHUB_TOKEN", "GH_TOKEN"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


@dataclass
class Response:
    status: int
    headers: dict
    data: object = None


@dataclass
class Client:
    """A small GitHub REST client: JSON, pagination, conditional requests, rate limits, retries."""

    api: str = API
    token: str | None = None
    progress: Progress = field(default_factory=NullProgress)
    sleep: Callable[[float], None] = time.sleep
    timeout: float = 60.0
    retries: int = 5
    requests: int = 0

    def request(self, url: str, etag: str | None = None) -> Response:
        """One GET, with rate limits waited out and 5xx tried again; 304 and 404/410 are answers."""
        if not url.startswith(("http://", "https://")):
            url = self.api.rstrip("/") + url
        headers = {
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "xlakb-upstream-harvest",
        }
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if etag:
            headers["If-None-Match"] = etag
        pause = 1.0
        for attempt in range(self.retries + 1):
            self.requests += 1
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=self.timeout) as resp:
                    raw = resp.read()
                    return Response(resp.status, {k.lower(): v for k, v in resp.headers.items()}, _json(raw, url))
            except urllib.error.HTTPError as err:
                got = {k.lower(): v for k, v in (err.headers or {}).items()}
                if err.code == 304:
                    return Response(304, got)
                if err.code in (404, 410):
                    return Response(err.code, got)
                wait = self._rate_limit_wait(err.code, got)
                if wait is not None:
                    self.progress.info(f"GitHub rate limit: waiting {wait:.0f} s ({url})")
                    self.sleep(wait)
                    continue
                if 500 <= err.code < 600 and attempt < self.retries:
                    self.progress.info(f"GitHub answered {err.code}; trying again in {pause:.0f} s ({url})")
                    self.sleep(pause)
                    pause *= 2
                    continue
                detail = err.read().decode("utf-8", "replace")[:200].strip()
                hint = "set GITHUB_TOKEN (or GH_TOKEN) to a token" if err.code in (401, 403) else None
                raise XlakbError(f"GitHub answered {err.code} for {url}: {detail}", hint=hint) from None
            except (urllib.error.URLError, TimeoutError, ConnectionError) as err:
                if attempt < self.retries:
                    self.progress.info(f"GitHub unreachable ({getattr(err, 'reason', err)}); trying again in {pause:.0f} s")
                    self.sleep(pause)
                    pause *= 2
                    continue
                raise XlakbError(f"cannot reach {url}: {getattr(err, 'reason', err)}") from None
        raise XlakbError(f"GitHub kept failing for {url} after {self.retries + 1} tries")

    def _rate_limit_wait(self, code: int, headers: dict) -> float | None:
        """Seconds to wait before the same request, when the answer is a rate limit; else None."""
        if code not in (403, 429):
            return None
        if "retry-after" in headers:  # a secondary rate limit
            try:
                return max(1.0, float(headers["retry-after"]))
            except ValueError:
                return 60.0
        if headers.get("x-ratelimit-remaining") == "0":
            try:
                return max(1.0, float(headers.get("x-ratelimit-reset", "0")) - time.time() + 1)
            except ValueError:
                return 60.0
        return None

    def pages(self, url: str, etag: str | None = None) -> Iterator[Response]:
        """Every page of a listing, following ``Link: rel="next"``; a 304 on the first page ends it."""
        first = True
        while url:
            resp = self.request(url, etag if first else None)
            yield resp
            if resp.status != 200:
                return
            if not isinstance(resp.data, list):
                raise XlakbError(f"GitHub answered {url} with {type(resp.data).__name__}, not a list")
            m = _NEXT.search(resp.headers.get("link", ""))
            url = m.group(1) if m else ""
            first = False


def _json(raw: bytes, url: str):
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise XlakbError(f"GitHub answered {url} with a body that is not JSON ({err}): {raw[:80]!r}") from None


def load_state(root: Path) -> dict:
    path = root / STATE
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except ValueError as err:
        raise XlakbError(f"{path}: not JSON ({err})", hint="remove it to harvest from the start") from None
    return data if isinstance(data, dict) else {}


def save_state(root: Path, state: dict) -> None:
    path = root / STATE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n", "utf-8")


@dataclass
class Harvest:
    """What a harvest did."""

    seen: int = 0
    added: int = 0
    changed: int = 0
    gone: list[int] = field(default_factory=list)
    not_modified: bool = False
    requests: int = 0


def harvest(root: Path, repo: str, client: Client, *, since: str | None = None, save_every: int = 100) -> Harvest:
    """Read ``repo``'s issues and pull requests updated since ``since`` (default: where the last harvest
    stopped), with their comments, into the store; resumable. Returns what it did."""
    state = load_state(root)
    if state.get("repo") not in (None, repo):
        raise XlakbError(
            f"{root / STATE} is the harvest of {state['repo']}, not {repo}",
            hint="harvest into another checkout, or remove that file",
        )
    since = since or state.get("since")
    params = {"state": "all", "sort": "updated", "direction": "asc", "per_page": "100"}
    if since:
        params["since"] = since
    url = f"{client.api.rstrip('/')}/repos/{repo}/issues?" + urllib.parse.urlencode(params)
    etag = state.get("etags", {}).get(url)
    reports = store.load(root)
    out = Harvest()
    pending: list[store.Report] = []
    newest = since

    def flush() -> None:
        nonlocal reports
        if not pending:
            return
        reports, added, changed = store.merge(reports, pending)
        out.added += added
        out.changed += changed
        pending.clear()
        store.save(root, reports)
        save_state(root, {**state, "repo": repo, "since": newest})

    for page_no, page in enumerate(client.pages(url, etag), 1):
        if page.status == 304:
            out.not_modified = True
            break
        if page.status != 200:
            raise XlakbError(f"GitHub answered {page.status} for the issues of {repo}", hint="is the repository name right?")
        if page_no == 1 and page.headers.get("etag"):
            state.setdefault("etags", {})[url] = page.headers["etag"]
        for obj in page.data:
            out.seen += 1
            if not isinstance(obj, dict) or "number" not in obj:
                raise XlakbError(f"GitHub listed something that is not an issue in {repo}: {str(obj)[:80]}")
            client.progress.step(out.seen, out.seen, f"#{obj['number']} {str(obj.get('title', ''))[:60]}")
            comments: list[dict] = []
            if obj.get("comments"):
                comments_url = obj.get("comments_url") or f"{client.api}/repos/{repo}/issues/{obj['number']}/comments"
                for cpage in client.pages(comments_url + ("&" if "?" in comments_url else "?") + "per_page=100"):
                    if cpage.status in (404, 410):  # deleted or hidden since it was listed
                        out.gone.append(int(obj["number"]))
                        break
                    comments.extend(c for c in cpage.data if isinstance(c, dict))
            pending.append(store.report_from_github(obj, comments, source=f"{repo}#{obj['number']}"))
            newest = max(filter(None, [newest, obj.get("updated_at")]), default=newest)
            if len(pending) >= save_every:
                flush()
    flush()
    save_state(root, {**state, "repo": repo, "since": newest})
    out.requests = client.requests
    return out
