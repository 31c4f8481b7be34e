"""Progress reporting: the library reports, the CLI decides how to show it."""

from __future__ import annotations

from typing import Protocol


class Progress(Protocol):
    def step(self, done: int, total: int, message: str) -> None:
        """``done`` of ``total`` steps finished; ``message`` says what runs now."""

    def info(self, message: str) -> None:
        """A one-line note worth showing (which runner was picked, a cache hit...)."""

    def download(self, name: str, done_bytes: int, total_bytes: int | None) -> None:
        """Bytes of ``name`` fetched so far (``total_bytes`` None when unknown)."""


class NullProgress:
    """Reports nothing; the default when the caller passes no progress."""

    def step(self, done: int, total: int, message: str) -> None:
        pass

    def info(self, message: str) -> None:
        pass

    def download(self, name: str, done_bytes: int, total_bytes: int | None) -> None:
        pass


class RecordingProgress(NullProgress):
    """Keeps every event in ``events``; handy for callers that report later."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def step(self, done: int, total: int, message: str) -> None:
        self.events.append(("step", done, total, message))

    def info(self, message: str) -> None:
        self.events.append(("info", message))

    def download(self, name: str, done_bytes: int, total_bytes: int | None) -> None:
        self.events.append(("download", name, done_bytes, total_bytes))
