"""Mutate the state of an interrupted upgrade (upgrade.json and upgrade.journal) the ways a crash, a
bad disk or a hand edit do: duplicated, extra, dropped or reordered journal lines, wrong types, unknown
or missing fields, truncation. Rerunning the upgrade must then either refuse (exit 2, saying to --abort)
or, where the mutation is harmless, make exactly the branch of an uninterrupted run. Never exit 3,
never a wrong branch, never a change to the user's refs, index or work tree."""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sync.cli import cli
from sync.support.faults import EXIT_STATUS, VARIABLE
from tests.conftest import git
from tests.synthetic_world import (TARGET, Reference, SyntheticWorld, branch_chain, build_synthetic_world, command,
                                   environment, run_reference, state_file, users_view)

KILLED_AT = 12  # journal lines the interrupted run leaves
MUTATION_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                             suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> SyntheticWorld:
    return build_synthetic_world(tmp_path_factory.mktemp("pristine") / "world", commits=30, seed=5,
                                 conflict_rate=0.5)


@pytest.fixture(scope="module")
def reference(pristine: SyntheticWorld, tmp_path_factory: pytest.TempPathFactory) -> Reference:
    return run_reference(pristine, tmp_path_factory.mktemp("reference"))


@pytest.fixture(scope="module")
def interrupted(pristine: SyntheticWorld, tmp_path_factory: pytest.TempPathFactory) -> SyntheticWorld:
    """A run killed right after commit KILLED_AT was journalled (some of those commits conflict)."""
    world = pristine.copy(tmp_path_factory.mktemp("interrupted") / "world")
    killed = subprocess.run(command(world), capture_output=True, text=True,
                            env={**environment(), VARIABLE: f"commit:{KILLED_AT}"})
    assert killed.returncode == EXIT_STATUS, killed.stderr
    lines = journal(world).read_text().splitlines()
    assert len(lines) == KILLED_AT and any(json.loads(line)["result"]["conflicts"] for line in lines)
    return world


def journal(world: SyntheticWorld) -> Path:
    return world.repo / ".git" / "flagtree-sync" / "upgrade.journal"


def rerun_after(interrupted: SyntheticWorld, reference: Reference, mutate: Callable[[SyntheticWorld], None]) -> str:
    """Copy the interrupted world, mutate its state, rerun the same upgrade; check the promise."""
    with tempfile.TemporaryDirectory(prefix="mutated-") as scratch:
        world = interrupted.copy(Path(scratch) / "world")
        before = users_view(world.repo)
        mutate(world)
        result = CliRunner().invoke(cli, world.args())
        output = result.output
        assert result.exit_code in (1, 2), output
        assert "Traceback" not in output and "internal error" not in output, output
        if result.exit_code == 2:
            assert "--abort" in output, output
            assert TARGET not in git(world.repo, "branch", "--list")  # nothing half-made
            assert users_view(world.repo) == before
            assert CliRunner().invoke(cli, [*world.args(), "--abort"]).exit_code == 0  # what it says works
            result = CliRunner().invoke(cli, world.args())
            assert result.exit_code == 1, result.output
        assert branch_chain(world) == reference.chain  # harmless, or refused and then redone: the same branch
        assert users_view(world.repo) == before
        return "refused" if "--abort" in output else "resumed"


# --- values and edits of JSON documents --------------------------------------------------------------

ODD_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2, 2**40), st.floats(allow_nan=False),
                       st.text(max_size=6), st.lists(st.integers(), max_size=2),
                       st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
                       st.sampled_from(["0" * 40, "f" * 40, "markers", "ours", "content", "manual", "sync/x",
                                        "bogus", "add/add", "v1.0", "main"]))


