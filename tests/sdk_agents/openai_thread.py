"""Support triage that asks its model on a thread of its own (``threading.Thread``, no pool).

With ``THREAD_AGENT_OVERLAP`` set (by the test), ``OVERLAP`` holds each iteration until the
other one is in flight too, as two iterations of a recording run with ``--concurrency 2`` are:
the thread's request then comes while two iterations are bound at once (an iteration alone,
as the plan before a recording runs them, waits 3 s and goes on).
"""

import os
import threading

from openai import OpenAI

OVERLAP = threading.Barrier(2, timeout=3) if os.environ.get("THREAD_AGENT_OVERLAP") else None
client = OpenAI()


def triage(scenario):
    if OVERLAP is not None:
        try:
            OVERLAP.wait()
        except threading.BrokenBarrierError:  # alone (the run's plan runs one at a time): go on
            OVERLAP.reset()
    found = {}

    def ask():
        try:
            reply = client.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": scenario.input}])
            found["answer"] = reply.choices[0].message.content
        except Exception as exc:  # reported by the iteration, below
            found["error"] = exc

    worker = threading.Thread(target=ask)
    worker.start()
    worker.join()
    if "error" in found:
        raise found["error"]
    return found["answer"]
