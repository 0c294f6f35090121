"""The tool's TOML files: read back what it writes, and a bad file is exit 2 with file:line, never a crash."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from sync.check.policy import check_tree
from sync.cli import cli
from sync.errors import SyncError
from sync.builder.hookset import load_hook_set
from sync.records.pin import PIN_FILE, Pin, parse_pin
from sync.records.provenance import Derivation, parse_manifest, render_manifest
from sync.records.suppressions import Suppression, append_suppression, parse_suppressions
from sync.records.tomlfiles import Table, Text, TomlFileError, load_toml, locate, write_in_work_tree
from sync.facts.trees import DiskTree
from tests.conftest import git
from tests.test_check import CLEAN, write_tree

OID = "0123456789abcdef0123456789abcdef01234567"
SUPPRESSIONS = "third_party/b/backend/spec/suppressions.toml"
MANIFEST = "third_party/b/backend/spec/provenance.toml"
# Any text a tag, path or reason can hold: quotes, backslashes, newlines, control characters, `[[x]]`.
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1)
TRICKY = ['v3.6.0"', 'a"b\\c.py', "line one\nline two", '"""', "'''", "[[suppress]]\n", "\x00\x7f\t\r", "é ✓"]


def entry(**changes: str) -> str:
    fields = {"kind": "overlay-conflicting", "path": "a.py", "reviewed_for": "v1", "trunk": "t.py",
              "trunk_blob": OID, "reason": "r", **changes}
    return "[[suppress]]\n" + "".join(f'{key} = "{value}"\n' for key, value in fields.items())


def error_of(text: str) -> TomlFileError:
    with pytest.raises(TomlFileError) as caught:
        parse_suppressions(text, SUPPRESSIONS)
    return caught.value


# --- reading: the schema and the line of what is wrong ------------------------------------------

def test_syntax_error_keeps_tomllibs_line() -> None:
    error = error_of(entry() + "\nkind = \n")
    assert str(error).startswith(f"{SUPPRESSIONS}:9: ") and error.line == 9


def test_suppress_that_is_not_an_array_of_tables() -> None:
    error = error_of('# reviewed\n\nsuppress = "x"\n')
    assert (error.line, error.problem) == (3, "suppress must be an array of tables ([[suppress]] entries), "
                                              "not a string")
    assert error_of("suppress = [1, 2]\n").problem.endswith("not an array holding an integer")


def test_wrong_type_points_at_the_key_of_the_right_entry() -> None:
    text = "# two reviews\n" + entry() + "\n" + entry().replace('reason = "r"', "reason = 3")
    error = error_of(text)
    assert str(error) == f"{SUPPRESSIONS}:16: [[suppress]] entry 2: reason must be a string, not an integer"
    assert text.splitlines()[15] == "reason = 3"


def test_missing_key_points_at_the_entry_header() -> None:
    text = entry() + "\n" + entry().replace('trunk = "t.py"\n', "")
    error = error_of(text)
    assert (error.line, error.problem) == (9, "[[suppress]] entry 2: lacks trunk")


def test_unknown_key_and_bad_blob() -> None:
    assert error_of(entry() + 'reson = "typo"\n').line == 8
    error = error_of(entry(trunk_blob="HEAD"))
    assert (error.line, error.problem) == (6, "[[suppress]] entry 1: trunk_blob must be 40 hex digits, not 'HEAD'")


def test_headers_inside_multiline_strings_are_not_entries() -> None:
    first = entry().replace('reason = "r"', 'reason = """see\n[[suppress]]\nkind = 1\n"""')
    text = first + "\n" + entry().replace('path = "a.py"', "path = 7")
    error = error_of(text)
    assert error.problem == "[[suppress]] entry 2: path must be a string, not an integer"
    assert text.splitlines()[error.line - 1] == "path = 7"


def test_locate_falls_back_to_the_header_and_to_line_one() -> None:
    text = "[[hook]]\nkind = 'spec'\n\n[[hook]]\nkind = 'spec'\n"
    assert locate(text, "hook", 1, "call") == 4 and locate(text, "hook", 0, "kind") == 2
    assert locate("x = 1\n", key="tag") == 1


