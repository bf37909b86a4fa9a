"""One source of truth (issue 12, item 7): the pieces run and check used to spell twice.

The behaviour of each piece is tested where it lives; these tests keep it single:
a second copy of a re-record command, of the status sets or of a
``[tool.harness]`` reader fails here.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest

from harness.core.entities import ANSWER_FAILURES, FAILING_STATUSES, REPLAY_FAILURES, Status
from harness.core.errors import ConfigError
from harness.core.rerecord import rerecord_command
from harness.loading.config import load_config

HARNESS = Path(__file__).resolve().parent.parent / "harness"
#: A command line that would re-record: only harness/core/rerecord.py may build one.
_COMMAND = re.compile(r"harness run --(?:refresh-cache|record-missing)")
#: Files that may name the flags in prose or in a generated file's comments, not build a hint.
_PROSE = {"rerecord.py", "scaffold.py"}


def test_every_re_record_command_is_built_by_harness_rerecord() -> None:
    offenders = [f"{path.relative_to(HARNESS)}:{number}"
                 for path in sorted(HARNESS.rglob("*.py")) if path.name not in _PROSE
                 for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if _COMMAND.search(line)]
    assert offenders == []


def test_statuses_are_defined_once_and_partition_the_failures() -> None:
    assert set(get_args(Status)) - {"passed"} == FAILING_STATUSES
    assert REPLAY_FAILURES | ANSWER_FAILURES == FAILING_STATUSES
    assert not REPLAY_FAILURES & ANSWER_FAILURES


def test_the_hint_builder_quotes_escapes_and_completes() -> None:
    assert rerecord_command("a/b/c d[1]", fix="missing", scripted=True, iterations=3) == (
        "python -m harness run --record-missing --scripted --scenario 'a/b/c d[[]1]' --iterations 3")
    assert rerecord_command() == "python -m harness run --refresh-cache"


@pytest.mark.parametrize(("value", "ok"), [('"allow.txt"', True), ("5", False), ('""', False)])
def test_the_allowlist_is_parsed_with_the_rest_of_tool_harness(tmp_path: Path, value: str,
                                                               ok: bool) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.harness]\nallowlist = {value}\n", encoding="utf-8")
    if ok:
        assert load_config(tmp_path).allowlist == tmp_path / "allow.txt"
    else:
        with pytest.raises(ConfigError, match="'allowlist' must be a non-empty path string"):
            load_config(tmp_path)
