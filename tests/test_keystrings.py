"""key-string: FlagTree reads a key whose upstream producer changed; the upstream file is reported."""
from __future__ import annotations

from sync.drift.analyses.keys import key_string_findings
from tests.upstream_fixture import context_of

PRODUCER_OLD = ("def load(metadata):\n    metadata['cluster_dims'] = tuple(metadata['cluster_dims'])\n"
                "    metadata['num_warps'] = int(metadata['num_warps'])\n    return metadata\n")
PRODUCER_NEW = "def load(metadata):\n    metadata['num_warps'] = int(metadata['num_warps'])\n    return metadata\n"
TEST_PRODUCER = "def test_x():\n    cfg = {'cluster_dims': 1}\n"


def test_fires_on_a_producer_upstream_removed_in_a_file_flagtree_never_changed(tmp_path) -> None:
    old = {"python/triton/compiler.py": PRODUCER_OLD, "python/triton/tle.py": "X = 1\n"}
    fork = {**old, "python/triton/tle.py": "X = 1\n\n\ndef dims(k):\n    return k.metadata.cluster_dims, "
                                           "k.metadata['num_warps']\n"}
    findings = key_string_findings(context_of(tmp_path, old, {**old, "python/triton/compiler.py": PRODUCER_NEW}, fork))
    assert [(f.path, f.details["key"], f.related_path) for f in findings] == [
        ("python/triton/compiler.py", "cluster_dims", "python/triton/tle.py")]
    assert "-    metadata['cluster_dims'] = tuple(metadata['cluster_dims'])" in findings[0].diff
    assert findings[0].kind == "key-string" and findings[0].spec.confidence == "medium"
    assert findings[0].details["read_from"] == ["metadata"] and findings[0].details["upstream"] == "stopped"


def test_near_miss_unchanged_producer_and_test_producers(tmp_path) -> None:
    old = {"python/triton/compiler.py": PRODUCER_OLD, "python/test/unit/test_a.py": TEST_PRODUCER,
           "python/triton/tle.py": "X = 1\n"}
    new = {**old, "python/test/unit/test_a.py": "def test_x():\n    cfg = {'cluster_dims': 2}\n"}
    fork = {**old, "python/triton/tle.py": "X = 1\n\n\ndef dims(k):\n    return k.metadata.cluster_dims\n"}
    assert key_string_findings(context_of(tmp_path, old, new, fork)) == []


def _keys(tmp_path, producer_old: str, producer_new: str, reader: str):
    old = {"python/triton/compiler.py": producer_old, "python/triton/tle.py": "X = 1\n"}
    fork = {**old, "python/triton/tle.py": "X = 1\n\n\n" + reader}
    return key_string_findings(context_of(tmp_path, old, {**old, "python/triton/compiler.py": producer_new}, fork))


def test_name_coincidence_other_container_is_not_reported(tmp_path) -> None:
    # FlagTree's `torch.matmul` is not upstream's scratchpad['matmul'], whatever upstream did to the latter.
    old = "def f(scratchpad, M):\n    scratchpad['matmul'] = (1, M)\n"
    assert _keys(tmp_path, old, "def f(scratchpad, M):\n    pass\n", "def g(torch):\n    return torch.matmul\n") == []


def test_kind_of_value_changed_is_a_warning_same_kind_is_a_review(tmp_path) -> None:
    reader = "def g(k):\n    return k.metadata['block_shape']\n"
    old = "def f(metadata, x):\n    metadata['block_shape'] = tuple(x)\n"
    (changed,) = _keys(tmp_path / "kind", old, "def f(metadata, x):\n    metadata['block_shape'] = list(x)\n", reader)
    assert changed.kind == "key-string" and changed.severity == "warning" and changed.details["upstream"] == "changed"
    (same,) = _keys(tmp_path / "value", old, "def f(metadata, x):\n    metadata['block_shape'] = tuple(x[1:])\n", reader)
    assert same.kind == "key-string-review" and same.severity == "info" and not same.open


