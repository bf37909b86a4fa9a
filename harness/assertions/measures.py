"""Measures of a text that survive rewording: words, sentences and questions.

Counting by whitespace lets a six-word option label through as four words
when two of them are joined by a hyphen or an em dash, and looking for ``?``
misses a question written as a request ("Please also confirm the date.") or
handed back as a choice ("Your call: A or B."). These measures are the ones the
``words``, ``sentences`` and ``questions`` assertions and the example metrics
use, so a schema, an assertion and a metric can no longer count differently.

Deterministic by design (no model): what each one cannot see is documented in
``docs/assertions.md`` ("Measures and their limits").
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

__all__ = ["Question", "questions", "sentences", "words"]

#: Word separators besides whitespace: hyphens and dashes of every width, slashes, bars.
_WORD_SPLIT = re.compile(r"[\s\-\u2010-\u2015\u2212\u2e3a\u2e3b/\\|]+")
#: Characters of scripts written without spaces between words (Han, kana).
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]+")
#: Chinese and Japanese end a sentence with no space after it: 。！？ (or ! ? before a CJK character).
_CJK_END = re.compile(r"[。！？]|[!?](?=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff])")
#: Where a sentence ends: terminal punctuation followed by a space or the end, or a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?…。！？])[\"'”’»)\]]*(?:\s+|$)|\n+")


def words(text: str) -> int:
    """Words of ``text``: split on whitespace, hyphens, dashes and slashes; a token counts when
    it has a letter or digit; a run of n Chinese or Japanese characters counts as ceil(n / 2)
    (the mean word of those scripts is one to two characters long)."""
    text = unicodedata.normalize("NFKC", text)
    count = 0
    for run in _CJK.findall(text):
        count += math.ceil(len(run) / 2)
    rest = _CJK.sub(" ", text)
    count += sum(1 for token in _WORD_SPLIT.split(rest) if any(ch.isalnum() for ch in token))
    return count


def sentences(text: str) -> list[str]:
    """The sentences of ``text``: cut after ``.``, ``!``, ``?``, ``…`` when a space or the end
    follows, after ``。！？`` always (no space follows them), and at line breaks."""
    text = unicodedata.normalize("NFKC", _CJK_END.sub("\\g<0>\n", text))
    return [piece.strip() for piece in _SENTENCE_END.split(text) if piece and piece.strip()]


@dataclass(frozen=True, slots=True)
class Question:
    """A sentence found to ask something, and why."""

    sentence: str
    form: str
    """``question mark``, or the request form that made it one (``please confirm``...)."""


# Request forms, English then Portuguese, matched on the casefolded sentence. Each is a
# deterministic cue that the sentence hands a question or a decision to the reader.
_REQUEST_FORMS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern)) for name, pattern in (
        # English: polite imperatives that ask for an answer
        ("please + request verb", r"\b(?:please|kindly)\b[\s,]+(?:\w+\s+){0,2}?"
         r"(?:confirm|let\s+(?:me|us)\s+know|tell|advise|choose|pick|select|decide|specify|"
         r"clarify|indicate|reply|respond|answer|share|send|check|verify|approve)\b"),
        ("let me know", r"\blet\s+(?:me|us)\s+know\b"),
        ("confirm whether", r"^(?:(?:also|and|so|now|then|first)[\s,]+)?"
         r"(?:confirm|tell\s+(?:me|us)|advise)\b"),
        ("your call", r"\b(?:it'?s|it\s+is|that'?s|that\s+is)\s+(?:your|ur)\s+(?:call|choice|decision|pick)\b"
         r"|^(?:your|ur)\s+(?:call|choice|decision|pick)\s*[:,.!-]|\b(?:your|ur)\s+(?:call|choice|decision|pick)\s*[.!]?$"
         # "... Your call: A or B" after text with no full stop (a label, a name) still hands it over
         r"|\b(?:your|ur)\s+(?:call|choice|decision|pick)\s*:"),
        ("up to you", r"\b(?:up\s+to\s+you|you\s+decide|you\s+choose|you\s+pick|you\s+tell\s+me)\b"),
        ("waiting for your answer", r"\b(?:await(?:ing)?|waiting\s+(?:for|on))\s+your\s+"
         r"(?:decision|confirmation|answer|reply|choice|input|go-ahead|approval)\b"),
        ("i need you to", r"\b(?:i|we)\s+need\s+(?:you\s+to|your)\s+"
         r"(?:confirm|choose|decide|tell|pick|answer|reply|confirmation|decision|answer|choice)\b"),
        # ... but not a heading of one word and a colon: "What changes: the feed becomes..."
        # labels what follows ("Which one: A or B." and "Which: A or B." still ask)
        ("question word", r"^(?:(?:also|and|so|now|then|first|but)[\s,]+)?"
         r"(?:which|what|who|whom|whose)\b(?!\s+(?!one\b)[\w'-]+\s*:)"),
        ("question word + auxiliary", r"^(?:(?:also|and|so|now|then|but)[\s,]+)?"
         r"(?:when|where|how|why)\s+(?:do|does|did|can|could|would|will|should|shall|is|are|"
         r"was|were|much|many|long|often|soon)\b"),
        ("inverted auxiliary", r"^(?:(?:also|and|so|now|then|but)[\s,]+)?"
         r"(?:(?:can|could|would|will|are|is|should|shall|may|were|was)\s+"
         r"(?:you|we|i|they|it|this|that|there|he|she)"
         r"|(?:do|does|did|have|has)\s+(?:you|we|i|they|he|she))\b"),
        # Portuguese (pt-BR and pt-PT)
        ("por favor + verbo de pedido", r"\b(?:por\s+favor|pf|pfv)\b[\s,]+(?:\w+\s+){0,2}?"
         r"(?:confirme|confirma|diga|diz|informe|informa|escolha|escolhe|responda|responde|"
         r"avise|avisa|indique|indica|decida|decide|me\s+(?:diga|avise|informe|confirme|conte))\b"),
        ("me diga", r"\bme\s+(?:diga|diz|avise|avisa|informe|informa|confirme|confirma|conte|"
         r"conta|responda|responde)\b"),
        ("confirme", r"^(?:(?:também|e|então|agora|antes)[\s,]+)?(?:confirme|confirma|informe|"
         r"indique|escolha|decida)\b"),
        ("você decide", r"\b(?:você|voce|vc|o\s+senhor|a\s+senhora)\s+(?:decide|escolhe|"
         r"prefere|gostaria|manda|que\s+sabe)\b"),
        ("a decisão é sua", r"\b(?:a\s+)?(?:decisão|decisao|escolha)\s+é\s+(?:sua|tua)\b"
         r"|\bfica\s+a\s+(?:seu|teu)\s+critério\b|\bfica\s+com\s+você\b"),
        ("aguardo sua resposta", r"\baguard(?:o|amos|ando)\s+(?:a\s+|o\s+)?(?:sua|seu|tua|teu)\s+"
         r"(?:confirmação|resposta|decisão|retorno|escolha|aprovação|ok)\b"),
        ("pode confirmar", r"\b(?:pode|poderia|podes|consegue)\s+(?:me\s+)?(?:confirmar|dizer|"
         r"informar|responder|avisar)\b"),
        ("palavra interrogativa", r"^(?:(?:e|então|agora|também|mas)[\s,]+)?"
         r"(?:qual|quais|quem|quanto|quantos|quanta|quantas)\b"),
        ("palavra interrogativa + verbo", r"^(?:(?:e|então|agora|também|mas)[\s,]+)?"
         r"(?:como|quando|onde|por\s*que)\s+(?:(?:você|vocês|voce|vc|o\s+senhor|a\s+senhora)\s+)?"
         r"(?:prefere|preferem|quer|querem|deseja|desejam|devo|devemos|podemos|posso|gostaria|"
         r"gostariam)\b"),
    ))


def question_form(sentence: str) -> str | None:
    """Why ``sentence`` asks something (a question mark or a request form), else ``None``."""
    if "?" in sentence or "¿" in sentence:
        return "question mark"
    folded = unicodedata.normalize("NFKC", sentence.casefold()).lstrip("\"'“‘«([-*•0123456789. ")
    for name, pattern in _REQUEST_FORMS:
        if pattern.search(folded):
            return name
    return None


#: A sentence that only qualifies the question before it ("If so, how much?") is part of it.
_CONTINUATION = re.compile(r"^(?:and\s+)?if\s+(?:so|not|yes|no)\b|^(?:e\s+)?(?:se|caso)\s+(?:sim|não|nao)\b")


def questions(text: str) -> list[Question]:
    """The sentences of ``text`` that ask the reader something, with the form that says so; a
    follow-up that only qualifies the previous question ("If so, how much?") is not counted."""
    return list(_questions(text))


@lru_cache(maxsize=1024)
def _questions(text: str) -> tuple[Question, ...]:
    """:func:`questions`, once per text: each sentence without a question mark is tried
    against every request form, and the same texts come back (of the 993 texts the committed
    examples' counterexamples measure, 495 repeat one measured before: a field bounded by an
    agent rule and by the scenario's own item, or equal fields of several answers). The
    result is immutable (a tuple of frozen :class:`Question`), so sharing it is safe."""
    found: list[Question] = []
    previous_asked = False
    for sentence in sentences(text):
        form = question_form(sentence)
        folded = unicodedata.normalize("NFKC", sentence.casefold())
        if form is not None and not (previous_asked and _CONTINUATION.match(folded)):
            found.append(Question(sentence, form))
        previous_asked = form is not None
    return tuple(found)
