"""The frameworks the README names, unchanged, recorded at the wire and replayed offline.

"Your agent, unchanged" reaches the official SDKs' httpx transports, and through them the
frameworks built on those SDKs. Each agent here is written plainly on one of them, as its
own documentation shows (tests/sdk_agents/fw_*.py):

- LangChain: ``ChatOpenAI(...).bind_tools`` in a tool loop; ``ChatAnthropic`` streamed;
- pydantic-ai: an ``Agent`` with a tool and a structured output, run with ``run_sync``;
- the OpenAI Agents SDK: ``Runner.run_sync`` with a function tool (the Responses API);
- litellm: ``litellm.completion`` with tools; ``litellm.acompletion``, which sends with aiohttp
  behind httpx's API (harness/wire/adopted.py).

A fresh virtualenv installs the built harness wheel and the frameworks from the local
wheelhouse, offline; someone else's repository records against the loopback fake at the
default concurrency (several iterations at once: the async clients pydantic-ai and the
Agents SDK keep for the process meet several threads' event loops), then replays with the
fake stopped and no key set, and an audit hook proves no connection is made (LangChain and
urllib3 create probe sockets at import; none connects).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml
from adoption_support import Venv, git, make_venv, ok
from sdk_support import AGENTS_DIR, LATE, LOST
from wire_fakes import WireFake

pytestmark = pytest.mark.slow(seconds=60)

#: agent -> (module in tests/sdk_agents, output kind, the API its framework calls)
AGENTS = {
    "lc-chat": ("fw_langchain_tools", "json", "openai.chat"),
    "lc-claude": ("fw_langchain_anthropic_stream", "text", "anthropic.messages"),
    "pyd-ai": ("fw_pydantic_ai_agent", "json", "openai.responses"),
    "agents-sdk": ("fw_openai_agents_sdk", "text", "openai.responses"),
    "litellm": ("fw_litellm_tools", "json", "openai.chat"),
    "litellm-async": ("fw_litellm_async", "json", "openai.chat"),
}
TENANTS = {"northwind": LATE, "contoso": LOST, "fabrikam": LATE}
ITERATIONS = len(AGENTS) * len(TENANTS)
#: The frameworks' own switches for a run with no network: no tracing upload (Agents SDK), the
#: model cost map from the wheel instead of GitHub (litellm fetches it at import otherwise, and
#: an offline run refuses that request: docs/agents.md, "Frameworks").
QUIET = {"OPENAI_AGENTS_DISABLE_TRACING": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
#: Lists the process's connections (a socket created and never connected is no network use).
CONNECTS = textwrap.dedent("""
    import sys
    found = []
    sys.addaudithook(lambda event, args: found.append(args[1]) if event == "socket.connect" else None)
    from harness.frontends.cli import main
    code = main(sys.argv[1:])
    print("CONNECTS", found)
    sys.exit(code)
""")


def _repository(root: Path) -> Path:
    (root / "support_bot").mkdir(parents=True)
    (root / "support_bot/__init__.py").write_text('"""The support team\'s agents."""\n')
    for module, _, _ in AGENTS.values():
        shutil.copy(AGENTS_DIR / f"{module}.py", root / "support_bot" / f"{module}.py")
    (root / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "support-bot"
        version = "1.0.0"

        [tool.setuptools]
        packages = ["support_bot"]
        """))
    for agent, (module, output, _) in AGENTS.items():
        folder = root / "eval-datasets" / agent
        folder.mkdir(parents=True)
        (folder / "agent.yaml").write_text(yaml.safe_dump(
            {"entrypoint": f"support_bot.{module}:triage", "output": output}))
        for tenant, text in TENANTS.items():
            (folder / tenant).mkdir()
            (folder / tenant / "tenant.yaml").write_text("params: {}\n")
            (folder / tenant / "order-question.yaml").write_text(yaml.safe_dump({
                "type": "positive", "description": "An order question is looked up and triaged as shipping.",
                "input": text, "expect": [{"tool_called": "lookup_order"}, {"contains": "shipping"}]}))
    git(root, "init", "-q", "-b", "main")
    return root


def _run(venv: Venv, command: list[str], cwd: Path,
         extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in venv.env().items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    env.update({**QUIET, **extra})
    return subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300,
                          check=False)


def test_agents_on_langchain_pydantic_ai_the_agents_sdk_and_litellm_record_and_replay_unchanged(
        wheelhouse: Path, tmp_path: Path) -> None:
    venv = make_venv(tmp_path / "venv", wheelhouse)
    ok(venv.run("pip", "install", "offline-evals", "langchain-openai", "langchain-anthropic",
                "pydantic-ai-slim[openai,anthropic]", "openai-agents", "litellm"))
    repo = _repository(tmp_path / "support")
    ok(venv.run("pip", "install", "-e", ".", cwd=repo))
    with WireFake() as fake:
        loopback = {**fake.env(), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}
        recorded = _run(venv, ["harness", "run", "--record-missing"], repo, loopback)
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        assert f"{ITERATIONS} passed, 0 failed" in recorded.stdout, recorded.stdout
        sent = len(fake.requests)
    entries = sorted((repo / "eval-cache" / "cache").rglob("entry.json"))
    assert sent == len(entries) == 2 * ITERATIONS  # a tool call and an answer per iteration, each paid once
    for agent, (_, _, api) in AGENTS.items():
        apis = {yaml.safe_load(p.read_text())["wire"]["api"]
                for p in (repo / "eval-cache/cache" / agent).rglob("entry.json")}
        assert apis == {api}, agent
    replay = _run(venv, ["python", "-c", CONNECTS, "--project", str(repo), "run"], repo, {})
    assert replay.returncode == 0, replay.stdout + replay.stderr
    assert re.search(rf"PASSED: {ITERATIONS} passed, 0 failed", replay.stdout), replay.stdout
    assert "CONNECTS []" in replay.stdout, replay.stdout
