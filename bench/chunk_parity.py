"""Chunked parsing on real files: every reader of a module's `ast` tree gives the same facts when the text is
parsed in chunks as when it is parsed whole (sync/facts/pychunks.py).

    git clone -q --bare --shared /work/.mirror/jingge815+FlagTree/repo /tmp/mem-ft
    python bench/chunk_parity.py --repo /tmp/mem-ft                       # 0add68262 7c56a5e40 fe647093f
    python bench/chunk_parity.py --repo /tmp/mem-ft --write-digests after.json
    PYTHONPATH=<checkout before chunking> python bench/chunk_parity.py --repo /tmp/mem-ft --whole-only \\
        --write-digests before.json                                      # the whole parse as it was
    python bench/chunk_parity.py --repo /tmp/mem-ft --whole-only --compare-digests before.json

Every .py blob of the revisions (each distinct blob once) is read with pygit2 and decoded as the tool
decodes it; the chunked run forces the threshold to 0 and a chunk at every boundary line (def, class,
decorator at column 0), the hardest case; the consumers are those of tests/chunk_facts.py. It prints, per
consumer, how many files gave equal facts, how many files were split into more than one chunk and how many
fell back to one whole parse. --write-digests stores a hash of each file's whole-parse facts per consumer;
--compare-digests compares them with a stored run, e.g. one of the code before chunking.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pygit2

ROOT = Path(__file__).resolve().parent.parent
sys.path.append(str(ROOT))  # after PYTHONPATH: an older checkout named there is the one imported


def _load_chunk_facts() -> Any:
    """tests/chunk_facts.py of this checkout, over whichever `sync` package is imported."""
    spec = importlib.util.spec_from_file_location("chunk_facts", ROOT / "tests" / "chunk_facts.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def python_blobs(repo: pygit2.Repository, revs: list[str]) -> dict[str, str]:
    """Blob id -> one path it has, for every .py file of the revisions."""
    found: dict[str, str] = {}
    for rev in revs:
        stack = [("", repo.revparse_single(rev).peel(pygit2.Commit).tree)]
        while stack:
            prefix, tree = stack.pop()
            for entry in tree:
                if entry.type_str == "tree":
                    stack.append((f"{prefix}{entry.name}/", repo[entry.id]))
                elif entry.type_str == "blob" and entry.name.endswith(".py"):
                    found.setdefault(str(entry.id), prefix + entry.name)
    return found


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", required=True, help="a clone of the FlagTree mirror (bare is fine)")
    parser.add_argument("--revs", nargs="*", default=["0add68262", "7c56a5e40", "fe647093f"])
    parser.add_argument("--whole-only", action="store_true", help="only the whole parse (code before chunking)")
    parser.add_argument("--write-digests", type=Path)
    parser.add_argument("--compare-digests", type=Path)
    args = parser.parse_args()
    facts = _load_chunk_facts()
    repo = pygit2.Repository(args.repo)
    blobs = python_blobs(repo, args.revs)
    equal = {name: 0 for name in facts.CONSUMERS}
    unequal: dict[str, list[str]] = {name: [] for name in facts.CONSUMERS}
    digests: dict[str, dict[str, str]] = {}
    split = whole_again = 0
    for blob, path in sorted(blobs.items(), key=lambda item: item[1]):
        text = repo[blob].data.decode("utf-8", errors="replace")
        if args.whole_only:
            whole = facts.consumer_facts(text)
        else:
            from sync.facts import pychunks
            from sync.facts.parsing import parsed_ast
            with facts.chunking(sys.maxsize):
                whole = facts.consumer_facts(text)
            with facts.chunking(0):
                chunked = facts.consumer_facts(text)
                trees = pychunks.over_chunks(text, parsed_ast, lambda found: sum(1 for _ in found))
                bounds = len(pychunks._bounds(text)) - 1
            split += isinstance(trees, int) and trees > 1
            whole_again += isinstance(trees, int) and trees == 1 and bounds > 1
            for name in facts.CONSUMERS:
                if chunked[name] == whole[name]:
                    equal[name] += 1
                else:
                    unequal[name].append(path)
        digests[blob] = {name: _digest(whole[name]) for name in facts.CONSUMERS}
    print(f"{len(blobs)} distinct .py blobs at {' '.join(args.revs)}")
    if not args.whole_only:
        print(f"split into more than one chunk: {split}; parsed whole after chunks that could not stand: {whole_again}")
        for name in facts.CONSUMERS:
            print(f"  {name:15} {equal[name]}/{len(blobs)} equal" + (f"; differ: {unequal[name][:5]}" if unequal[name] else ""))
    if args.write_digests:
        args.write_digests.write_text(json.dumps(digests, indent=0, sort_keys=True))
    if args.compare_digests:
        stored = json.loads(args.compare_digests.read_text())
        for name in facts.CONSUMERS:
            same = sum(1 for blob in digests if stored.get(blob, {}).get(name) == digests[blob][name])
            print(f"  {name:15} {same}/{len(digests)} equal to {args.compare_digests}")
    return 0 if not any(unequal.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
