"""SDK-agent projects on disk: unchanged agent code, driven through the real CLI in subprocesses.

Subprocesses, not in-process calls: the agents build their SDK client at import
time from the environment, as production code does, so each run needs a fresh
interpreter with its own environment (the fake's port, or no key at all).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.report.load import load_records

AGENTS_DIR = Path(__file__).resolve().parent / "sdk_agents"
REPO_ROOT = Path(__file__).resolve().parent.parent
#: Variables of the machine's environment that must not leak into an offline run.
PROVIDER_VARIABLES = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL",
                      "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")

#: Runs the CLI with an audit hook that lists every network socket event of the process (an
#: asyncio event loop's own AF_UNIX socket pair is no network and is not listed).
AUDITED = textwrap.dedent("""
    import socket, sys
    events = []
    NETWORK = (socket.AF_INET, socket.AF_INET6)
    def audit(event, args):
        if event == "socket.__new__" and args[1] not in NETWORK:
            return
        if event.startswith("socket."):
            events.append(event)
    sys.addaudithook(audit)
    from harness.frontends.cli import main
    code = main(sys.argv[1:])
    print("SOCKET_EVENTS", events)
    sys.exit(code)
""")

LATE = "Where is my order A-1001? It is late and I need it."
LOST = "My package B-2001 never arrived, this is the third time."


@dataclass
class Ran:
    code: int
    out: str
    err: str


class SdkProject:
    """A project whose agent is one of tests/sdk_agents, copied unchanged into its root."""

    def __init__(self, root: Path, module: str, *, output: str = "json", tools: bool = True) -> None:
        self.root = root
        self.module = module
        (root / "pyproject.toml").write_text("[tool.harness]\n", encoding="utf-8")
        shutil.copy(AGENTS_DIR / f"{module}.py", root / f"{module}.py")
        self.write("eval-datasets/triage/agent.yaml", {"entrypoint": f"{module}:triage", "output": output})
        expect: list[Any] = [{"contains": "shipping"}]
        if tools:
            expect.append({"tool_called": "lookup_order"})
        for tenant in ("acme", "globex"):
            self.write(f"eval-datasets/triage/{tenant}/tenant.yaml", {"params": {}})
            self.write(f"eval-datasets/triage/{tenant}/late-order.yaml", {
                "type": "positive", "description": "A late order is looked up and triaged as shipping.",
                "input": LATE, "expect": expect})

    def write(self, relative: str, content: Any) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            path.write_text(textwrap.dedent(content), encoding="utf-8")
        else:
            path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
        return path

    def harness(self, *args: str, env: dict[str, str] | None = None, audited: bool = False) -> Ran:
        """``python -m harness --project ROOT ARGS`` with no provider variable but ``env``'s."""
        clean = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARIABLES}
        clean.update(env or {})
        command = [sys.executable, "-c", AUDITED] if audited else [sys.executable, "-m", "harness"]
        result = subprocess.run([*command, "--project", str(self.root), *args], capture_output=True,
                                text=True, env=clean, cwd=self.root, timeout=120, check=False)
        return Ran(result.returncode, result.stdout, result.stderr)

    def entries(self) -> list[dict[str, Any]]:
        """Every entry.json under the cache."""
        return [json.loads(p.read_text(encoding="utf-8"))
                for p in sorted((self.root / "eval-cache").rglob("entry.json"))]

    def payloads(self) -> list[bytes]:
        return [p.read_bytes() for p in sorted((self.root / "eval-cache").rglob("contents.data"))]

    def cache_digest(self) -> str:
        digest = hashlib.sha256()
        for path in sorted((self.root / "eval-cache").rglob("*")):
            digest.update(path.relative_to(self.root).as_posix().encode())
            if path.is_file():
                digest.update(path.read_bytes())
        return digest.hexdigest()

    def records(self) -> list[dict[str, Any]]:
        runs = self.root / "eval-results" / "results"
        return [r for run in sorted(runs.iterdir()) for r in load_records(run)] if runs.is_dir() else []

    def last_run(self) -> dict[str, Any]:
        runs = sorted((self.root / "eval-results" / "results").iterdir())
        data: dict[str, Any] = json.loads((runs[-1] / "run.json").read_text(encoding="utf-8"))
        return data
