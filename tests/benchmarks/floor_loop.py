"""Floor (a) of the replay benchmark: the least work a replay of a synthetic project can do.

Not a test. ``python tests/benchmarks/floor_loop.py PROJECT`` walks the same
scenario files the harness reads, parses each with the harness's own YAML
loader (``harness.documents.strictload.load_yaml``: libyaml's events, faster than
``yaml.CSafeLoader``, so the floor is never slower than the harness's parser),
builds the same canonical request, hashes it the
same way (``harness.requests.key.canonical_json`` + sha256 over the same key material),
reads and parses the entry's ``entry.json`` and ``contents.data`` and applies
the same three checks (``contains``, ``not_contains``, ``json_path`` equals).
No validation, no records, no report: a plain loop. It uses no part of the
harness's runner. Exit 1 if any check fails.

``floor_pytest_items`` writes floor (b): the same per-scenario body as one
parametrised pytest test, one item per scenario file.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from harness.documents.strictload import load_yaml
from harness.requests.key import canonical_json

_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Floor:
    """What every scenario of one project shares: the agent's declaration and prompt."""

    def __init__(self, root: Path) -> None:
        self.root = root
        agent_dir = next(p for p in sorted((root / "eval-datasets").iterdir()) if p.is_dir())
        self.agent = agent_dir.name
        self.declaration = yaml.load(  # noqa: S506 - a safe loader
            (agent_dir / "agent.yaml").read_text(encoding="utf-8"), Loader=_LOADER)
        self.prompt = (agent_dir / self.declaration["system_prompt"]).read_text(encoding="utf-8")
        self.cache = root / "eval-cache" / "cache"
        self.agent_dir = agent_dir

    def files(self) -> list[Path]:
        return sorted(self.agent_dir.glob("*/*.yaml"))

    def replay(self, file: Path) -> bool:
        """One scenario: parse, key, read the entry, check. True when the three checks pass."""
        scenario = load_yaml(file.read_text(encoding="utf-8"))
        tenant = file.parent.name
        scenario_id = f"{self.agent}/{tenant}/{file.stem}"
        request = {
            "messages": [{"role": "system", "content": self.prompt.replace("{{tenant}}", tenant)},
                         {"role": "user", "content": scenario["input"]}],
            "options": dict(self.declaration["options"]),
        }
        key = hashlib.sha256(canonical_json({
            "format": 1, "provider": self.declaration["provider"],
            "model": self.declaration["model"], "scenario": scenario_id, "iteration": 0,
            "request": request})).hexdigest()
        folder = self.cache / scenario_id / "0" / key[:16]
        meta = json.loads((folder / "entry.json").read_bytes())
        if meta["key"] != key:
            return False
        text = json.loads((folder / "contents.data").read_bytes())["content"]
        expect = scenario["expect"]
        return (expect[0]["contains"] in text and expect[1]["not_contains"] not in text
                and json.loads(text)["decision"] == expect[2]["json_path"]["equals"])


PYTEST_FLOOR = '''"""Floor (b): the floor loop as one trivial pytest item per scenario file."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, {benchmarks!r})
from floor_loop import Floor  # noqa: E402

FLOOR = Floor(Path({root!r}))


@pytest.mark.parametrize("file", FLOOR.files(), ids=lambda p: p.parent.name + "/" + p.stem)
def test_replay(file):
    assert FLOOR.replay(file)
'''


def floor_pytest_items(folder: Path, root: Path) -> Path:
    """Write floor (b) into ``folder`` (outside the project); returns the test file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    test = folder / "test_floor.py"
    test.write_text(PYTEST_FLOOR.format(benchmarks=str(Path(__file__).resolve().parent),
                                        root=str(root)), encoding="utf-8")
    return test


def main() -> int:
    floor = Floor(Path(sys.argv[1]))
    files = floor.files()
    failed = sum(not floor.replay(file) for file in files)
    print(f"floor: {len(files) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
