"""Jobs run with fewer cyclic collections, and give the interpreter's thresholds back afterwards."""
from __future__ import annotations

import gc

import pytest

from sync import jobs
from sync.support.gcpolicy import JOB_THRESHOLDS, job


def test_a_job_runs_with_the_job_thresholds_and_restores_them() -> None:
    before = gc.get_threshold()
    seen = job(lambda: gc.get_threshold())()
    assert seen == JOB_THRESHOLDS != before
    assert gc.get_threshold() == before


def test_the_thresholds_come_back_when_the_job_fails() -> None:
    before = gc.get_threshold()

    def failing() -> None:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        job(failing)()
    assert gc.get_threshold() == before


@pytest.mark.parametrize("entry", ["run_upgrade", "continue_upgrade", "run_drift", "run_check"])
def test_the_job_entry_points_are_jobs(entry: str) -> None:
    assert getattr(getattr(jobs, entry), "__wrapped__", None) is not None


def test_objects_frozen_during_a_job_are_thawed_when_it_fails() -> None:
    def failing() -> None:
        gc.freeze()
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        job(failing)()
    assert gc.get_freeze_count() == 0
