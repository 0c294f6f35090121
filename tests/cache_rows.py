"""The fact cache's stored entries as tests see them: one row of its SQLite database each, read and
overwritten by hand (to corrupt or poison an entry) the way a test once did with an entry's file."""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from sync.support.cache import CACHE_DIR, DATABASE


def database_of(git_dir: Path) -> Path:
    return git_dir.joinpath(*CACHE_DIR, DATABASE)


@dataclass(frozen=True)
class Row:
    database: Path
    bucket: str  # kind-vVERSION
    key: str

    def read_text(self) -> str:
        """The value's JSON text."""
        with sqlite3.connect(self.database) as connection:
            value, = connection.execute("SELECT value FROM facts WHERE bucket = ? AND key = ?",
                                        (self.bucket, self.key)).fetchone()
        return str(value)

    def write_text(self, text: str) -> None:
        with sqlite3.connect(self.database) as connection:
            connection.execute("UPDATE facts SET value = ? WHERE bucket = ? AND key = ?", (text, self.bucket, self.key))

    def delete(self) -> None:
        with sqlite3.connect(self.database) as connection:
            connection.execute("DELETE FROM facts WHERE bucket = ? AND key = ?", (self.bucket, self.key))


def rows(git_dir: Path, bucket_prefix: str = "") -> list[Row]:
    """Every stored entry whose kind starts with bucket_prefix, sorted; none when nothing was stored."""
    database = database_of(git_dir)
    if not database.exists():
        return []
    with sqlite3.connect(database) as connection:
        found = connection.execute("SELECT bucket, key FROM facts WHERE bucket LIKE ? ORDER BY bucket, key",
                                   (bucket_prefix + "%",)).fetchall()
    return [Row(database, bucket, key) for bucket, key in found]
