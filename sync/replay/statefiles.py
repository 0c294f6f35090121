"""Reading and removing the state file and journal: never through a symbolic link, never past a size bound,
and a directory found in their place moved aside, not deleted."""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from sync.replay.state import StateFormatError


STATE_LIMIT = 64 << 20  # bytes: a header lists 40-hex commit ids, about 1.5 million of them


def read_bounded(path: Path, limit: int) -> str | None:
    """A state file's text (None: absent), never read through a symbolic link nor from anything but a regular
    file, and at most limit bytes: a link to /dev/zero or a directory in its place is refused, not read."""
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:  # ELOOP: a symbolic link
        raise StateFormatError(f"{path.name} cannot be read as a file ({exc.strerror or exc})") from exc
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # a directory, a device, a pipe
        os.close(descriptor)
        raise StateFormatError(f"{path.name} is not a regular file")
    data = bytearray()
    with os.fdopen(descriptor, "rb") as handle:
        while chunk := handle.read(1 << 20):  # in chunks: a buffer of the whole bound would be allocated at once
            data += chunk
            if len(data) > limit:
                raise StateFormatError(f"{path.name} is larger than {limit} bytes")
    return data.decode("utf-8")


def parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError as exc:  # hand-made nesting far beyond anything this tool writes
        raise StateFormatError("it is nested too deeply") from exc


def read_json(path: Path, limit: int) -> Any:
    text = read_bounded(path, limit)
    if text is None:
        raise StateFormatError(f"{path.name} is gone")
    return parse_json(text)


def remove_state_entry(path: Path) -> Path | None:
    """Remove the state file or journal at path, whatever is there: a file or symbolic link (never its
    target) goes; a directory, which the tool never makes there, is moved aside (returned), not deleted."""
    if path.is_dir() and not path.is_symlink():
        aside = path.with_name(f"{path.name}.moved-aside")
        number = 1
        while os.path.lexists(aside):
            number += 1
            aside = path.with_name(f"{path.name}.moved-aside-{number}")
        path.rename(aside)
        return aside
    path.unlink(missing_ok=True)
    return None
