"""A labelled set of replies the extractor was not built on: written for this test (not taken
from the shared corpus), in the style of chat models, in the ten bundled languages, for the
kinds of reply issue 28 names -- even chances ("fifty-fifty", a coin flip), a numeral alone
("Zero."), odds with a side, a yes/no followed by a number, a base rate the reply adopts,
leading-dot decimals (".94"), operands of an unfinished product, and a reply that cannot
decide between its numbers -- plus ordinary answers and numbers in other roles. Each label
follows the corpus's labelling standard (shared/data/README.md): the number on 0-100, or None."""

from __future__ import annotations

import pytest

from pytest_optbench.answers.explain import explain
from pytest_optbench.answers.parse import parse_answer

# Questions by key (None: no question).
Q: dict[str | None, str | None] = {
 "open": "Of new restaurants in the city, 30% are still open after five years. A new restaurant opens.\n\nWhat is the probability that the restaurant is still open after five years?",
 "admit": "A graduate program admits 25% of the people who apply to it. A typical student applies this year.\n\nWhat is the probability that the student is not admitted?",
 "fr": "Parmi les nouveaux restaurants de la ville, 30 % sont encore ouverts après cinq ans. Un nouveau restaurant ouvre.\n\nQuelle est la probabilité que le restaurant soit encore ouvert après cinq ans ?",
 "de": "Von den neuen Restaurants der Stadt sind nach fünf Jahren 30 % noch geöffnet. Ein neues Restaurant eröffnet.\n\nWie hoch ist die Wahrscheinlichkeit, dass das Restaurant nach fünf Jahren noch geöffnet ist?",
 "es": "De los restaurantes nuevos de la ciudad, el 30 % sigue abierto después de cinco años. Abre un restaurante nuevo.\n\n¿Cuál es la probabilidad de que el restaurante siga abierto después de cinco años?",
 "ru": "Из новых ресторанов города 30 % всё ещё открыты через пять лет. Открывается новый ресторан.\n\nКакова вероятность того, что ресторан всё ещё будет открыт через пять лет?",
 "zh": "在这座城市新开的餐馆中，30%在五年后仍在营业。一家新餐馆开业了。\n\n这家餐馆五年后仍在营业的概率是多少？",
 "ja": "この街の新しいレストランのうち、30%は5年後も営業しています。新しいレストランが開店しました。\n\nこのレストランが5年後も営業している確率はどれくらいですか？",
 "ko": "이 도시의 새 식당 중 30%는 5년 후에도 영업 중입니다. 새 식당이 문을 열었습니다.\n\n이 식당이 5년 후에도 영업 중일 확률은 얼마입니까?",
 "hi": "शहर के नए रेस्तराँ में से 30% पाँच साल बाद भी खुले रहते हैं। एक नया रेस्तराँ खुलता है।\n\nइसकी संभावना क्या है कि रेस्तराँ पाँच साल बाद भी खुला रहे?",
 "ar": "من بين المطاعم الجديدة في المدينة، 30% لا تزال مفتوحة بعد خمس سنوات. افتتح مطعم جديد.\n\nما احتمال أن يظل المطعم مفتوحًا بعد خمس سنوات؟",
 "yn": "Is the Pacific the largest ocean on Earth?",
 None: None,
}
# (reply, question key, truncated, label)
CASES: list[tuple[str, str | None, bool | None, float | None]] = [
 # even chances
 ("It's basically a coin flip: fifty-fifty.", "open", None, 50),
 ("Honestly? It's a toss-up.", "open", None, 50),
 ("Fifty-fifty.", "open", None, 50),
 ("C'est du cinquante-cinquante.", "fr", None, 50),
 ("Franchement, c'est pile ou face.", "fr", None, 50),
 ("Ehrlich gesagt: fifty-fifty.", "de", None, 50),
 ("Es un cincuenta-cincuenta.", "es", None, 50),
 ("Пятьдесят на пятьдесят.", "ru", None, 50),
 ("五五开吧。", "zh", None, 50),
 ("五分五分です。", "ja", None, 50),
 ("반반입니다.", "ko", None, 50),
 ("पचास-पचास।", "hi", None, 50),
 # zero and numerals alone
 ("Zero.", "open", None, 0),
 ("Zero", "open", None, 0),
 ("Zéro.", "fr", None, 0),
 ("Null.", "de", None, 0),
 ("Cero.", "es", None, 0),
 ("Ноль.", "ru", None, 0),
 ("零。", "zh", None, 0),
 ("शून्य।", "hi", None, 0),
 ("صفر.", "ar", None, 0),
 ("Zero percent.", "open", None, 0),
 ("Zero chance.", "open", None, 0),
 ("Seventy.", "open", None, 70),
 ("One of the two owners has run restaurants before.", "open", None, None),
 # odds
 ("I'd put the odds at 3 to 1 against admission, so a 75% chance of not being admitted.", "admit", None, 75),
 ("The odds are 3 to 1 against him being admitted.", "admit", None, None),
 ("Odds of 3 to 1 in favour of the restaurant still being open after five years.", "open", None, 75),
 ("The odds are 3 to 1.", "open", None, None),
 ("Les chances sont de 3 contre 1 que le restaurant soit encore ouvert.", "fr", None, None),
 ("Die Chancen stehen 3 zu 1 dagegen.", "de", None, 25),
 ("Шансы 3 к 1 против.", "ru", None, 25),
 # yes/no then a number
 ("Yes. Probability: 3%", "open", None, 3),
 ("No. I'd estimate 5%.", "open", None, 5),
 ("No — about 20%.", "open", None, 20),
 ("Yes, around 85%.", "open", None, 85),
 ("Yes, the answer is 97.", "yn", None, 97),
 ("Yes.", "yn", None, None),
 ("No, definitely not, for 2 reasons.", "open", None, None),
 ("Oui, environ 85 %.", "fr", None, 85),
 ("Ja, etwa 85 %.", "de", None, 85),
 ("Sí, alrededor del 85 %.", "es", None, 85),
 ("Да, примерно 85%.", "ru", None, 85),
 ("是的，大约85%。", "zh", None, 85),
 ("はい、約85%です。", "ja", None, 85),
 ("네, 약 85%입니다.", "ko", None, 85),
 ("हाँ, लगभग 85%।", "hi", None, 85),
 ("نعم، حوالي 85%.", "ar", None, 85),
 # adopted base rate
 ("Since 30% of such restaurants survive, I'd estimate 30.", "open", None, 30),
 ("The base rate is 30%, and nothing here suggests this restaurant is unusual, so I'll go with the base rate.", "open", None, 30),
 ("Without more information I'd stick with the base rate of 30%.", "open", None, 30),
 ("30% of new restaurants are still open after five years. With nothing else to go on, I'll use that rate.", "open", None, 30),
 ("The base rate is 30%, but this one has a famous chef.", "open", None, None),
 ("Le taux de base est de 30 %, je retiens donc le taux de base.", "fr", None, 30),
 ("Die Basisrate liegt bei 30 %; ich bleibe bei der Basisrate.", "de", None, 30),
 ("La tasa base es del 30 %, así que me quedo con la tasa base.", "es", None, 30),
 ("Базовая частота 30%, поэтому я остановлюсь на базовой частоте.", "ru", None, 30),
 ("基础比率是30%，我就采用基础比率。", "zh", None, 30),
 # leading-dot decimals
 (".94", "open", None, None),
 (".5", "open", None, None),
 ("Answer: .5", "open", None, None),
 ("The probability is .94", "open", None, 94),
 ("The probability is .94%.", "open", None, 0.94),
 ("About .5%.", "open", None, 0.5),
 ("I'd say .25 (25%).", "open", None, 25),
 ("p = .05", "open", None, None),
 ("Version 2.5 of the menu.", "open", None, None),
 # unfinished products / operands
 ("The probability that the restaurant is still open is (100/100) x", "open", True, None),
 ("The probability that the restaurant is still open is (100/100) x", "open", None, None),
 ("This is calculated by multiplying the probability of staying open each year (0.025 or 2", "open", True, None),
 ("We multiply the yearly survival rates: 0.9 × 0.9 × 0.9 × 0.9 × 0.9 = 0.59, so about 59%.", "open", None, 59),
 ("Multiplying 0.3 by 1 gives 0.3, so the probability is 30%.", "open", None, 30),
 ("On multiplie la probabilité de chaque année (0,9 et 0,8", "fr", True, None),
 # conflicts
 ("Somewhere around 30%... no, I can't decide between 30 and 50.", "open", None, None),
 ("I'm torn between 30% and 40%.", "open", None, None),
 ("I'd say 30%. Or maybe 50%. I can't decide.", "open", None, None),
 ("I can't decide between 30 and 50, so I'll say 40.", "open", None, 40),
 ("Je dirais 30 %... je n'arrive pas à choisir entre 30 et 50.", "fr", None, None),
 ("Vielleicht 30 %, vielleicht 50 % – ich kann mich nicht entscheiden.", "de", None, None),
 ("Quizás un 30 %, o un 50 %; no puedo decidir.", "es", None, None),
 ("Может, 30%, а может, 50% — не могу решить.", "ru", None, None),
 ("大约30%，也可能50%，我决定不了。", "zh", None, None),
 ("30%か50%か、決められません。", "ja", None, None),
 # revisions and finals (should keep working)
 ("I'd say 40%. Actually, on reflection, 55%.", "open", None, 55),
 ("My first instinct is 50%, but given the chef, I'll go with 65.", "open", None, 65),
 ("Je dirais 40 %. En fait, plutôt 55 %.", "fr", None, 55),
 # other roles
 ("A 90-year-old owner has been open for", "open", True, None),
 ("In 2019, 1,250 of the 5,000 restaurants (25%) closed.", "open", None, None),
 ("The probability that a coin lands heads is 50%.", "open", None, None),
 ("What is the probability that a number is 40 or more?", "open", None, None),
 ("If the probability were 0.3, we would expect 3 in 10 to survive.", "open", None, None),
 ("I'd estimate 65%.", "open", None, 65),
 ("Réponse : 35", "fr", None, 35),
 ("Ich schätze 70 %.", "de", None, 70),
 ("Diría que un 40 %.", "es", None, 40),
 ("Я оцениваю вероятность в 35%.", "ru", None, 35),
 ("概率约为65%。", "zh", None, 65),
 ("確率は約20%です。", "ja", None, 20),
 ("확률은 약 55%입니다.", "ko", None, 55),
 ("संभावना लगभग 50 प्रतिशत है।", "hi", None, 50),
 ("الاحتمال حوالي 40%.", "ar", None, 40),
]


@pytest.mark.parametrize(("reply", "question", "truncated", "label"), CASES)
def test_a_reply_it_has_never_seen(reply: str, question: str | None, truncated: bool | None,
                                   label: float | None) -> None:
    parsed = parse_answer(reply, question=Q[question], truncated=truncated)
    why = explain(reply, question=Q[question], truncated=truncated).text()
    if label is None:
        assert parsed.value is None, why
    else:
        assert parsed.value is not None and abs(parsed.value - label) <= 0.01, why


def test_the_set_covers_every_language_and_both_outcomes() -> None:
    assert {q for _, q, _, _ in CASES} >= {"fr", "de", "es", "ru", "zh", "ja", "ko", "hi", "ar", "open"}
    assert sum(label is None for *_, label in CASES) >= 25 and sum(label is not None for *_, label in CASES) >= 60
