"""Pass 1 of answer extraction: numbers with what belongs to them.

Pure. A ``Quantity`` is a number with its percent sign or word, a fraction or odds ("7/10",
"1 in 5", "une chance sur trois", "5 में से 1"), a range ("20-30%", "between 20 and 30",
"от 30 до 40"), an even chance ("50-50"), odds with a side ("3 to 1 in favour") or an error
margin ("20 ± 5"). Neighbouring quantities are then linked: operands of "a op b" and the
result of "... = c" (checked when it is a single operation), and the two ends of the
instruction's "0 to 100". One pass each; every look-ahead is bounded.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import events as E
from . import words as W
from .lexer import NL, NUM, PUNCT, WORD, Tok
from .rules import rule

PER_MILLE = "per-mille is not on the 0-100 scale"
SCALE_ROLE = "the instruction's scale (from 0 to 100)"
OPERATORS = frozenset({"+", "-", "×", "*", "÷", "x", "times", "plus", "minus", "⋅", "·", "^"})
RESULT_LINKS = frozenset({"=", "≈", "≅", "→", "equals", "=>", "~"})
_RANGE_JOINERS_AFTER_OPENER = W.RANGE_JOINERS | W.RANGE_AND  # "between 20 and 30"
# The tokens that may follow the first number of an even chance, odds or a slash fraction.
_FORM_STARTS = frozenset({"-", "/", "на", ":"}) | W.ODDS_JOINERS
_RESULT_FILLERS = frozenset({"is", "approximately", "about", "roughly", "which", ","})
_SCALE_WORDS = frozenset({"scale", "from", "between", "range", "skala", "échelle", "escala", "шкале"})


@dataclass(slots=True)
class Quantity:
    """A number with its percent sign, fraction, range or bound; ``value`` on 0-100 when
    ``pct`` (percent, fraction, odds), else as written."""

    first: int
    last: int
    value: float
    pct: bool = False
    form: str = "point"          # point | range | bound
    words: bool = False
    low: float = 0.0
    high: float = 0.0
    role: str | None = None      # why it is not an answer
    how: str | None = None       # how it is presented
    strength: int = 0
    prob: bool = False           # in a sentence about "the probability": 0-1 means a probability
    label_form: bool = False     # a labelled field ("Probability: 0.6")
    final: bool = False
    event: E.Event | None = None
    anchor: int = -1             # first token of its arithmetic chain (or ``first``)
    result: bool = False
    cut: bool = False
    operand: bool = False
    answer_head: bool = False    # presented by "the answer is", not "the probability is"
    fraction: bool = False       # a fraction or odds ("7/10", "1 in 5"), not a percentage
    standalone: bool = False     # the number is its line's or reply's whole content
    new_subject: bool = False    # "A salesman has a 40% chance ...": an indefinite, new subject
    expected: float | None = None  # a result: what its single operation gives
    rule: str | None = None      # the name of the rule that decided its role or presentation (rules.py)
    odds: bool = False           # odds with a side ("3 to 1 against")


_INDEXES: dict[frozenset[tuple[str, ...]],
               tuple[dict[str, list[tuple[str, ...]]], dict[str, list[tuple[str, ...]]]]] = {}


def _index(phrases: frozenset[tuple[str, ...]]) -> tuple[dict[str, list[tuple[str, ...]]],
                                                         dict[str, list[tuple[str, ...]]]]:
    """Phrases by first and by last word (built once per table), so a look-up at one position
    costs the few phrases that can start or end there, not the whole table."""
    found = _INDEXES.get(phrases)
    if found is None:
        by_first: dict[str, list[tuple[str, ...]]] = {}
        by_last: dict[str, list[tuple[str, ...]]] = {}
        for phrase in phrases:
            by_first.setdefault(phrase[0], []).append(phrase)
            by_last.setdefault(phrase[-1], []).append(phrase)
        found = _INDEXES[phrases] = (by_first, by_last)
    return found


def _side(side: str, sides: tuple[str, ...]) -> int:
    """Words of the first of ``sides`` that ``side`` starts with (0 if none)."""
    for s in sides:
        if side == s or side.startswith(s + " "):
            return s.count(" ") + 1
    return 0


NOT_A_QUANTITY = rule("quantity.not-a-quantity", "not a quantity (a date, version or huge number)",
                      "\"3.14.15\", \"12.05.2023\", a number of more than 15 digits: no quantity.")
LISTED = rule("quantity.number-list", "an item of a list of numbers (1,2,3)",
              "\"1,2,3\" (commas and no spaces): items of a list.")
PER_MILLE_RULE = rule("quantity.per-mille", PER_MILLE, "\"5‰\": per mille is not on the 0-100 scale.")
DATE = rule("quantity.date", "a date", "\"12/05/2023\": three numbers joined by slashes.")
SCALE = rule("quantity.scale", SCALE_ROLE,
             "\"from 0 to 100\", \"a 0-100 scale\", \"between 0 and 100\": the instruction's scale.")
OPERAND = rule("quantity.operand", "formula operand",
               "\"0.5 × 0.85\", \"100 - 25\", \"(1/2)^2\": the operands of an operation between two numbers.")
INCONSISTENT = rule("quantity.inconsistent-arithmetic", "inconsistent arithmetic",
                    "\"100% - 1 = 91%\": a result that does not follow from the single operation before it.")
RESTATED_LATER = rule("quantity.restated-later", "restated by a later number",
                      "\"3/4 = 0.75\", \"3/365, which is 0.15\": a number that the result after \"=\" (after a "
                      "fraction also \", which is\") restates.")
RATIO_ONE = rule("quantity.ratio-one", "0-1 scale ambiguous",
                 "\"100/10 = 1\": exactly 1 after a fraction it does not equal (1% or certainty?).")
ODDS_WITHOUT_SIDE = rule("quantity.odds-without-side", "odds with no side (3 to 1 for or against?)",
                         "\"the odds are 3 to 1\": odds that say neither for nor against give no chance.")


def phrase_at(toks: list[Tok], i: int, phrases: frozenset[tuple[str, ...]]) -> int:
    """Length of the longest phrase starting at token ``i`` (0 if none)."""
    n = len(toks)
    if i >= n:
        return 0
    best = 0
    for phrase in _index(phrases)[0].get(toks[i].text, ()):
        k = len(phrase)
        if k > best and i + k <= n and all(toks[i + m].text == phrase[m] for m in range(1, k)):
            best = k
    return best


def phrase_before(toks: list[Tok], i: int, phrases: frozenset[tuple[str, ...]]) -> int:
    """Length of the longest phrase ending right before token ``i``."""
    if i <= 0:
        return 0
    best = 0
    for phrase in _index(phrases)[1].get(toks[i - 1].text, ()):
        k = len(phrase)
        if k > best and i - k >= 0 and all(toks[i - k + m].text == phrase[m] for m in range(k - 1)):
            best = k
    return best


class Numbers:
    """The quantities of a token list: ``qs`` in order, and ``owner[i]``, the index of the
    quantity token ``i`` belongs to (-1 for none)."""

    def __init__(self, toks: list[Tok]) -> None:
        self.toks = toks
        self.n = len(toks)
        self.owner = [-1] * self.n
        self.qs: list[Quantity] = []

    def build(self) -> None:
        toks, n = self.toks, self.n
        i = 0
        while i < n:
            if toks[i].kind == NUM and self.owner[i] < 0:
                q = self._quantity(i)
                idx = len(self.qs)
                self.qs.append(q)
                for k in range(q.first, q.last + 1):
                    self.owner[k] = idx
                i = q.last + 1
            else:
                i += 1

    def pct_after(self, j: int) -> int:
        """Tokens of a percent sign or word starting at ``j`` (0 if none)."""
        toks = self.toks
        if j >= self.n:
            return 0
        t = toks[j]
        if t.kind == PUNCT and t.text == "%":
            return 1
        if t.kind == WORD:
            k = phrase_at(toks, j, W.PERCENT_AFTER)
            if k:
                return k
            if not t.text.isascii() and t.text.startswith(W.CJK_PERCENT_PREFIXES):
                return 1
        return 0

    def _quantity(self, i: int) -> Quantity:
        """The quantity starting at number token ``i``: its percent sign or word, then the first
        of the forms that fits (an even chance, "1-in-4", odds with a side, "7/10", "1 in 5",
        a range), each a step of its own."""
        toks, n = self.toks, self.n
        t = toks[i]
        q = Quantity(i, i, t.value, pct=t.pct or t.ratio, words=t.words, anchor=i)
        if t.odd:
            q.role, q.rule = NOT_A_QUANTITY.text, NOT_A_QUANTITY.name
        elif t.listed:
            q.role, q.rule = LISTED.text, LISTED.name
        prev = toks[i - 1] if i > 0 else None
        if prev is not None and prev.kind == WORD and prev.text.endswith(W.CJK_PERCENT_BEFORE):
            q.pct = True  # 百分之65
        j = i + 1
        k = self.pct_after(j)
        if k:
            q.pct, q.last, j = True, j + k - 1, j + k
        if j < n and toks[j].kind == PUNCT and toks[j].text == "\u2030":
            q.role, q.rule, q.last = PER_MILLE, PER_MILLE_RULE.name, j
            return q
        if not (q.pct or t.ratio) and j < n:
            found = None
            if toks[j].text in _FORM_STARTS:  # "50-50", "1-in-4", "3 to 1", "7/10"
                found = (self._even_chance(q, t, j) or self._hyphenated_odds(q, t, j) or self._odds_after(q, t, j)
                         or self._slash_fraction(q, t, j))
            if found is None and toks[j].kind == WORD:  # "1 in 5"
                found = self._odds_between(q, t, j)
            if found is not None:
                return found
        self._range_from(q, i, j)
        return q

    def _even_chance(self, q: Quantity, t: Tok, j: int) -> Quantity | None:
        """"50-50", "50/50", "50 на 50": an even chance."""
        toks, n = self.toks, self.n
        if (t.value == 50 and j + 1 < n and toks[j].text in ("-", "/", "на", ":") and toks[j + 1].kind == NUM
                and toks[j + 1].value == 50):
            q.pct, q.last = True, j + 1
            return q
        return None

    def _hyphenated_odds(self, q: Quantity, t: Tok, j: int) -> Quantity | None:
        """"a 1-in-4 chance", "1-out-of-5"."""
        toks, n = self.toks, self.n
        if (j + 3 < n and toks[j].text == "-" and toks[j + 1].text in ("in", "out") and toks[j + 2].text == "-"
                and toks[j + 3].kind == NUM and toks[j + 3].value > 0):
            return self._fraction(q, t.value, toks[j + 3].value, j + 3)
        return None

    def _odds_after(self, q: Quantity, t: Tok, j: int) -> Quantity | None:
        """"3 to 1 against", "3 contre 1", "3 zu 1 dagegen" (``_odds``)."""
        toks, n = self.toks, self.n
        if j + 1 < n and toks[j].text in W.ODDS_JOINERS and toks[j + 1].kind == NUM and toks[j + 1].value <= t.value:
            return self._odds(q, t.value, toks[j + 1].value, j + 1)
        return None

    def _slash_fraction(self, q: Quantity, t: Tok, j: int) -> Quantity | None:
        """"7/10" (a fraction), "12/05/2023" (a date)."""
        toks, n = self.toks, self.n
        if not (j + 1 < n and toks[j].kind == PUNCT and toks[j].text == "/" and toks[j + 1].kind == NUM):
            return None
        if j + 3 < n and toks[j + 2].text == "/" and toks[j + 3].kind == NUM:
            q.last, q.role, q.rule = j + 3, DATE.text, DATE.name
            return q
        return self._fraction(q, t.value, toks[j + 1].value, j + 1)

    def _odds_between(self, q: Quantity, t: Tok, j: int) -> Quantity | None:
        """"65 out of 100", "1 in 5", "une chance sur trois", "1 из 5", "5 में से 1": a part and a
        total joined by words, when they are plausibly one (whole numbers, the part no larger)."""
        toks, n = self.toks, self.n
        k = phrase_at(toks, j, W.ODDS_BETWEEN) if j < n and toks[j].kind == WORD else 0
        if not k or j + k >= n or toks[j + k].kind != NUM:
            return None
        d = toks[j + k]
        joiner = tuple(toks[m].text for m in range(j, j + k))
        if joiner in W.ODDS_TOTAL_FIRST:  # "5 में से 1"
            return self._fraction(q, d.value, t.value, j + k)
        after = self.pct_after(j + k + 1)
        plausible = joiner in (("out", "of"), ("of", "every"), ("in", "every")) or (
            0 <= t.value <= d.value and d.value >= 2 and float(d.value).is_integer()
            and float(t.value).is_integer() and not 1800 <= d.value <= 2100 and not after)
        if joiner in (("de",), ("من",), ("на",), ("a",), ("en",)) and not t.words:
            plausible = plausible and after == 0 and t.value < d.value and d.value in (2, 3, 4, 5, 6, 8, 10, 20, 100)
        return self._fraction(q, t.value, d.value, j + k) if plausible else None

    def _odds(self, q: Quantity, x: float, y: float, last: int) -> Quantity | None:
        """"3 to 1 in favour" (75), "3 to 1 against" (25), "3 contre 1", "3 zu 1 dagegen": the
        chance of the event named after the side ("against admission": admission); odds with
        no side are no answer."""
        toks, n = self.toks, self.n
        words = [toks[m].text for m in range(last + 1, min(n, last + 3)) if toks[m].kind == WORD]
        side = " ".join(words)
        odds_before = any(toks[m].text in W.ODDS_WORDS for m in range(max(0, q.first - 4), q.first))
        if x + y <= 0:
            return None
        favour = _side(side, W.ODDS_FOR)
        against = 0 if favour else _side(side, W.ODDS_AGAINST)
        if favour:
            self._fraction(q, x, x + y, last)
        elif against:
            self._fraction(q, y, x + y, last)
        elif odds_before:
            q.last, q.role = last, "odds with no side (3 to 1 for or against?)"
            q.rule = ODDS_WITHOUT_SIDE.name
            return q
        else:
            return None
        q.odds = True
        q.event = self._event_of_odds(last + 1 + favour + against)
        return q

    def _event_of_odds(self, j: int) -> E.Event | None:
        """The event after the side of odds ("against [the] admission"), to the end of its clause."""
        toks = self.toks
        desc: list[str] = []
        for m in range(j, min(self.n, j + 12)):
            t = toks[m]
            if t.kind != WORD or t.text in W.RESTATING or t.text in W.AND_WORDS:
                break
            desc.append(t.text)
        event = E.make_event(desc) if desc else None
        return event if event is not None and event.words else None

    def _fraction(self, q: Quantity, num: float, den: float, last: int) -> Quantity:
        q.last = last
        q.pct = q.fraction = True
        if num == den == 50:
            q.value = 50.0  # 50/50
        elif den == 0:
            q.value = float("nan")  # "0/0": presented, it is an answer outside 0-100
        else:
            q.value = 100 * num / den
        k = self.pct_after(last + 1)
        if k:
            q.last = last + k
        return q

    def _range_from(self, q: Quantity, i: int, j: int) -> None:
        """``q`` (tokens i..j-1) may start a range: 20-30%, 20 to 30 percent, between 20 and 30;
        or carry an error margin: 20 ± 5."""
        toks, n = self.toks, self.n
        if j >= n:
            return
        opener = phrase_before(toks, i, W.RANGE_OPENERS)
        k = phrase_at(toks, j, _RANGE_JOINERS_AFTER_OPENER if opener else W.RANGE_JOINERS)
        if not k or j + k >= n or toks[j + k].kind != NUM:
            if toks[j].kind == PUNCT and toks[j].text == "±" and j + 1 < n and toks[j + 1].kind == NUM:
                q.last = j + 1 + self.pct_after(j + 2)
            return
        last = self._range_end(q, i, j, k)
        if last < 0:
            return
        low, high = q.value if not toks[i].ratio else toks[i].value, toks[j + k].value
        q.form, q.low, q.high = "range", low, high
        q.value = (low + high) / 2
        q.pct = q.pct or last > j + k
        q.last = last
        if opener:
            q.anchor = q.first  # the opener is found again when looking back
        if self._is_scale(i, last, low, high, bool(opener), toks[j].text):
            q.role, q.rule = SCALE_ROLE, SCALE.name

    def _range_end(self, q: Quantity, i: int, j: int, k: int) -> int:
        """The last token of the range ``q`` .. joiner (j, k tokens) .. the other end, or -1
        when the two numbers are no range: the other end odd, or in words when the first is not,
        not above the first ("100 - 1", "27 BCE to 19 CE"), over 100 for percentages ("84% -
        960"), an unevenly spaced hyphen, or followed by "=" ("20 - 30 = -10": arithmetic)."""
        toks, n = self.toks, self.n
        y = toks[j + k]
        if y.odd or y.words != q.words and not y.words and q.words:
            return -1
        low = q.value if not toks[i].ratio else toks[i].value
        kp = self.pct_after(j + k + 1)
        if low >= y.value or ((q.pct or kp) and y.value > 100):
            return -1
        if toks[j].text == "-" and (toks[j].space != toks[j + 1].space):
            return -1
        last = j + k + kp
        if last + 1 < n and toks[last + 1].text in RESULT_LINKS:
            return -1
        return last

    def _is_scale(self, i: int, last: int, low: float, high: float, opener: bool, joiner: str) -> bool:
        """"from 0 to 100", "a 0-100 scale", "1-10 scale": the instruction's scale."""
        if not (low in (0, 1) and high in (10, 100) and (opener or joiner in ("-", "–", "to", "bis", "à", "a", "до"))):
            return False
        toks = self.toks
        near = {toks[m].text for m in range(max(0, i - 4), i)} | {toks[m].text for m in range(last + 1, min(self.n, last + 4))}
        return (low == 0 and high == 100) or bool(_SCALE_WORDS & near)

    def gap(self, a: Quantity, b: Quantity) -> list[Tok]:
        return self.toks[a.last + 1:b.first]

    def link(self) -> None:
        """Pass 1b: arithmetic chains and the instruction's scale, across neighbouring quantities."""
        self._arithmetic()
        self._scale_pairs()

    def _arithmetic(self) -> None:
        """Operands of ``a op b`` and results of ``... = c``; a result that does not follow from
        a single operation on two numbers is "inconsistent arithmetic"."""
        qs = self.qs
        chain_start = -1
        for k in range(1, len(qs)):
            a, b = qs[k - 1], qs[k]
            gap = self.gap(a, b)
            texts = [t.text for t in gap]
            if len(texts) == 2 and texts[0] == ")" and texts[1] in OPERATORS:
                texts = texts[1:]  # "(1/2)^2", "(0.5) * 0.8": a bracketed operand
            if len(texts) > 3 or any(t.kind == NL for t in gap):
                chain_start = -1
            elif len(texts) == 1 and texts[0] in OPERATORS or texts in (["divided", "by"], ["multiplied", "by"]):
                if texts == ["-"] and a.form == "range":
                    continue
                a.operand = b.operand = True
                a.role = b.role = OPERAND.text
                a.rule = b.rule = OPERAND.name
                if chain_start < 0:
                    chain_start = a.anchor
                b.anchor = chain_start
            else:
                if texts and all(x in RESULT_LINKS or x in _RESULT_FILLERS for x in texts) and (
                        any(x in RESULT_LINKS for x in texts) or (a.fraction and texts[-2:] == ["which", "is"])):
                    self._result(k, chain_start)  # "3/4 = 0.75", and a fraction's "3/365, which is 0.15"
                chain_start = -1

    def _result(self, k: int, chain_start: int) -> None:
        """``qs[k]`` follows "=" after ``qs[k - 1]``: checked against a single operation before
        it, or restating the number before it ("3/4 = 0.75": the fraction as a ratio, on the 0-1
        scale; "100/10 = 1" does not follow: 1% or certainty?)."""
        a, b = self.qs[k - 1], self.qs[k]
        b.result, b.anchor = True, chain_start if a.operand else a.anchor
        if a.operand:
            expected = b.expected = self._evaluate(k - 1)
            if expected is not None and not self._close(expected, b.value if not b.pct else self.toks[b.first].value):
                b.role, b.rule = INCONSISTENT.text, INCONSISTENT.name
            return
        if a.role is None:
            a.role, a.rule = RESTATED_LATER.text, RESTATED_LATER.name
        if a.fraction and a.form == "point" and not b.pct and b.form == "point" and not math.isnan(a.value):
            if self._close(a.value / 100, b.value):
                b.value, b.pct = a.value, True
            elif b.value == 1 and not self._close(a.value, b.value):
                b.role, b.rule = RATIO_ONE.text, RATIO_ONE.name

    def _evaluate(self, k: int) -> float | None:
        """``a op b`` ending at quantity ``k``, when it is exactly that."""
        if k < 1:
            return None
        a, b = self.qs[k - 1], self.qs[k]
        if k >= 2 and self.qs[k - 2].operand and len(self.gap(self.qs[k - 2], a)) == 1:
            return None  # longer expressions are not checked
        op = " ".join(t.text for t in self.gap(a, b))
        x, y = self.toks[a.first].value, self.toks[b.first].value
        if op in ("+", "plus"):
            return x + y
        if op in ("-", "minus"):
            return x - y
        if op in ("×", "*", "x", "times", "⋅", "·", "multiplied by"):
            return x * y
        if op in ("÷", "divided by") and y != 0:
            return x / y
        return None

    @staticmethod
    def _close(expected: float, stated: float) -> bool:
        return abs(expected - stated) <= max(0.006, 0.02 * abs(stated))

    def _scale_pairs(self) -> None:
        """"from 0 (not at all) to 100 (...)": both ends of the instruction's scale."""
        qs, toks = self.qs, self.toks
        for k in range(1, len(qs)):
            a, b = qs[k - 1], qs[k]
            if a.value in (0, 1) and b.value == 100 and not a.pct and b.last - a.first <= 12:
                between = {toks[m].text for m in range(a.last + 1, b.first)}
                if "(" in between:
                    continue  # "1 - (100%)": arithmetic
                if between & {"to", "and", "-", "–", "bis", "à", "a", "до", "到", "से", "إلى", "~"}:
                    a.role = b.role = SCALE_ROLE
