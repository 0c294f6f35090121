"""What a result computed from git objects depends on besides those objects: this tool's own code and the
libraries that parse and merge (a fingerprint computed once per process), the git that merges, and the
repository's configuration and the files git reads besides objects (attributes, shallow, grafts). The result
cache of a drift run and the memo of the replay's picks key their entries by these."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pygit2

from sync.git.repo import LIBRARY_VERSIONS, common_git_dir, config_entries

_PACKAGE = Path(__file__).resolve().parent.parent
# What parses and merges besides our own code: a new version may read the same text differently.
_LIBRARIES = ("libcst", "tree_sitter", "tree_sitter_cpp", "unidiff", "tomlkit")


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Content hash of the sync package's .py, .json and .toml files (the seed policy is data), Python's version
    and the parsing libraries'."""
    digest = hashlib.sha1(f"{sys.version}\0{LIBRARY_VERSIONS}\0".encode())
    for name in _LIBRARIES:
        digest.update(f"{name}={_installed(name)}\0".encode())
    files = sorted(path for suffix in ("*.py", "*.json", "*.toml") for path in _PACKAGE.rglob(suffix)
                   if "__pycache__" not in path.parts)
    for path in files:
        data = path.read_bytes()
        digest.update(f"{path.relative_to(_PACKAGE).as_posix()}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _installed(module: str) -> str:
    """Which release of module is installed, without importing it (importlib.metadata costs more than a
    cached drift's whole analysis): its dist-info directory's name (name-version) next to it, else the
    module file's size and time."""
    spec = find_spec(module)
    if spec is None or spec.origin is None:
        return "absent"
    origin = Path(spec.origin)
    site = origin.parent.parent if origin.name == "__init__.py" else origin.parent
    prefix = module.lower().replace("-", "_") + "-"
    found = sorted(name for name in _listing(site) if name.lower().startswith(prefix)
                   and name.endswith((".dist-info", ".egg-info")))
    if found:
        return ",".join(found)
    stat = origin.stat()
    return f"{origin}:{stat.st_size}:{stat.st_mtime_ns}"


@lru_cache(maxsize=None)
def _listing(directory: Path) -> tuple[str, ...]:
    try:
        return tuple(os.listdir(directory))
    except OSError:
        return ()


def _file_digest(path: Path) -> str | None:
    try:
        return hashlib.sha1(path.read_bytes()).hexdigest()
    except OSError:
        return None  # absent (or unreadable, which libgit2 skips too)


def repository_inputs(repo: pygit2.Repository) -> dict[str, Any] | None:
    """What libgit2 reads besides objects that could change a merge, a rename or a history walk;
    None where the result cache must not be used (a partial clone: blobs come and go)."""
    config = config_entries(repo)
    for name, value in config:
        if name.lower() == "extensions.partialclone" or (name.lower().endswith(".promisor")
                                                         and str(value).lower() in ("true", "1", "yes", "on")):
            return None
    files: dict[str, str | None] = {}  # by role, not path: the content is the input
    for role, base in (("git-dir", Path(repo.path)), ("common-dir", common_git_dir(repo))):
        for name in ("info/attributes", "shallow", "info/grafts"):
            files[f"{role}/{name}"] = _file_digest(base / name)
    configured = dict((name.lower(), value) for name, value in config).get("core.attributesfile")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    files["global-attributes"] = _file_digest(Path(os.path.expanduser(configured) if configured
                                                   else os.path.join(xdg, "git", "attributes")))
    files["system-attributes"] = _file_digest(Path("/etc/gitattributes"))
    return {"config": config, "files": files}


@lru_cache(maxsize=1)
def git_version() -> str:
    """The version line of the git that merges (git merge-tree: sync/git/ort.py); '' when there is none."""
    try:
        return subprocess.run(["git", "--version"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""
