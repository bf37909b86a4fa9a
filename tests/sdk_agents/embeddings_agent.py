"""Support routing by embeddings: the category whose description is nearest to the message."""

import math

from openai import OpenAI

CATEGORIES = {
    "billing": "refund charge charged invoice payment bill",
    "shipping": "order package delivery late shipping tracking where arrive",
    "technical": "login password error crash bug app",
}


def _cosine(a, b):
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a) * sum(y * y for y in b)) or 1)


def triage(scenario):
    client = OpenAI()
    text = scenario.input or scenario.messages[-1]["content"]
    result = client.embeddings.create(model="text-embedding-3-small", input=[text, *CATEGORIES.values()])
    vectors = [item.embedding for item in result.data]
    scores = {name: _cosine(vectors[0], vector) for name, vector in zip(CATEGORIES, vectors[1:], strict=True)}
    return max(scores, key=scores.get)
