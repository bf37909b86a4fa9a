"""The peers of the replay benchmark: promptfoo replaying its cache, vcrpy replaying cassettes.

Not a test. ``bench_replay.py --peers N`` uses it. Each peer gets the same
scenarios as the harness (the synthetic project's prompts, questions and
~2 KB answers, the same three checks), records them once against an
OpenAI-compatible server on 127.0.0.1 that answers each question with the
scenario's answer, then the server is stopped and the replay is timed. Every
replay must pass every test with the server stopped: that is the proof it
replayed from its cache rather than from the network.

* promptfoo (npm) runs on Node 22, which the npm registry ships as the package
  ``node@22``: both are installed into ``~/.cache/harness-bench/peers``
  (override with ``HARNESS_BENCH_PEERS``). Its cache goes to
  ``PROMPTFOO_CACHE_PATH``, its database to ``PROMPTFOO_CONFIG_DIR``; telemetry
  and update checks are off.
* vcrpy (``pip install -e ".[bench]"``) replays one cassette per scenario under
  pytest with ``record_mode="none"``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCHMARKS.parent))
sys.path.insert(0, str(BENCHMARKS))

from provider_server import ProviderServer, Received, Reply, openai_answer  # noqa: E402
from synth import FORBIDDEN, MODEL, OPTIONS, SYSTEM_PROMPT, answer_text, spec  # noqa: E402

PEERS_DIR = Path(os.environ.get("HARNESS_BENCH_PEERS", Path.home() / ".cache/harness-bench/peers"))
PROMPTFOO_PACKAGES = ("node@22", "promptfoo")


def answers_by_question(scenarios: int) -> dict[str, str]:
    """What the recording server answers: each scenario's question -> its answer text."""
    return {s.question: answer_text(s.answer) for s in map(spec, range(scenarios))}


def recording_server(scenarios: int) -> ProviderServer:
    """An OpenAI-compatible server that answers each question with its scenario's answer."""
    table = answers_by_question(scenarios)

    def answer(received: Received) -> Reply:
        question = received.body["messages"][-1]["content"]
        return Reply(body=openai_answer(table[question], model=MODEL))

    return ProviderServer(answer)


# -- promptfoo --------------------------------------------------------------------------------


def ensure_promptfoo() -> Path:
    """Install Node 22 and promptfoo with npm (once); returns the folder holding the binaries."""
    bin_dir = PEERS_DIR / "node_modules" / ".bin"
    if not (bin_dir / "promptfoo").exists() or not (bin_dir / "node").exists():
        PEERS_DIR.mkdir(parents=True, exist_ok=True)
        package = PEERS_DIR / "package.json"
        if not package.exists():
            package.write_text('{"name": "harness-bench-peers", "private": true}\n', encoding="utf-8")
        npm = shutil.which("npm")
        if npm is None:
            raise SystemExit("promptfoo needs npm (apt-get install npm); or run with --peers 0")
        subprocess.run([npm, "install", "--no-audit", "--no-fund", *PROMPTFOO_PACKAGES],
                       cwd=PEERS_DIR, check=True)
    return bin_dir


def promptfoo_env(bin_dir: Path, folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",  # node 22 first
        "PROMPTFOO_CACHE_PATH": str(folder / "cache"),
        "PROMPTFOO_CONFIG_DIR": str(folder / "config"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
        "OPENAI_API_KEY": "local",
        "NO_COLOR": "1",
    })
    return env


def promptfoo_project(folder: Path, scenarios: int, base_url: str) -> Path:
    """A promptfoo config with the same prompt, questions, answers and checks; returns it."""
    folder.mkdir(parents=True, exist_ok=True)
    prompt = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "{{question}}"}]
    (folder / "prompt.json").write_text(json.dumps(prompt), encoding="utf-8")
    tests: list[dict[str, Any]] = []
    for s in map(spec, range(scenarios)):
        tests.append({"vars": {"tenant": s.tenant, "question": s.question}, "assert": [
            {"type": "contains", "value": s.reference},
            {"type": "not-contains", "value": FORBIDDEN},
            {"type": "javascript", "value": "JSON.parse(output).decision === 'answer'"},
        ]})
    config = {
        "description": f"harness replay benchmark, {scenarios} scenarios",
        "prompts": ["file://prompt.json"],
        "providers": [{"id": f"openai:chat:{MODEL}",
                       "config": {"apiBaseUrl": base_url, "apiKey": "local", **OPTIONS}}],
        "tests": tests,
    }
    path = folder / "promptfooconfig.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def promptfoo_command(bin_dir: Path, config: Path) -> list[str]:
    return [str(bin_dir / "promptfoo"), "eval", "-c", str(config), "--no-progress-bar", "--no-table"]


