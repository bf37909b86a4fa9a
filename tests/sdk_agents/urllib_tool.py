"""An agent whose tool is looked up with ``urllib`` (no httpx), which shrugs a failed lookup off."""

import json
import os
import urllib.request


def triage(scenario):
    try:
        with urllib.request.urlopen(os.environ["TOOL_URL"], timeout=3) as reply:
            status = reply.read().decode()
    except OSError as exc:
        status = f"unreachable ({type(exc).__name__})"
    return json.dumps({"category": "shipping", "status": status})
