"""The suite linter catches each construction problem, and passes the bundled suites."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_optbench.cli import main as optbench_main
from pytest_optbench.suite.lint import ERROR, WARNING, edit_words, lint_paths

ROOT = Path(__file__).resolve().parents[3]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def findings(tmp_path: Path) -> list[tuple[str | None, str, str]]:
    return [(f.item, f.severity, f.message) for f in lint_paths([tmp_path], root=tmp_path)]


PAIR = """
    - id: {id}
      domain: everyday
      scenario: {scenario}
      positive: What is the probability that the person finishes the {thing}?
      negative: What is the probability that the person does not finish the {thing}?
"""


def pair_suite(*items: str, header: str = "optbench: 1\nitems:\n") -> str:
    return header + "".join(textwrap.indent(textwrap.dedent(i).lstrip(), "  ") for i in items)


def test_bundled_suites_pass_the_linter():
    assert [f.line() for f in lint_paths([ROOT / "suites"], root=ROOT) if f.severity == ERROR] == []


def test_clean_suite_has_no_findings(tmp_path):
    write(tmp_path, "a.yaml", pair_suite(PAIR.format(id="x-1", scenario="A person starts a puzzle.", thing="puzzle")))
    assert findings(tmp_path) == []


def test_duplicate_texts_across_suites(tmp_path):
    item = PAIR.format(id="x-1", scenario="A person starts a puzzle.", thing="puzzle")
    write(tmp_path, "a.yaml", pair_suite(item))
    write(tmp_path, "b.yaml", pair_suite(item, header="optbench: 1\nsuite: other\nitems:\n"))
    found = findings(tmp_path)
    assert ("x-1", ERROR, "'positive' with its scenario repeats a.yaml::x-1") in found
    assert any(sev == WARNING and "id 'x-1' is also used in a.yaml" in msg for _i, sev, msg in found)


def test_pair_that_differs_by_more_than_a_small_edit(tmp_path):
    write(tmp_path, "a.yaml", """
        optbench: 1
        items:
          - id: wordy
            domain: everyday
            scenario: A person starts a puzzle.
            positive: What is the probability that the person finishes the puzzle?
            negative: How likely is it that the puzzle stays unfinished by the end of the evening?
    """)
    [(item, severity, message)] = findings(tmp_path)
    assert item == "wordy" and severity == ERROR and "differ by" in message


def test_missing_domain_is_a_warning(tmp_path):
    item = PAIR.format(id="x-1", scenario="A person starts a puzzle.", thing="puzzle")
    write(tmp_path, "a.yaml", pair_suite("\n".join(line for line in item.splitlines() if "domain" not in line)))
    assert findings(tmp_path) == [("x-1", WARNING, "no 'domain' label: it is left out of per-domain breakdowns")]


def test_track_a_expected_must_appear_in_the_scenario(tmp_path):
    write(tmp_path, "a.yaml", """
        optbench: 1
        track: A
        items:
          - id: rate-ok
            domain: academic
            scenario: A course passes 70% of its students. A typical student enrols.
            positive: What is the probability that the student passes?
            negative: What is the probability that the student does not pass?
            expected: 70
          - id: rate-missing
            domain: academic
            scenario: A course passes most of its students. A typical student enrols.
            positive: What is the probability that the student graduates?
            negative: What is the probability that the student does not graduate?
            expected: 70
    """)
    assert [(i, s) for i, s, m in findings(tmp_path)] == [("rate-missing", ERROR)]


def test_short_ladder_is_reported(tmp_path):
    write(tmp_path, "a.yaml", """
        optbench: 1
        kind: dose_response
        items:
          - id: short
            domain: everyday
            scenario: A person trains for a race.
            question: What is the probability that the person finishes the race?
            direction: increasing
            ladder: [They trained once., They trained daily.]
    """)
    [(_item, severity, message)] = findings(tmp_path)
    assert severity == ERROR and "at least 3" in message and "ladder" in message


def test_unbalanced_known_answer_set(tmp_path):
    items = "".join(f"  - {{id: q{i}, domain: maths, question: 'Is {i} even?', outcome: {str(i % 2 == 0).lower()}}}\n"
                    for i in range(2, 12))
    items += "".join(f"  - {{id: p{i}, domain: maths, question: 'Is {i} a positive number?', outcome: true}}\n"
                     for i in range(1, 11))
    write(tmp_path, "a.yaml", "optbench: 1\nkind: binary\nitems:\n" + items)
    [(item, severity, message)] = findings(tmp_path)
    assert item is None and severity == ERROR and "15 yes, 5 no" in message


def test_template_with_missing_field_is_reported(tmp_path):
    write(tmp_path, "a.yaml", pair_suite(
        PAIR.format(id="x-1", scenario="A person starts a puzzle.", thing="puzzle"),
        header="optbench: 1\nprompt:\n  template: '{scenario} {hint}'\nitems:\n"))
    [(_item, severity, message)] = findings(tmp_path)
    assert severity == ERROR and "{hint}" in message


@pytest.mark.parametrize(("a", "b", "n"), [
    ("Does it pass?", "Does it not pass?", 1),
    ("the person passes the exam", "the person does not pass the exam", 3),
    ("How significant are the opportunities?", "How significant are the risks?", 1),
])
def test_edit_words(a, b, n):
    assert edit_words(a, b) == n


def test_command_line_exit_codes(tmp_path, capsys):
    write(tmp_path, "a.yaml", pair_suite(PAIR.format(id="x-1", scenario="A person starts a puzzle.", thing="puzzle")))
    assert optbench_main(["lint", str(tmp_path)]) == 0
    write(tmp_path, "b.yaml", "optbench: 1\nitems: []\n")
    assert optbench_main(["lint", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "b.yaml: error:" in out and "optbench lint: 1 error(s), 0 warning(s)" in out


EN_SUITE = """
    optbench: 1
    suite: demo
    language: en
    items:
      - id: p-1
        domain: everyday
        scenario: A person starts a puzzle.
        positive: What is the probability that the person finishes the puzzle?
        negative: What is the probability that the person does not finish the puzzle?
      - id: p-2
        domain: everyday
        scenario: A person plants a garden.
        positive: What is the probability that the garden grows well?
        negative: What is the probability that the garden does not grow well?
