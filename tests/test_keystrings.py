"""key-string: FlagTree reads a key whose upstream producer changed; the upstream file is reported."""
from __future__ import annotations

from sync.analyzers.keys import key_string_findings
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
    assert findings[0].spec.confidence == "low"


def test_near_miss_unchanged_producer_and_test_producers(tmp_path) -> None:
    old = {"python/triton/compiler.py": PRODUCER_OLD, "python/test/unit/test_a.py": TEST_PRODUCER,
           "python/triton/tle.py": "X = 1\n"}
    new = {**old, "python/test/unit/test_a.py": "def test_x():\n    cfg = {'cluster_dims': 2}\n"}
    fork = {**old, "python/triton/tle.py": "X = 1\n\n\ndef dims(k):\n    return k.metadata.cluster_dims\n"}
    assert key_string_findings(context_of(tmp_path, old, new, fork)) == []