def test_pin_schema() -> None:
    with pytest.raises(TomlFileError, match=rf"^{PIN_FILE}:3: commit must be 40 hex digits, not 'abc'$"):
        parse_pin('# pin\ntag = "v3.6.0"\ncommit = "abc"\n')
    with pytest.raises(TomlFileError, match=rf"^{PIN_FILE}:1: tag must be a string, not an integer$"):
        parse_pin(f'tag = 3\ncommit = "{OID}"\n')
    with pytest.raises(TomlFileError, match="lacks commit"):
        parse_pin('tag = "v3.6.0"\n')


def test_manifest_schema() -> None:
    good = f'[[file]]\npath = "p"\ntrunk = "t"\ntag = "v1"\nblob = "{OID}"\n'
    assert parse_manifest(good, MANIFEST)["p"].blob == OID
    with pytest.raises(TomlFileError, match=rf"^{MANIFEST}:4: \[\[file\]\] entry 1: tag must be a string"):
        parse_manifest(good.replace('tag = "v1"', "tag = 1.5"), MANIFEST)
    with pytest.raises(TomlFileError, match=rf"^{MANIFEST}:1: file must be an array of tables"):
        parse_manifest('file = "x"\n', MANIFEST)


def test_hook_set_schema(tmp_path: Path) -> None:
    path = tmp_path / "hooks.toml"
    path.write_text('triton = "3.6.0"\n\n[[hook]]\nkind = "spec_path"\nfile = "a.py"\n\n[[hook]]\nkind = "spec"\n'
                    "file = 3\n")
    with pytest.raises(TomlFileError, match=rf"^{path}:9: .*entry 2: file must be a string, not an integer$"):
        load_hook_set(path)
    path.write_text('hook = "x"\n')
    with pytest.raises(TomlFileError, match=rf"^{path}:1: .*hook must be an array of tables"):
        load_hook_set(path)


def test_the_reader_needs_only_the_standard_library() -> None:
    """sync/builder/hookset.py reads hooks.toml inside pip's isolated build env, where only libcst is installed."""
    probe = ("import sys, sync.records.tomlfiles; third = {'tomlkit', 'pygit2', 'git', 'click', 'libcst', 'unidiff'}; "
             "print(sorted(third & {m.split('.')[0] for m in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=Path(__file__).parents[1], capture_output=True,
                         text=True, check=True).stdout
    assert out.strip() == "[]"


def test_optional_fields_and_empty_strings() -> None:
    schema = Table(fields={"a": Text(), "b": Text(required=False, nonempty=False)})
    assert load_toml('a = "x"\n', "f", schema).data == {"a": "x"}
    assert load_toml('a = "x"\nb = ""\n', "f", schema).data["b"] == ""
    with pytest.raises(TomlFileError, match="^f:1: a must not be empty$"):
        load_toml('a = ""\n', "f", schema)


# --- writing: what the tool writes it reads back -------------------------------------------------

@pytest.mark.parametrize("value", TRICKY)
def test_tricky_values_round_trip_in_every_file(value: str) -> None:
    assert parse_pin(Pin(value, OID).render()) == Pin(value, OID)
    derivation = Derivation(value, value, value, OID)
    assert parse_manifest(render_manifest([derivation]), MANIFEST) == {value: derivation}
    suppression = Suppression(value, value, value, value, OID, value)
    assert parse_suppressions(append_suppression(None, suppression), SUPPRESSIONS) == [suppression]


@settings(max_examples=60, deadline=None)
@given(tag=ANY_TEXT, path=ANY_TEXT, reason=ANY_TEXT)
def test_any_text_round_trips(tag: str, path: str, reason: str) -> None:
    assert parse_pin(Pin(tag, OID).render()) == Pin(tag, OID)
    derivation = Derivation(path, "python/triton/x.py", tag, OID)
    assert parse_manifest(render_manifest([derivation]), MANIFEST) == {path: derivation}
    suppression = Suppression("overlay-conflicting", path, tag, "python/triton/x.py", OID, reason)
    twice = append_suppression(append_suppression(None, suppression), suppression)
    assert parse_suppressions(twice, SUPPRESSIONS) == [suppression, suppression]


def test_pin_text_is_unchanged_for_plain_values() -> None:
    """Upgrade commits the pin; the same bytes as before keep rerun hashes stable."""
    assert Pin("v3.6.0", OID).render().endswith(f'\ntag = "v3.6.0"\ncommit = "{OID}"\n')


