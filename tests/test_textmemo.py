"""The memo of parsed texts: one parse per text while the budget holds it, bounded by the texts' lengths."""
from __future__ import annotations

import pytest

from sync.support.textmemo import TextMemo


class Parses:
    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> list[str]:
        self.texts.append(text)
        if text == "bad":
            raise SyntaxError("bad")
        return [text]  # a new object each parse


def test_a_text_is_parsed_once_and_its_readers_share_the_tree() -> None:
    parse, memo = Parses(), TextMemo[list[str]](budget=10)
    first = memo.get("abc", parse)
    assert memo.get("ab" + "c", parse) is first  # equal text, another string object
    assert parse.texts == ["abc"]


def test_the_least_recently_read_texts_go_when_the_budget_is_spent() -> None:
    parse, memo = Parses(), TextMemo[list[str]](budget=10)
    memo.get("aaaa", parse)
    memo.get("bbbb", parse)
    memo.get("aaaa", parse)  # read again: "bbbb" is now the oldest
    memo.get("cccc", parse)  # 12 characters: over the budget of 10
    memo.get("aaaa", parse)
    memo.get("bbbb", parse)
    assert parse.texts == ["aaaa", "bbbb", "cccc", "bbbb"]


def test_a_text_over_the_budget_and_a_failed_parse_are_not_kept() -> None:
    parse, memo = Parses(), TextMemo[list[str]](budget=4)
    memo.get("x" * 5, parse)
    memo.get("x" * 5, parse)
    for _ in range(2):
        with pytest.raises(SyntaxError):
            memo.get("bad", parse)
    assert parse.texts == ["xxxxx", "xxxxx", "bad", "bad"]


def test_cpp_trees_are_shared_between_readers_of_the_same_text() -> None:
    from sync.facts.cpp import forget_trees, parse_tree
    text = "int f(int a) { return a; }\n"
    forget_trees()
    tree = parse_tree(text)
    assert parse_tree("int f(int a) { return a; }\n") is tree
    forget_trees()
    assert parse_tree(text) is not tree


def test_the_cpp_memo_is_split_between_the_processes_of_a_job(monkeypatch) -> None:
    """A worker per core, each with its own memo: 16 cores must not hold eight times what 2 do."""
    from sync.facts import cpp
    assert cpp.memo_budget(2) == cpp.CPP_MEMO_TOTAL // 2 and cpp.memo_budget(1) == cpp.CPP_MEMO_TOTAL
    assert cpp.memo_budget(16) == cpp.memo_budget(64) == 1024 * 1024
    monkeypatch.setenv("FLAGTREE_SYNC_JOBS", "2")
    cpp.forget_trees()
    cpp.parse_tree("int x;\n")
    assert cpp._TREES.budget == cpp.CPP_MEMO_TOTAL // 2
    cpp.forget_trees()


def test_python_trees_are_shared_between_readers_of_the_same_text() -> None:
    from sync.facts.parsing import cpython_tree, cpython_tree_once, forget_python_trees
    text = "def f(a):\n    return a\n"
    forget_python_trees()
    tree = cpython_tree(text)
    assert cpython_tree("def f(a):\n    return a\n") is tree
    assert cpython_tree_once(text) is not tree  # a chunk of a large file is never kept
    forget_python_trees()
    assert cpython_tree(text) is not tree


def test_a_kept_python_tree_is_left_alone_by_the_collector_until_the_job_ends() -> None:
    """Young collections walked the memo's nodes again and again; frozen, they are not walked, and a job
    gives them back to the collector when it ends."""
    import gc
    from sync.facts.parsing import cpython_tree, forget_python_trees
    from sync.support.gcpolicy import job
    forget_python_trees()
    gc.unfreeze()

    def parse() -> int:
        cpython_tree("x = [1, 2]\n")
        return gc.get_freeze_count()

    assert job(parse)() > 0
    assert gc.get_freeze_count() == 0
    forget_python_trees()
