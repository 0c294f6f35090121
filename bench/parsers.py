"""Python's ast against libcst for the facts the read-only analyses extract, on real trees.

    python bench/parsers.py PATH_TO_FLAGTREE [--refs 0add68262 7c56a5e40] [--runs 3]

For every .py file under python/ at each ref: the time of python_shape (ast, what symbol drift
uses) against python_shape_libcst (the libcst walk it replaced), and of pyfacts' function table with
every def's signature, body and source (ast, cut from the text) against pyfacts_cst's (libcst, printed
from the nodes); whether both give the same results; and the bare parse times (ast.parse,
libcst.parse_module) for scale.
"""
from __future__ import annotations

import argparse
import ast
import statistics
import time
from pathlib import Path

import libcst as cst
import pygit2

from sync.facts import pyfacts
from sync.facts import pyfacts_cst
from sync.drift.analyses.symbols import python_shape_ast, python_shape_libcst


def python_files(repo: pygit2.Repository, ref: str) -> list[str]:
    tree = repo.revparse_single(ref).peel(pygit2.Commit).tree
    texts = []

    def walk(node: pygit2.Tree, prefix: str) -> None:
        for entry in node:
            path = prefix + entry.name
            if entry.type_str == "tree":
                walk(repo[entry.id], path + "/")
            elif path.endswith(".py") and entry.type_str == "blob":
                texts.append(repo[entry.id].data.decode("utf-8", errors="replace"))
    walk(tree["python"], "python/")
    return texts


def _table_texts(table) -> list | None:
    """Every def's parameters and text: what reports show (the texts are cut lazily, so this times them)."""
    if not isinstance(table, dict):
        return None
    return [(name, f.params, f.signature, f.body, f.source) for name, f in table.items()]


def timed(function, texts: list[str]) -> float:
    start = time.perf_counter()
    for text in texts:
        function(text)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("flagtree", type=Path)
    parser.add_argument("--refs", nargs="+", default=["0add68262", "7c56a5e40"])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    repo = pygit2.Repository(str(args.flagtree))
    texts = [text for ref in args.refs for text in python_files(repo, ref)]
    print(f"{len(texts)} Python files under python/ at {', '.join(args.refs)}, {sum(map(len, texts)) >> 10} KiB")
    shape_ast = python_shape_ast  # uncached: every run parses
    same = sum(shape_ast(text) == python_shape_libcst(text) for text in texts)
    print(f"same shape from ast and libcst: {same}/{len(texts)} files")
    same_tables = sum(_table_texts(pyfacts._function_table(text)) == _table_texts(pyfacts_cst.function_table_cst(text))
                      for text in texts)
    print(f"same function tables (parameters, signature, body, source) from ast and libcst: {same_tables}/{len(texts)}")
    measures = {"python_shape, ast": shape_ast, "python_shape, libcst": python_shape_libcst,
                "function table, ast": lambda text: _table_texts(pyfacts._function_table(text)),
                "function table, libcst": lambda text: _table_texts(pyfacts_cst.function_table_cst(text)),
                "ast.parse": ast.parse, "libcst.parse_module": cst.parse_module}
    times: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(args.runs):  # interleaved
        for name, function in measures.items():
            times[name].append(timed(function, texts))
    for name, runs in times.items():
        print(f"{name:<22} median {statistics.median(runs):6.2f} s  runs " + " ".join(f"{t:.2f}" for t in runs))
    ratio = statistics.median(times["python_shape, libcst"]) / statistics.median(times["python_shape, ast"])
    print(f"python_shape: ast is {ratio:.1f}x faster than libcst")
    ratio = statistics.median(times["function table, libcst"]) / statistics.median(times["function table, ast"])
    print(f"function table with every def's text: ast is {ratio:.1f}x faster than libcst")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
