"""Every named rule of answer extraction (answers/extract/rules.py) decides where it should and
nowhere else: one positive and one negative reply per rule, checked through ``explain``."""

from __future__ import annotations

import pytest

from pytest_optbench.answers import explain as X
from pytest_optbench.answers.extract import rules
from pytest_optbench.answers.parse import parse_answer

OPEN = ("Of new restaurants in the city, 30% are still open after five years. A new restaurant opens.\n\n"
        "What is the probability that the restaurant is still open after five years?")
ADMIT = ("A graduate program admits 25% of the people who apply to it. A typical student applies this year.\n\n"
         "What is the probability that the student is not admitted?")
YESNO = "Is the Pacific the largest ocean on Earth?"

# rule -> (positive reply, question, truncated), (negative reply, question, truncated)
Case = tuple[str, "str | None", "bool | None"]
CASES: dict[str, tuple[Case, Case]] = {
    "quantity.not-a-quantity": (("Version 3.14.15 says 40%.", None, None), ("Version 3 says 40%.", None, None)),
    "quantity.number-list": (("Values: 1,2,3", None, None), ("Values: 1, then 40%", None, None)),
    "quantity.per-mille": (("5‰", None, None), ("5%", None, None)),
    "quantity.date": (("On 12/05/2023 it was 40%.", None, None), ("On 12 May it was 40%.", None, None)),
    "quantity.scale": (("On a scale from 0 to 100, I'd say 70.", None, None), ("I'd say 70.", None, None)),
    "quantity.operand": (("0.5 × 0.8 = 0.4", None, None), ("The probability is 0.4", None, None)),
    "quantity.inconsistent-arithmetic": (("100% - 1 = 91%", None, None), ("100% - 9% = 91%", None, None)),
    "quantity.restated-later": (("The probability is 3/4 = 0.75", None, None), ("The probability is 3/4.", None, None)),
    "quantity.ratio-one": (("The probability is 100/10 = 1", None, None), ("The probability is 10/100 = 0.1", None, None)),
    "quantity.odds-without-side": (("The odds are 3 to 1.", None, None), ("The odds are 3 to 1 against.", None, None)),
    "role.number-list": (("The ages were 19, 17, 17 and 18.", None, None), ("The age was 19.", None, None)),
    "role.money": (("It costs $7,500.", None, None), ("It is 75%.", None, None)),
    "role.ordinal-or-unit": (("She came 4th.", None, None), ("She came in at 4.", None, None)),
    "role.degrees": (("It was 25° outside.", None, None), ("It was 25% likely.", None, None)),
    "role.compound": (("A 50-year-old applies.", None, None), ("50-50", None, None)),
    "role.ratio-or-time": (("We met at 10:30.", None, None), ("We met; 10.", None, None)),
    "role.operand": (("The probability is 1 - (1 - p)", None, None), ("The probability is 1 - 0.4 = 0.6", None, None)),
    "role.subtracted-from": (("Subtracting 0.3 from 1 gives the answer.", None, None),
                             ("Apart from that, 1.", None, None)),
    "role.product-operand": (("This is calculated by multiplying the probability of each year (0.025 or 2", OPEN, True),
                             ("Multiplying it out gives 0.3, so the probability is 30%.", None, None)),
    "role.whole-of-share": (("10% of 100 people", None, None), ("10% of the people", None, None)),
    "role.year": (("In 2019 it was unclear.", None, None), ("In 19 cases it was unclear.", None, None)),
    "role.bracket-numbering": (("Option (2) is best.", None, None), ("Option (20%) is best.", None, None)),
    "role.list-numbering": (("Reasons:\n1. The market is small.\n2. Costs are high.", None, None),
                            ("65. Most restaurants fail.", None, None)),
    "role.inside-question": (("Is 40 the right number?", None, None), ("40 is the right number.", None, None)),
    "role.hypothetical": (("If the probability were 0.3, we would act.", None, None),
                          ("If I had to guess, 30%.", None, None)),
    "role.negated": (("The probability is not 0.9.", None, None), ("The probability is 0.9.", None, None)),
    "role.change": (("Prices rose by 10 percent.", None, None), ("The chance is 10 percent.", None, None)),
    "role.label-of-other": (("Step 3 is the hardest.", None, None), ("I'd say 3.", None, None)),
    "role.share-cjk": (("40%の学生が合格します。", None, None), ("40%の確率です。", None, None)),
    "role.share": (("30% of applicants are admitted.", None, None), ("There is a 30% chance.", None, None)),
    "role.number-in-words": (("One of the two owners left.", None, None), ("Zero.", None, None)),
    "role.count-of": (("3 of the 10 applicants were admitted.", None, None), ("I'd say 3.", None, None)),
    "role.percentile": (("It sits at the 90 percentile.", None, None), ("It sits at 90 percent.", None, None)),
    "role.count": (("There were 3 boys.", None, None), ("I'd say 3 because of the boys.", None, None)),
    "decide.revision": (("I'd say 40%. Actually, on reflection, 55%.", None, None), ("I'd say 40%. Or 55%.", None, None)),
    "decide.final-answer": (("I'd say 18%.\nFinal answer: 20", None, None),
                            ("Answer: 20", None, None)),
    "decide.odds-as-percentage": (("The odds are 1 in 3 (about 33%).", None, None), ("About 33%.", None, None)),
    "decide.explicit-over-weak": (("30% is what it is. I'd estimate 70%.", None, None), ("I'd estimate 70%.", None, None)),
    "decide.point-over-range": (("Between 50 and 60 percent, so 55.", None, None),
                                ("Between 50 and 60 percent.", None, None)),
    "decide.cut-alternative": (("1. Open (100% chance). 2. Closed (99", None, True),
                               ("1. Open (100% chance).", None, True)),
    "decide.unread-formula": (("I'd say 20%. So, the probability that the restaurant is still open is 1 - (100%)", OPEN, None),
                              ("I'd say 20%.", OPEN, None)),
    "decide.undecided": (("Somewhere around 30%... no, I can't decide between 30 and 50.", OPEN, None),
                         ("I'd say 30%.", OPEN, None)),
    "decide.undecided-unpresented": (("Either 20% or 50%, depending on the chef's plans.", None, None),
                                     ("20% for the chef's plans.", None, None)),
    "decide.conflict": (("I'd say 70%. Or 80%.", None, None), ("I'd say 70%. Or 70%.", None, None)),
    "decide.out-of-range": (("120%!", None, None), ("100%!", None, None)),
    "decide.scale-01": (("Answer: 0.2", None, None), ("Answer: 20", None, None)),
    "decide.adopted-base-rate": (("The base rate is 30%, and nothing here is unusual, so I'll go with the base rate.",
                                  OPEN, None),
                                 ("The base rate is 30%, but this one is unusual.", OPEN, None)),
    "decide.cut-in-calculation": (("The store has 1000 orders. So, the probability is 100", None, True),
                                  ("The store has 1000 orders. So, the probability is 100", None, False)),
    "decide.truncated": (("The probability is 0.", None, True), ("The probability is 0.5%.", None, True)),
    "decide.ambiguous": (("0.65", None, None), ("0.65 (65%)", None, None)),
    "decide.refusal": (("I can't estimate this from 3 facts.", None, None), ("I estimate 3.", None, None)),
    "decide.yes-no": (("Yes, definitely, in 2 ways.", None, None), ("Yes. Probability: 3%", None, None)),
    "decide.per-mille": (("About 5‰ of cases.", None, None), ("About 5% of cases, I'd say 5%.", None, None)),
    "decide.no-number": (("The weather is nice.", None, None), ("I'd say 10.", None, None)),
    "decide.other-roles": (("A 90-year-old owner has been open for", None, True), ("90", None, True)),
    "decide.echo": (("A graduate program admits 25%", ADMIT, None), ("I'd say 75%", ADMIT, None)),
    "present.computed-value": (("This is approximately 4.91111", None, None), ("This is approximately 4.9%", None, None)),
    "present.self-defined": (("P = 1 - P = 0", None, None), ("P = 0.4", None, None)),
    "present.label-of-other": (("Base rate: 30%", None, None), ("Probability: 30%", None, None)),
    "present.cut-event": (("The restaurant has a 100% chance of attracting a", OPEN, True),
                          ("The restaurant has a 100% chance of staying open after five years.", OPEN, True)),
    "context.step": (("The probability of success is 50%. Then we'll subtract this probability from 1.", None, None),
                     ("The probability of success is 50%.", None, None)),
    "context.restatement": (("The probability that a coin lands heads is 0.5 (50%).", OPEN, None),
                            ("The probability that the restaurant is still open is 0.5 (50%).", OPEN, None)),
    "context.alternative": (("Step 2: 1 or 40%", None, None), ("I'd say 1% or 40%", None, None)),
    "context.quoted": (("I'd say: of new restaurants in the city, 30%", OPEN, None), ("I'd say: 30%", OPEN, None)),
    "context.restated-from-question": (("Still, 30%.", OPEN, None), ("Still, 35%.", OPEN, None)),
    "context.echo-number": (("The answer is 3.", "Is 3 a prime number?", None), ("The answer is 95.", YESNO, None)),
    "context.kind-of-probability": (("The binomial probability is 0.725", OPEN, None),
                                    ("The probability is 0.725", OPEN, None)),
    "context.other-event": (("The probability that a coin lands heads is 50%.", OPEN, None),
                            ("The probability that the restaurant is still open is 50%.", OPEN, None)),
    "context.given-asked-event": (("Given that the restaurant is still open after five years, there is a 50% chance.",
                                   OPEN, None),
                                  ("Given the menu, there is a 50% chance the restaurant is still open.", OPEN, None)),
    "context.premise": (("The probability is 40%. What is the probability that he closes two deals?", OPEN, None),
                        ("The probability is 40%.", OPEN, None)),
    "present.label": (("Answer: 25", None, None), ("Step 2: 25", None, None)),
    "present.head": (("The probability that the restaurant is still open is 40%.", OPEN, None),
                     ("The probability distribution has 40 points.", OPEN, None)),
    "present.chance": (("There is a 40% chance that the restaurant is still open.", OPEN, None),
                       ("40% of restaurants stay open.", OPEN, None)),
    "present.leadin": (("I'd put it at 92%, given the menu.", None, None), ("Put it at 92 degrees.", None, None)),
    "present.phrase": (("About 65%.", None, None), ("About 65 people came.", None, None)),
    "present.short-sentence": (("저는 40% 정도로 봅니다.", None, None), ("The passing grade is 60%.", None, None)),
    "present.bare": (("65", None, None), ("65 people", None, None)),
    "decide.empty": (("   ", None, None), ("0", None, None)),
    "json.key": (('{"probability": 65}', None, None), ('{"range": 65}', None, None)),
    "json.string": (('{"probability": "25%"}', None, None), ('{"probability": 25}', None, None)),
    "json.bad-value": (('{"probability": true}', None, None), ('{"probability": 10}', None, None)),
    "json.out-of-range": (('{"probability": 250}', None, None), ('{"probability": 25}', None, None)),
    "json.scale-01": (('{"probability": 0.4}', None, None), ('{"probability": 40}', None, None)),
    "json.no-key": (('{"reasoning": "hard"}', None, None), ('{"reasoning": "hard"} I\'d say 40%', None, None)),
}