def test_appending_keeps_comments_and_order() -> None:
    reviewed = ("# Reviewed by the alpha maintainers.\n\n"
                + entry(path="b.py").replace("[[suppress]]\n", "[[suppress]]  # first review\n")
                + "# autotuner: see the design note\n"
                + entry(path="a.py").replace('reason = "r"', 'reason = "kept"  # until 3.7'))
    new = Suppression("overlay-orphan", "c.py", "v2", "t.py", OID, 'a "quoted"\nreason')
    text = append_suppression(reviewed, new)
    assert text.startswith(reviewed.rstrip("\n"))
    assert [s.path for s in parse_suppressions(text, SUPPRESSIONS)] == ["b.py", "a.py", "c.py"]
    assert parse_suppressions(text, SUPPRESSIONS)[-1] == new


def test_write_refuses_symlinks_and_escapes(tmp_path: Path) -> None:
    tree, outside = tmp_path / "repo", tmp_path / "outside"
    (tree / "spec").mkdir(parents=True)
    outside.mkdir()
    (outside / "victim.toml").write_text("precious\n")
    (tree / "spec" / "file.toml").symlink_to(outside / "victim.toml")
    (tree / "linked").symlink_to(outside, target_is_directory=True)
    for rel in ("spec/file.toml", "linked/victim.toml", "linked/new/x.toml"):
        with pytest.raises(SyncError, match="is a symlink"):
            write_in_work_tree(tree, rel, "evil\n")
    for rel in ("../outside/victim.toml", str(outside / "victim.toml")):
        with pytest.raises(SyncError, match="leaves the work tree"):
            write_in_work_tree(tree, rel, "evil\n")
    assert (outside / "victim.toml").read_text() == "precious\n" and not (outside / "new").exists()


def test_write_is_atomic_and_keeps_the_mode(tmp_path: Path) -> None:
    target = write_in_work_tree(tmp_path, "a/b/c.toml", "x = 1\n")
    assert target.read_text() == "x = 1\n" and os.listdir(tmp_path / "a" / "b") == ["c.toml"]
    umask = os.umask(0o022)
    try:
        assert target.stat().st_mode & 0o777 == 0o666 & ~umask
        target.chmod(0o640)
        write_in_work_tree(tmp_path, "a/b/c.toml", "x = 2\n")
        assert target.stat().st_mode & 0o777 == 0o640 and target.read_text() == "x = 2\n"
    finally:
        os.umask(umask)


# --- check reports a bad file; drift and upgrade refuse it with exit 2 ------------------------------

@pytest.mark.parametrize("rel, text, line, problem", [
    (PIN_FILE, 'tag = "v3.6.0"\ncommit = "main"\n', 2, "commit must be 40 hex digits, not 'main'"),
    (SUPPRESSIONS, entry() + "reason = 3\n", 8, "Cannot overwrite a value"),
    (SUPPRESSIONS, entry().replace('reason = "r"', "reason = 3"), 7, "[[suppress]] entry 1: reason must be a string"),
    (MANIFEST, '[[file]]\npath = "p"\n', 1, "[[file]] entry 1: lacks trunk"),
])
def test_check_reports_an_invalid_config_file(tmp_path: Path, rel: str, text: str, line: int, problem: str) -> None:
    findings = check_tree(DiskTree(write_tree(tmp_path, {**CLEAN, rel: text})))
    assert [(f.code, f.path, f.line) for f in findings] == [("FT017", rel, line)]
    assert findings[0].message.startswith(problem) and findings[0].action.startswith("fix the file: ")


def test_check_accepts_valid_config_files(tmp_path: Path) -> None:
    valid = {PIN_FILE: Pin("v3.6.0", OID).render(),
             SUPPRESSIONS: append_suppression(None, Suppression("k", "p", "v", "t", OID, "r"))}
    assert check_tree(DiskTree(write_tree(tmp_path, {**CLEAN, **valid}))) == []


def test_bad_pin_stops_upgrade_with_exit_2(world) -> None:
    (world.fork / PIN_FILE).write_text('tag = "v3.5.0"\ncommit = 42\n')
    git(world.fork, "commit", "-qam", "a hand-edited pin")
    result = CliRunner().invoke(cli, ["upgrade", "--repo", str(world.fork), "--onto", "v3.6.0",
                                      "--out", str(world.root / "out")])
    assert result.exit_code == 2, result.output
    assert f"{PIN_FILE}:2: commit must be a string, not an integer" in result.output
    assert "Traceback" not in result.output
