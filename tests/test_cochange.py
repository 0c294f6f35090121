"""co-change: FlagTree lines inside a function whose upstream body changed, in a cleanly merging file."""
from __future__ import annotations

from sync.drift.analyses.cochange import cochange_findings
from tests.upstream_fixture import context_of

OLD_CPP = "int update(int a) {\n  int b = a + 1;\n  return b;\n}\n\n\n\n\n\nint other(int x) {\n  return x;\n}\n"
NEW_CPP = "int update(int a) {\n  int b = a + 2;\n  return b;\n}\n\n\n\n\n\nint other(int x) {\n  return x;\n}\n"
OLD_PY = "def scan(x):\n    y = x\n    a = 1\n    b = 2\n    c = 3\n    return y\n\n\n\n\n\ndef keep(x):\n    return x\n"
NEW_PY = "def scan(x):\n    y = x * 2\n    a = 1\n    b = 2\n    c = 3\n    return y\n\n\n\n\n\ndef keep(x):\n    return x\n"


def test_fires_in_changed_function_not_in_unchanged_one(tmp_path) -> None:
    fork_cpp = OLD_CPP.replace("  return b;\n}\n\n", "  return b;\n  // flagtree\n}\n\n", 1).replace(
        "  return x;\n", "  x += 1;  // flagtree\n  return x;\n")
    fork_py = OLD_PY.replace("    return y\n", "    y += 1  # flagtree\n    return y\n").replace(
        "def keep(x):\n    return x", "def keep(x):\n    x = x or 0\n    return x")
    context = context_of(tmp_path, {"lib/A.cpp": OLD_CPP, "python/triton/a.py": OLD_PY},
                         {"lib/A.cpp": NEW_CPP, "python/triton/a.py": NEW_PY},
                         {"lib/A.cpp": fork_cpp, "python/triton/a.py": fork_py})
    findings = {(f.path, f.details["function"]) for f in cochange_findings(context)}
    assert findings == {("lib/A.cpp", "update"), ("python/triton/a.py", "scan")}  # not other / keep
    cpp = next(f for f in cochange_findings(context) if f.path == "lib/A.cpp")
    assert "-  int b = a + 1;" in cpp.diff and "+  int b = a + 2;" in cpp.diff


def test_review_when_flagtree_lines_share_no_name_with_the_change(tmp_path) -> None:
    # Upstream only changed a constant (C++) and an expression over names already there (Python): FlagTree's
    # lines use nothing the change brought in or took out, so the finding is review-level, not a warning.
    fork_cpp = OLD_CPP.replace("  return b;\n}\n\n", "  return b;\n  b += 7;  // flagtree\n}\n\n", 1)
    fork_py = OLD_PY.replace("    return y\n", "    y += 1  # flagtree\n    return y\n")
    context = context_of(tmp_path, {"lib/A.cpp": OLD_CPP, "python/triton/a.py": OLD_PY},
                         {"lib/A.cpp": NEW_CPP, "python/triton/a.py": NEW_PY},
                         {"lib/A.cpp": fork_cpp, "python/triton/a.py": fork_py})
    findings = cochange_findings(context)
    assert {f.kind for f in findings} == {"co-change-review"} and len(findings) == 2
    assert all(f.severity == "info" and not f.open and f.details["shared_names"] == [] for f in findings)


def test_warning_when_flagtree_lines_use_a_name_upstream_took_out_or_brought_in(tmp_path) -> None:
    # C++: upstream renamed the local b -> sum that FlagTree's line reads. Python: upstream introduced a local
    # `scale` that FlagTree's line also assigns.
    old_cpp = "int update(int a) {\n  int b = a + 1;\n  a = 0;\n  a = 1;\n  a = 2;\n  return a;\n}\n"
    new_cpp = old_cpp.replace("int b = a + 1;", "int sum = a + 1;")
    new_py = OLD_PY.replace("    y = x\n", "    scale = 2\n    y = x * scale\n")
    fork_cpp = old_cpp.replace("  return a;\n", "  b += 7;  // flagtree\n  return a;\n")
    fork_py = OLD_PY.replace("    return y\n", "    scale = 3  # flagtree\n    return y\n")
    context = context_of(tmp_path, {"lib/A.cpp": old_cpp, "python/triton/a.py": OLD_PY},
                         {"lib/A.cpp": new_cpp, "python/triton/a.py": new_py},
                         {"lib/A.cpp": fork_cpp, "python/triton/a.py": fork_py})
    found = {f.path: f for f in cochange_findings(context)}
    assert found["lib/A.cpp"].kind == "co-change" and found["lib/A.cpp"].details["shared_names"] == ["b"]
    assert found["python/triton/a.py"].kind == "co-change" and found["python/triton/a.py"].details["shared_names"] == ["scale"]
    assert all(f.severity == "warning" and f.spec.confidence == "medium" for f in found.values())
    assert "which upstream's change brought into or took out of it" in found["lib/A.cpp"].message


def test_near_miss_conflicting_file_or_unchanged_upstream(tmp_path) -> None:
    fork_conflict = OLD_CPP.replace("a + 1", "a + 3")  # same line as upstream's change: a conflict
    context = context_of(tmp_path, {"lib/A.cpp": OLD_CPP, "lib/B.cpp": OLD_CPP},
                         {"lib/A.cpp": NEW_CPP, "lib/B.cpp": OLD_CPP},
                         {"lib/A.cpp": fork_conflict, "lib/B.cpp": OLD_CPP.replace("  return b;", "  b++;\n  return b;")})
    assert cochange_findings(context) == []


