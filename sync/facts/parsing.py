"""The one guarded way into every parser and every walk over a parsed tree.

Input a parser cannot handle (a syntax error, nesting CPython refuses, a tree so deep that a recursive
visitor overflows the stack) becomes a typed `Unparseable`, never an exception that ends the run.
Analyses record what they had to skip (`skipped`), and drift turns the records into
`analysis-skipped` findings that name the file and the analysis (`SkipLog`).

Depth: CPython, with its default recursion limit, is the judge of what is valid Python. Only text it
accepts reaches libcst (whose native parser overflows the C stack, a segfault, on nesting CPython
refuses). A walk that still hits the recursion limit on such a tree runs once more in a thread with a
large stack and a raised limit; the limit is restored afterwards.
"""
from __future__ import annotations

import ast
import gc
import sys
import threading
from contextvars import copy_context
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TypeVar

import libcst as cst

from sync.support.parselimit import oversized
from sync.support.textmemo import TextMemo
from sync.support.workers import jobs

T = TypeVar("T")

# What CPython accepts with its default recursion limit is what this tool calls valid Python.
CPYTHON_DEFAULT_RECURSION_LIMIT = 1000
# For walks over a tree CPython accepted (at most a few thousand levels): libcst's visitors take about
# ten frames a level. The stack is sized so that the raised limit cannot reach the end of it.
DEEP_RECURSION_LIMIT = 60_000
DEEP_STACK_BYTES = 512 * 1024 * 1024

# Messages of CPython's parser limits (Parser/tokenizer.c, Parser/parser.c): nesting, not syntax.
_CPYTHON_LIMITS = ("too many nested parentheses", "too many levels of indentation", "too complex",
                   "too many nested", "too deeply nested")


@dataclass(frozen=True)
class Unparseable:
    reason: str  # one line, e.g. "CPython refuses it: too many nested parentheses (line 1)"


class UnparseableError(Exception):
    """Raised inside a guarded work to give up with a reason (no deep retry)."""


_PARSE_ERRORS = (SyntaxError, ValueError, cst.ParserSyntaxError, MemoryError, UnicodeError, UnparseableError)


def guarded(work: Callable[[], T]) -> T | Unparseable:
    """Run work (a parse and the walk over its tree); what the parsers cannot handle is an Unparseable.

    A RecursionError is retried once with a large stack; work must therefore start from scratch on
    every call (build its results inside, never append to state outside).
    """
    try:
        return work()
    except RecursionError:
        pass
    except _PARSE_ERRORS as exc:
        return Unparseable(_reason(exc))
    return _deep(work)


def guarded_walk(work: Callable[[], T]) -> T | Unparseable:
    """Like guarded, for a whole analysis: only a RecursionError is a result (any other error is a bug)."""
    try:
        return work()
    except RecursionError:
        return _deep(work, catch=(UnparseableError,))


def _deep(work: Callable[[], T], catch: tuple[type[BaseException], ...] = _PARSE_ERRORS) -> T | Unparseable:
    outcome: list[T | Unparseable] = []

    context = copy_context()  # the fact cache and the skip log are context variables

    def run() -> None:
        try:
            outcome.append(context.run(work))
        except RecursionError:
            outcome.append(Unparseable(f"nested too deeply to analyse (more than {DEEP_RECURSION_LIMIT} frames)"))
        except catch as exc:
            outcome.append(Unparseable(_reason(exc)))
        except BaseException as exc:  # handed to the caller's thread: a bug stays a bug (exit 3)
            failure.append(exc)

    failure: list[BaseException] = []
    with recursion_limit(DEEP_RECURSION_LIMIT):
        previous_stack = threading.stack_size(DEEP_STACK_BYTES)
        try:
            thread = threading.Thread(target=run, name="flagtree-sync-deep-parse")
            thread.start()
        finally:
            threading.stack_size(previous_stack)
        thread.join()
    if failure:
        raise failure[0]
    return outcome[0]


@contextmanager
def recursion_limit(limit: int) -> Iterator[None]:
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 50))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, cst.ParserSyntaxError):
        return f"line {exc.raw_line}: {exc.message}"
    if isinstance(exc, SyntaxError):
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"{exc.msg}{where}"
    if isinstance(exc, MemoryError):
        return "nested too deeply to analyse (the parser ran out of memory)"
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text


def cpython_ast(text: str) -> ast.Module | None:
    """CPython's tree of text; None on a plain syntax error (libcst judges: it knows newer grammar than
    this interpreter); UnparseableError when CPython refuses the text for its nesting."""
    text = within_limit(text)
    try:
        return cpython_tree(text)
    except RecursionError:
        raise UnparseableError("CPython refuses it: nested too deeply (maximum recursion depth exceeded "
                               "during ast construction)") from None
    except MemoryError:
        raise UnparseableError("CPython refuses it: nested too deeply (its parser ran out of stack)") from None
    except SyntaxError as exc:
        if any(limit in (exc.msg or "") for limit in _CPYTHON_LIMITS):
            raise UnparseableError(f"CPython refuses it: {_reason(exc)}") from None
        return None
    except ValueError as exc:  # e.g. a NUL byte
        raise UnparseableError(f"CPython refuses it: {exc}") from None