def paths_in(document: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON document: object keys and list indexes, at any depth."""
    found = [prefix] if prefix else []
    if isinstance(document, dict):
        for key, value in document.items():
            found.extend(paths_in(value, (*prefix, key)))
    elif isinstance(document, list):
        for index, value in enumerate(document):
            found.extend(paths_in(value, (*prefix, index)))
    return found


def edit_json(data: st.DataObject, document: Any) -> Any:
    """One edit at a drawn place: a value of another type (or another value), the field removed, or an
    unknown field added next to it."""
    places = paths_in(document)
    deep = [place for place in places if {"conflicts", "range", "options"} & set(place)]
    if deep and data.draw(st.booleans()):  # the rare, nested fields, as often as all the rest
        places = deep
    where = data.draw(st.sampled_from(places))
    parent = document
    for key in where[:-1]:
        parent = parent[key]
    operation = data.draw(st.sampled_from(["replace", "remove", "add-unknown"]))
    if operation == "replace":
        parent[where[-1]] = data.draw(ODD_VALUES)
    elif operation == "remove":
        del parent[where[-1]]
    elif isinstance(parent, dict):
        parent[data.draw(st.sampled_from(["surprise", "comment", "version2"]))] = data.draw(ODD_VALUES)
    else:
        parent.insert(where[-1], data.draw(ODD_VALUES))
    return document


def truncate(data: st.DataObject, path: Path) -> None:
    raw = path.read_bytes()
    path.write_bytes(raw[:data.draw(st.integers(0, max(len(raw) - 1, 0)))])


# --- the state file ----------------------------------------------------------------------------------

@MUTATION_SETTINGS
@given(data=st.data())
def test_a_mutated_state_file_is_refused_or_harmless(interrupted, reference, data: st.DataObject) -> None:
    def mutate(world: SyntheticWorld) -> None:
        path = state_file(world)
        if data.draw(st.booleans()):
            path.write_text(json.dumps(edit_json(data, json.loads(path.read_text()))))
        else:
            truncate(data, path)
    rerun_after(interrupted, reference, mutate)


# --- the journal -------------------------------------------------------------------------------------

def edit_journal(data: st.DataObject, lines: list[str]) -> list[str]:
    count = len(lines)
    conflicted = [number for number, line in enumerate(lines) if json.loads(line)["result"]["conflicts"]]
    index = data.draw(st.sampled_from(conflicted) if data.draw(st.booleans()) else st.integers(0, count - 1))
    other = data.draw(st.integers(0, count - 1))
    operation = data.draw(st.sampled_from(["duplicate", "extra", "drop", "reorder", "edit", "truncate",
                                           "blank", "not-json"]))
    if operation == "duplicate":
        return [*lines[:index + 1], lines[index], *lines[index + 1:]]
    if operation == "extra":  # another line's record, or an edited copy, at a drawn place
        extra = lines[other] if data.draw(st.booleans()) else json.dumps(edit_json(data, json.loads(lines[other])))
        return [*lines[:index], extra, *lines[index:]]
    if operation == "drop":
        return lines[:index] + lines[index + 1:]
    if operation == "reorder":
        swapped = list(lines)
        swapped[index], swapped[other] = swapped[other], swapped[index]
        return swapped
    if operation == "edit":
        return [*lines[:index], json.dumps(edit_json(data, json.loads(lines[index]))), *lines[index + 1:]]
    if operation == "truncate":  # cut inside a line: a torn last line when it is the last one
        cut = data.draw(st.integers(0, len(lines[index])))
        return [*lines[:index], lines[index][:cut]]
    if operation == "blank":
        return [*lines[:index], "", *lines[index:]]
    return [*lines[:index], "{" + lines[index], *lines[index + 1:]]


@MUTATION_SETTINGS
@given(data=st.data())
def test_a_mutated_journal_is_refused_or_harmless(interrupted, reference, data: st.DataObject) -> None:
    def mutate(world: SyntheticWorld) -> None:
        path = journal(world)
        lines = edit_journal(data, path.read_text().splitlines())
        path.write_text("\n".join(lines) + ("\n" if lines and lines[-1] and lines[-1].endswith("}") else ""))
    rerun_after(interrupted, reference, mutate)


# --- named cases: each mutation the issue lists, with the outcome it must have -----------------------

def lines_of(world: SyntheticWorld) -> list[str]:
    return journal(world).read_text().splitlines(keepends=True)


def write_lines(world: SyntheticWorld, lines: list[str]) -> None:
    journal(world).write_text("".join(lines))


@pytest.mark.parametrize("mutation, outcome", [
    (lambda w: write_lines(w, lines_of(w) + lines_of(w)[-1:]), "refused"),                 # duplicate
    (lambda w: write_lines(w, lines_of(w)[:3] + lines_of(w)[4:]), "refused"),              # dropped in the middle
    (lambda w: write_lines(w, lines_of(w)[:-1]), "resumed"),                               # dropped at the end: redone
    (lambda w: write_lines(w, lines_of(w)[1:2] + lines_of(w)[:1] + lines_of(w)[2:]), "refused"),  # reordered
    (lambda w: write_lines(w, lines_of(w)[:-1] + [lines_of(w)[-1][:20]]), "resumed"),      # torn last line
    (lambda w: journal(w).unlink(), "resumed"),                                            # journal lost: all redone
    (lambda w: state_file(w).write_text(state_file(w).read_text()[:30]), "refused"),       # truncated state
], ids=["duplicate", "drop-middle", "drop-last", "reorder", "torn-last", "no-journal", "truncated-state"])
def test_named_mutations(interrupted, reference, mutation, outcome: str) -> None:
    assert rerun_after(interrupted, reference, mutation) == outcome


def edit_state(edit: Callable[[dict[str, Any]], None]) -> Callable[[SyntheticWorld], None]:
    def mutate(world: SyntheticWorld) -> None:
        header = json.loads(state_file(world).read_text())
        edit(header)
        state_file(world).write_text(json.dumps(header))
    return mutate


def edit_conflicts(field: str, value: str) -> Callable[[SyntheticWorld], None]:
    def mutate(world: SyntheticWorld) -> None:
        lines = [json.loads(line) for line in lines_of(world)]
        for line in lines:
            for conflict in line["result"]["conflicts"]:
                conflict[field] = value
        write_lines(world, [json.dumps(line) + "\n" for line in lines])
    return mutate


def claim_last_commit_empty(world: SyntheticWorld) -> None:
    """The last line says its commit was already upstream (no new commit), keeping the head of the line
    before it: accepted, the branch would silently lose that commit."""
    lines = [json.loads(line) for line in lines_of(world)]
    changed = next(number for number in range(len(lines) - 1, 0, -1) if lines[number]["result"]["result"])
    lines = lines[:changed + 1]
    lines[-1]["result"]["result"] = None
    lines[-1]["head"] = lines[-2]["head"]
    write_lines(world, [json.dumps(line) + "\n" for line in lines])


@pytest.mark.parametrize("mutation", [
    claim_last_commit_empty,  # found by reading the engine: a commit claimed empty was never checked
    # found by the hypothesis tests above: each made a wrong branch or exit 3 before the engine checked it
    edit_state(lambda h: h["params"]["range"]["onto"].update(ref="")),      # another conflict-marker label
    edit_state(lambda h: h["params"]["range"]["onto"].update(ref="main")),  # a ref of another commit
    edit_conflicts("kind", "bogus"),                                        # a kind the catalogue lacks
    edit_conflicts("resolution", "bogus"),
], ids=["claimed-empty", "onto-label-empty", "onto-label-other-commit", "conflict-kind", "conflict-resolution"])
def test_found_mutations_are_refused(interrupted, reference, mutation) -> None:
    assert rerun_after(interrupted, reference, mutation) == "refused"


# --- the previous state format ----------------------------------------------------------------------

def as_version_2(header: dict[str, Any]) -> dict[str, Any]:
    """The state as flagtree-sync wrote it before the options kept the gate as one object (format 2)."""
    options, gate = header["options"], header["options"]["gate"]
    return {**header, "version": 2, "options": {
        "out": options["out"], "exec_command": gate["command"] if gate else None,
        "exec_at": gate["at"] if gate else "end", "exec_timeout": gate["timeout"] if gate else 600,
        "backends": options["backends"]}}


def as_version_1(header: dict[str, Any]) -> dict[str, Any]:
    """The state as flagtree-sync wrote it before params carried a Range (format 1)."""
    params, rng = header["params"], header["params"]["range"]
    return {**as_version_2(header), "version": 1, "params": {
        "repo": params["repo"], "old": rng["from"]["ref"], "onto": rng["onto"]["ref"], "src": rng["source"]["ref"],
        "branch": params["target_branch"], "policy": params["policy"], "old_id": rng["from"]["commit"],
        "onto_id": rng["onto"]["commit"], "src_id": rng["source"]["commit"]}}


@pytest.mark.parametrize("downgraded", [as_version_1, as_version_2], ids=["format-1", "format-2"])
def test_a_state_of_an_earlier_format_resumes(interrupted, reference, downgraded) -> None:
    def downgrade(world: SyntheticWorld) -> None:
        header = json.loads(state_file(world).read_text())
        assert header["version"] == 3
        state_file(world).write_text(json.dumps(downgraded(header)))
    assert rerun_after(interrupted, reference, downgrade) == "resumed"


@pytest.mark.parametrize("edit", [lambda h: h["params"].update(src_id=7), lambda h: h["params"].pop("branch"),
                                  lambda h: h.update(version=4), lambda h: h.update(version=True)],
                         ids=["wrong-type", "missing", "future-version", "bool-version"])
def test_a_bad_state_of_format_1_or_an_unknown_version_is_refused(interrupted, reference, edit) -> None:
    def downgrade(world: SyntheticWorld) -> None:
        header = as_version_1(json.loads(state_file(world).read_text()))
        edit(header)
        state_file(world).write_text(json.dumps(header))
    assert rerun_after(interrupted, reference, downgrade) == "refused"
