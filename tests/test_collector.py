"""The run command's collector pace: slower inside a run, Python's own thresholds after it."""

from __future__ import annotations

import gc

import pytest

from harness.running.collector import YOUNG_THRESHOLD, batch_pace


def test_a_run_collects_less_often_and_puts_the_thresholds_back() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 11, 12)
        with batch_pace():
            assert gc.get_threshold() == (YOUNG_THRESHOLD, 11, 12)
        assert gc.get_threshold() == (700, 11, 12)
    finally:
        gc.set_threshold(*before)


def test_the_thresholds_come_back_when_the_run_raises() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), batch_pace():
        raise RuntimeError("the run failed")
    assert gc.get_threshold() == before


def test_a_higher_threshold_set_by_the_user_is_kept() -> None:
    before = gc.get_threshold()
    try:
        gc.set_threshold(50_000, 10, 10)
        with batch_pace():
            assert gc.get_threshold()[0] == 50_000
    finally:
        gc.set_threshold(*before)