def test_unnamed_container_is_a_review(tmp_path) -> None:
    # A dict literal passed straight to a call: nothing names where the key lives, so it cannot be matched.
    old = "def f(x):\n    return make({'block_shape': tuple(x)})\n"
    (finding,) = _keys(tmp_path, old, "def f(x):\n    return make({})\n", "def g(k):\n    return k.cfg['block_shape']\n")
    assert finding.kind == "key-string-review"


# Seen on 3.4.x -> 3.5: upstream's proton CLI stopped setting TRITON_ALWAYS_COMPILE for a profiled script, and
# FlagTree's compiler reads that variable. The process environment is the user's input, not a structure upstream
# builds for FlagTree: neither a write to os.environ produces an environment variable, nor does a read of one
# depend on upstream code that sets it for a child.
CLI_OLD = ("import argparse\nimport os\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n"
           "    parser.add_argument('-i', help='sets TRITON_ALWAYS_COMPILE')\n"
           "    os.environ['TRITON_ALWAYS_COMPILE'] = '1'\n    env = {'TRITON_ALWAYS_COMPILE': '1'}\n"
           "    return run(env)\n")
CLI_NEW = "import argparse\n\n\ndef main():\n    parser = argparse.ArgumentParser()\n    return run({})\n"
ENV_READER = ("import os\nfrom os import environ\n\n\ndef always():\n"
              "    return os.environ.get('TRITON_ALWAYS_COMPILE', '0') == '1' or environ['TRITON_ALWAYS_COMPILE']\n")


def test_the_process_environment_is_neither_produced_nor_read_as_a_key(tmp_path) -> None:
    assert _keys(tmp_path, CLI_OLD, CLI_NEW, ENV_READER) == []


def test_a_key_of_a_named_dict_next_to_the_environment_still_fires(tmp_path) -> None:
    # The same file also drops a key from a dict that FlagTree reads: that one is still upstream's data.
    old = CLI_OLD + "\n\ndef opts(options):\n    options['always_compile'] = True\n"
    reader = ENV_READER + "\n\ndef g(options):\n    return options['always_compile']\n"
    findings = _keys(tmp_path, old, CLI_NEW, reader)
    assert [(f.kind, f.details["key"]) for f in findings] == [("key-string", "always_compile")]


def test_a_key_the_reader_or_its_backend_writes_itself_resolves_there(tmp_path) -> None:
    # Issue 33: a backend's driver reads metadata its own compiler writes; a file reads its own config dict.
    old = {"python/triton/compiler.py": PRODUCER_OLD, "third_party/b/__init__.py": "\n"}
    new = {**old, "python/triton/compiler.py": PRODUCER_NEW}
    reader = "def dims(k):\n    return k.metadata['cluster_dims']\n"
    backend = {**old, "third_party/b/driver.py": reader,
               "third_party/b/compiler.py": "def make(metadata):\n    metadata['cluster_dims'] = (1, 1)\n"}
    assert key_string_findings(context_of(tmp_path / "backend", old, new, backend)) == []
    same_file = {**old, "third_party/b/driver.py": "def make(metadata):\n    metadata['cluster_dims'] = (1,)\n" + reader}
    assert key_string_findings(context_of(tmp_path / "file", old, new, same_file)) == []
    # the 3.4.x -> 3.6.0 move: the backend's own options dataclass declares the field its reads mean
    fields = {**old, "third_party/b/driver.py": reader,
              "third_party/b/compiler.py": "@dataclass\nclass Options:\n    cluster_dims: tuple = (1, 1)\n"}
    assert key_string_findings(context_of(tmp_path / "fields", old, new, fields)) == []
    # Near miss: another backend's write does not bind b's read, which still means upstream's producer.
    other = {**old, "third_party/b/driver.py": reader,
             "third_party/c/compiler.py": "def make(metadata):\n    metadata['cluster_dims'] = (1, 1)\n"}
    found = key_string_findings(context_of(tmp_path / "other", old, new, other))
    assert [(f.kind, f.related_path) for f in found] == [("key-string", "third_party/b/driver.py")]


