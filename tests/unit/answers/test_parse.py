"""Unit tests for pytest_optbench.parse: a number counts only where the reply presents it as
its answer (rules in docs/answer-extraction.md; labelling standard in the corpus README)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_optbench.answers.parse import REASONING_CONFLICT, REASONS, Parsed, json_answer, parse_answer
from pytest_optbench.prompts.modes import JSON_AMBIGUOUS
from pytest_optbench.providers.sim import _STYLES

Q_PASS = ("A person is learning to drive.\n\nWhat is the probability that the person passes "
          "the driving test on the first attempt?")
Q_NOT_ADMITTED = ("A graduate program admits 25% of the people who apply to it. A student whose "
                  "application is typical applies this year.\n\nWhat is the probability that the "
                  "student is not admitted to the program?")
Q_LAUNCH = ("A bakery plans to open a second shop on a date it has announced.\n\nWhat is the probability "
            "that the shop opens on the announced date?")
Q_PRIME = "Is 91 a prime number?"
Q_BOTH = ("A person runs every morning.\n\nWhat is the probability that the person smokes "
          "cigarettes and the person runs a marathon this year?")
Q_RECOMMEND = ("A student has been admitted to two universities.\n\nHow strongly would you "
               "recommend that the student accepts the offer from the distant university?")


def _ok(text: str, expected: float, **kw: object) -> None:
    result = parse_answer(text, **kw)  # type: ignore[arg-type]
    assert result.value == pytest.approx(expected, abs=0.01), result
    assert result.reason is None


def _none(text: str, why: str, **kw: object) -> None:
    result = parse_answer(text, **kw)  # type: ignore[arg-type]
    assert result.value is None, result
    assert result.reason is not None and why in result.reason, result


# --------------------------------------------------------------------------- the labelling standard

# Every example of the labelling standard (shared/data/README.md), as written there.
STANDARD = [
    ("65", 65), ("60.", 60), ("42.5", 42.5), ("65%", 65), ("65 %", 65), ("65 percent", 65), ("15 per cent", 15),
    ("etwa 60 Prozent", 60), ("30 por ciento", 30), ("environ 40 %", 40), ("около 55%", 55), ("60 процентов", 60),
    ("45パーセント", 45), ("약 35퍼센트", 35), ("लगभग 50 प्रतिशत", 50), ("٣٠ في المائة", 30), ("大约60%", 60),
    ("百分之四十", 40), ("٦٠٪", 60), ("४०%", 40), ("２０％", 20), ("17,5 %", 17.5), ("Answer: 25", 25),
    ("**Answer:** 65", 65), ("Final answer: **95**", 95), ("Estimate: 45", 45), ("Probability: 40%", 40),
    ("Rating: 60", 60), ("Réponse : 35", 35), ("확률: 약 55%", 55), ('{"probability": 65}', 65), ("65/100", 65),
    ("65 out of 100", 65), ("6/10", 60), ("9 out of 10", 90), ("1 in 5", 20), ("The answer is 1/8", 12.5),
    ("one in three", 100 / 3), ("sixty-five percent", 65), ("fifty-fifty", 50), ("zero percent", 0),
    ("No. Probability: 3%", 3), ("Yes, the answer is 97.", 97),
    ("Since 30% of such projects succeed, I'd estimate 30", 30),
    ("0.8 (80%)", 80), ("0.45, i.e. 45%", 45), ("0.0123 (or 1.23%)", 1.23), ("a probability of 0.7", 70),
    ("a 0.75 probability", 75), ("The probability is 0.3", 30), ("The probability of X is 1 - 0.4 = 0.6", 60),
    ("is 0.5%.", 0.5), ("0.2%", 0.2), ("between 20 and 30 percent", 25), ("30\u201340%", 35),
    ("zwischen 30 und 50 Prozent", 40), ("50-60%, so 55", 55), ("60 to 70 percent, most likely around 65", 65),
    ("Less than 5%", 5), ("over 80%", 80), ("above 95%", 95), ("At least 90% ... I'll say 95", 95),
    ("around 35%, though it could be as high as 50%", 35), ("20 \u00b1 5", 20),
    ("...so 40%. Actually, on reflection, 55%", 55), ("Correction: 40%", 40), ("let me revise that to 45%", 45),
    ("My first instinct is 50%, but the record is strong. I'll go with 65", 65),
    ("Roughly \u2248 18% on the first pass.\nFinal answer: 20", 20),
    ("I'd say 40%; if the budget were cut, maybe 60", 40),
    ("0.65", None), ("Answer: 0.2", None), ("The answer is 0.4", None), ("Probability: 0.6", None),
    ("Probabilidad: 0,3", None), ("p = 0.1", None), ('{"probability": 0.4}', None), ("It is certain, which is 1.", None),
    ("1,000 students", None), ("80% of customers renew when their subscription comes up", None),
    ("which is 10% of the total", None), ("Option 2", None), ("from 0 to 100", None), ("a 0\u2013100 scale", None),
    ("What is the probability that a number is 40 or more?", None), ("1 - (1 - p) =", None),
    ("then multiply by 100 to get a percentage", None), ("If the probability were 0.3, ...", None), ("Yes.", None),
    ("No, definitely not.", None), ("Yes, it does, through its delta.", None), ("I'd say 70%. Or 80%.", None),
    ("either 20% or 50%, depending on the market", None), ("best case 30%, worst case 70%", None), ("120%!", None),
    ("Any number from 0 to 100 would be a guess", None), ("Hiring depends on much more than the 30% base rate", None),
]


@pytest.mark.parametrize(("text", "expected"), STANDARD, ids=repr)
def test_every_example_of_the_labelling_standard(text: str, expected: float | None) -> None:
    result = parse_answer(text)
    if expected is None:
        assert result.value is None, result
    else:
        assert result.value == pytest.approx(expected, abs=0.01), result


# --------------------------------------------------------------------------- 1. forms that count

FORMS = [
    # bare numbers and percentages
    ("65", 65), ("60.", 60), ("42.5", 42.5), ("0", 0), ("100", 100), ("+5", 5), ("65 %", 65),
    ("65%", 65), ("65.5%", 65.5), ("65,5", 65.5), ("About 65%.", 65), ("65 percent", 65),
    ("15 per cent.", 15), ("  65  ", 65), ("**65**", 65), ("`65`", 65), ("### Estimate\n\n**75**", 75),
    # answer markers
    ("Answer: 25", 25), ("**Answer:** 65", 65), ("Final answer: **95**", 95), ("Estimate: 45", 45),
    ("Probability: 40%", 40), ("Rating: 60", 60), ("Significance: 6 out of 10.", 60),
    ("**Recommendation strength: 62**\n\nThe scholarship matters more than the prestige.", 62),
    ("Answer:\n25", 25), ("My estimate: 30%", 30), ("Probability: 65% given 3 months", 65),
    ("The answer is 42.", 42), ("I'd estimate the probability at 80 percent.", 80),
    ("I'd say 70%.", 70), ("I'd put it at about 35%.", 35), ("I'll go with 40.", 40),
    ("Likely: 85%", 85),
    # fractions and odds with an explicit total
    ("65/100", 65), ("65 out of 100", 65), ("6/10", 60), ("9 out of 10", 90), ("1 in 5", 20),
    ("Roughly 1 in 4.", 25), ("The answer is 1/8", 12.5), ("one in three", 100 / 3),
    ("About one in four.", 25), ("7/10", 70), ("Rating: 7/10 \u2192 70", 70),
    ("1 in 10 \u2014 exactly the base rate.", 10), ("50/50", 50),
    # numbers in words
    ("Seventy-five percent.", 75), ("sixty five percent", 65), ("fifty-fifty", 50), ("Fifty-fifty.", 50),
    ("zero percent", 0), ("one hundred percent", 100), ("Twenty percent.", 20),
    # yes/no followed by a number presented as the answer
    ("No. Probability: 3%", 3), ("Yes, the answer is 97.", 97), ("No, 5%.", 5),
    # a base rate adopted explicitly
    ("Since 30% of such projects succeed, I'd estimate 30.", 30),
    # reasoning full of other numbers, then the answer
    ("The program accepts 20% of applicants. Of 2,000 who apply, about 400 get in.\n\nAnswer: 20", 20),
    ("With about 8,000 applications and 2,000 offers, 6,000 are turned down.\n\nAnswer: 75", 75),
    (("Top journals accept 5-10% of submissions and mid-tier ones 20-40%; revisions take 3-6 months. "
      "I'd put it at about 35%."), 35),
    (("A machine costs $30,000-$80,000 and saves 10 hours a week at $40/hour, about $20,800 a year. "
      "I'd put the chance at 45%."), 45),
    ("After 2 months of practice and 60 mock exams (all passed), I'd put it at 92%.", 92),
    ("In 2022 about 21% of first applications were funded.\n\nProbability: 80", 80),
    ("Approval is maybe 50% and repayment 85%. Combined: 0.5 \u00d7 0.85 \u2248 0.43.\n\nAnswer: 43", 43),
]


@pytest.mark.parametrize(("text", "expected"), FORMS, ids=repr)
def test_forms_that_count(text: str, expected: float) -> None:
    _ok(text, expected)


LANGUAGES = [
    # de
    ("Etwa 60 Prozent.", 60), ("Ich schätze die Wahrscheinlichkeit auf rund 35 Prozent.", 35),
    ("Wahrscheinlichkeit: 27,5 %", 27.5), ("zwischen 30 und 50 Prozent", 40),
    ("Antwort: 35", 35), ("Fünfzig Prozent.", 50), ("Weniger als 5 %.", 5),
    ("Die Wahrscheinlichkeit liegt bei etwa 25 %.", 25),
    # fr
    ("environ 40 %", 40), ("Réponse : 35", 35), ("Je dirais environ 60 %, vu le dossier.", 60),
    ("La probabilité est de 65 %.", 65), ("Soixante-quinze pour cent.", 75), ("17,5 %", 17.5),
    ("Une chance sur quatre.", 25), ("Entre 20 et 30 %.", 25),
    # es
    ("30 por ciento", 30), ("Alrededor del 15 %.", 15), ("La probabilidad es del 45 %.", 45),
    ("Respuesta: 55", 55), ("Sesenta y cinco por ciento.", 65), ("Diría que un 40 %.", 40),
    ("Menos del 5 %.", 5),
    # ru
    ("около 55%", 55), ("60 процентов", 60), ("Ответ: 35", 35), ("Вероятность: 65% за 3 месяца", 65),
    ("Вероятность — около 30%.", 30), ("Я бы оценил вероятность примерно в 40%.", 40),
    ("от 30 до 40%", 35), ("Пятьдесят процентов.", 50),
    # zh
    ("大约60%", 60), ("百分之四十", 40), ("概率约为45%。", 45), ("我认为概率大约是30%。", 30),
    ("七成", 70), ("答案：25", 25), ("百分之65，3个月内", 65), ("约65%。", 65),
    # ja
    ("45パーセント", 45), ("確率は約35%だと思います。", 35), ("３か月で65%", 65), ("１０％", 10),
    ("三割", 30), ("回答：55", 55), ("70%程度です。", 70),
    # ko
    ("약 35퍼센트", 35), ("확률: 약 55%", 55), ("확률은 65퍼센트입니다", 65), ("대략 40% 정도입니다.", 40),
    ("답: 25", 25),
    # hi
    ("लगभग 50 प्रतिशत", 50), ("संभावना ६५ प्रतिशत है", 65), ("४०%", 40), ("उत्तर: 30", 30),
    ("पचास प्रतिशत", 50),
    # ar
    ("٣٠ في المائة", 30), ("٦٠٪", 60), ("أعتقد أن الاحتمال يقارب ٤٠ في المائة.", 40),
    ("الإجابة: ٤٥", 45), ("حوالي 70%", 70),
]


@pytest.mark.parametrize(("text", "expected"), LANGUAGES, ids=repr)
def test_ten_languages(text: str, expected: float) -> None:
    _ok(text, expected)


JSON_FORMS = [
    ('{"probability": 65}', 65), ('```json\n{"probability": 40}\n```', 40), ('{"answer": "70%"}', 70),
    ('{\n  "probability": 30,\n  "reasoning": "About 50% of franchises change hands in 5 years."\n}', 30),
    ('{"reasoning": "Such plans succeed about 30% of the time.", "probability": 35}', 35), ('{"answer": 48, "confidence": "low"}', 48),
    ('{"answer": "no", "probability": 4}', 4), ('  {"Probability": 12}  ', 12),
    ('Here you go: {"estimate": 33}', 33), ('{"rating": "60 out of 100"}', 60),
]


@pytest.mark.parametrize(("text", "expected"), JSON_FORMS, ids=repr)
def test_json(text: str, expected: float) -> None:
    _ok(text, expected)


# --------------------------------------------------------------------------- 2. the 0-1 scale

SCALE = [
    ("0.8 (80%)", 80), ("0.45, i.e. 45%", 45), ("My estimate: 0.35, i.e. 35%.", 35),
    ("The probability is 0.0123 (or 1.23%).", 1.23), ("a probability of 0.7", 70),
    ("I would assign it a probability of roughly 0.55.", 55), ("The probability is about 0.6.", 60),
    ("There is a 0.75 probability that it passes.", 75), ("The probability is 0.3", 30),
    ("The probability of success is 1 - 0.4 = 0.6.", 60), ("is 0.5%.", 0.5), ("0.2%", 0.2),
    ("P(not selected) = 1 \u2212 0.05 = 0.95, i.e. 95%.", 95),
    ("Die Wahrscheinlichkeit beträgt 0,35 (35 %).", 35),
]


@pytest.mark.parametrize(("text", "expected"), SCALE, ids=repr)
def test_zero_one_scale_made_explicit(text: str, expected: float) -> None:
    _ok(text, expected)


@pytest.mark.parametrize("text", [
    "0.65", "Answer: 0.2", "The answer is 0.4", "Probability: 0.6", "Probabilidad: 0,3", "p = 0.1",
    '{"probability": 0.4}', "Вероятность: 0,25", "確率: 0.3", "The probability is 1 - 0.6, which is 1.",
])
def test_zero_one_scale_ambiguous(text: str) -> None:
    _none(text, "0-1 scale ambiguous")


# --------------------------------------------------------------------------- 3. other roles

OTHER_ROLES = [
    "Suppose a 50-year-old fisherman lives by the coast.",
    "How many ways are there to choose 3 boys and 2 girls for a team?",
    "Ten years ago, in 2014, the company had 1,000 people.",
    "A firm's annual revenue is $650,000 and its rent is $7,500 a month.",
    "In a survey of 2,400 voters, 55% of them said yes.",
    "The assistant has the following tasks:\n1. Shelve the books.\n2. Answer e-mails.",
    "The assistant has the following tasks:\n1.",
    "Is 2/3 less than 1/3?",
    "Reply with a single integer from 0 to 100 and nothing else.",
    "Rate it on a 0\u2013100 scale.",
    "Any number from 1 to 100 would be a guess.",
    "The answer is no, 5/6 is not 0.9, which is not 100%.",
    "Option 2 is better than option 3.",
    "Mars is 50% farther from the Sun than Earth is.",
    "The shop aims to raise its sales by 15 percent next year.",
    "If the probability were 0.3, the expected loss would be 30%.",
    "To solve this, subtract the probability from 1 and multiply by 100 to get a percentage.",
    "The school's teacher-to-pupil ratio is 1:12.",
    "At 25\u00b0C, helium is a gas.",
    "The English alphabet has 26 letters.",
    "Mars is about 6,779 kilometres across.",
    "In the 4th week of the term, 12 students dropped out.",
    "Base rate: 30%. This student is typical.",
    "The black death swept through Europe in the 14th century.",
    "The Hundred Years' War ended one hundred years ago.",
    "Ein 40-jähriger Mann arbeitet seit 10 Jahren dort.",
    "一名研究生在3个月内投了2篇论文。",
    "Студент учится 4 года и сдал 30 экзаменов.",
    "30% of customers renew when their subscription comes up.",
]


@pytest.mark.parametrize("text", OTHER_ROLES, ids=repr)
def test_numbers_in_other_roles_are_not_answers(text: str) -> None:
    result = parse_answer(text)
    assert result.value is None, result
    assert result.reason in REASONS, result


def test_list_item_and_reason() -> None:
    _none("The assistant has the following tasks:\n1.", "no answer: numbers only in other roles")


def test_thousands_separators_are_read_as_one_number() -> None:
    # "1,000 people" is a count of 1000 (not 1) and "$7,500" money (not 7.5): neither is an answer.
    _none("1,000 people", "other roles")
    _none("It costs $7,500.", "other roles")
    # A comma with one or two digits after it is a decimal comma.
    _ok("17,5 %", 17.5)
    _ok("Wahrscheinlichkeit: 27,5 %", 27.5)


# --------------------------------------------------------------------------- 4. yes/no

@pytest.mark.parametrize("text", [
    "Yes.", "No, definitely not.", "Yes, it does, through its delta.", "Ja.", "Non.", "Нет.", "はい。",
    "네.", "हाँ।", "نعم.", "No. Water freezes at 0 \u00b0C, which is 32 \u00b0F.",
])
def test_yes_no_without_a_probability(text: str) -> None:
    _none(text, "yes/no without a probability")


# --------------------------------------------------------------------------- 5. truncation

@pytest.mark.parametrize(("text", "truncated", "expected"), [
    ("The probability that the product launches on time is 0.", True, None),
    ("The probability that the product launches on time is 0.", None, None),
    ("The probability that the product launches on time is 0.", False, 0),
    ("The probability that the product launches on time is 1", True, None),
    ("The probability that the product launches on time is 10", True, None),
    ("The probability that the product launches on time is 10", None, 10),  # unknown: it may be complete
    ("The probability that the product launches on time is 10", False, 10),
    ("Since 30% of such projects succeed, I'd estimate 30", None, 30),
    ("The probability that the product launches on time is 85%", True, 85),
    ("The probability that the product launches on time is 0.5%.", True, 0.5),
    ("The probability that the product launches on time is 100", True, 100),
    ("Roughly 1 in ", True, None),
    ("Roughly 1 in ", None, None),
    ("We get 100% - 1 = 99", True, None),
    ("Answer: 25", None, 25),
    ("Answer: 25", True, None),
    ("20 to", True, None),
    ("Probability: 80", None, 80),
    ("65", None, 65),
])
def test_truncation(text: str, truncated: bool | None, expected: float | None) -> None:
    result = parse_answer(text, truncated=truncated)
    if expected is None:
        assert result.value is None and result.reason == "truncated", result
    else:
        assert result.value == pytest.approx(expected), result


# --------------------------------------------------------------------------- 6-7. ranges, bounds

RANGES = [
    ("between 20 and 30 percent", 25), ("Somewhere between 30 and 40 percent.", 35), ("30\u201340%", 35),
    ("25-35%", 30), ("60 to 70 percent", 65), ("50-60%, so 55", 55),
    ("I'd say 50 to 60 percent, most likely around 57.", 57),
    ("Less than 8%.", 8), ("over 80%", 80), ("above 95%", 95), ("At least 90%, and I'll say 95.", 95),
    ("Around 35%, though it could be as high as 50%.", 35), ("20 \u00b1 5", 20), ("不到5%", 5),
    ("5% 미만", 5), ("от 30 до 40 процентов", 35), ("entre 20 et 30 %", 25), ("de 20 a 30 %", 25),
]


@pytest.mark.parametrize(("text", "expected"), RANGES, ids=repr)
def test_ranges_and_bounds(text: str, expected: float) -> None:
    _ok(text, expected)


# --------------------------------------------------------------------------- 8. several answers

@pytest.mark.parametrize(("text", "expected"), [
    ("...so 40%. Actually, on reflection, 55%.", 55),
    ("I'd say 40%. Correction: 45%.", 45),
    ("50%? Let me revise that to 45%.", 45),
    ("My first instinct is 50%, but given the track record I'll go with 65.", 65),
    ("Intermediate: \u2248 18%.\nFinal answer: 20", 20),
    ("I'd say 30%, though if the budget were cut, maybe 60.", 30),
    ("65%. Yes, 65%.", 65),
    ("Je dirais 40 %. En fait, plutôt 45 %.", 45),
])
def test_revisions_and_final_answers(text: str, expected: float) -> None:
    _ok(text, expected)


@pytest.mark.parametrize("text", [
    "I'd say 70%. Or 80%.", "Probability: 40%\nProbability: 60%",
    "It is either 20% or 50%, depending on funding.", "3 and 65",
])
def test_conflicting_answers(text: str) -> None:
    _none(text, "conflicting answers")


def test_conflicting_reason_lists_the_values() -> None:
    reason = parse_answer("3 and 65").reason
    assert reason is not None and "3" in reason and "65" in reason


# --------------------------------------------------------------------------- 9-10. range, refusals

@pytest.mark.parametrize("text", ["130%! Definitely do it.", "150", "-5", '{"probability": 150}', "3 out of 2", "0/0"])
def test_out_of_range(text: str) -> None:
    _none(text, "outside 0-100")


@pytest.mark.parametrize("text", [
    "I can't give a number from 0 to 100 for this; it depends on which region you mean.",
    "Hiring depends on much more than the 30% base rate.", "I can't estimate this.",
    "Je ne peux pas estimer cela sans plus de contexte.", "Я не могу дать оценку.", "我无法给出具体数字。",
])
def test_refusals(text: str) -> None:
    _none(text, "")
    assert parse_answer(text).reason in ("refusal", "no answer: numbers only in other roles", "no number")


# --------------------------------------------------------------------------- the question as context

@pytest.mark.parametrize(("reply", "question", "expected"), [
    ("There's a 35% chance they fail, so 65% that they pass.", Q_PASS, 65),
    ("The probability of passing the driving test on the first attempt is 70%.", Q_PASS, 70),
    ("The probability of the shop being opened on the announced date is 80%.", Q_LAUNCH, 80),
    ("The probability that the student is not admitted is 75%.", Q_NOT_ADMITTED, 75),
    ("The program admits 25% of applicants.\n\nAnswer: 75", Q_NOT_ADMITTED, 75),
    ("No, the answer to this question is 4.", "Is 19 divisible by 5?", 4),
    ("The probability that the answer is yes is 10%.", Q_PRIME, 10),
    ("Recommendation strength: 55", Q_RECOMMEND, 55),
    ("Since 25% are admitted, 75% are not. I'd estimate 75.", Q_NOT_ADMITTED, 75),
])
def test_stated_for_the_asked_event(reply: str, question: str, expected: float) -> None:
    _ok(reply, expected, question=question)


@pytest.mark.parametrize(("reply", "question"), [
    ("The probability of passing on the second attempt is 90%.", Q_PASS),
    ("The probability that a coin lands heads is 50%.", Q_PASS),
    ("The probability of being admitted to the program is 25%.", Q_NOT_ADMITTED),
    ("The probability that the student is not admitted is 25% of the total applicants.", Q_NOT_ADMITTED),
    ("The probability that the person is a smoker is 15%.", Q_BOTH),
    ("The answer is 91, in a way.", Q_PRIME),
    ("Is 91 a prime number? (yes or no)", Q_PRIME),
    ("A graduate program admits 25% of the people who apply to it.", Q_NOT_ADMITTED),
    ("A cashier at a grocery chain has a 35% chance of", Q_LAUNCH),
])
def test_stated_for_another_event_or_echoed(reply: str, question: str) -> None:
    result = parse_answer(reply, question=question)
    assert result.value is None, result


# The question as context, in the ten languages: the asked event (and its negation) is
# recognised in the reply's own words.
Q_EN = ("A graduate student has submitted a first paper to a peer-reviewed journal.\n\nWhat is the "
        "probability that the paper is accepted for publication?")
Q_KO = "한 대학원생이 학술지에 첫 논문을 투고했다.\n\n이 논문이 게재 승인을 받을 확률은 얼마입니까?"
Q_ZH = "一名研究生向期刊投出了第一篇论文。\n\n该论文被接受发表的概率是多少？"
Q_JA = "ある大学院生が初めての論文を投稿した。\n\nその論文が掲載を認められる確率はどのくらいですか？"
Q_RU = "Аспирант отправил статью в журнал.\n\nКакова вероятность того, что статью примут к публикации?"
Q_DE = ("Ein Doktorand hat einen Artikel eingereicht.\n\nWie hoch ist die Wahrscheinlichkeit, dass der "
        "Artikel angenommen wird?")
Q_FR = "Un doctorant a soumis un article.\n\nQuelle est la probabilité que l'article soit accepté pour publication ?"
Q_ES = ("Un estudiante envió un artículo.\n\n¿Cuál es la probabilidad de que el artículo sea aceptado para "
        "su publicación?")
Q_HI = "एक छात्र ने शोध-पत्र भेजा है।\n\nक्या संभावना है कि शोध-पत्र प्रकाशन के लिए स्वीकार किया जाएगा?"
Q_AR = "قدم طالب ورقة بحثية.\n\nما احتمال قبول الورقة للنشر؟"

IN_CONTEXT = [
    (Q_EN, "The probability that the paper is accepted is 30%.", 30),
    (Q_EN, "The probability that the paper is rejected is 70%.", None),
    (Q_EN, "Chance of acceptance: 40%", 40), (Q_EN, "Chance of rejection: 60%", None),
    (Q_EN, "I estimate a 25% probability that the paper is accepted.", 25),
    (Q_KO, "이 논문이 게재 승인을 받을 확률은 약 35%입니다.", 35), (Q_KO, "게재 승인을 받지 못할 확률은 60%입니다.", None),
    (Q_KO, "저는 40% 정도로 봅니다.", 40), (Q_KO, "최종 답: 25", 25), (Q_KO, "5분의 1 정도입니다.", 20),
    (Q_KO, "두 가지 가능성이 있습니다: 30% 또는 50%.", None),
    (Q_ZH, "该论文被接受发表的概率约为40%。", 40), (Q_ZH, "该论文未被接受发表的概率约为60%。", None),
    (Q_ZH, "我估计大约是35%。", 35), (Q_ZH, "30%到40%之间", 35), (Q_ZH, "最终答案：20%", 20), (Q_ZH, "三分之一", 100 / 3),
    (Q_JA, "その論文が掲載を認められる確率は約60%です。", 60), (Q_JA, "掲載される可能性は40%ほどでしょう。", 40),
    (Q_JA, "30〜40%程度", 35), (Q_JA, "五分五分です。", 50), (Q_JA, "答え：45", 45),
    (Q_RU, "Вероятность того, что статью примут, — около 45%.", 45),
    (Q_RU, "Вероятность того, что статью не примут, — около 45%.", None),
    (Q_RU, "Я оцениваю вероятность примерно в 35%.", 35), (Q_RU, "Не более 10%.", 10), (Q_RU, "Один шанс из пяти.", 20),
    (Q_DE, "Die Wahrscheinlichkeit, dass der Artikel angenommen wird, liegt bei etwa 60 %.", 60),
    (Q_DE, "Die Wahrscheinlichkeit, dass der Artikel nicht angenommen wird, liegt bei etwa 60 %.", None),
    (Q_DE, "Meine Schätzung: 45 %", 45), (Q_DE, "Ungefähr ein Drittel.", 100 / 3), (Q_DE, "Zu etwa 70 % wahrscheinlich.", 70),
    (Q_FR, "La probabilité que l'article soit accepté est d'environ 60 %.", 60),
    (Q_FR, "La probabilité que l'article ne soit pas accepté est d'environ 60 %.", None),
    (Q_FR, "Ma réponse : 25 %", 25), (Q_FR, "Je l'estime à 40 %.", 40), (Q_FR, "Une chance sur deux.", 50),
    (Q_ES, "La probabilidad de que el artículo sea aceptado es de alrededor del 50 %.", 50),
    (Q_ES, "Mi estimación: 45 %", 45), (Q_ES, "Una de cada cuatro.", 25), (Q_ES, "Entre el 20 y el 30 %.", 25),
    (Q_HI, "मेरा अनुमान है कि संभावना लगभग 40% है।", 40), (Q_HI, "30 से 40 प्रतिशत के बीच", 35),
    (Q_HI, "मुझे लगता है कि 70% संभावना है।", 70),
    (Q_AR, "احتمال قبول الورقة حوالي ٦٥٪.", 65), (Q_AR, "احتمال عدم قبول الورقة حوالي ٦٥٪.", None),
    (Q_AR, "أقدر الاحتمال بنحو 30%.", 30), (Q_AR, "بين ٢٠ و٣٠ في المائة", 25), (Q_AR, "واحد من كل خمسة", 20),
]


@pytest.mark.parametrize(("question", "reply", "expected"), IN_CONTEXT, ids=repr)
def test_the_asked_event_in_ten_languages(question: str, reply: str, expected: float | None) -> None:
    result = parse_answer(reply, question=question)
    if expected is None:
        assert result.value is None, result
    else:
        assert result.value == pytest.approx(expected, abs=0.01), result


Q_RETAKE = ("A student who failed an exam is retaking it next term.\n\nWhat is the probability that the "
            "student passes the exam on the second attempt?")
# Replies in the style of small base models: invented scenarios and questions, facts, steps.
SMALL_MODEL_STYLE = [
    ("What is the probability that a coin lands heads? The probability is 50%.", None),
    ("What is the probability that the student passes the exam? The probability is 60%.", 60),
    (("The probability of the student passing the exam is 0.7. Therefore, the probability of the student not "
     "passing is 0.3."), 70),
    (("To calculate the probability of the student choosing a tutor, we first count tutors. The probability of "
     "this event is 0.2."), None),
    ("There is a 50% chance that it will rain tomorrow.", None),
    ("A student has a 60% chance of passing the exam. What is the probability that the student passes twice?", None),
    ("The probability that the student passes the exam is 70%. What is the probability that he fails?", 70),
    ("The probability that the student passes the exam on the first attempt is 50%.", None),
    ("In a class of 30 students, 20 passed the exam.", None),
    ("Step 1: Find the probability of passing.\nStep 2: Subtract from 1.", None),
    ("The passing grade is 60%.", None), ("The student needs 70% to pass.", None), ("The pass rate is 60%.", None),
    ("The student's score is 85 out of 100.", None), ("The student is 20 years old and has 2 siblings.", None),
    ("The student passed 3 of 5 exams, so the probability is 3/5 = 60%.", 60),
    ("We can calculate this as 0.6 x 0.5 = 0.3. So the probability is 0.3.", 30),
    ("The student has a 2 in 3 chance of passing.", 200 / 3), ("I'd say the odds are 3 to 1 in favor.", 75),
    ("The odds are 3 to 1.", None), ("The probability of passing is 60 percent, or 0.6.", 60),
    ("It depends on how much the student studies. If they study hard, 80%; if not, 40%.", None),
]


@pytest.mark.parametrize(("reply", "expected"), SMALL_MODEL_STYLE, ids=repr)
def test_small_model_style_replies(reply: str, expected: float | None) -> None:
    result = parse_answer(reply, question=Q_RETAKE)
    if expected is None:
        assert result.value is None, result
    else:
        assert result.value == pytest.approx(expected, abs=0.01), result


N = None
# Rules 4-8 and numbers in words, in the other nine languages.
RULES_IN_LANGUAGES = [
    # revisions
    ("Ich würde 40 % sagen. Eigentlich eher 50 %.", 50), ("Je dirais 30 %. En fait, plutôt 45 %.", 45), ("Diría 30 %. En realidad, 45 %.", 45),
    ("Скажу 30%. Хотя нет, скорее 40%.", 40), ("30%だと思います。いや、やはり40%です。", 40), ("30%입니다. 정정: 40%.", 40), ("30%。不对，应该是40%。", 40),
    ("मैं 30% कहूँगा। दरअसल, 40%।", 40), ("أقول 30٪. في الواقع، 40٪.", 40),
    # conflicts
    ("Entweder 20 % oder 50 %.", N), ("Soit 20 %, soit 50 %.", N), ("O 20 % o 50 %.", N), ("Либо 20%, либо 50%.", N), ("20%或者50%。", N),
    ("20%か50%です。", N), ("20% 또는 50%입니다.", N), ("20% या 50%।", N), ("20٪ أو 50٪.", N),
    # yes/no
    ("Ja, definitiv.", N), ("Non, pas du tout.", N), ("Sí, claro.", N), ("Да, конечно.", N), ("是的，当然。", N), ("はい、そうです。", N), ("네, 맞습니다.", N),
    ("हाँ, बिल्कुल।", N), ("نعم، بالتأكيد.", N),
    # yes/no + number
    ("Nein. Wahrscheinlichkeit: 5 %", 5), ("Oui, à 95 %.", 95), ("Нет. Вероятность: 3%", 3), ("いいえ。確率は5%です。", 5), ("아니요. 확률: 5%", 5),
    # refusals
    ("Das kann ich nicht seriös schätzen.", N), ("Je ne peux pas estimer cela.", N), ("No puedo dar una cifra.", N), ("Я не могу это оценить.", N),
    ("我无法估计。", N), ("推定できません。", N), ("추정할 수 없습니다.", N), ("मैं इसका अनुमान नहीं लगा सकता।", N), ("لا أستطيع التقدير.", N),
    # bounds
    ("Weniger als 10 %.", 10), ("Plus de 80 %.", 80), ("Más del 90 %.", 90), ("Менее 5%.", 5), ("至少80%。", 80), ("5%未満。", 5), ("80% 이상", 80),
    ("10% से कम।", 10), ("أقل من 10٪.", 10),
    # ranges
    ("30–40 %.", 35), ("Entre 30 et 40 %.", 35), ("Entre 30 y 40 %.", 35), ("30–40%.", 35), ("30%到40%。", 35), ("30〜40%。", 35), ("30~40%.", 35),
    ("30-40 प्रतिशत।", 35), ("٣٠-٤٠٪.", 35),
    # words
    ("Fünfzig Prozent.", 50), ("Cinquante pour cent.", 50), ("Cincuenta por ciento.", 50), ("Пятьдесят процентов.", 50), ("百分之五十。", 50),
    ("五十パーセント。", 50), ("पचास प्रतिशत।", 50), ("خمسون في المائة.", 50), ("Etwa die Hälfte.", 50), ("Environ la moitié.", 50),
    ("Aproximadamente la mitad.", 50), ("Примерно половина.", 50), ("大约一半。", 50), ("約半分です。", 50), ("절반 정도.", 50), ("लगभग आधा।", 50),
    ("حوالي النصف.", 50),
    # 0-1
    ("Wahrscheinlichkeit: 0,4", N), ("La probabilité est de 0,4.", 40), ("La probabilidad es 0,4.", 40), ("Вероятность равна 0,4.", 40),
    ("概率为0.4。", 40), ("確率は0.4です。", 40), ("확률은 0.4입니다.", 40), ("Antwort: 0,4", N),
    # truncated cut (none) but plain
    ("Ich denke 65 %", 65), ("Réponse : 65", 65),
]


@pytest.mark.parametrize(("reply", "expected"), RULES_IN_LANGUAGES, ids=repr)
def test_rules_in_the_other_languages(reply: str, expected: float | None) -> None:
    result = parse_answer(reply)
    if expected is None:
        assert result.value is None, result
    else:
        assert result.value == pytest.approx(expected, abs=0.01), result


Q_STARTUP = ("A founder with two previous exits has started a new company.\n\nWhat is the probability "
             "that the startup succeeds within five years?")
# Replies in the style of large chat models: reasoning with other numbers, then the answer.
CHAT_MODEL_STYLE = [
    (("Let me think.\n\n- Base rate: roughly 20% of startups survive 5 years.\n- Prior exits roughly double "
     "the odds.\n\nSo I'd estimate about 40%."), 40),
    ("**Probability: 35%**\n\nKey factors:\n1. Market size\n2. Competition", 35),
    ("My estimate is 60%, with a plausible range of 50\u201370%.", 60),
    ("Around 1 in 3 (about 33%).", 33),
    ("Considering the base rate (~30%) and the founder's profile, my estimate is 40%.", 40),
    ("Roughly 25% \u2014 consistent with the 25% base rate.", 25),
    ("Estimated probability: 15% (range 10\u201325%).", 15), ("Maybe 40%?", 40),
    ("Between 40% and 60%, leaning toward 55%.", 55), ("Likelihood of success: 70%. Likelihood of failure: 30%.", 70),
    ("Final: 55%", 55), ("I'm fairly pessimistic: 20%.", 20), ("Startups fail 90% of the time, so I'd say 10%.", 10),
    ("The founder has 2 previous exits and 15 years of experience. I estimate 35%.", 35),
    ("Roughly 40%. That said, if the market turns, it could drop to 20%.", 40),
    ("70% (if funding closes), otherwise 30%.", None), ("Less than half.", 50), ("Somewhere around two in five.", 40),
]


@pytest.mark.parametrize(("reply", "expected"), CHAT_MODEL_STYLE, ids=repr)
def test_chat_model_style_replies(reply: str, expected: float | None) -> None:
    result = parse_answer(reply, question=Q_STARTUP)
    if expected is None:
        assert result.value is None, result
    else:
        assert result.value == pytest.approx(expected, abs=0.01), result


def test_arithmetic_that_does_not_add_up_is_not_an_answer() -> None:
    result = parse_answer("The probability of the candidate not being hired is 100% - 2 = 95%.")
    assert result.value is None


# --------------------------------------------------------------------------- regressions and limits


def test_none_is_an_empty_answer() -> None:
    result = parse_answer(None)  # type: ignore[arg-type]
    assert result.value is None and result.reason == "empty answer"


@pytest.mark.parametrize("text", ["", "   ", "<|im_end|>user\n<|im_end|>user\n"])
def test_empty(text: str) -> None:
    assert parse_answer(text).value is None


def test_chat_template_tokens_are_ignored() -> None:
    _ok("65<|im_end|>", 65)
    _none("Is 40 a prime number?\n<|im_end|>\n", "")


def test_per_mille() -> None:
    _none("5\u2030", "per-mille")


@pytest.mark.parametrize(("text", "why"), [
    ('{"foo": 1}', "none of the answer keys"), ('{"probability": true}', "boolean"),
    ('{"probability": [65]}', "not a number"), ('{"p": "no idea"}', "refusal"),
])
def test_json_without_an_answer(text: str, why: str) -> None:
    _none(text, why)


def test_huge_json_integer_is_a_reason_not_a_crash() -> None:
    result = parse_answer('{"probability": 1' + "0" * 400 + "}")
    assert result.value is None and result.reason


def test_deeply_nested_json_is_a_reason_not_a_crash() -> None:
    depth = 100_000
    result = parse_answer('{"p": ' + "[" * depth + "]" * depth + "}")
    assert result.value is None and result.reason


@pytest.mark.parametrize("text", ["9" * 40_000, "1," * 20_000, "1.1." * 10_000, "((((" * 10_000 + "65",
                                  "probability is " * 4_000, "0." * 20_000])
def test_pathological_inputs_finish(text: str) -> None:
    _check_shape(parse_answer(text))


# --------------------------------------------------------------------------- properties

SIM_STYLES = list(_STYLES)


def test_sim_styles_are_the_ones_listed_in_the_brief() -> None:
    assert {
        "{v}", "About {v}%.", '{{"probability": {v}}}', "{v}/100",
        "I'd estimate the probability at {v} percent.", "Probability: {v}%",
    } <= set(SIM_STYLES)


@given(v=st.integers(0, 100), style=st.sampled_from(SIM_STYLES))
def test_every_sim_style_round_trips(v: int, style: str) -> None:
    assert parse_answer(style.format(v=v)) == Parsed(float(v), None)


@given(v=st.integers(0, 100))
def test_a_bare_integer_parses_to_itself(v: int) -> None:
    assert parse_answer(str(v)) == Parsed(float(v), None)
    assert parse_answer(f"{v}%") == Parsed(float(v), None)


def _check_shape(result: Parsed) -> None:
    assert isinstance(result, Parsed)
    if result.value is not None:
        assert 0 <= result.value <= 100
        assert result.reason is None
    else:
        assert isinstance(result.reason, str) and result.reason.strip()


@given(text=st.text())
def test_never_raises_and_is_none_or_within_0_100(text: str) -> None:
    _check_shape(parse_answer(text))


_TOKENS = st.sampled_from([
    " ", "%", "percent", "/", " out of ", " in ", "-", " to ", "between ", " and ", "{", "}", '"', ":",
    "probability", "answer", "estimate", ".", ",", "\u066a", "\uff05", "\u0665", "\u096b", "\uff15",
    "\u2030", "[", "]", "true", "null", "\n", "Answer: ", "I'd say ", " is ", "=", "<|im_end|>", "百分之",
    "の確率", "확률은 ", "sixty-five", "one in ", "(", ")", "?", "If ", "not ", "Actually, ", "$", "\u00b1",
    "P(", "p = ", "\u2192", "\u2248", "\u00d7", "*", " otherwise ", "Final answer: ", "3 to 1", " in favor", "half",
    "a third", "七成", "三分之一", "五分五分", "0.", "1,000", "12,5", "entre ", "\u0648", "\u043d\u0435 ",
])
_PIECES = st.one_of(_TOKENS, st.integers(-200, 300).map(str), st.floats(0, 200).map(lambda f: f"{f:.2f}"))


@given(st.lists(_PIECES, max_size=14).map("".join), st.sampled_from([None, True, False]),
       st.sampled_from([None, Q_PASS, Q_PRIME]))
def test_never_raises_on_answer_like_text(text: str, truncated: bool | None, question: str | None) -> None:
    _check_shape(parse_answer(text, question=question, truncated=truncated))


@given(key=st.sampled_from(["probability", "answer", "percent", "p"]),
       value=st.one_of(st.integers(-10**6, 10**6), st.floats(allow_nan=True), st.booleans(),
                       st.none(), st.text(max_size=10), st.lists(st.integers(), max_size=2)))
def test_json_answers_never_raise(key: str, value: object) -> None:
    result = parse_answer(json.dumps({key: value}))
    _check_shape(result)
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 100:
        assert result.value == value


CLEAR = st.sampled_from(["{v}", "{v}%", "Answer: {v}", "I'd estimate {v}%.", '{{"probability": {v}}}',
                         "Final answer: {v}", "Probability: {v}%", "About {v}%.", "Etwa {v} Prozent.",
                         "概率约为{v}%。", "Вероятность: {v}%", "{v} out of 100"])
# Sentences whose numbers are counts, years, ages, money, shares, list numbers, the scale.
NOISE = st.sampled_from([
    "The study followed {a} people for {b} years.", "In {y}, {a} applicants were admitted.",
    "A {b}-year-old founder runs it with a budget of ${a},000.", "About {p}% of such projects succeed.",
    "Reply with a single integer from 0 to 100.", "Option {b} is riskier than option {c}.",
    "Sales grew by {p}% over {b} months.", "There are {a} steps:\n1. Plan.\n2. Build.",
    "What is the probability that a coin lands heads {b} times?", "In {y} the firm had {a},000 staff.",
])


@given(v=st.integers(0, 100), clear=CLEAR, noise=NOISE, a=st.integers(2, 5000), b=st.integers(2, 60),
       c=st.integers(2, 9), p=st.integers(1, 99), y=st.integers(1900, 2030), sep=st.sampled_from([" ", "\n\n"]))
@settings(max_examples=300)
def test_trailing_prose_with_other_numbers_never_changes_a_clear_answer(
        v: int, clear: str, noise: str, a: int, b: int, c: int, p: int, y: int, sep: str) -> None:
    answer = clear.format(v=v)
    if not answer.endswith((".", "。", "}")):
        answer += "."
    if clear == "{v}":
        sep = "\n\n"  # "1. The study ..." on one line reads as a list item
    text = answer + sep + noise.format(a=a, b=b, c=c, p=p, y=y)
    assert parse_answer(text).value == pytest.approx(v)


QUESTIONS = st.sampled_from([
    "Is {a} a prime number?", "Is {a} divisible by {b}?", "Did the war end in {y}?",
    ("At a company, {p}% of projects finish on time. A project has started.\n\nWhat is the probability "
     "that the project finishes on time?"),
    "A {b}-year-old applies to {c} programs.\n\nWhat is the probability that the person is admitted?",
])


@given(q=QUESTIONS, a=st.integers(2, 999), b=st.integers(2, 60), c=st.integers(2, 9),
       p=st.integers(1, 99), y=st.integers(1000, 2030), cut=st.integers(5, 400))
@settings(max_examples=300)
def test_a_value_never_comes_from_inside_the_echoed_question(
        q: str, a: int, b: int, c: int, p: int, y: int, cut: int) -> None:
    question = q.format(a=a, b=b, c=c, p=p, y=y)
    echo = question[:cut]
    assert parse_answer(echo, question=question).value is None
    assert parse_answer(echo, question=question, truncated=True).value is None
    # ... and the answer after an echo is still found.
    assert parse_answer(question + "\n\nAnswer: 42", question=question).value == 42


# --------------------------------------------------------------------------- native digits

NATIVE_ZEROS = {"arabic-indic": 0x0660, "devanagari": 0x0966, "full-width": 0xFF10,
                "extended-arabic-indic": 0x06F0, "bengali": 0x09E6}


def _native(v: int, zero: int) -> str:
    return "".join(chr(zero + int(d)) for d in str(v))


@given(v=st.integers(0, 100), script=st.sampled_from(sorted(NATIVE_ZEROS)),
       suffix=st.sampled_from(["", "%", "\u066a", "\uff05", " percent", " في المائة", " प्रतिशत"]))
def test_native_digits(v: int, script: str, suffix: str) -> None:
    assert parse_answer(_native(v, NATIVE_ZEROS[script]) + suffix) == Parsed(float(v), None)


@given(v=st.integers(0, 100), script=st.sampled_from(sorted(NATIVE_ZEROS)),
       style=st.sampled_from(SIM_STYLES))
def test_native_digits_in_every_sim_style(v: int, script: str, style: str) -> None:
    assert parse_answer(style.format(v=_native(v, NATIVE_ZEROS[script]))).value == v


# --------------------------------------------------------------------------- small real models
# Replies of the kind SmolLM2-135M-Instruct and Gemma 3 270M (base) gave in the real-model
# benchmark (docs/local-models.md, "Measured"), reworded. Each is a number in a role the
# hand check found reaching the metrics; none of them is the reply's answer.

def _q(scenario: str, event: str) -> str:
    return f"{scenario}\n\nWhat is the probability that {event}?"


Q_EXAM_NOT = _q("A person has studied for an advanced language exam.", "the person does not pass the exam")
Q_APPROVE = _q("A team lead sends a proposal to management.", "management approves the proposal")
Q_MACHINE_NOT = _q("A workshop has bought a cutting machine.",
                   "the machine does not pay for itself within three years")
Q_UPDATE_NOT = _q("An app ships a redesign.", "the update is not well received by existing users")
Q_SCHOLARSHIP = _q("A student applies for a scholarship.", "the student is awarded the scholarship")
Q_SECOND = _q("A student failed a course once.", "the student passes the course on the second attempt")
Q_PAPER_NOT = _q("A student submits a first paper.", "the paper is not accepted for publication")
Q_COOKING = _q("A person who eats takeaway food has decided to cook at home.",
               "the person is cooking most weekday dinners at home two months from now")
Q_HABIT = _q("A person wants to stop using the phone before bed.", "the person sticks to this habit for the next month")
Q_WORKSHOP = _q("An employee organises a training workshop.", "the workshop fills all of its available places")
Q_STORE = _q("A bookshop opens an online store.", "the online store attracts a steady stream of orders")
Q_THESIS = _q("An undergraduate writes a thesis.", "the undergraduate submits the thesis by the deadline")
Q_OFFER_NOT = _q("A candidate has an offer.", "the candidate does not accept the offer")
Q_FEATURES = _q("A team has two weeks.", "the team finishes all the committed features by the end of the cycle")

SMALL_MODEL_REPLIES = [
    # The reply ends at its first chat-template token: what follows is a turn the model wrote
    # for someone else, and the reply was not cut off there.
    ("Four groups enter a science fair. The probability that a group wins is <|im_start|>100%\n<|im_end|>",
     Q_FEATURES, True, None),
    ("It is settled. The answer is 1/4.\n<|im_end|>user\nIs it? The answer is 1", None, True, 25),
    # Three or more numbers with only commas between them: a list.
    ("19, 17, 17, 17, 19, 17, 17, 17, ", "Is 17 times 19 equal to 323?", True, None),
    # Operands in brackets, and the whole a share is taken of.
    ("We multiply: (10% of 100) * (10% of 100) =", Q_SCHOLARSHIP, True, None),
    ("Write the share of black marbles in a bag, 80 percent of 100. Write it as a decimal.", None, False, None),
    # Two values joined by "and": considered together, neither is the answer.
    ("We need to consider the probability of 100% and 10% of the target. This is 100% -", Q_FEATURES, True, None),
    ("A prime has exactly two distinct divisors: 1 and 2.", "Is 561 a prime number?", False, None),
    # The event of a chance cut off: unknown.
    ("The online store has a 100% chance of attracting a", Q_STORE, True, None),
    # A restatement in brackets is what the number before it is (here: another attempt's).
    ("The probability of passing the course on the first attempt is 1 (100%).", Q_SECOND, False, None),
    # A bound below 1 with no percent sign is on the 0-1 scale; 0.01 and 0.001 are two values.
    ("Is the answer right? (i.e. <0.01 or <0.001)", None, False, None),
    # A percentage of a quality, not a probability.
    ("It is assumed that the chat will be 100 percent spontaneous.", None, False, None),
    # "a/b = 1" that does not follow: 1% or certainty?
    ("The ratio is not 1 to 1. However, it is 100/10 = 1. This is standard.", Q_FEATURES, False, None),
    # Cut off on the next alternative, or on a result that differs from the answer before.
    (("Two scenarios:\n\n1. The candidate does not accept the offer (100% chance).\n2. The candidate "
     "accepts the offer (99"), Q_OFFER_NOT, True, None),
    (("The probability of submitting the thesis by the deadline is 0.25.\n\nThe probability of submitting "
     "the thesis by the deadline is 1 - 0.25 = 0"), Q_THESIS, True, None),
    # A plain number with many decimals: a computed value.
    ("We square 4913, which is 24331.\n\nThis is approximately 4.91111... (cubed root",
     "Is the cube root of 4913 equal to 17?", True, None),
    # "The probability is X" continues the event stated before it (here the complement).
    (("The probability of the student not being awarded the scholarship is 100%. Therefore, the "
     "probability is 100%."), Q_SCHOLARSHIP, False, None),
    # A value the reply goes on from, or says is not the one it wants.
    (("We'll first calculate the probability of the person not passing the exam, which is 50%. Then "
     "we'll subtract this probability from 1, which gives"), Q_EXAM_NOT, True, None),
    (("This means the probability of the proposal being approved, which is 100%. However, to get the "
     "desired probability we need to"), Q_APPROVE, True, None),
    (("The probability that the update is not well received is 100% (certainty), but we're only "
     "interested in the probability that"), Q_UPDATE_NOT, True, None),
    # A clause of its own between the head and the number.
    (("To find the probability of the person not passing the exam, we need to calculate the number of "
     "unfavorable outcomes, which is 25%."), Q_EXAM_NOT, False, None),
    (("The probability of the workshop filling all its places can be calculated from the total number of "
     "places, which is 6."), Q_WORKSHOP, False, None),
    # Conditional on the asked event itself.
    (("Given that the machine does not pay for itself within three years, there is a 50% chance it will "
     "not pay for itself after three years."), Q_MACHINE_NOT, False, None),
    # A probability of a kind, naming no event.
    ("This is given by a formula. The binomial probability is 0.725.", Q_HABIT, False, None),
    # The event named after "a probability of X".
    ("Each page has a probability of 1/216 (which is 0.015 or 1%) of being accepted.", Q_PAPER_NOT, False, None),
    # Two values stated for the asked event, worked out in steps.
    (("The probability of the student being awarded the scholarship is 1 - (1 - 0.20) = 1 - 0.20 = 0.80.\n\n"
     "So, the probability of the student being awarded the scholarship is 1 - 0.80 = 0.20."), Q_SCHOLARSHIP,
     False, None),
    ("So, the probability is 1/4.\n\nThis can be simplified to 1/12.", Q_WORKSHOP, False, None),
    # A variable defined by itself.
    ("Let P be the probability of not accepting the paper. So, P = 1 - P = 1 - 1 = 0.", Q_PAPER_NOT, False, None),
    # The number subtracted from.
    (("This is done by subtracting the chance of using the phone (i.e., the other case) from 1, since we "
     "want the rest."), Q_HABIT, False, None),
    # Another action than the asked one.
    ("The probability of the person eating takeaway food on weekdays two months from now is 100%.",
     Q_COOKING, False, None),
    # The same verb with another object, also when the event was named in the sentence before.
    (("We divide by 2, which is the probability of the person not taking the elevator.\n\nSo, the "
     "probability is 1/2."), _q("A person has decided to take the stairs.",
                               "the person is no longer taking the stairs every day after two months"), False, None),
    ("In this case, the probability of not filling any spots is 0.1.",
     _q("An employee organises a workshop.", "the workshop does not fill all of its available places"), False, None),
    # The asked probability stated again later as a formula the reply never works out.
    (("The probability of not passing the exam is the probability of failing, which is 100%.\n\nSo, the "
     "probability of not passing the exam is 1 - (100%) which is 10% of the rest."), Q_EXAM_NOT, False, None),
]


@pytest.mark.parametrize(("reply", "question", "truncated", "expected"), SMALL_MODEL_REPLIES, ids=repr)
def test_small_model_replies(reply: str, question: str | None, truncated: bool, expected: float | None) -> None:
    result = parse_answer(reply, question=question, truncated=truncated)
    if expected is None:
        assert result.value is None, result
    else:
        assert result.value == pytest.approx(expected, abs=0.01), result


@pytest.mark.parametrize(("reply", "question", "expected"), [
    ("The probability is 100/100 = 1.", Q_FEATURES, 100),  # the fraction as a ratio
    ("The probability of the student being awarded the scholarship is 1 - 0.4 = 0.6.", Q_SCHOLARSHIP, 60),
    ("The probability of not submitting the thesis, which is 1 - (1 - 20) = 90%.",
     _q("An undergraduate writes a thesis.", "the undergraduate does not submit the thesis by the deadline"), 90),
    (("The probability of not passing the exam is 1 - 0.5 = 0.5, which is the probability of them not "
     "passing."), Q_EXAM_NOT, 50),
    ("Probability = 0.69215... (the probability of the event being 69.21", None, 69.215),
    # Active for passive: the same event.
    ("So, the probability of not admitting the graduate is (100/100) * (100/100) = 100/100 = 1.",
     _q("A graduate applies to one program.", "the graduate is not admitted to the doctoral program"), 100),
], ids=repr)
def test_small_model_answers_still_read(reply: str, question: str | None, expected: float) -> None:
    truncated = reply.endswith("69.21")
    assert parse_answer(reply, question=question, truncated=truncated).value == pytest.approx(expected, abs=0.01)


def test_reading_never_changes_a_shared_token() -> None:
    """A short text's tokens are shared by every later reading of it (extract/lexer.tokens):
    after every reply of this module and the real local replies is read, with the readers kept
    (explain), each shared token still equals a fresh tokenization of its text."""
    from pathlib import Path

    from pytest_optbench.answers.explain import explain
    from pytest_optbench.answers.extract import lexer

    real = json.loads((Path(__file__).parent / "real_local_replies.json").read_text(encoding="utf-8"))
    replies = [(text, None) for text, _ in STANDARD + FORMS + LANGUAGES + JSON_FORMS + SCALE]
    replies += [(text, Q_PASS) for text in OTHER_ROLES] + [(c["reply"], c["question"]) for c in real]
    for _ in range(2):  # the second round reads from the shared tokens
        for text, question in replies:
            parse_answer(text, question=question)
            explain(text, question=question)
    shared = lexer._short_tokens.cache_info().currsize
    assert shared >= len(replies) // 2
    for text, question in replies:
        prepared = lexer.prepare(lexer.cap(text))
        if len(prepared) <= lexer.SHORT_TEXT:
            assert list(lexer._short_tokens(prepared)) == lexer.tokenize(prepared), text


def test_a_json_answer_that_says_two_things_is_no_answer() -> None:
    # Gemma 3 through a chat template it does not know (issue 26): a reasoning of "100", then 0.01.
    declined = json_answer('{"reasoning": "100", "probability": 0.0100}', "Is Lima farther west than Miami?")
    assert declined is not None and declined.value is None
    assert declined.reason == f"{REASONING_CONFLICT} (100 against 1)"
    kept = json_answer('{"reasoning": "Lima lies west of Miami.", "probability": 95}', "Is Lima farther west than Miami?")
    assert kept is not None and kept.value == 95
    assert json_answer("About 65%.") is None  # no answer object: the text rules read it


# SmolLM2-135M-Instruct through llama.cpp's chat endpoint (issue 26, 2026-12-03): its own
# "no", then 1 (1 %, or certainty in the "no" that the object's yes/no rule would decline).
SMOLLM2_NO_THEN_ONE = ('{"reasoning": "The answer is no, the answer is no, the answer is no, the answer is no, the '
                       'answer is no, the answer is no, the answer is no, the answer is no, the answer is no, the '
                       'answer is no, the answer is no, 1,", "probability": 1}')


@pytest.mark.parametrize(("raw", "value"), [
    (SMOLLM2_NO_THEN_ONE, 1.0),
    ('{"reasoning": "No, Lima lies east of Miami.", "probability": 1}', 1.0),
    ('{"reasoning": "Yes, Lima lies west of Miami.", "probability": 1}', 100.0),
    ('{"reasoning": "The chance is 1%.", "probability": 1}', 1.0),
    ('{"reasoning": "It is certain: 100%.", "probability": 1}', 100.0),
])
def test_an_exact_one_is_read_as_its_own_reasoning_reads_it(raw: str, value: float) -> None:
    """An exact 1 is 1 % or certainty; where the reasoning before it states its side or its
    number, only one reading agrees with it (the other would be declined as a contradiction)."""
    read = json_answer(raw, "Is Lima farther west than Miami?")
    assert read is not None and read.value == value and read.reason is None


@pytest.mark.parametrize("raw", [
    '{"reasoning": "Lima and Miami are both cities.", "probability": 1}',  # neither side nor number
    '{"reasoning": "About 40%.", "probability": 1}',  # a number that is neither reading
    '{"probability": 1}',  # a bare object has no reasoning to ask
])
def test_an_exact_one_the_reasoning_does_not_settle_stays_declined(raw: str) -> None:
    read = json_answer(raw, "Is Lima farther west than Miami?")
    assert read is not None and read.value is None
    assert read.reason == JSON_AMBIGUOUS or read.reason.startswith(REASONING_CONFLICT)


@given(reasoning=st.text(max_size=120), number=st.one_of(st.integers(-5, 250), st.floats(allow_nan=True)),
       sign=st.sampled_from(["", "%"]))
@settings(max_examples=200, deadline=None)
def test_a_reasoned_json_answer_is_on_the_scale_or_declined(reasoning: str, number: float, sign: str) -> None:
    raw = '{"reasoning": ' + json.dumps(reasoning) + f', "probability": {number}{sign}' + "}"
    read = json_answer(raw, "Will it rain tomorrow?")
    assert read is None or (read.value is None) == bool(read.reason)
    if read is not None and read.value is not None:
        assert 0 <= read.value <= 100
