"""Support-triage agents written the way teams write them on the official ``openai`` and ``anthropic``
SDKs: the client from the environment (``*_BASE_URL``, ``*_API_KEY``), no harness import, no test hook.

Each module has ``triage(scenario)``; a scenario has ``.input`` (str or None), ``.messages``
(list of {"role", "content"}), ``.params`` (dict) and ``.tenant`` (str).
The ``lookup_order`` tools read a tiny order book of their own (``ORDERS``), as a team's
stub of its order service would.
"""
