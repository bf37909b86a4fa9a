"""Transports outside httpx's own that the interceptor answers for (harness/wire/adopted.py).

The aiohttp transports behind httpx's interface are adopted by class name, also when the
class is defined in the middle of an iteration (litellm builds its transport module on
the first async call). A transport that forwards through httpx's own (patched) transport
must be answered once, not recorded twice. The ``httpx_aiohttp`` package here is a stand-in
written for this test: a class of an adopted name that sends with
``httpx.AsyncHTTPTransport``, imported lazily by the agent. The real aiohttp transports are
tested end to end in tests/test_wire_agents.py (the SDKs' ``DefaultAioHttpClient``) and
tests/test_adoption_frameworks_e2e.py (litellm's ``acompletion``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sdk_support import SdkProject
from wire_fakes import WireFake

pytestmark = pytest.mark.slow(seconds=8)

STAND_IN = '''
try:  # the httpx the installed openai SDK is built on
    import httpx2 as httpx
except ImportError:
    import httpx


class AiohttpTransport(httpx.AsyncBaseTransport):
    """Named like httpx_aiohttp's transport; sends through httpx's own transport."""

    def __init__(self):
        self.inner = httpx.AsyncHTTPTransport()
        self.sent = 0

    async def handle_async_request(self, request):
        self.sent += 1
        return await self.inner.handle_async_request(request)
'''

AGENT = '''
import json

from openai import AsyncOpenAI, DefaultAsyncHttpxClient


async def triage(scenario):
    from httpx_aiohttp.transport import AiohttpTransport  # defined inside the iteration

    transport = AiohttpTransport()
    async with AsyncOpenAI(http_client=DefaultAsyncHttpxClient(transport=transport)) as client:
        reply = await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": scenario.input}])
    return f"{reply.choices[0].message.content} (sent {transport.sent})"
'''


@pytest.fixture
def fake() -> Iterator[WireFake]:
    with WireFake() as running:
        yield running


def test_an_adopted_transport_defined_mid_iteration_is_answered_once(tmp_path: Path,
                                                                      fake: WireFake) -> None:
    project = SdkProject(tmp_path, "openai_tools", output="text", tools=False)
    (project.root / "openai_tools.py").write_text(AGENT, encoding="utf-8")
    project.write("httpx_aiohttp/__init__.py", "")
    project.write("httpx_aiohttp/transport.py", STAND_IN)
    recorded = project.harness("run", "--record-missing", env=fake.env())
    assert recorded.code == 0, recorded.out + recorded.err
    assert len(fake.requests) == 2  # one call per tenant, each sent once
    assert len(project.entries()) == 2  # and stored once, though two patched transports saw it
    fake.stop()
    replay = project.harness("run", audited=True)
    assert replay.code == 0, replay.out + replay.err
    assert "SOCKET_EVENTS []" in replay.out
    outputs = [r["response"]["content"] for r in project.records()[-2:]]
    assert all(str(o).endswith("(sent 0)") for o in outputs)  # replayed above the stand-in's send
