"""What reaches the terminal: repository text (file names, messages, review reasons) never drives it.

An escape sequence in a file name would set the window title (OSC), clear the screen (CSI) or hide text
(bidi overrides) when printed raw. Every such character is written as a `\\uXXXX` escape instead: readable,
and inside a JSON string (where only these can be left raw by json.dumps) the same character, so --json and
SARIF stay valid documents with the same content.
"""
from __future__ import annotations

import re
import shutil
import sys
from contextlib import contextmanager
from typing import Any, Iterator, TextIO

# C0 and C1 controls and DEL, line and paragraph separators, bidi embeddings/overrides/isolates, and the lone
# surrogates a non-UTF-8 file name decodes to (which the stream could not even encode).
_OTHERS = r"\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_ANY = re.compile(rf"[\x00-\x1f{_OTHERS}]")
_BUT_LINES = re.compile(rf"[\x00-\x08\x0b-\x1f{_OTHERS}]")  # tab (09) and newline (0a) kept


def _escape(found: re.Match[str]) -> str:
    return f"\\u{ord(found.group()):04x}"


def printable(text: str) -> str:
    """One line: every control character escaped, newline and tab included."""
    return _ANY.sub(_escape, text)


def printable_lines(text: str) -> str:
    """Lines as written: newline and tab kept, every other control character escaped."""
    return _BUT_LINES.sub(_escape, text)


ELLIPSIS = "…"
_LEAST_MESSAGE = 20  # below this much of the message, a cut line says nothing: let the terminal wrap it


def terminal_width() -> int | None:
    """The width per-finding lines are cut to: the terminal's (COLUMNS wins) when stdout is one; None when it
    is piped or a file, where scripts read whole lines."""
    try:
        if not sys.stdout.isatty():
            return None
    except (AttributeError, ValueError):  # a closed or odd stream: no terminal
        return None
    return shutil.get_terminal_size().columns


def fit(head: str, message: str, width: int | None) -> str:
    """head + message in width columns: the message is cut, with an ellipsis, and head (severity, kind, path)
    kept whole; a line that fits, or no width (not a terminal), is left as it is."""
    line = head + message
    if width is None or len(line) <= width:
        return line
    room = max(width - len(head) - len(ELLIPSIS), _LEAST_MESSAGE)
    return line if room >= len(message) else head + message[:room].rstrip() + ELLIPSIS


class EscapingStream:
    """A text stream that escapes control characters on their way out; the rest goes to the stream it wraps."""

    def __init__(self, stream: TextIO) -> None:
        self.unfiltered = stream

    def write(self, text: str) -> int:
        self.unfiltered.write(printable_lines(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...
        return getattr(self.unfiltered, name)


def unfiltered(stream: TextIO | EscapingStream) -> TextIO:
    """The real stream, for the one writer that sends escapes on purpose (rich's progress bar)."""
    return stream.unfiltered if isinstance(stream, EscapingStream) else stream


@contextmanager
def escaped_output() -> Iterator[None]:
    """sys.stdout and sys.stderr escape what they print for as long as the block runs."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapingStream(saved[0]), EscapingStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
