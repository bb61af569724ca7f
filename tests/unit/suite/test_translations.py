"""The translation linter: a translated suite against its English source."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from pytest_optbench.suite.lint import ERROR, INFO, WARNING, lint_paths, summary_line
from pytest_optbench.suite.translations import looks_english, source_suite_id

EN_PAIRS: dict[str, Any] = {
    "optbench": 1, "suite": "pairs", "language": "en", "track": "B",
    "conditions": {"base": {}, "narrative_up": {"scenario": "{scenario} {narrative_up}"},
                   "debiased": {"system_prefix": "Correct for the optimism bias of language models."}},
    "items": [
        {"id": "p-1", "domain": "academic", "scenario": "Of 1,200 applicants, 300 are admitted.",
         "positive": "What is the probability that the student is admitted?",
         "negative": "What is the probability that the student is not admitted?",
         "narrative_up": "The student has a strong record."},
        {"id": "p-2", "domain": "health", "scenario": "A person starts running 3.5 km a day.",
         "positive": "What is the probability that the person keeps running?",
         "negative": "What is the probability that the person stops running?",
         "narrative_up": "A friend runs with them."},
    ],
}
ZH_PAIRS: dict[str, Any] = {
    "optbench": 1, "suite": "pairs-zh", "language": "zh", "track": "B",
    "prompt": {"system": "只回复一个 0 到 100 之间的整数。"},
    "conditions": {"base": {}, "narrative_up": {"scenario": "{scenario} {narrative_up}"},
                   "debiased": {"system_prefix": "请纠正语言模型的乐观偏差。"}},
    "items": [
        {"id": "p-1", "domain": "academic", "scenario": "1,200名申请者中有300人被录取。",
         "positive": "该学生被录取的概率是多少？", "negative": "该学生未被录取的概率是多少？",
         "narrative_up": "该学生的成绩很好。"},
        {"id": "p-2", "domain": "health", "scenario": "一个人开始每天跑3.5公里。",
         "positive": "这个人坚持跑步的概率是多少？", "negative": "这个人停止跑步的概率是多少？",
         "narrative_up": "一位朋友和他一起跑。"},
    ],
}
EN_LADDER: dict[str, Any] = {
    "optbench": 1, "suite": "ladders", "language": "en", "kind": "dose_response",
    "items": [{"id": "d-1", "domain": "health", "scenario": "A person has a cough.",
               "question": "What is the probability that the person has a cold?", "direction": "increasing",
               "ladder": ["The person sneezed once.", "The person sneezed 5 times.", "The person sneezed all day."]}],
}
DE_LADDER: dict[str, Any] = {
    "optbench": 1, "suite": "ladders-de", "language": "de", "kind": "dose_response",
    "prompt": {"system": "Antworte mit einer ganzen Zahl von 0 bis 100."},
    "items": [{"id": "d-1", "domain": "health", "scenario": "Eine Person hustet.",
               "question": "Wie wahrscheinlich ist es, dass die Person erkältet ist?", "direction": "increasing",
               "ladder": ["Die Person hat einmal geniest.", "Die Person hat 5-mal geniest.",
                          "Die Person hat den ganzen Tag geniest."]}],
}
EN_KNOWN: dict[str, Any] = {
    "optbench": 1, "suite": "known", "language": "en", "kind": "binary",
    "items": [{"id": "k-1", "domain": "language", "question": "Does the word 'banana' have three letters 'a'?",
               "outcome": True},
              {"id": "k-2", "domain": "geography", "question": "Is Lyon the capital of France?", "outcome": False}],
}
RU_KNOWN: dict[str, Any] = {
    "optbench": 1, "suite": "known-ru", "language": "ru", "kind": "binary",
    "prompt": {"system": "Ответьте одним целым числом от 0 до 100."},
    "items": [{"id": "k-1", "domain": "language", "question": "Есть ли в слове «молоко» три буквы «о»?",
               "outcome": True, "adapted": "the English question counts letters of an English word"},
              {"id": "k-2", "domain": "geography", "question": "Является ли Лион столицей Франции?", "outcome": False}],
}


def lint(tmp_path: Path, *suites: dict[str, Any]) -> list[tuple[str | None, str, str]]:
    for n, suite in enumerate(suites):
        (tmp_path / f"{n}-{suite['language']}.yaml").write_text(
            yaml.safe_dump(suite, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return [(f.item, f.severity, f.message) for f in lint_paths([tmp_path], root=tmp_path)]


def edited(suite: dict[str, Any], index: int = 0, **fields: Any) -> dict[str, Any]:
    out = copy.deepcopy(suite)
    out["items"][index].update(fields)
    for key in [k for k, v in fields.items() if v is None]:
        del out["items"][index][key]
    return out


def test_faithful_translations_pass(tmp_path):
    assert lint(tmp_path, EN_PAIRS, ZH_PAIRS, EN_LADDER, DE_LADDER) == []


@pytest.mark.parametrize(("suite_id", "language", "source"), [
    ("track-b-probability-ko", "ko", "track-b-probability"), ("pairs-PT-BR", "pt-BR", "pairs"),
    ("pairs-pt", "pt-BR", "pairs"), ("pairs", "ko", None), ("-ko", "ko", None),
])
def test_source_suite_id(suite_id, language, source):
    assert source_suite_id(suite_id, language) == source


def test_ids_kinds_track_and_order_against_english(tmp_path):
    zh = copy.deepcopy(ZH_PAIRS)
    zh["track"] = "C"
    zh["items"].reverse()
    zh["items"][0]["id"] = "p-9"
    found = lint(tmp_path, EN_PAIRS, zh)
    assert (None, ERROR, "track C differs from track B of 0-en.yaml") in found
    assert ("p-2", ERROR, "id of 0-en.yaml is missing from this translation") in found
    assert ("p-9", ERROR, "id is not in 0-en.yaml") in found
    zh = copy.deepcopy(ZH_PAIRS)
    zh["items"].reverse()
    assert ("p-2", WARNING, ("items are in another order than in 0-en.yaml (first out of place here); keep the "
                            "English order so the files can be read side by side")) in lint(tmp_path, EN_PAIRS, zh)


def test_numbers_must_keep_their_values_in_any_digits(tmp_path):
    arabic = {**copy.deepcopy(ZH_PAIRS), "suite": "pairs-ar", "language": "ar",
              "prompt": {"system": "أجب بعدد صحيح واحد من 0 إلى 100."},
              "conditions": {"base": {}, "narrative_up": {"scenario": "{scenario} {narrative_up}"},
                             "debiased": {"system_prefix": "صحّح تحيّز التفاؤل لدى النماذج اللغوية."}}}
    arabic["items"][0].update(scenario="من بين ١٬٢٠٠ متقدّم يُقبل ٣٠٠.", positive="ما احتمال أن يُقبل الطالب؟",
                              negative="ما احتمال ألّا يُقبل الطالب؟", narrative_up="سجلّ الطالب قوي.")
    arabic["items"][1].update(scenario="يبدأ شخص الجري ٣٫٥ كم يوميًا.", positive="ما احتمال أن يواصل الشخص الجري؟",
                              negative="ما احتمال أن يتوقف الشخص عن الجري؟", narrative_up="صديق يجري معه.")
    assert lint(tmp_path, EN_PAIRS, arabic) == []
    wrong = edited(ZH_PAIRS, 0, scenario="1,200名申请者中有400人被录取。")
    found = lint(tmp_path, EN_PAIRS, wrong)
    assert ("p-1", ERROR, "'scenario' lacks the number(s) 300 of the English text") in found
    assert ("p-1", WARNING, "'scenario' has number(s) 400 that the English text has not") in found


def test_pair_edit_is_counted_in_characters_without_spaces(tmp_path):
    long_edit = edited(ZH_PAIRS, 0, negative="该学生最后还是没有能够被这所大学录取的概率是多少？")
    [(item, severity, message)] = lint(tmp_path, EN_PAIRS, long_edit)
    assert (item, severity) == ("p-1", ERROR) and "differ by 12 characters" in message and "at most 8" in message


def test_ladder_length_and_direction(tmp_path):
    de = copy.deepcopy(DE_LADDER)
    de["items"][0]["ladder"] = de["items"][0]["ladder"][:2] + ["Die Person hat 5-mal gehustet.",
                                                               "Die Person hat den ganzen Tag geniest."]
    de["items"][0]["direction"] = "decreasing"
    found = lint(tmp_path, EN_LADDER, de)
    assert ("d-1", ERROR, "the ladder has 4 rungs, 3 in 0-en.yaml") in found
    assert ("d-1", ERROR, "'direction' (ladder direction) is 'decreasing', 'increasing' in 0-en.yaml") in found


def test_untranslated_english(tmp_path):
    zh = edited(ZH_PAIRS, 0, narrative_up="The student has a strong record.")
    zh["conditions"]["debiased"] = {"system_prefix": "Correct for the optimism bias of language models."}
    found = lint(tmp_path, EN_PAIRS, zh)
    assert ("p-1", ERROR, "'narrative_up' looks untranslated English text") in found
    assert (None, ERROR, "'conditions.debiased.system_prefix' looks untranslated English text") in found
    de = copy.deepcopy(DE_LADDER)
    de["items"][0]["ladder"][1] = "The person sneezed 5 times."
    assert ("d-1", ERROR, "ladder rung 2 looks untranslated English text") in lint(tmp_path, EN_LADDER, de)


def test_names_and_numbers_are_not_untranslated_english():
    assert not looks_english("用户在 iPhone 和 MacBook 上使用 Netflix。", non_latin=True)
    assert looks_english("What is the probability 概率?", non_latin=True)
    assert looks_english("What is the probability that the person passes?", non_latin=False)
    assert not looks_english("Quelle est la probabilité que la personne réussisse ?", non_latin=False)


def test_conditions_have_the_english_arms(tmp_path):
    zh = copy.deepcopy(ZH_PAIRS)
    del zh["conditions"]["debiased"]
    zh["conditions"]["anchor"] = {"scenario": "{scenario} 大多数人失败了。"}
    found = lint(tmp_path, EN_PAIRS, zh)
    assert (None, ERROR, ("condition(s) debiased of 0-en.yaml are missing from this translation, so its audit "
                           "has fewer arms than the English one")) in found
    assert (None, ERROR, "condition 'anchor' is not in 0-en.yaml, so no arm compares it with English") in found


def test_a_translation_without_its_own_system_prompt_is_warned(tmp_path):
    de = copy.deepcopy(DE_LADDER)
    del de["prompt"]
    [(item, severity, message)] = lint(tmp_path, EN_LADDER, de)
    assert item is None and severity == WARNING and "built-in English system prompt" in message


def test_adapted_items_are_listed_and_keep_id_kind_domain_and_outcome(tmp_path):
    found = lint(tmp_path, EN_KNOWN, RU_KNOWN)
    assert found == [("k-1", INFO, "adapted: the English question counts letters of an English word")]
    assert summary_line(lint_paths([tmp_path])) == "optbench lint: 0 error(s), 0 warning(s), 1 item(s) listed for review"
    found = lint(tmp_path, EN_KNOWN, edited(RU_KNOWN, outcome=False, domain="words"))
    assert ("k-1", ERROR, "'outcome' (outcome) is False, True in 0-en.yaml") in found
    assert ("k-1", ERROR, "domain words differs from language in 0-en.yaml") in found