def _decided(case: Case) -> set[str]:
    reply, question, truncated = case
    found = X.explain(reply, question=question, truncated=truncated)
    return {found.rule or ""} | {n.rule or "" for n in found.numbers}


def test_every_rule_has_a_positive_and_a_negative_case() -> None:
    names = {r.name for r in rules.all_rules()}
    assert sorted(names - set(CASES)) == []
    assert sorted(set(CASES) - names) == []


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_rule_decides_its_positive_case(name: str) -> None:
    assert name in _decided(CASES[name][0]), X.explain(CASES[name][0][0], question=CASES[name][0][1],
                                                         truncated=CASES[name][0][2]).text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_rule_stays_out_of_its_negative_case(name: str) -> None:
    assert name not in _decided(CASES[name][1]), X.explain(CASES[name][1][0], question=CASES[name][1][1],
                                                             truncated=CASES[name][1][2]).text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_explain_agrees_with_parse_answer(name: str) -> None:
    for reply, question, truncated in CASES[name]:
        parsed = parse_answer(reply, question=question, truncated=truncated)
        found = X.explain(reply, question=question, truncated=truncated)
        assert (found.value, found.reason, found.rule) == (parsed.value, parsed.reason, parsed.rule)


def test_the_documentation_lists_every_rule() -> None:
    from pathlib import Path

    page = (Path(__file__).resolve().parents[3] / "docs" / "answer-extraction.md").read_text(encoding="utf-8")
    assert [r.name for r in rules.all_rules() if f"| `{r.name}` |" not in page] == []
