"""The verifier's remembered timestamps: the same answers as parsing, and bounded memory."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from harness.cache import verify


def test_a_remembered_stamp_is_the_parsed_one_and_a_naive_one_stays_refused() -> None:
    first = verify._stamp("2027-01-02T03:04:05Z")
    assert first == datetime(2027, 1, 2, 3, 4, 5, tzinfo=UTC)
    assert verify._stamp("2027-01-02T03:04:05Z") is first  # answered from memory
    for _ in range(2):  # refused every time: a failure is never remembered
        with pytest.raises(ValueError, match="has no time zone"):
            verify._stamp("2027-01-02T03:04:05")
    with pytest.raises(ValueError, match="not a string"):
        verify._stamp(20270102)


def test_distinct_stamps_never_hold_more_than_the_bound() -> None:
    for second in range(verify._STAMPS_MAX + 50):
        verify._stamp(f"2027-01-01T00:{second // 60 % 60:02d}:{second % 60:02d}+0{second // 3600}:00")
    assert 0 < len(verify._STAMPS) <= verify._STAMPS_MAX
