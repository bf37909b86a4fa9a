"""Synthetic projects for the replay benchmarks: one agent, N scenarios, about 2 KB per answer.

Not a test (pytest does not collect this folder). ``bench_replay.py`` and
``peers.py`` use it; it can also be run alone to look at a project:

    python tests/benchmarks/synth.py /tmp/bench-1k --scenarios 1000

Every scenario has one iteration and three hard assertions (``contains``,
``not_contains``, ``json_path``). The cache is seeded through the harness's own
scripted provider (``python -m harness run --refresh-cache --scripted``), so
the keys on disk are the ones an offline replay computes. The project is a git
repository (``git init``, nothing committed) so that ``python -m harness check``
can run its git guards over it.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

AGENT = "bench"
PROVIDER = "openai"
MODEL = "gpt-bench"
SYSTEM_PROMPT = ("You are the support assistant of {{tenant}}. Read the customer's question and "
                 "answer in JSON with the fields decision (answer, ask or refuse), reference, "
                 "summary and details.\n")
OPTIONS = {"temperature": 0, "max_tokens": 800}
#: Scenarios per tenant folder (a real project spreads them; 50k files in one folder is unusual).
PER_TENANT = 1000
TYPES = ("positive", "edge", "format", "negative")
FORBIDDEN = "INTERNAL-ONLY"
_FILLER = ("The order was packed in the regional warehouse and handed to the carrier the same day; "
           "tracking updates arrive every few hours and the customer can change the delivery slot "
           "from the account page without calling support. ")


@dataclass(frozen=True)
class ScenarioSpec:
    """What the generator put in one scenario: enough for the floors and the peers."""

    tenant: str
    name: str
    type: str
    question: str
    reference: str
    answer: dict[str, object]

    @property
    def local_id(self) -> str:
        return f"{self.tenant}/{self.name}"

    @property
    def scenario_id(self) -> str:
        return f"{AGENT}/{self.tenant}/{self.name}"


def tenant_of(index: int) -> str:
    return f"t{index // PER_TENANT:02d}"


def spec(index: int) -> ScenarioSpec:
    """The deterministic content of scenario ``index``."""
    reference = f"REF-{index:06d}"
    details = [f"{_FILLER}Step {step} for {reference}." for step in range(1, 8)]
    answer: dict[str, object] = {
        "decision": "answer",
        "reference": reference,
        "summary": f"Order {reference} is on its way; no action is needed from the customer.",
        "details": details,
    }
    return ScenarioSpec(tenant_of(index), f"s{index:06d}", TYPES[index % len(TYPES)],
                        f"Where is my order {reference}? It was due yesterday.", reference, answer)


def answer_text(answer: dict[str, object]) -> str:
    """The response content exactly as the scripted provider serialises a ``json`` answer."""
    return json.dumps(answer, ensure_ascii=False, indent=2)


def scenario_yaml(s: ScenarioSpec) -> str:
    return (f"type: {s.type}\n"
            f"description: The assistant answers where order {s.reference} is.\n"
            f"input: '{s.question}'\n"
            "expect:\n"
            f"  - contains: {s.reference}\n"
            f"  - not_contains: {FORBIDDEN}\n"
            "  - json_path: {path: decision, equals: answer}\n")


def generate(root: Path, scenarios: int, *, seed: bool = True) -> list[ScenarioSpec]:
    """Write the project under ``root`` (which must not exist) and seed its cache."""
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bench"\nversion = "0"\n\n[tool.harness]\nttl_days = 730\n',
        encoding="utf-8")
    (root / ".gitattributes").write_text("eval-cache/** -text\neval-datasets/** text eol=lf\n",
                                         encoding="utf-8")
    (root / ".gitignore").write_text("eval-results/\n", encoding="utf-8")
    agent_dir = root / "eval-datasets" / AGENT
    agent_dir.mkdir(parents=True)
    (agent_dir / "system.md").write_text(SYSTEM_PROMPT, encoding="utf-8")
    (agent_dir / "agent.yaml").write_text(
        f"provider: {PROVIDER}\nmodel: {MODEL}\nsystem_prompt: system.md\noutput: json\n"
        f"options: {json.dumps(OPTIONS)}\nscript: script.json\n", encoding="utf-8")
    specs = [spec(i) for i in range(scenarios)]
    script: dict[str, object] = {}
    for s in specs:
        folder = agent_dir / s.tenant
        if not folder.is_dir():
            folder.mkdir()
        (folder / f"{s.name}.yaml").write_text(scenario_yaml(s), encoding="utf-8")
        script[s.local_id] = {"json": s.answer, "usage": {"input_tokens": 60, "output_tokens": 500}}
    (agent_dir / "script.json").write_text(json.dumps(script), encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    if seed:
        seed_cache(root)
    return specs


def seed_cache(root: Path) -> None:
    """Record every answer through the scripted provider (free; the real write path)."""
    done = subprocess.run([sys.executable, "-m", "harness", "--project", str(root), "run",
                           "--refresh-cache", "--scripted", "-q"],
                          capture_output=True, text=True, env=bench_env(), check=False)
    if done.returncode != 0:
        raise SystemExit(f"seeding {root} failed ({done.returncode}):\n{done.stdout[-2000:]}"
                         f"\n{done.stderr[-2000:]}")


def bench_env() -> dict[str, str]:
    """The environment of every measured command: no CI summary file, no user plugins."""
    env = dict(os.environ)
    env.pop("GITHUB_STEP_SUMMARY", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--scenarios", type=int, default=1000)
    parser.add_argument("--no-seed", action="store_true", help="write the project, not the cache")
    args = parser.parse_args()
    generate(args.root, args.scenarios, seed=not args.no_seed)
    print(f"{args.scenarios} scenarios in {args.root}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
