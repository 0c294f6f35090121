"""The hook set applied with libcst: before/after snapshots, idempotence, hooks that no longer apply."""
from __future__ import annotations

from pathlib import Path
from textwrap import dedent

import pytest

from sync.builder.hookset import Hook, HookError, apply_hook, apply_hook_set, check_hook_set, load_hook_set, HookSet

REPO = Path(__file__).resolve().parents[1]


def assert_hook(hook: Hook, before: str, after: str) -> None:
    result = apply_hook(dedent(before).lstrip(), hook)
    assert result == dedent(after).lstrip()
    assert apply_hook(result, hook) == result  # applying twice changes nothing


def test_spec_path_goes_before_the_package_imports() -> None:
    assert_hook(Hook("spec_path", "tools/__init__.py"), '''
        """Tools."""
        from .compile import main
        ''', '''
        """Tools."""
        from triton.flagtree_spec import spec_path

        # flagtree backend path specialization
        spec_path(__path__)
        from .compile import main
        ''')


def test_spec_goes_after_the_last_import() -> None:
    assert_hook(Hook("spec", "language/__init__.py", call='spec("language_extend_globals", globals())'), '''
        from __future__ import annotations
        from . import core
        from .core import tensor

        __all__ = ["tensor"]
        ''', '''
        from __future__ import annotations
        from triton.flagtree_spec import spec
        from . import core
        from .core import tensor

        # flagtree backend specialization
        spec("language_extend_globals", globals())

        __all__ = ["tensor"]
        ''')


def test_spec_func_adds_a_function_or_wraps_trunks_own() -> None:
    assert_hook(Hook("spec_func", "_utils.py", name="apply_with_path"), '''
        def cdiv(x, y):
            return (x + y - 1) // y
        ''', '''
        from triton.flagtree_spec import spec_func
        def cdiv(x, y):
            return (x + y - 1) // y

        # flagtree backend func specialization
        apply_with_path = spec_func("apply_with_path")
        ''')
    wrapped = apply_hook("def cdiv(x, y):\n    return x // y\n", Hook("spec_func", "_utils.py", name="cdiv"))
    assert wrapped.endswith('cdiv = spec_func("cdiv", cdiv)\n')


def test_hook_that_no_longer_applies_is_reported(tmp_path: Path) -> None:
    (tmp_path / "language").mkdir()
    (tmp_path / "language" / "__init__.py").write_text("X = 1\n")
    hook_set = HookSet("9.9", (Hook("spec_path", "tools/__init__.py"),
                               Hook("spec", "language/__init__.py", call='spec("f")')))
    problems = [reason for _, reason in check_hook_set(tmp_path, hook_set)]
    assert problems == ["tools/__init__.py does not exist", "language/__init__.py: no import to place spec(\"f\") after"]
    with pytest.raises(HookError, match="no longer applies: tools/__init__.py"):
        apply_hook_set(tmp_path, hook_set)


def test_shipped_hook_set_loads() -> None:
    hook_set = load_hook_set(REPO / "patches" / "hooks.toml")
    assert hook_set.triton == "3.6.0"
    assert {(h.kind, h.file) for h in hook_set.hooks} >= {("spec_path", "tools/__init__.py"),
                                                           ("spec", "language/__init__.py"),
                                                           ("spec_func", "_utils.py")}


@pytest.mark.parametrize("text, message", [
    ('[[hook]]\nkind = "nope"\nfile = "a.py"\n', "needs kind"),
    ('[[hook]]\nkind = "spec"\nfile = "a.py"\n', "needs call"),
    ('[[hook]]\nkind = "spec_func"\nfile = "a.py"\nname = "not valid"\n', "needs name"),
    ("not toml [", "cannot read hook set"),
])
def test_bad_hook_sets(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "hooks.toml"
    path.write_text(text)
    with pytest.raises(HookError.__mro__[1], match=message):
        load_hook_set(path)


def test_function_table_finds_defs_in_classes_branches_and_handlers() -> None:
    from sync.facts.pyfacts import function_table, parse_module_facts

    source = dedent('''
        class A:
            def m(self, x=1):
                def inner():
                    pass
        if True:
            def f(a):
                pass
        elif False:
            def g(b):
                pass
        else:
            def h(c):
                pass
        try:
            def t():
                pass
        except ImportError:
            def e():
                pass
        finally:
            def z():
                pass
        ''')
    table = function_table(source)
    assert set(table) == {"A.m", "A.m.inner", "f", "g", "h", "t", "e", "z"}
    assert set(table) == set(parse_module_facts("x.py", source).functions)  # same answer as the full visitor
    assert table["A.m"].signature == "self, x=1"


def test_hooks_command_reports_each_hook(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sync.cli import cli

    package = tmp_path / "triton"
    (package / "tools").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tools" / "__init__.py").write_text('"""Tools."""\n')
    hook_set = tmp_path / "hooks.toml"
    hook_set.write_text('triton = "9.9"\n[[hook]]\nkind = "spec_path"\nfile = "tools/__init__.py"\n'
                        '[[hook]]\nkind = "spec_path"\nfile = "runtime/__init__.py"\n')
    result = CliRunner().invoke(cli, ["hooks", str(tmp_path), "--hook-set", str(hook_set)])
    assert result.exit_code == 1
    assert result.output.splitlines() == ["ok   spec_path tools/__init__.py",
                                          "FAIL spec_path runtime/__init__.py: runtime/__init__.py does not exist"]
    assert (package / "tools" / "__init__.py").read_text() == '"""Tools."""\n'  # nothing written
    result = CliRunner().invoke(cli, ["hooks", str(tmp_path / "nowhere")])
    assert result.exit_code == 2 and "is not a triton package directory" in result.output