def test_written_keys_are_what_producers_finds_from_the_shared_parse() -> None:
    """The reader's own writes come from the shared parse (one walk for every analysis), not a parse per
    set of keys; they are the keys `producers` finds, and a class body's fields."""
    from sync.drift.analyses.keys import producers, written_keys
    text = ("meta['arch'] = 1\nmeta['arch'] += 2\nopts: dict = {}\nopts['warps']: int = 4\n"
            "cfg = {'stages': 2, 'not a key': 3, **extra}\nsetattr(o, 'mode', 'fast')\n"
            "os.environ['HOME'] = '/'\nenviron['PATH'] = ''\na, b['tuple'] = 1, 2\nx = meta['read_only']\n")
    keys = {"arch", "warps", "stages", "mode", "HOME", "PATH", "tuple", "read_only", "absent"}
    assert written_keys(text, keys) == set(producers(text, keys)[0]) == {"arch", "warps", "stages", "mode"}
    assert written_keys("class Options:\n    arch: int = 1\n    mode = 'x'\n", keys) == {"arch", "mode"}


def test_a_default_added_to_a_producer_is_the_same_kind_of_value(tmp_path) -> None:
    """Issue 45 (3.7 move): upstream wrote `metadata['global_scratch_size'] = src.get(...) or 0`; `a or 0` is a's
    value wherever a is set, so FlagTree's reader sees the same kind of value: a review, not a warning."""
    reader = "def g(k):\n    return k.metadata['scratch']\n"
    old = "def f(metadata, src):\n    metadata['scratch'] = src.get_int('s')\n"
    (finding,) = _keys(tmp_path / "or", old, "def f(metadata, src):\n    metadata['scratch'] = src.get_int('s') or 0\n",
                       reader)
    assert finding.kind == "key-string-review"
    (other,) = _keys(tmp_path / "kind", old, "def f(metadata, src):\n    metadata['scratch'] = [src.get_int('s')]\n",
                     reader)
    assert other.kind == "key-string"  # a value of another kind still is a warning


def test_only_shipped_reads_of_the_container_upstream_wrote_make_a_warning(tmp_path) -> None:
    """Issue 45 (3.5 -> 3.6, cluster_dims): upstream stopped writing metadata['cluster_dims']; FlagTree read
    `metadata.cluster_dims` only in tests and a tutorial, and `options.cluster_dims` in shipped code. A read of
    another container is not a read of upstream's write, and a test or tutorial is no compiled or imported code
    (not read at all: drift reads only the Python a built package imports). A shipped read of the same container
    is still a warning."""
    old = {"python/triton/compiler.py": PRODUCER_OLD, "python/triton/tle.py": "X = 1\n"}
    new = {**old, "python/triton/compiler.py": PRODUCER_NEW}
    fork = {**old, "python/triton/tle.py": "X = 1\n\n\ndef dims(options):\n    return options.cluster_dims\n",
            "python/test/unit/test_tle.py": "def test_dims(k):\n    assert k.metadata.cluster_dims == (1, 1, 1)\n",
            "python/tutorials/tle/gemm.py": "def run(k):\n    return k.metadata.cluster_dims\n"}
    findings = key_string_findings(context_of(tmp_path, old, new, fork))
    assert [f.kind for f in findings if f.kind == "key-string"] == []
    assert not any("python/triton/tle.py:5" in f.details.get("readers", ()) for f in findings)
    shipped = {**fork, "python/triton/tle.py": "X = 1\n\n\ndef dims(k):\n    return k.metadata.cluster_dims\n"}
    (warning,) = key_string_findings(context_of(tmp_path / "shipped", old, new, shipped))
    assert warning.kind == "key-string" and "python/triton/tle.py:5" in warning.details["readers"]
