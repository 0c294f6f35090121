"""#ifdef FLAGTREE_SPEC_<name> around a trunk declaration declares something for the backend to define. Found by a
new-user trial on a real backend: an in-class declaration was looked up without its class (the library defines
Info::dump, the guard was read as a bare dump), a pure virtual one asked for a definition, and a declaration
whose definition trunk itself has (the guard only dropped `static`, there and in the header) was reported as missing from the library."""
from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.drift_helpers import drift_of
from tests.test_real_structures import small_world

B = "third_party/b/backend/spec/"
HEADER = ("namespace t {\nstruct Info {\n  int size() const;\n#ifdef FLAGTREE_SPEC_Info_dump\n  void dump() const;\n"
          "#endif\n};\nstruct Target {\n#ifdef FLAGTREE_SPEC_Target_store\n  virtual void store(int v) const = 0;\n"
          "#else\n  virtual void store(int v, int w) const = 0;\n#endif\n};\n#ifdef FLAGTREE_SPEC_order\nint order(int a);\n#endif\n"
          "#ifdef FLAGTREE_SPEC_fill\nint fill(int a);\n#else\ninline int fill(int a) { return a; }\n#endif\n}\n")
SOURCE = ("namespace t {\n#ifdef FLAGTREE_SPEC_order\nint order(int a);\n#else\nstatic int order(int a);\n#endif\n"
          "int order(int a) { return a; }\n}\n")
MACROS = "#define FLAGTREE_SPEC_fill\n#define FLAGTREE_SPEC_Info_dump\n#define FLAGTREE_SPEC_Target_store\n#define FLAGTREE_SPEC_order\n"


@pytest.mark.parametrize("library, missing", [
    ("namespace t {\nvoid Info::dump() const {}\nint fill(int a) { return -a; }\n}\n", []),
    ("namespace t {\nvoid other() {}\n}\n", ["Info::dump", "fill"]),
])
def test_ifdef_declarations_are_looked_up_with_their_class_and_only_where_one_is_needed(
        tmp_path: Path, library: str, missing: list[str]) -> None:
    trunk = {"include/t/Info.h": HEADER, "lib/Order.cpp": SOURCE, "python/triton/__init__.py": ""}
    fork = {**trunk, B + "include/flagtree_spec.h": MACROS, B + "lib/Info.cpp": library}
    repo = small_world(tmp_path, trunk, {"README.md": "v2\n"}, fork)
    findings = drift_of(SimpleNamespace(fork=repo), "v1", "v2", "main", target="main").findings
    found = sorted(f.message.split(" defines no ")[-1] for f in findings if f.kind == "guard-replacement-missing")
    assert found == missing, [f.message for f in findings if f.kind.startswith("guard")]
    assert all("declares, for the backend," in f.message for f in findings if f.kind == "guard-replacement-missing")
    assert not [f for f in findings if f.kind == "guard-signature-mismatch"]