NAMES_MODULE = '''import os


class Holder:
    """A class."""

    @property
    def value(self):
        text = """
not indented: a string, not a block
"""
        return (text,
    self.other)

    def nested(self, a):
        def inner(b):
            return b + a
        return inner


def last(x): return x; y = last
def cont(x):
    return x \\
        + 1


def tail(x):
    return x \\

y = 1
'''


def test_names_read_from_the_functions_alone_are_the_whole_texts() -> None:
    """Co-change reads the names of FlagTree's lines from the functions that hold them, not the whole file."""
    from sync.drift.analyses.cochange import _names, _names_in_spans, _spans
    spans = _spans("python/triton/m.py", NAMES_MODULE)
    assert spans is not None
    inside = {line for line in range(1, NAMES_MODULE.count("\n") + 2) if any(s.start <= line <= s.end for s in spans)}
    for lines in [inside, {9, 12}, {17}, {22}, {23, 24}, {7, 21}, {28}]:  # FlagTree lines inside functions
        assert _names_in_spans("python/triton/m.py", NAMES_MODULE, spans, lines) == \
            (_names("python/triton/m.py", NAMES_MODULE, lines) or {}), lines
    crlf = NAMES_MODULE.replace("\n", "\r\n")
    assert _names_in_spans("python/triton/m.py", crlf, _spans("python/triton/m.py", crlf) or [], {9}) == \
        (_names("python/triton/m.py", crlf, {9}) or {})


def test_a_module_level_flagtree_line_reads_no_upstream_body(tmp_path, monkeypatch) -> None:
    from sync.drift.analyses import cochange
    read: list[str] = []
    monkeypatch.setattr(cochange, "_bodies", lambda path, text: read.append(path) or {})
    fork_py = OLD_PY + "FLAGTREE = 1\n"
    context = context_of(tmp_path, {"python/triton/a.py": OLD_PY}, {"python/triton/a.py": NEW_PY},
                         {"python/triton/a.py": fork_py})
    assert cochange_findings(context) == [] and read == []


def test_a_name_both_sides_qualify_otherwise_is_another_declaration(tmp_path) -> None:
    """Issue 45 (3.7 move): tle's `mlir::triton::tle::registerPasses();` in registerTritonDialects shared only
    its spelling with upstream's new `plugin.registerPasses();` there: by their scopes alone (a namespace's
    function, a member) they are other declarations, so the finding is a review. A name spelled the same way on
    both sides (or plainly on one) still makes it a warning."""
    old = "void reg(R &r) {\n  mlir::registerA();\n  mlir::registerB();\n  mlir::registerC();\n  r.done();\n}\n"
    new = old.replace("  mlir::registerA();\n", "  for (auto &plugin : plugins)\n    plugin.registerPasses();\n"
                                               "  mlir::registerA();\n")
    fork = old.replace("  r.done();\n", "#ifdef __TLE__\n  mlir::triton::tle::registerPasses();\n#endif\n  r.done();\n")
    context = context_of(tmp_path, {"bin/R.h": old}, {"bin/R.h": new}, {"bin/R.h": fork})
    (finding,) = cochange_findings(context)
    assert finding.kind == "co-change-review" and finding.details["shared_names"] == []
    same = fork.replace("mlir::triton::tle::registerPasses();", "auto &plugin = first();\n  plugin.registerPasses();")
    (warning,) = cochange_findings(context_of(tmp_path / "same", {"bin/R.h": old}, {"bin/R.h": new}, {"bin/R.h": same}))
    assert warning.kind == "co-change" and "registerPasses" in warning.details["shared_names"]


def test_a_module_level_name_upstream_moved_out_of_the_function_is_no_data_flow(tmp_path) -> None:
    """Issue 45 (3.3 -> 3.4): upstream's Autotuner.__init__ stopped calling `driver.active.get_benchmarker()`;
    FlagTree's line there reads `driver.active.get_device_interface()`, with `driver` imported at module level at
    both ends: it still resolves, so the shared names `driver`, `active` are no data flow (a review). A local that
    upstream took out is still a warning."""
    old = ("from .driver import driver\n\n\nclass T:\n\n    def __init__(self, bench):\n"
           "        self.bench = driver.active.get_benchmarker()\n        self.a = 1\n        self.b = 2\n"
           "        self.c = 3\n        self.d = 4\n")
    new = old.replace("        self.bench = driver.active.get_benchmarker()\n", "        self._bench = bench\n        scale = 2\n")
    fork = old.replace("        self.d = 4\n", "        self.d = 4\n        name = driver.active.get_device_interface()\n")
    (finding,) = cochange_findings(context_of(tmp_path, {"python/triton/t.py": old}, {"python/triton/t.py": new},
                                              {"python/triton/t.py": fork}))
    assert finding.kind == "co-change-review", finding.details
    local = fork.replace("name = driver.active.get_device_interface()", "name = scale")
    (warning,) = cochange_findings(context_of(tmp_path / "local", {"python/triton/t.py": old},
                                              {"python/triton/t.py": new}, {"python/triton/t.py": local}))
    assert warning.kind == "co-change" and warning.details["shared_names"] == ["scale"]
