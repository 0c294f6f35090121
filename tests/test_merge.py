"""The 3-way merge used for overlays: a property test and the conflict hunk reader."""
from __future__ import annotations

from pathlib import Path

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.git.merge import conflict_hunks, merge_blobs

LINES = st.lists(st.sampled_from([f"line {n}" for n in range(6)]), min_size=6, max_size=14)


@st.composite
def three_versions(draw):
    """base; overlay edits some lines; upstream edits only lines the overlay left alone, far from its edits."""
    base = [f"{text} #{index}" for index, text in enumerate(draw(LINES))]
    edited = draw(st.sets(st.integers(0, len(base) - 1), max_size=len(base) // 3))
    overlay = [f"overlay {line}" if index in edited else line for index, line in enumerate(base)]
    far = [i for i in range(len(base)) if all(abs(i - e) > 1 for e in edited)]
    upstream_edits = draw(st.sets(st.sampled_from(far), max_size=3)) if far else set()
    upstream = [f"upstream {line}" if index in upstream_edits else line for index, line in enumerate(base)]
    return base, overlay, upstream, edited


_REPO: list[pygit2.Repository] = []


def repo(tmp: Path) -> pygit2.Repository:
    if not _REPO:
        _REPO.append(pygit2.init_repository(str(tmp), bare=True))
    return _REPO[0]


@settings(max_examples=150, deadline=None)
@given(versions=three_versions())
def test_merge_never_loses_an_overlay_line_upstream_did_not_touch(tmp_path_factory, versions) -> None:
    base, overlay, upstream, edited = versions
    r = repo(tmp_path_factory.mktemp("merge"))
    blobs = [r.create_blob(("\n".join(lines) + "\n").encode()) for lines in (base, overlay, upstream)]
    outcome = merge_blobs(r, "f.py", *blobs)
    assert outcome.clean
    merged = outcome.data.decode().splitlines()
    for index in edited:
        assert overlay[index] in merged
    assert merged == [upstream[i] if upstream[i] != base[i] else overlay[i] for i in range(len(base))]


def test_conflict_hunks_reads_labelled_and_unlabelled_markers() -> None:
    text = "a\n<<<<<<< ours\nx\n||||||| base\nb\n=======\ny\n>>>>>>> theirs\nz\n<<<<<<<\n1\n|||||||\n=======\n2\n>>>>>>>\n"
    hunks = conflict_hunks(text)
    assert [(h.line, h.ours, h.base, h.theirs) for h in hunks] == [(2, "x\n", "b\n", "y\n"), (10, "1\n", "", "2\n")]
    assert conflict_hunks("======= not a marker\n<<<<<<<< eight\n") == ()
