"""The one error type of the library.

The library never prints or exits: it raises :class:`XlakbError` with a
one-line message that names the file, field or value at fault and, where it
can, how to fix it.  The CLI turns it into that line and exit code 1.
"""

from __future__ import annotations


class XlakbError(Exception):
    """A failure the user can act on; ``str(err)`` is one line."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:  # one line, always
        text = self.message.replace("\n", " ")
        if self.hint:
            text += f" (hint: {self.hint})"
        return text


class WheelNotFound(XlakbError):
    """No build exists for a candidate (the server says 404/410: a missing nightly): it is untestable,
    not an error worth retrying."""