def python_module(text: str) -> cst.Module:
    """libcst's tree of text; raises (inside guarded) on anything CPython or libcst refuses."""
    text = within_limit(text)
    cpython_ast(text)  # CPython judges nesting first: libcst's parser would overflow on it
    return cst.parse_module(text)


def python_ast(text: str) -> ast.Module:
    """CPython's tree of text, judged at CPython's default recursion limit; raises inside guarded."""
    return _judged(text, cpython_tree)


def python_ast_once(text: str) -> ast.Module:
    """python_ast without the memo, for a reader that keeps the facts it reads and not the tree (the shared
    parse of pyblobs): the tree goes as soon as the facts are read."""
    return _judged(text, cpython_tree_once)


def _judged(text: str, parse: Callable[[str], ast.Module]) -> ast.Module:
    text = within_limit(text)
    if sys.getrecursionlimit() == CPYTHON_DEFAULT_RECURSION_LIMIT:
        return parse(text)
    try:
        return parse(text)
    except RecursionError:
        raise UnparseableError("CPython refuses it: nested too deeply") from None


# Python trees kept for their next reader, in characters of text over all of a job's processes (see
# cpp.CPP_MEMO_TOTAL; at least 1 M a process): an ast tree costs some 30 times its text, so 1 M each on 2 cores
# (about 30 MB). The shared parse of pyblobs keeps none (python_ast_once): its facts are kept instead.
PY_MEMO_TOTAL = 2 * 1024 * 1024
_TREES: TextMemo[ast.Module] = TextMemo(0)  # its budget is set on first use, when the job's process count is known


def cpython_tree(text: str) -> ast.Module:
    """CPython's tree of text at CPython's default recursion limit; SyntaxError, ValueError, RecursionError and
    MemoryError pass. One parse when several analyses read the same file, while the memo's budget holds it:
    callers must not change the tree."""
    if not _TREES.budget:
        _TREES.budget = max(PY_MEMO_TOTAL // max(jobs(), 1), 1024 * 1024)
    return _TREES.get(within_limit(text), _kept_tree)  # over the parse limit: parsed as empty, like every parse


def forget_python_trees() -> None:
    """Drop the memo's trees and its budget (a test's next parse parses again, under the job's budget)."""
    _TREES.clear()
    _TREES.budget = 0


def cpython_tree_once(text: str) -> ast.Module:
    """cpython_tree without the memo, for a text no other reader parses (a chunk of a large file)."""
    if sys.getrecursionlimit() == CPYTHON_DEFAULT_RECURSION_LIMIT:
        return ast.parse(text)
    with recursion_limit(CPYTHON_DEFAULT_RECURSION_LIMIT):
        return ast.parse(text)


def _kept_tree(text: str) -> ast.Module:
    tree = cpython_tree_once(text)
    # The memo keeps the tree's nodes alive: left in the collector's generations, every young collection
    # walked them again (a 4 M memo added 2.4 s of collections to a first run of the 3.7 move). Frozen,
    # the collector leaves them (and what else lives now) alone; a job thaws them when it ends (gcpolicy).
    gc.freeze()
    return tree


def within_limit(text: str) -> str:
    """text, or '' when it is over the parse limit (drift names such files: parselimit, drift.py)."""
    return "" if oversized(text) else text


def parsed_python(text: str) -> cst.Module | Unparseable:
    return guarded(lambda: python_module(text))


def parsed_ast(text: str) -> ast.Module | Unparseable:
    return guarded(lambda: python_ast(text))


def ast_or_none(text: str) -> ast.Module | None:
    """parsed_ast's tree, or None where text does not parse: for a reader that passes such a file by."""
    parsed = parsed_ast(text)
    return None if isinstance(parsed, Unparseable) else parsed


# Which analysis is running, and what it had to skip: drift opens a SkipLog for the whole run.
@dataclass
class SkipLog:
    skipped: dict[tuple[str, str], str] = field(default_factory=dict)  # (analysis, path) -> reason


_LOG: ContextVar[SkipLog | None] = ContextVar("flagtree_sync_skip_log", default=None)
_ANALYSIS: ContextVar[str] = ContextVar("flagtree_sync_analysis", default="analysis")


@contextmanager
def recording_skips() -> Iterator[SkipLog]:
    log = SkipLog()
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)


@contextmanager
def analysing(name: str) -> Iterator[None]:
    token = _ANALYSIS.set(name)
    try:
        yield
    finally:
        _ANALYSIS.reset(token)


def running_analysis() -> str:
    return _ANALYSIS.get()


def pass_skips(entries: dict[tuple[str, str], str]) -> None:
    """Note entries a piece of the running analysis recorded in its own log (or kept) into the open log."""
    log = _LOG.get()
    if log is not None:
        for key, reason in entries.items():
            log.skipped.setdefault(key, reason)


def skipped(path: str, reason: str | Unparseable) -> None:
    """Note that the running analysis left path out; the first reason per (analysis, path) is kept."""
    log = _LOG.get()
    if log is not None:
        text = reason.reason if isinstance(reason, Unparseable) else reason
        log.skipped.setdefault((_ANALYSIS.get(), path), text)