def record_promptfoo(folder: Path, scenarios: int, bin_dir: Path) -> list[str]:
    """Record promptfoo's cache against the loopback server; returns the replay command."""
    shutil.rmtree(folder, ignore_errors=True)
    server = recording_server(scenarios)
    with server:
        config = promptfoo_project(folder, scenarios, server.url + "/v1")
        done = subprocess.run(promptfoo_command(bin_dir, config), cwd=folder, capture_output=True,
                              text=True, env=promptfoo_env(bin_dir, folder), check=False)
        if done.returncode != 0 or server.answered < scenarios:
            raise SystemExit(f"promptfoo recording failed ({done.returncode}, {server.answered} "
                             f"answered):\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return promptfoo_command(bin_dir, config)


# -- vcrpy ------------------------------------------------------------------------------------

VCR_TEST = '''"""vcrpy peer: one cassette per scenario, replayed with record_mode from VCR_MODE."""
import json
import os
import sys
import urllib.request
from pathlib import Path

import pytest
import vcr
import yaml

sys.path.insert(0, {benchmarks!r})
from floor_loop import Floor  # noqa: E402

FLOOR = Floor(Path({root!r}))
HERE = Path(__file__).parent
URL = (HERE / "url.txt").read_text().strip() + "/chat/completions"
MODE = os.environ.get("VCR_MODE", "none")
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@pytest.mark.parametrize("file", FLOOR.files(), ids=lambda p: p.parent.name + "/" + p.stem)
def test_replay(file):
    scenario = yaml.load(file.read_text(encoding="utf-8"), Loader=LOADER)
    tenant = file.parent.name
    body = {{"model": FLOOR.declaration["model"],
             "messages": [{{"role": "system", "content": FLOOR.prompt.replace("{{{{tenant}}}}", tenant)}},
                          {{"role": "user", "content": scenario["input"]}}],
             **FLOOR.declaration["options"]}}
    request = urllib.request.Request(URL, data=json.dumps(body).encode(), method="POST",
                                     headers={{"Content-Type": "application/json",
                                               "Authorization": "Bearer local"}})
    with vcr.use_cassette(str(HERE / "cassettes" / f"{{tenant}}-{{file.stem}}.yaml"), record_mode=MODE):
        with urllib.request.urlopen(request) as response:
            text = json.load(response)["choices"][0]["message"]["content"]
    expect = scenario["expect"]
    assert expect[0]["contains"] in text
    assert expect[1]["not_contains"] not in text
    assert json.loads(text)["decision"] == expect[2]["json_path"]["equals"]
'''


def vcr_command(folder: Path, extra: tuple[str, ...] = ()) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra, str(folder)]


def record_vcr(folder: Path, root: Path, scenarios: int) -> list[str]:
    """Record one cassette per scenario against the loopback server; returns the replay command."""
    try:
        import vcr  # noqa: F401
    except ImportError as exc:
        raise SystemExit('vcrpy is not installed: pip install -e ".[bench]" (or --peers 0)') from exc
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (folder / "test_vcr.py").write_text(VCR_TEST.format(benchmarks=str(BENCHMARKS), root=str(root)),
                                        encoding="utf-8")
    server = recording_server(scenarios)
    with server:
        (folder / "url.txt").write_text(server.url + "/v1", encoding="utf-8")
        done = subprocess.run(vcr_command(folder), cwd=folder, capture_output=True, text=True,
                              env={**os.environ, "VCR_MODE": "all"}, check=False)
        if done.returncode != 0 or server.answered < scenarios:
            raise SystemExit(f"vcrpy recording failed ({done.returncode}, {server.answered} answered):"
                             f"\n{done.stdout[-2000:]}")
    return vcr_command(folder)
