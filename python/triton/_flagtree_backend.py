"""The FlagTree backend recorded at install time (empty string: plain trunk)."""
from pathlib import Path

_RECORD = Path(__file__).with_name("FLAGTREE_BACKEND")


def _read_recorded_backend() -> str:
    try:
        return _RECORD.read_text(encoding="utf-8").strip()
    except OSError:
        # No record means the build was made without FLAGTREE_BACKEND: trunk only.
        return ""


FLAGTREE_BACKEND: str = _read_recorded_backend()