"""


SYSTEM = {"fr": "Réponds par un seul nombre entier de 0 à 100.", "de": "Antworte mit einer ganzen Zahl von 0 bis 100.",
          "ko": "0부터 100까지의 정수 하나만 답하십시오."}


def translated(language: str, items: str) -> str:
    return (f"optbench: 1\nsuite: demo-{language}\nlanguage: {language}\nprompt:\n  system: \"{SYSTEM[language]}\"\n"
            "items:\n" + textwrap.indent(items, "  "))


def pair(item_id: str, scenario: str, positive: str, negative: str) -> str:
    return (f"- id: {item_id}\n  domain: everyday\n  scenario: \"{scenario}\"\n"
            f"  positive: \"{positive}\"\n  negative: \"{negative}\"\n")


def test_translation_with_the_same_ids_passes(tmp_path):
    write(tmp_path, "en.yaml", EN_SUITE)
    write(tmp_path, "fr.yaml", translated("fr",
        pair("p-1", "Une personne commence un puzzle.", "Quelle est la probabilité que la personne termine le puzzle ?",
             "Quelle est la probabilité que la personne ne termine pas le puzzle ?")
        + pair("p-2", "Une personne plante un jardin.", "Quelle est la probabilité que le jardin pousse bien ?",
               "Quelle est la probabilité que le jardin ne pousse pas bien ?")))
    assert findings(tmp_path) == []


def test_translation_missing_ids_kinds_and_english_text(tmp_path):
    write(tmp_path, "en.yaml", EN_SUITE)
    write(tmp_path, "de.yaml", translated("de",
        pair("p-1", "A person starts a puzzle.", "Wie wahrscheinlich ist es, dass die Person das Puzzle beendet?",
             "Wie wahrscheinlich ist es, dass die Person das Puzzle nicht beendet?")
        + pair("p-9", "Eine Person pflanzt einen Garten.", "Wie wahrscheinlich ist es, dass der Garten gut wächst?",
               "Wie wahrscheinlich ist es, dass der Garten nicht gut wächst?")))
    write(tmp_path, "ko.yaml", translated("ko",
        "- id: p-1\n  domain: everyday\n  kind: binary\n  question: \"퍼즐을 끝낼까요?\"\n  outcome: true\n"
        + pair("p-2", "한 사람이 정원을 가꿉니다.", "What is the probability that the garden grows well?",
               "정원이 잘 자라지 않을 확률은 얼마입니까?")))
    found = {(item, message) for item, severity, message in findings(tmp_path) if severity == ERROR}
    assert ("p-1", "'scenario' looks untranslated English text") in found
    assert ("p-2", "id of en.yaml is missing from this translation") in found
    assert ("p-9", "id is not in en.yaml") in found
    assert ("p-1", "kind binary differs from inverted_pair in en.yaml") in found
    assert ("p-2", "'positive' looks untranslated English text") in found
