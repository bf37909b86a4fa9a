"""The assertion forms of issue 18: folded term lists, words, sentences, questions, language.

Every form rejects at least one wrong answer and passes a right one, and the
reject is the check's own verdict (never an "assertion crashed" reject, which
would count a bug as strength).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from harness.assertions import check_item, evaluate, measures
from harness.assertions.fold import fold, needle_finder
from harness.assertions.language import KNOWN, identify, model_languages
from harness.core.entities import AgentOutput, ChatResponse, ToolCall, Verdict


def json_output(doc: Any, *calls: ToolCall) -> AgentOutput:
    raw = json.dumps(doc, ensure_ascii=False)
    return AgentOutput(ChatResponse(raw, tuple(calls)), raw, doc)


def text_output(content: str) -> AgentOutput:
    return AgentOutput(ChatResponse(content), content, None)


def verdict(item: Mapping[str, Any], output: AgentOutput) -> Verdict:
    assert check_item(item) == [], check_item(item)
    (found,) = evaluate([item], output, output_kind="json" if output.parsed is not None else "text",
                        output_schema=None)
    assert "crashed" not in found.reason, found
    return found


def rejects(item: Mapping[str, Any], output: AgentOutput) -> str:
    found = verdict(item, output)
    assert found.outcome == "reject", found
    return found.reason


def passes(item: Mapping[str, Any], output: AgentOutput) -> str:
    found = verdict(item, output)
    assert found.outcome == "pass", found
    return found.reason


# --- folding ------------------------------------------------------------------------------

LEAKS = {"name": "no internal field names",
         "not_contains": {"any": ["status_summary", "maria.souza", "3f9a2c1d8e7b6a5f"]}}


@pytest.mark.parametrize("leak", [
    "Your status summary is ready.",
    "See the StatusSummary panel.",
    "The status-summary was updated.",
    "STATUS_SUMMARY: ok",
    "Ask Maria Souza about it.",
    "Fixed in commit 3f9a2c1.",
    "ｓｔａｔｕｓ＿ｓｕｍｍａｒｙ",  # full width: NFKC
])
def test_a_folded_term_list_rejects_variant_spellings(leak: str) -> None:
    reason = rejects(LEAKS, text_output(leak))
    assert reason.startswith("found ")


def test_a_folded_term_list_passes_a_clean_answer_and_does_not_match_across_separators() -> None:
    passes(LEAKS, text_output("Your weekly report is ready; ask the team lead."))
    passes({"not_contains": {"any": ["note"]}}, text_output("There is no telling when."))


def test_folding_can_be_turned_off_and_a_single_value_is_literal_by_default() -> None:
    passes({"not_contains": {"any": ["status_summary"], "fold": False}},
           text_output("Your status summary is ready."))
    passes({"not_contains": "status_summary"}, text_output("Your status summary is ready."))
    rejects({"not_contains": {"value": "status_summary", "fold": True}},
            text_output("Your status summary is ready."))


def test_markers_without_letters_are_matched_as_written() -> None:
    item = {"not_contains": {"any": ["**", "# ", "- "]}}
    rejects(item, text_output("Pick one:\n- A\n- B"))
    passes(item, text_output("Pick one: 1) A-side 2) B#1"))


def test_contains_and_equals_fold_on_request() -> None:
    passes({"contains": {"value": "auto approve", "fold": True}}, text_output("Set it to Auto-Approve."))
    rejects({"contains": {"value": "auto approve", "fold": True}}, text_output("Set it to manual."))
    passes({"equals": {"value": "status summary", "fold": True}}, text_output(" StatusSummary "))


def test_regex_on_the_folded_text() -> None:
    item = {"not_regex": {"pattern": r"\bwill go ?out\b", "fold": True}}
    rejects(item, text_output("The invoice Will-Go-Out tonight."))
    passes(item, text_output("The invoice is drafted."))


def test_a_term_ending_in_a_separator_keeps_its_boundary() -> None:
    item = {"not_contains": {"any": ["ERR_", "rb_0"]}}
    rejects(item, text_output("Logged as err code 7."))
    rejects(item, text_output("Rubric RB-001 applied."))
    passes(item, text_output("I would have preferred another error message."))


def test_fold_itself() -> None:
    assert fold("StatusSummary") == fold("status-summary") == fold("status_summary") == "status summary"
    assert needle_finder("status summary")(fold("statussummary")) is not None


@pytest.mark.parametrize(("term", "text", "span"), [
    ("3be1f0c9d2a4b5e6", "see commit 3be1f0c for it", (11, 18)),  # the short form of a hash
    ("3be1 f0c9d2a4b5", "see 3be1f0c", (4, 11)),  # a hash written in two words
    ("3be1f0c9d2a4b5e6", "see 3be1f0c9d2a4b5e6", (4, 20)),
    ("status summary", "the statussummary", (4, 17)),
    ("status summary", "status only", None),  # the first word alone is no match
    ("ERR_", "an ERR_CODE", (3, 7)),  # a separator at the end is a word boundary
    ("ERR_", "an error code", None),
    ("note", "no telling", None),
    ("Summary", "a summary, then the summary", (2, 9)),  # one word: the first occurrence
    ("hash", "a hashtag", (2, 6)),  # one word is found inside a longer one, as the regex did
])
def test_a_finder_answers_with_the_first_match_or_none(term: str, text: str,
                                                       span: tuple[int, int] | None) -> None:
    """A finder first asks whether the text holds the term's first word (of a hash: its
    short form) and searches only then, and a plain one-word term is found by str.find;
    what it finds is the first match either way."""
    assert needle_finder(term)(fold(text)) == span


def test_an_upper_case_hash_is_found_like_its_lower_case_spelling() -> None:
    # a digit followed by a capital is no camel-case boundary: 3BE1F0C9 stays one word
    item = {"not_contains": {"any": ["3be1f0c9"], "ignore_case": True}}
    rejects(item, text_output("Quote receipt 3BE1F0C9 to them."))
    passes(item, text_output("Quote the order date to them."))
    assert fold("3BE1F0C9") == "3be1f0c9"
    assert fold("HTTPServer statusSummary") == "http server status summary"


# --- words -------------------------------------------------------------------------------

LABELS = {"name": "labels of at most five words",
          "words": {"path": "questions[*].options[*]", "max": 5}}


@pytest.mark.parametrize("label", [
    "Full-body strength—three days a week",
    "Strength and cardio/mixed weekday evenings",
    "One two three four five six",
])
def test_words_rejects_a_six_word_label_however_it_is_joined(label: str) -> None:
    reason = rejects(LABELS, json_output({"questions": [{"options": ["Short", label]}]}))
    assert "found 6 words" in reason or "found 7 words" in reason


def test_words_passes_short_labels_and_counts_cjk_by_pairs() -> None:
    passes(LABELS, json_output({"questions": [{"options": ["Under 80 euros", "80 to 150 euros"]}]}))
    assert measures.words("低于八十欧元") == 3
    assert measures.words("Check-in on 3/4") == 5  # slashes split numbers too
    assert measures.words(" — ") == 0
    rejects({"words": {"min": 3}}, text_output("Too short"))


# --- sentences and questions ---------------------------------------------------------------


def test_sentences_counts_and_bounds() -> None:
    assert measures.sentences("One. Two! Three? 1.5 stays\nFour") == ["One.", "Two!", "Three?",
                                                                       "1.5 stays", "Four"]
    rejects({"sentences": {"max": 2}}, text_output("One. Two. Three."))
    passes({"sentences": 2}, text_output("One. Two."))


@pytest.mark.parametrize("text", [
    "Here is the status. Please also confirm the shipping address.",
    "Your call: the oak table or the walnut one.",
    "I need you to confirm the quantity before Friday.",
    "Which date works best",
    "Let me know if the 12th works.",
    "Antes de seguir, por favor confirme o endereço de entrega.",
    "Você decide: mesa de carvalho ou de nogueira.",
    "Aguardo sua confirmação para seguir.",
    "Qual data funciona melhor",
    "Shall we ship it on Monday?",
])
def test_questions_finds_a_question_without_a_question_mark(text: str) -> None:
    reason = rejects({"name": "the summary never asks", "questions": 0}, text_output(text))
    assert "expected questions <= 0" in reason


@pytest.mark.parametrize("text", [
    "The invoice batch was filed as a draft for the operator.",
    "When you train, rest two minutes between sets. Do three sets of squats.",
    "Como você não informou o nível, assumi iniciante.",
    "Você pode treinar em casa com o peso do corpo.",
])
def test_questions_passes_statements(text: str) -> None:
    passes({"questions": 0}, text_output(text))


def test_questions_finds_your_call_after_a_label_and_skips_one_word_headings() -> None:
    # after a name with no full stop, "Your call:" still hands the choice over
    rejects({"questions": 0}, text_output("Supplier notices Your call: the first one or the second."))
    # "What changes:" labels the line that follows; "Which one: A or B." still asks
    layout = "What changes: the feed becomes a new signal.\nWhere: this project only."
    passes({"questions": 0}, text_output(layout))
    rejects({"questions": 0}, text_output("Which one: the oak table or the walnut one."))
    rejects({"questions": 0}, text_output("Which: the oak table or the walnut one."))


def test_questions_of_a_text_measured_again_are_the_same_and_a_fresh_list() -> None:
    """questions() is memoised per text: a second call answers the same, and a caller that
    changes the list it got does not change what the next caller gets."""
    text = "Strength first. Which one do you prefer, gym or home. Let me know by Friday."
    first = measures.questions(text)
    assert [q.form for q in first] == ["question word", "let me know"]
    first.clear()
    again = measures.questions(text)
    assert [q.form for q in again] == ["question word", "let me know"]
    assert again is not first


def test_questions_with_a_path_and_a_minimum() -> None:
    doc = {"direct_answer": "Strength first. Which one do you prefer, gym or home.", "x": "ok"}
    rejects({"questions": {"path": "direct_answer", "max": 0}}, json_output(doc))
    passes({"questions": {"path": "direct_answer", "min": 1}}, json_output(doc))


def test_questions_over_tool_arguments() -> None:
    call = ToolCall("file_draft", {"body": "Dear Ana, please confirm the date."})
    rejects({"questions": {"tool": "file_draft", "path": "body", "max": 0}},
            AgentOutput(ChatResponse("", (call,)), "", None))


def test_count_items_are_checked_at_load() -> None:
    assert check_item({"words": {"min": 3, "max": 1}}) == ["min 3 is greater than max 1"]
    assert check_item({"questions": {}})  # neither bound


# --- language ----------------------------------------------------------------------------


def test_language_rejects_an_english_reply_to_a_portuguese_user_and_passes_portuguese() -> None:
    item = {"name": "replies in Portuguese", "language": {"in": ["pt"], "path": "direct_answer"}}
    reason = rejects(item, json_output({"direct_answer": "Your trip is booked for three nights."}))
    assert "expected pt, found en" in reason
    passes(item, json_output({"direct_answer": "Sua viagem está reservada por três noites."}))


def test_language_skips_texts_too_short_to_identify() -> None:
    found = verdict({"language": {"in": ["pt"], "path": "options[*]"}},
                    json_output({"options": ["Sim", "Não"]}))
    assert found.outcome == "not_evaluated"


def test_language_codes_are_checked_at_load_and_match_the_model() -> None:
    assert check_item({"language": "xx"})[0].startswith("unknown language code(s) xx")
    assert check_item({"language": {"in": ["pt"], "among": ["pt", "es"]}}) == []
    assert model_languages() == KNOWN
    assert identify("Por favor, confirme a data de entrega.") == "pt"
