"""Tokens -> the number a reply presents as its answer, or the reason there is none.

Pure. Four passes over the tokens, each linear:

1. **Quantities** (``quantities.py``). Numbers with what belongs to them: a percent sign or word, a fraction
   or odds ("7/10", "1 in 5", "три из пяти"), a range ("20-30%", "between 20 and 30"),
   a bound ("less than 5%"), arithmetic ("1 - 0.4 = 0.6").
2. **Roles.** Why a quantity is *not* an answer: a count or measurement ("3 boys",
   "a 50-year-old"), money, a year, list or option numbering, a share or a change ("30% of
   applicants", "10% more"), the instruction's scale ("from 0 to 100"), a number inside a
   question or a hypothetical, a negated number ("is not 0.9"), a formula's operand or a
   result that does not follow from it.
3. **Presentation.** How a remaining quantity is presented as the answer: the whole reply or
   a phrase of nothing but the number and hedges ("About 65%.", "Je dirais environ 70 %"), a
   labelled field ("Answer: 25", "Final answer: 95"), "the probability [that E] is X",
   a first-person estimate ("I'd put it at 92%"), "X% chance that E". A stated event is
   compared with the question's (``events``).
4. **Decision.** Cut-off numbers are dropped; 0-1 values are scaled or declared ambiguous;
   an explicit revision replaces what came before; a marked final answer wins over earlier
   intermediate results; a point estimate wins over a range or bound; what remains must be
   one value.

The rules are documented in docs/answer-extraction.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from . import events as E
from . import lexer as L
from . import quantities as Q
from . import words as W
from .lexer import NL, NUM, PUNCT, WORD, Tok
from .quantities import PER_MILLE, SCALE_ROLE, Quantity, phrase_at
from .roles import (
    NUMBER_WORD_ROLE,
    Context,
    cjk_has,
    is_number_text,
    is_phrase_word,
)
from .rules import rule

# Reasons (stable phrases; callers may count them).
NO_NUMBER = "no number"
OTHER_ROLES = "no answer: numbers only in other roles"
SCALE_01 = "0-1 scale ambiguous"
CONFLICT = "conflicting answers"
TRUNCATED = "truncated"
YES_NO = "yes/no without a probability"
REFUSAL = "refusal"
OUT_OF_RANGE = "answer outside 0-100"
ECHO = "no answer: an echo of the question"

_HEAD_LINKS = W.COPULAS | W.HEAD_LINK_WORDS


@dataclass(frozen=True)
class Reading:
    """The answer (on 0-100) or the reason there is none; ``rule``: the name of the rule that
    decided (``rules.py``); ``at``: the first token of the number read (-1: none)."""

    value: float | None
    reason: str | None
    rule: str | None = None
    at: int = -1


# --------------------------------------------------------------------------- the reader


class Reader(Context):
    """One reply. ``read()`` returns its answer or the reason there is none."""

    def __init__(self, toks: list[Tok], question: E.Question | None, truncated: bool | None) -> None:
        super().__init__(toks, question, truncated)
        self.question = question
        self.sent_negated: list[bool] = []
        self.cut_unfinished = False
        self.cut_in_calculation = False  # cut on "is 100" while working out a calculation
        self.answer_at = -1  # the first token of the number read as the answer
        self.unread: list[int] = []  # where the asked probability is stated as an unworked formula

    # ------------------------------------------------------------------ pass 3: presentation

    def present(self) -> None:
        self.sent_qs = [0] * len(self.sent_qs)
        self.sent_negated = [False] * len(self.sent_qs)
        for q in self.qs:
            if q.role is None:
                self.sent_qs[self.sent[q.first]] += 1
        for i, t in enumerate(self.toks):
            if t.kind == WORD and (t.text in W.NEGATIONS or t.text.endswith("n't")):
                self.sent_negated[self.sent[i]] = True
        for q in self.qs:
            if q.role is not None:
                continue
            self._present(q)
            if q.how is not None and q.role is None:
                self._echo_checks(q)
        self._restatements()
        self._steps()
        self._alternatives()
        self._unread_statements()

    def _unread_statements(self) -> None:
        """"So, the probability of E is 1 - (100%) which ...": the asked event's probability
        stated as a formula the reply never works out. Where that comes after an answer, the
        reply's answer cannot be told (``decide``)."""
        if self.question is None:
            return
        last_result: dict[int, int] = {}  # sentence -> index of its last result
        for k, q in enumerate(self.qs):
            if q.result:
                last_result[self.sent[q.first]] = k
        for k, q in enumerate(self.qs):
            if not q.operand and q.role != "formula operand":
                continue
            if k and self.qs[k - 1].role == "formula operand" and self.qs[k - 1].last + 4 >= q.first:
                continue  # not the first operand
            probe = replace(q, role=None, how=None, event=None)
            if not self._head(probe, self.prev_index(q.first) + 1) or probe.event is None:
                continue
            if not E.matches(probe.event, self.question):
                continue
            if last_result.get(self.sent[q.first], -1) < k:
                self.unread.append(q.first)

    def _steps(self) -> None:
        """A value the reply goes on to work from, or says is not the one it wants: "... which
        is 50%. Then we'll subtract this probability from 1", "... is 100%. However, to get
        the desired probability we need to ...", "... is 100%, but we're only interested in the
        probability that ...", "..., but it is not the probability of ...", "Next, we calculate
        the probability of ...", "Multiplying this probability by itself gives ...". Such a value
        is a step, not the answer."""
        toks, n = self.toks, self.n
        cues: dict[int, int] = {}
        for i in range(n):
            t = toks[i]
            if t.kind == WORD and t.text in W.STEP_GERUNDS and i == self.sent_start[self.sent[i]]:
                # "Multiplying this probability by itself gives ..." (not "by 100": a conversion)
                window = [x.text for x in toks[i + 1:min(n, i + 6)]]
                if (window[:1] and window[0] in ("this", "that", "it", "the")
                        and any(w in W.PROBABILITY_HEADS for w in window[:3]) and "100" not in window):
                    cues[self.sent[i]] = i
                continue
            if t.kind != WORD or t.text not in ("then", "next", "however", "but", "now"):
                continue
            j = i + 1 if i + 1 < n and toks[i + 1].text == "," else i
            window = [x.text for x in toks[j + 1:min(n, j + 12)]]
            if t.text in ("then", "next"):
                step = (len(window) >= 2 and window[0] in W.STEP_SUBJECTS
                        and (window[1] in W.STEP_ARITHMETIC or window[1] in W.STEP_WORKING)
                        and any(w in W.PROBABILITY_HEADS or w in ("this", "it", "that") for w in window[2:6]))
            else:
                goal = next((k for k in range(min(4, len(window))) if phrase_at(toks, j + 1 + k, W.STEP_GOALS)), None)
                step = goal is not None and any(w in W.PROBABILITY_HEADS for w in window[goal:goal + 8])
            if step:
                cues[self.sent[i]] = i  # the last cue of each sentence
        for q in self.qs:
            s = self.sent[q.first]
            following = s + 1  # the next sentence with words (a paragraph break is one of its own)
            while following < len(self.sent_words) and not self.sent_words[following]:
                following += 1
            if q.role is None and q.how is not None and (following in cues or cues.get(s, -1) > q.last):
                q.role = "a step the reply goes on from (then ..., however to get ...)"

    def _restatements(self) -> None:
        """"is 1 (100%)", "0.5 (50%)": a number restated in brackets is what the number before
        it is -- not an answer when that one is not (the probability of another event). "This
        can be simplified to 1/12": a restatement of the answer before it, with its presentation."""
        qs, toks = self.qs, self.toks
        last: Quantity | None = None  # the last number presented as an answer
        for b in qs:
            if (last is not None and b.role is None and b.first >= 2 and toks[b.first - 1].text == "to"
                    and toks[b.first - 2].text in ("simplified", "simplifies", "simplify", "reduces", "reduced")):
                b.how, b.strength, b.event, b.prob, b.label_form = (last.how, last.strength, last.event, last.prob,
                                                                     last.label_form)
            if b.role is None and b.how is not None:
                last = b
        for k in range(1, len(qs)):
            a, b = qs[k - 1], qs[k]
            if a.role is None or b.role is not None:
                continue
            gap = [t.text for t in self.gap(a, b)]
            same = gap == ["("] and (abs(b.value - a.value) <= 0.01
                                     or (b.pct and not a.pct and abs(b.value - 100 * a.value) <= 0.01))
            if same or (gap[-1:] == ["("] and len(gap) <= 4 and self._share_of_counts(k, b)):
                b.role = "restates a number in another role"

    def _share_of_counts(self, k: int, b: Quantity) -> bool:
        """"1,250 of the 5,000 restaurants (25%)": the bracketed percentage is the counts' share."""
        if k < 2 or not b.pct:
            return False
        part, whole = self.qs[k - 2], self.qs[k - 1]
        return (part.role == "a count (N of ...)" and whole.value > 0
                and abs(100 * part.value / whole.value - b.value) <= 0.5)

    def _alternatives(self) -> None:
        """"30% or 50%": two numbers offered as alternatives share one presentation, so they
        conflict; when one of them is not an answer, neither is."""
        qs = self.qs
        for k in range(1, len(qs)):
            a, b = qs[k - 1], qs[k]
            gap = [t.text for t in self.gap(a, b) if t.text != ","]
            # "the probability of 100% and 10%": two percentages joined by "and" as well.
            joined = len(gap) == 1 and (gap[0] in W.OR_WORDS or (gap[0] in W.AND_WORDS and a.pct == b.pct
                                                                  and not a.fraction and not b.fraction))
            if not joined or abs(a.value - b.value) <= 0.01:
                continue
            if a.role in (None, NUMBER_WORD_ROLE) and b.role in (None, NUMBER_WORD_ROLE):
                if a.how is not None or b.how is not None:
                    src = a if a.strength >= b.strength else b
                    for q in (a, b):
                        q.role, q.how, q.strength = None, src.how, src.strength
            elif a.role is None and a.how is not None and b.role is not None and b.role != NUMBER_WORD_ROLE:
                a.role = "an alternative to a number in another role"
            elif b.role is None and b.how is not None and a.role is not None and a.role != NUMBER_WORD_ROLE:
                b.role = "an alternative to a number in another role"

    def _present(self, q: Quantity) -> None:
        """How ``q`` is presented as the answer (``how``, ``strength``, the event it names), if it is."""
        toks = self.toks
        anchor = q.anchor if q.result else q.first
        a = self.prev_index(anchor) + 1  # first token of the hedges/bounds before the number
        if q.form == "point" and a < anchor and any(
                phrase_at(toks, m, W.BOUNDS_BEFORE) for m in range(a, anchor)):
            q.form = "bound"
        if q.form == "point" and q.last + 1 < self.n and (
                phrase_at(toks, q.last + 1, W.BOUNDS_AFTER)
                or (toks[q.last + 1].kind == WORD and toks[q.last + 1].text.startswith(W.CJK_BOUNDS))):
            q.form = "bound"
        if self._label(q, a):
            return
        if q.result and a < q.first and self._label(q, self.prev_index(q.first) + 1):
            return  # "the probability that E is (1/216) * 1 = 1/216": the "=" presents it
        if self._head(q, a):
            return
        if self._chance_after(q):
            return
        if self._leadin(q, a):
            return
        self._phrase(q, a)
        if (q.how is not None and not q.pct and q.form != "range" and self.toks[q.first].decimals > 2
                and q.value > 1):
            # "This is approximately 4.91111...": a computed value, not a percentage.
            q.how, q.role = None, "a computed value (many decimals, no percent sign)"

    # -- labels: "Answer: 25", "**Final answer:** 95", "P(not selected) = 0.95"

    def _label(self, q: Quantity, a: int) -> bool:
        """A number right after "label:" or "label =" is presented by its label: an answer
        when the label names one (answer, estimate, probability, rating, "I'd say", or the
        question's event), otherwise something else ("Base rate: 30%", "Step 2: 1")."""
        if a < 1 or self.toks[a - 1].text not in _LABEL_MARKS:
            return False  # the common case, at once
        k = self._label_mark(a)
        if k < 0:
            return False
        if self.toks[k].text == "\u2192":
            return self._conversion(q, k)
        label = self.toks[self._label_start(k):k]
        words = [t.text for t in label if t.kind == WORD]
        if words and all(is_phrase_word(t) for t in label) and not _names_an_answer(words):
            return False  # "Honestly: 30%", "Ehrlich gesagt: fifty-fifty": a hedge, not a label
        if self._self_defined(label, words):
            q.role = "a variable defined by itself (P = 1 - P = ...)"
        elif _names_an_answer(words):
            self._answer_label(q, label, words)
        elif self.question is not None and not self.question.binary and any(w not in W.STOPWORDS for w in words):
            # "Acceptance: 30%", "The online store attracts steady orders: 40": the asked event.
            ev = E.make_event([t.text for t in label if t.kind in (WORD, NUM)])
            if not (ev.words and E.matches(ev, self.question)):
                q.role = "labelled as something else"
                return True
            q.how, q.strength, q.label_form, q.event = "label", 2, True, ev
        else:
            q.role = "labelled as something else"
        if q.role is None:
            q.standalone = True
        return True

    def _label_mark(self, a: int) -> int:
        """The ":", "=", "→" or "equals" right before the number at ``a`` (also "Answer:\n25"), or -1."""
        toks = self.toks
        k = a - 1
        if k >= 0 and toks[k].kind == NL:
            while k >= 0 and toks[k].kind == NL:
                k -= 1
            if k < 0 or toks[k].text != ":":
                return -1
        if k < 0:
            return -1
        t = toks[k]
        return k if (t.kind == PUNCT and t.text in (":", "=", "\u2192")) or (t.kind == WORD and t.text == "equals") else -1

    def _conversion(self, q: Quantity, k: int) -> bool:
        """"Rating: 7/10 -> 70": a conversion of the quantity before the arrow, presented as it was."""
        before = self.owner[k - 1] if k > 0 else -1
        if before < 0 or self.qs[before].how is None:
            return False
        src = self.qs[before]
        q.how, q.strength, q.final, q.label_form = src.how, max(src.strength, 2), src.final, True
        q.standalone = True
        return True

    def _label_start(self, k: int) -> int:
        """The label before the mark at ``k``: back to the start of its line or sentence (at most
        16 tokens, not counting arithmetic: "The probability of E is 1 - (1 - 0.20) = 1 - 0.20 = 0.80")."""
        toks = self.toks
        start, parens, arithmetic = k, 0, 0
        while start > 0 and k - start < 16 + arithmetic:
            t = toks[start - 1]
            if t.kind == NL:
                break
            if t.kind == NUM:
                arithmetic += 1
            elif t.kind == PUNCT:
                if t.text in "()=-+×*/÷":
                    arithmetic += 1
                if t.text in ".!?;" and parens == 0 and not self.abbreviation(start - 1):
                    break
                parens += (t.text == ")") - (t.text == "(")
            start -= 1
        return start

    @staticmethod
    def _self_defined(label: list[Tok], words: list[str]) -> bool:
        """"P = 1 - P = 0": a variable defined by itself."""
        equals = next((m for m, t in enumerate(label) if t.text == "="), -1)
        if equals <= 0:
            return False
        named = set(words[:1]) | {x.text for x in label[:equals] if x.kind == WORD}
        return any(t.kind == WORD and len(t.text) == 1 and t.text in named for t in label[equals + 1:])

    def _answer_label(self, q: Quantity, label: list[Tok], words: list[str]) -> None:
        final = any(w in W.FINAL_WORDS or w in W.ANSWER_WORDS or cjk_has(w, _CJK_FINAL_LABELS) for w in words)
        q.how, q.strength, q.final, q.label_form = "label", 3 if final else 2, final, True
        first_head = next((m for m, t in enumerate(label) if t.kind == WORD and t.text in W.PROBABILITY_HEADS), None)
        if first_head is not None and any(t.text in W.COPULAS for t in label[first_head + 1:]) and any(
                t.kind == NUM for t in label[first_head + 1:]):
            # "The probability of E is 1 - (1 - 0.20) = 1 - 0.20 = 0.80": a statement of the
            # probability worked out in steps, not a labelled field.
            q.label_form, q.prob = False, True
        desc = self._descriptor_from_label(label)
        if desc:
            joined = "".join(desc)
            q.event = E.make_event(desc, "" if joined.isascii() else joined)

    @staticmethod
    def _descriptor_from_label(label: list[Tok]) -> list[str]:
        """The event a label names: "Chance of acceptance" -> acceptance, "Chance the store fails"
        -> the store fails, "P(not selected)" -> not selected, "Final answer" -> nothing."""
        texts = [t.text for t in label if t.kind in (WORD, NUM)]
        inner = _in_brackets(label)
        if any(not is_number_text(w) for w in inner):  # not "1 - (1 - 20) =": arithmetic
            return inner
        skip = W.ANSWER_HEADS | W.PROBABILITY_HEADS | W.FINAL_WORDS | W.FIRST_PERSON | W.EVENT_OPENERS | {
            "my", "our", "the", "a", "best", "overall", "estimated", "to", "question", "this", "your"}
        heads = [k for k, w in enumerate(texts) if w in W.ANSWER_HEADS or w in W.PROBABILITY_HEADS]
        if not heads:
            # Unspaced scripts: the head inside a run ("该论文被接受的概率", "最终答案").
            raw = "".join(texts)
            for marker in W.CJK_PROBABILITY_HEADS + W.CJK_ANSWER_HEADS + W.CJK_FINAL + ("的", "の", "我", "私"):
                raw = raw.replace(marker, "")
            return [raw] if raw and not raw.isascii() else []
        after = texts[heads[-1] + 1:]
        if after and after[0] in W.LABEL_COMMENT:
            after = []  # "The chances are slim:" comments on the number, it names no event
        before = [w for w in texts[:heads[-1]] if w not in skip]
        out = [w for w in before + after if w not in skip]
        return out if any(w not in W.STOPWORDS for w in out) else []

    # -- "the probability [that E] is X", "la probabilité est de X", "確率は約X"

    def _head(self, q: Quantity, a: int) -> bool:
        """present.head: "the probability [that E] is X", "my estimate is X", "確率は約X"."""
        toks = self.toks
        s = self.sent[q.first]
        lo = max(self.sent_start[s], a - 40)
        k = a - 1
        if k >= lo and toks[k].kind == WORD and not toks[k].text.isascii() and self._cjk_head(q, k, lo):
            return True
        if self.anyhead_before[a] == self.anyhead_before[lo]:
            return False
        heads = [m for m in range(lo, a) if toks[m].kind == WORD and self.owner[m] < 0 and (
            toks[m].text in W.PROBABILITY_HEADS or toks[m].text in W.PROSE_ANSWER_HEADS
            or (toks[m].text in W.ANSWER_HEADS and m > 0 and toks[m - 1].text in W.FIRST_PERSON))]
        for h in heads:
            # Another percentage between the head and the number: the head is not its own.
            if self.pct_before[a] - self.pct_before[h + 1]:
                continue
            # "my estimate is that the probability is 40%": the nearer "probability" is the head.
            if toks[h].text not in W.PROBABILITY_HEADS and self.head_before[a] - self.head_before[h + 1]:
                continue
            if self._parse_between(q, toks[h], toks[h + 1:a]):
                if q.event is None and toks[a - 1].text == "of":
                    q.event = self._event_after(q)
                return True
        return False

    def _cjk_head(self, q: Quantity, k: int, lo: int) -> bool:
        """The head inside the run right before the number, then only copulas ("概率约为",
        "確率は約", "확률은"); the event is the text before the head."""
        toks = self.toks
        word = toks[k].text
        for head in _CJK_HEADS:
            pos = word.rfind(head)
            if pos >= 0:
                rest = word[pos + len(head):]
                if all(c in W.CJK_COPULA_CHARS for c in rest):
                    before = "".join(t.text for t in toks[lo:k] if t.kind == WORD) + word[:pos]
                    self._set_head(q, head in W.CJK_PROBABILITY_HEADS, ":" in rest, before, [], cjk=True)
                    return True
        return False

    def _parse_between(self, q: Quantity, head: Tok, between: list[Tok]) -> bool:
        """Is what lies between a head ("the probability") and ``q`` a copula and, optionally,
        the event ("that E is", ", dass E, liegt bei")? If so ``q`` is presented by the head."""
        links = _links_before_number([t.text for t in between])
        if links is None:
            return False  # "a pool of 5%": "of" after an event is not a copula
        texts, link, copulas, relative = links
        is_prob = head.text in W.PROBABILITY_HEADS
        if _new_clause(texts) or (relative and any(x in W.QUANTITY_NOUNS for x in texts)):
            # "the probability of E, we need to calculate the number of X, which is 25%"; "... based on
            # the total number of places, which is 6": the number belongs to the nearer clause or noun.
            return False
        desc = _event_description(head, is_prob, texts, copulas) if texts else []
        if desc is None:
            return False
        self._set_head(q, is_prob, link in (":", "="), "", desc, answer_head=not is_prob)
        return True

    def _set_head(self, q: Quantity, is_prob: bool, label_like: bool, raw_before: str, desc: list[str],
                  *, cjk: bool = False, answer_head: bool = False) -> None:
        q.how = "head"
        q.strength = 2
        q.prob = is_prob and not label_like
        q.label_form = label_like
        q.answer_head = answer_head
        if cjk and raw_before:
            q.event = E.make_event([], raw_before)
        elif desc:
            q.event = E.make_event(desc)

    def _event_after(self, q: Quantity) -> E.Event | None:
        """"a probability of 1/216 (which is 0.015) of being accepted", "a probability of 0.2
        for the person not to meditate": the event named after the number."""
        toks, n = self.toks, self.n
        j = q.last + 1
        if j < n and toks[j].text == "(":
            close = next((m for m in range(j, min(n, j + 20)) if toks[m].text == ")"), None)
            j = close + 1 if close is not None else n
        if j >= n or toks[j].kind != WORD or toks[j].text not in ("of", "for", "that"):
            return None
        end = self.clause_end[self.clause[j]] if self.clause[j] < len(self.clause_end) else n
        desc = [x.text for x in toks[j + 1:min(end, j + 31)] if x.kind in (WORD, NUM)]
        return E.make_event(desc) if desc else None

    # -- "X% chance that E", "55% that they pass", "a 40% chance of"

    def _chance_after(self, q: Quantity) -> bool:
        """"X% chance that E", "a 0.75 probability of E", "55% that they pass", "70 %
        wahrscheinlich": a chance word (or an opener) after the number; the event follows it."""
        j = self._chance_word_after(q) if q.pct or 0 < q.value < 1 else -1
        if j < 0:
            return False
        desc = self._chance_event(q, j)
        cut_off = "the probability of an event that is cut off"
        if desc is None:
            # "The online store has a 100% chance of attracting a" (cut off): what the chance is of is unknown.
            q.role = cut_off
            return True
        subject = self._chance_subject(q)
        if subject is not None and not desc:
            q.role, q.how = cut_off, None
            return True
        q.how, q.strength, q.prob = "chance", 2, True
        pronoun = not subject or subject[-1:] in (["there"], ["it"], ["this"], ["i"])
        words = desc if pronoun or subject is None else subject + desc
        if words:
            raw = "".join(words)
            q.event = E.make_event(words, raw if not raw.isascii() else "")
        return True

    def _chance_word_after(self, q: Quantity) -> int:
        """The chance word after ``q`` (past "of", "de"), or -1."""
        toks, n = self.toks, self.n
        if not q.pct and not (0 < q.value < 1):
            return -1
        j = q.last + 1
        if j < n and toks[j].kind == WORD and toks[j].text in ("de", "of", "des", "d'"):
            j += 1
        if j >= n or toks[j].kind != WORD:
            return -1
        t = toks[j]
        opener_only = t.text in ("that", "que", "dass", "chance") and q.pct
        if t.text in W.PROBABILITY_HEADS or t.text in W.CHANCE_WORDS or opener_only or cjk_has(
                t.text, W.CJK_PROBABILITY_HEADS):
            return j
        return -1

    def _chance_event(self, q: Quantity, j: int) -> list[str] | None:
        """The event after the chance word at ``j``, to the end of the clause; None when a
        cut-off reply ends inside it."""
        toks, n = self.toks, self.n
        c = self.clause[q.first]
        end = self.clause_end[c] if c < len(self.clause_end) else n
        desc = [x.text for x in toks[j + 1:min(end, j + 31)] if x.kind in (WORD, NUM)]
        if desc and desc[0] in W.EVENT_OPENERS:
            desc = desc[1:]
        if self.truncated and end >= n and (desc or toks[n - 1].kind == WORD):
            return None
        return desc

    def _chance_subject(self, q: Quantity) -> list[str] | None:
        """"A salesman ... has a 40% chance of": the words before "has" are part of the event
        (``q.new_subject`` when they start with "a"); None when no such verb comes before."""
        toks = self.toks
        p = self.prev_index(q.first)
        if p >= 0 and toks[p].kind == WORD and toks[p].text in ("a", "an"):
            p -= 1
        if not (p >= 0 and toks[p].kind == WORD and toks[p].text in ("has", "have", "had", "with", "gives", "stands")):
            return None
        subject = [x.text for x in toks[self.sent_start[self.sent[q.first]]:p] if x.kind == WORD]
        q.new_subject = subject[:1] in (["a"], ["an"])
        return subject

    # -- "I'd say 70%", "I'd put it at 92%", "Je dirais 70 %", "Ich schätze 70 %"

    def _leadin(self, q: Quantity, a: int) -> bool:
        toks = self.toks
        s = self.sent[q.first]
        lo = max(self.sent_start[s], a - 10)
        k = a - 1
        while k >= lo:
            t = toks[k]
            if t.kind == WORD and t.text in W.LEADIN_VERBS:
                if t.text in W.EN_LEADIN_NEEDS_SUBJECT or t.text in ("estimate", "guess", "answer"):
                    subject = any(toks[m].kind == WORD and toks[m].text in W.FIRST_PERSON
                                  for m in range(max(lo - 3, k - 4, 0), k))
                    if not subject:
                        return False
                q.how, q.strength = "leadin", 2
                return True
            if t.kind == WORD and t.text not in W.LEADIN_FILLER and t.text not in W.HEDGES:
                return False
            if t.kind in (NUM, NL) or (t.kind == PUNCT and t.text not in ",:'\"~"):
                return False
            k -= 1
        return False

    # -- "About 65%.", "Or 80%.", "most likely around 65", a line that is only "**75**"

    def _phrase(self, q: Quantity, a: int) -> None:
        """present.phrase, else present.short-sentence (see their entries)."""
        c = self.clause[q.first]
        # Bound phrases right before the number ("не более", "no more than") are part of it.
        anchor = q.anchor if q.result else q.first
        bound_words = sum(1 for m in range(a, anchor) if not is_phrase_word(self.toks[m]))
        if self.clause_other[c] - bound_words == 0 and self.clause_words[c] <= 10:
            self._phrase_strength(q, c)
        elif self._short_sentence(q):
            q.how, q.strength = "short sentence", 1

    def _phrase_strength(self, q: Quantity, c: int) -> None:
        """A phrase is explicit (2) when it is a whole sentence, the reply's first clause or a
        conclusion ("..., so 55"); a trailing phrase is weak (1)."""
        s = self.sent[q.first]
        q.how = "phrase"
        whole_sentence = self.clause_start[c] <= self.sent_start[s] and self.clause_end[c] >= self.sent_end[s]
        first_clause = self.clause_start[c] <= self.first_content
        conclusion = any(self.toks[m].text in W.CONCLUSION or self.toks[m].text in ("likely", "rather")
                         for m in range(max(self.clause_start[c], q.first - 6), q.first))
        q.strength = 2 if (whole_sentence or first_clause or conclusion) else 1
        q.standalone = whole_sentence and self.sent_words[s] <= 4

    def _short_sentence(self, q: Quantity) -> bool:
        """A percentage alone in a short sentence, not negated, not a degree of a quality ("is
        100% accurate") and not about a subject of its own ("The passing grade is 60%")."""
        s = self.sent[q.first]
        if not (self.sent_words[s] <= 12 and self.sent_qs[s] == 1 and q.pct and not q.fraction
                and not self.sent_negated[s]):
            return False
        after = self.toks[q.last + 1] if q.last + 1 < self.n else None
        if (after is not None and after.kind == WORD and after.text.isascii() and after.text not in W.FOLLOWERS_OK
                and after.text not in W.CHANCE_WORDS and after.text not in W.PROBABILITY_HEADS):
            return False
        before = [self.toks[m].text for m in range(self.sent_start[s], q.first) if self.toks[m].kind == WORD]
        words = before + [self.toks[m].text for m in range(q.last + 1, self.sent_end[s])]
        if self._works_arithmetic(s):
            return False  # "Multiplying this probability by 100 gives 80%", "P = (P of E) x 100%"
        return not (any(w in W.NOT_ANSWER_SUBJECTS for w in words) or (before and before[0] in W.DETERMINERS))

    def _works_arithmetic(self, s: int) -> bool:
        """Sentence ``s`` works out arithmetic (multiplying, dividing, ..., or an operator x, ×,
        *, =): a percentage in it is a factor or the result of converting something the
        sentence names, not an estimate standing on its own."""
        for m in range(self.sent_start[s], self.sent_end[s]):
            t = self.toks[m]
            if t.kind == WORD and t.text.startswith(W.CALCULATION_STEMS):
                return True
            if t.text in W.ARITHMETIC_SIGNS:
                return True
        return False

    def _echo_checks(self, q: Quantity) -> None:
        """The context rules, in order: the first that gives ``q`` a role decides."""
        qn = self.question
        if qn is None:
            return
        role = self._echoed(q, qn)
        if role is not None:
            q.role = role
            return
        event = q.event if q.event is None and not (q.how == "head" and q.prob) else self._stated_event(q)
        if event is None:
            event = self._which_is_the_probability_of(q) or self._bracketed_after_probability(q)
        if event is None and q.how == "head" and q.prob and q.event is None and self._named_probability(q):
            q.role = "a probability of a kind (the binomial probability), of no named event"
        elif event is not None and not E.matches(event, qn):
            q.role = "the probability of another event"
        elif self._given_the_asked_event(q, qn):
            q.role = "conditional on the asked event (given that it happens, ...)"
        elif self.sent[q.first] + 1 < len(self.sent_interrogative) and self._premise(q, event):
            q.role = "the premise of a question the reply asks"

    def _which_is_the_probability_of(self, q: Quantity) -> E.Event | None:
        """"P(A|B) is 50%, which is the probability of not applying to the program": the event
        named after the number (context.other-event when it is not the asked one)."""
        toks, n = self.toks, self.n
        m = q.last + 1
        if m < n and toks[m].text == ",":
            m += 1
        if not (m + 2 < n and toks[m].text == "which" and toks[m + 1].text in ("is", "was")):
            return None
        m += 2
        if m < n and toks[m].text in ("the", "a"):
            m += 1
        if not (m + 1 < n and toks[m].text in W.PROBABILITY_HEADS and toks[m + 1].text in ("of", "that")):
            return None
        end = self.clause_end[self.clause[m + 1]] if self.clause[m + 1] < len(self.clause_end) else n
        desc = [x.text for x in toks[m + 2:min(end, m + 32)] if x.kind in (WORD, NUM)]
        event = E.make_event(desc) if desc else None
        return None if event is None or E.is_generic(event) else event

    def _bracketed_after_probability(self, q: Quantity) -> E.Event | None:
        """"the ratio of the probability of one trial (1/2) to ...": a number in brackets right
        after "the probability of E" is E's (context.other-event when E is not the asked one)."""
        toks = self.toks
        k = q.first - 1
        if k < 2 or toks[k].text != "(":
            return None
        for h in range(k - 1, max(-1, k - 14), -1):
            t = toks[h]
            if t.kind in (NUM, NL) or t.text in (".", ";", "(", ")"):
                return None
            if t.kind == WORD and t.text in W.PROBABILITY_HEADS and toks[h + 1].text in ("of", "that"):
                desc = [x.text for x in toks[h + 2:k] if x.kind == WORD]
                event = E.make_event(desc) if desc else None
                return None if event is None or E.is_generic(event) else event
        return None

    def _echoed(self, q: Quantity, qn: E.Question) -> str | None:
        """context.quoted, context.restated-from-question, context.echo-number."""
        raw = self.toks[q.first].value
        if q.how != "label" and (
                (q.first >= 2 and E.number_context(self.toks, q.first) in qn.contexts) or self._quoted(q, qn)):
            return "quoted from the question"
        if q.strength <= 1 and q.form == "point" and (
                (q.pct and raw in qn.percent_numbers) or (not q.pct and raw in qn.plain_numbers)):
            return "restated from the question"
        if qn.binary and q.answer_head and not q.pct and raw in qn.plain_numbers:
            return "a number from the question (echo)"
        return None

    def _stated_event(self, q: Quantity) -> E.Event | None:
        """The event ``q`` is stated for: its own, or for "this event" the one named before; for
        "The probability is X" with none, the question the reply asked just before, else the
        event of the probability stated before ("The probability of E is 100%. Therefore, the
        probability is 100%."), else one named in the sentence before ("..., which is the
        probability of E. So, the probability is 1/2.")."""
        event = q.event
        if event is not None and E.is_generic(event):
            return self._event_named_before(q.first) or event
        if event is not None or q.how != "head" or not q.prob:
            return event
        event = self._event_asked_just_before(q.first) or self._event_stated_before(q)
        if event is None:
            s = self.sent[q.first] - 1
            while s > 0 and not self.sent_words[s]:
                s -= 1  # the sentence before, past empty lines
            if s >= 0:
                event = self._event_named_before(q.first, lo=self.sent_start[s])
        return event

    def _premise(self, q: Quantity, event: E.Event | None) -> bool:
        """"A salesman has a 40% chance of closing. What is the probability that ...?": the
        number is a given of a problem the reply invents (unless it names the asked event)."""
        s = self.sent[q.first]
        named = event is not None and bool(event.words or event.bigrams) and not event.reference and not q.new_subject
        return (not named and s + 1 < len(self.sent_interrogative) and self.sent_interrogative[s + 1]
                and self.asks_probability(s + 1))

    def _named_probability(self, q: Quantity) -> bool:
        """"The binomial probability is 0.725": a probability of a kind, naming no event."""
        toks = self.toks
        s = self.sent[q.first]
        for m in range(max(self.sent_start[s], q.first - 6), q.first):
            if toks[m].kind == WORD and toks[m].text in W.PROBABILITY_HEADS:
                return m >= 1 and toks[m - 1].text in W.NAMED_PROBABILITY
        return False

    def _given_the_asked_event(self, q: Quantity, qn: E.Question) -> bool:
        """"Given that the machine does not pay for itself within three years, there is a 50%
        chance ...": a probability that assumes the asked event is not its probability."""
        toks = self.toks
        s = self.sent[q.first]
        a = self.sent_start[s]
        if not (a + 1 < q.first and toks[a].text == "given" and toks[a + 1].text == "that") or qn.event is None:
            return False
        end = next((m for m in range(a + 2, q.first) if toks[m].kind == PUNCT and toks[m].text == ","), None)
        if end is None:
            return False
        condition = E.make_event([t.text for t in toks[a + 2:end] if t.kind in (WORD, NUM)])
        return bool(condition.words) and E.matches(condition, qn)

    def _event_stated_before(self, q: Quantity) -> E.Event | None:
        """The event of the last probability the reply stated before ``q`` (in the previous
        sentence or earlier in this one)."""
        s = self.sent[q.first]
        k = self.owner[q.first]
        for p in reversed(self.qs[:k]):
            if self.sent[p.first] < s - 1:
                return None
            if p.how in ("head", "chance", "label") and p.event is not None and not E.is_generic(p.event):
                return p.event
        return None

    def _quoted(self, q: Quantity, qn: E.Question) -> bool:
        """The number and the (at least three) tokens before it in its sentence are a stretch of
        the question -- also when the number is cut short ("At a company, 1" for "..., 10%")."""
        start = max(self.sent_start[self.sent[q.first]], q.first - 12)
        before = [t.text for t in self.toks[start:q.first] if t.kind != NL]
        if len(before) < 3:
            return False
        return " " + " ".join(before) + " " + self.toks[q.first].text in qn.tokens

    def _event_asked_just_before(self, i: int) -> E.Event | None:
        """The event of "probability that/of ..." in the question the reply asked right before
        the sentence of token ``i`` (an invented or echoed question)."""
        s = self.sent[i]
        if s == 0 or not self.sent_interrogative[s - 1]:
            return None
        start = self.sent_start[s - 1]
        return self._event_named_before(self.sent_end[s - 1] + 1, lo=start)

    def _event_named_before(self, i: int, lo: int = -1) -> E.Event | None:
        """The last event the reply named with "probability of/that ..." before token ``i``."""
        toks = self.toks
        lo = max(0, i - 400, lo)
        for h in range(i - 2, lo - 1, -1):
            t = toks[h]
            if t.kind == WORD and t.text in W.PROBABILITY_HEADS and toks[h + 1].text in ("of", "that"):
                desc: list[str] = []
                for m in range(h + 2, min(i, h + 30)):
                    x = toks[m]
                    if x.kind in (NL, NUM) or (x.kind == PUNCT and x.text in ".,;:!?") or x.text == "is":
                        break
                    if x.kind == WORD:
                        desc.append(x.text)
                event = E.make_event(desc)
                if desc and not E.is_generic(event):
                    return event
        return None

    # ------------------------------------------------------------------ pass 4: decision

    def truncation(self) -> None:
        """Mark the quantity a cut-off reply ends on (see the README's rule 5)."""
        if self.truncated is False:
            return
        k = self.n - 1
        while k >= 0 and self.toks[k].kind == NL:
            k -= 1
        if k < 0:
            return
        end = self._unfinished_end(k)
        if end is None:
            return
        q, zero_dot, joiner = end
        if not (zero_dot or joiner) and q.value == 100 and not self.toks[q.last].decimals:
            if self.truncated is not True or not self._calculation_before(q):
                return  # "is 100": no continuation gives another value on the scale ...
            self.cut_in_calculation = True  # ... unless the reply is working one out (decide.cut-in-calculation)
        # Unknown: only what the text itself shows is unfinished -- "is 0." (the decimals are
        # missing) and "1 in" / "20 to" (the other end is). "I'd estimate 30" is complete.
        if self.truncated is None and (not (zero_dot or joiner) or (zero_dot and self.whole_reply())):
            return
        q.cut = True
        self.cut_unfinished = joiner or zero_dot

    def _calculation_before(self, q: Quantity) -> bool:
        """Before ``q``, the reply announces arithmetic ("then multiply that by", "divide the
        number of ...") or states a whole number above 100 that could be its denominator ("The
        online store has 1000 orders"): a cut-off "is 100" may go on as "100/1000" or "100 - 15"."""
        for t in self.toks[:q.first]:
            if t.kind == WORD and t.text.startswith(W.CALCULATION_STEMS):
                return True
            if t.kind == NUM and t.value > 100 and not t.decimals:
                return True
        return False

    def _unfinished_end(self, k: int) -> tuple[Quantity, bool, bool] | None:
        """The quantity the reply ends on at token ``k``, with (the decimals are missing after
        "0.", an unfinished joiner "1 in" follows), or None when it ends on no quantity."""
        toks = self.toks
        t = toks[k]
        owner = self.owner[k]
        if t.kind == PUNCT and t.text == "." and k >= 1 and toks[k - 1].kind == NUM and not t.space:
            # "is 0." (and, when known to be cut, "is 60."): the decimals are missing.
            num, owner = toks[k - 1], self.owner[k - 1]
            if owner < 0 or self.qs[owner].last != k - 1 or num.decimals or not (num.value == 0 or self.truncated):
                return None
            return self.qs[owner], num.value != 100, False
        if t.kind in (WORD, PUNCT) and owner < 0 and k >= 1 and self.owner[k - 1] >= 0:
            if t.text in _UNFINISHED_JOINERS:
                return self.qs[self.owner[k - 1]], False, True
            return None
        if t.kind != NUM or owner < 0 or self.qs[owner].last != k:
            return None
        return self.qs[owner], False, False

    def scale(self, q: Quantity) -> None:
        """A bare value in (0, 1) -- or exactly 1 in a sentence about the probability -- is on
        the 0-1 scale when the text says so, else ambiguous."""
        if q.pct or q.form == "range" or q.role is not None:
            return  # a bound ("< 0.01") is read like a point
        v = q.value
        if not (0 < v < 1 or (v == 1 and (q.prob or q.answer_head) and not q.label_form)):
            return
        if self._restated_as_percent(q):
            q.value = 100 * v
            return
        if q.prob and not q.label_form and v < 1:
            q.value = 100 * v
            return
        q.role, q.rule = SCALE_01, SCALE_RULE.name

    def _restated_as_percent(self, q: Quantity) -> bool:
        """"0.8 (80%)", "0.45, i.e. 45%", "0.0123 (or 1.23%)", "0.69215... (... 69.21"."""
        toks = self.toks
        target = 100 * q.value
        for m in range(q.last + 1, min(self.n, q.last + 40)):
            t = toks[m]
            if t.kind == NL and t.newlines > 1:
                return False
            if t.kind == NUM and t.value > 1:
                tol = max(0.01, 0.5 * 10 ** (-t.decimals)) + 1e-9
                if abs(t.value - target) <= tol:
                    return True
        return False

    def decide(self) -> Reading:
        """The answer among the presented numbers, or why there is none: each step is a named
        decision rule (``DECISION_RULES``, in the order they apply)."""
        cands = [q for q in self.qs if q.how is not None and q.role is None]
        cut = [q for q in cands if q.cut]
        cands = [q for q in cands if not q.cut]
        cut += [q for q in self.qs if q.cut and q.expected is not None and q not in cut]
        early = self._cut_or_unread(cut, cands)
        if early is not None:
            return early
        for q in cands:
            self.scale(q)
        ambiguous = [q for q in cands if q.role == SCALE_01]
        cands = [q for q in cands if q.role is None]
        if not cands:
            return self._no_answer(cut, ambiguous)
        narrowed: list[str] = []
        undecided = self._undecided(cands, narrowed)
        if undecided is not None:
            return undecided
        for name, narrow in _NARROWING:
            kept = narrow(self, cands)
            if len(kept) < len(cands):
                narrowed.append(name)
            cands = kept
        return self._one_value(cands, narrowed)

    def _cut_or_unread(self, cut: list[Quantity], cands: list[Quantity]) -> Reading | None:
        if cut and cands and not any(q.final for q in cands) and self._parallel_cut(cut[-1], cands):
            return Reading(None, TRUNCATED, CUT_ALTERNATIVE.name)
        if cands and self.unread and max(self.unread) > cands[-1].first and not any(q.final for q in cands):
            return Reading(None, UNREAD_FORMULA.text, UNREAD_FORMULA.name)
        return None

    def _one_value(self, cands: list[Quantity], narrowed: list[str]) -> Reading:
        values: list[float] = []
        for q in cands:  # the same number repeated is one answer ("33.33" and "33.333"; not "0.01" and "0.001")
            if not any(abs(q.value - v) <= min(0.01, 0.01 * max(abs(v), abs(q.value))) for v in values):
                values.append(q.value)
        if len(values) > 1:
            shown = ", ".join(f"{v:g}" for v in values[:5])
            return Reading(None, f"{CONFLICT} ({shown})", DECIDE_CONFLICT.name)
        value = values[0]
        if math.isnan(value) or not 0 <= value <= 100:
            return Reading(None, f"{OUT_OF_RANGE} ({value:g})", DECIDE_OUT_OF_RANGE.name)
        winner = cands[-1]
        return Reading(float(value), None, narrowed[-1] if narrowed else presentation_rule(winner), winner.first)

    def _undecided(self, cands: list[Quantity], narrowed: list[str]) -> Reading | None:
        """decide.undecided: see its entry below."""
        if len(self.qs) < 2 and not any(q.form == "range" for q in self.qs):
            return None  # one number, not a range ("torn between 30% and 40%"): nothing to decide between
        cue = self._cannot_decide()
        if cue < 0:
            return None
        s = self.sent[cue]
        settling = [q for q in cands if q.first > cue and q.strength >= 2]
        weighed = [q for q in self.qs if self.sent[q.first] == s and q.role != SCALE_ROLE and q not in settling]
        values: set[float] = {q.value for q in cands if q.first <= cue}
        for q in weighed:
            values.update((q.low, q.high) if q.form == "range" else (q.value,))
        end = max([q.last for q in weighed] + [cue])
        later = [q for q in settling if q.first > end]
        if later:
            cands[:] = later
            narrowed.append(UNDECIDED.name)
            return None
        if len(values) < 2:
            return None
        shown = ", ".join(f"{v:g}" for v in sorted(values)[:5])
        return Reading(None, f"{CONFLICT} ({shown})", UNDECIDED.name)

    def _cannot_decide(self) -> int:
        """The token where the reply says it cannot decide (-1: nowhere)."""
        toks = self.toks
        for m in range(self.n):
            t = toks[m]
            if t.kind != WORD or (t.text not in _CANNOT_DECIDE_FIRST and t.text.isascii()):
                continue
            if phrase_at(toks, m, W.CANNOT_DECIDE) or cjk_has(t.text, W.CJK_CANNOT_DECIDE):
                return m
        return -1

    def _no_answer(self, cut: list[Quantity], ambiguous: list[Quantity]) -> Reading:
        if cut or self.cut_unfinished:
            return Reading(None, TRUNCATED, (CUT_IN_CALCULATION if self.cut_in_calculation else NO_ANSWER_TRUNCATED).name)
        if ambiguous:
            return Reading(None, SCALE_01, NO_ANSWER_SCALE_01.name)
        adopted = self._adopted_base_rate()
        if adopted is not None:
            return adopted
        return self._no_answer_reason()

    def _adopted_base_rate(self) -> Reading | None:
        """decide.adopted-base-rate: see its entry below."""
        toks = self.toks
        for m in range(self.n):
            t = toks[m]
            if t.kind != WORD or (t.text not in _ADOPT_FIRST and t.text.isascii()):
                continue
            k = phrase_at(toks, m, W.ADOPT)
            if k:
                near = range(m + k, min(self.n, m + k + 5))
                if not any(toks[j].text in W.BASE_RATE_WORDS for j in near):
                    continue
            elif not (cjk_has(t.text, W.CJK_ADOPT) and any(
                    cjk_has(toks[j].text, W.CJK_BASE_RATE) for j in range(max(0, m - 3), min(self.n, m + 4)))):
                continue
            pool = [q for q in self.qs if q.pct and not q.cut and q.form == "point" and q.first < m + 12
                    and (q.role is None or q.role in _ADOPTABLE)]
            if pool and all(abs(q.value - pool[0].value) <= 0.01 for q in pool) and 0 <= pool[0].value <= 100:
                return Reading(float(pool[0].value), None, ADOPTED_BASE_RATE.name, pool[0].first)
            return None
        return None

    def _parallel_cut(self, cut: Quantity, cands: list[Quantity]) -> bool:
        """The reply was cut off on a number presented the way an earlier answer was (the same
        token before both: "1. ... (100% chance). 2. ... (99"): the next alternative, whose
        value is lost -- unless the cut number can still become that answer ("(... 69.21")."""
        toks = self.toks
        if cut.first < 1 or cut.first <= cands[-1].first:
            return False
        text = toks[cut.first].text
        if cut.expected is not None:  # "the probability of E is 1 - 0.25 = 0" (0.75 was coming)
            return not any(Q.Numbers._close(cut.expected, toks[q.first].value) for q in cands)
        if any(f"{v:g}".startswith(text) for q in cands for v in (q.value, 100 * q.value)):
            return False  # it may become that answer again ("0.69215 (... 69.21")
        if cut.strength >= 2:
            return True
        before = toks[cut.first - 1].text
        return any(q.first >= 1 and toks[q.first - 1].text == before for q in cands)

    def revision_between(self, a: int, b: int) -> bool:
        toks = self.toks
        for m in range(a, b):
            if toks[m].kind == WORD:
                if phrase_at(toks, m, W.REVISION):
                    return True
                if cjk_has(toks[m].text, W.CJK_REVISION):
                    return True
        return False

    def _no_answer_reason(self) -> Reading:
        toks = self.toks
        if self._starts_with(W.REFUSAL) or any(cjk_has(t.text, W.CJK_REFUSAL) for t in toks[:60] if t.kind == WORD):
            return Reading(None, REFUSAL, NO_ANSWER_REFUSAL.name)
        first = next((t for t in toks if t.kind in (WORD, NUM)), None)
        if first is not None and first.kind == WORD and (first.text in W.YES_NO or first.text.startswith(W.CJK_YES_NO)):
            return Reading(None, YES_NO, NO_ANSWER_YES_NO.name)
        if any(q.role == PER_MILLE for q in self.qs):
            return Reading(None, PER_MILLE, NO_ANSWER_PER_MILLE.name)
        if not self.qs or all(q.words and q.role == NUMBER_WORD_ROLE for q in self.qs):
            return Reading(None, NO_NUMBER, NO_ANSWER_NO_NUMBER.name)
        free = {q.value for q in self.qs if q.role is None and q.pct}
        if len(free) >= 2 and self._starts_with(W.UNDECIDED):
            return Reading(None, f"{CONFLICT} ({', '.join(f'{v:g}' for v in sorted(free)[:5])})", UNDECIDED_FREE.name)
        return Reading(None, OTHER_ROLES, NO_ANSWER_OTHER_ROLES.name)

    def _starts_with(self, phrases: frozenset[tuple[str, ...]]) -> bool:
        toks = self.toks
        limit = min(self.n, 80)
        return any(toks[m].kind == WORD and phrase_at(toks, m, phrases) for m in range(limit))




_LABEL_HEADS = W.ANSWER_HEADS | W.PROBABILITY_HEADS | W.LIKELY_LABELS | W.CONCLUSION_LABELS | {"p"}
_CJK_LABEL_HEADS = W.CJK_ANSWER_HEADS + W.CJK_PROBABILITY_HEADS + W.CJK_CONCLUSION
_CJK_FINAL_LABELS = W.CJK_FINAL + ("答案", "回答", "答え")


def _names_an_answer(words: list[str]) -> bool:
    """A label that names the answer: a head ("Answer", "Probability", "p", "Likely",
    "Overall", "答案"), a first-person lead-in ("I'd say:") or a revision ("Actually:")."""
    if any(w in _LABEL_HEADS for w in words) or any(cjk_has(w, _CJK_LABEL_HEADS) for w in words):
        return True
    if any((w,) in W.REVISION for w in words) or (words and words[0] in W.FIRST_PERSON):
        return True
    return any(w in W.LEADIN_VERBS for w in words) and (
        any(w in W.FIRST_PERSON for w in words) or not all(w.isascii() for w in words))


def _in_brackets(label: list[Tok]) -> list[str]:
    """"P(not selected)": the words and numbers inside the label's brackets."""
    inner: list[str] = []
    depth = 0
    for t in label:
        if t.text == "(":
            depth += 1
        elif t.text == ")":
            depth -= 1
        elif depth > 0 and t.kind in (WORD, NUM):
            inner.append(t.text)
    return inner


_CJK_HEADS = W.CJK_PROBABILITY_HEADS + W.CJK_ANSWER_HEADS
_LABEL_MARKS = frozenset({":", "=", "\u2192", "equals", "\n"})
_CANNOT_DECIDE_FIRST = frozenset(p[0] for p in W.CANNOT_DECIDE)
_ADOPT_FIRST = frozenset(p[0] for p in W.ADOPT)
_EVENT_PREPOSITIONS = ("to", "on", "in", "for", "about")
# A reply cut off after one of these, right after a number, had its other end coming ("1 in", "20 to").
_UNFINISHED_JOINERS = frozenset({"in", "out", "of", "to", "/", "-", "–", "bis", "à", "и", "and", "or", "из", "sur"})


def _links_before_number(texts: list[str]) -> tuple[list[str], str | None, int, bool] | None:
    """Strip the copulas and links right before the number ("... is roughly", ", which is"):
    (the rest, the last link, how many copulas, a relative "which"), or None when an "of"
    follows an event ("a pool of 5%"). An arithmetic expression left over is a step, not an
    event ("the probability is 1 - 0.6, which is 0.4"); leading commas and dashes go."""
    link = None
    copulas = 0
    relative = False
    while texts and texts[-1] in _HEAD_LINKS:
        if texts[-1] in W.OF_LIKE and len(texts) > 1 and (texts[-2] not in _HEAD_LINKS or texts[-2] in W.OF_LIKE):
            return None
        if link is None:
            link = texts[-1]
        if texts[-1] not in (",", "which", "that", "it"):
            copulas += 1
        relative = relative or texts[-1] == "which"
        texts = texts[:-1]
    if texts and all(x in _HEAD_LINKS or x in Q.OPERATORS or x in Q.RESULT_LINKS or is_number_text(x)
                     for x in texts) and any(is_number_text(x) for x in texts):
        texts = []
    while texts and texts[0] in (",", "—", ":"):
        texts = texts[1:]  # "Wahrscheinlichkeit, dass ...", "вероятность того, что ..."
    return texts, link, copulas, relative


def _new_clause(texts: list[str]) -> bool:
    """", we need to ...", ", let's ...": a clause of its own between the head and the number."""
    return any(texts[k] == "," and (texts[k + 1] == "let's" or (
        texts[k + 1] in W.STEP_SUBJECTS and texts[k + 2] in W.NEW_CLAUSE_VERBS)) for k in range(len(texts) - 2))


def _event_description(head: Tok, is_prob: bool, texts: list[str], copulas: int) -> list[str] | None:
    """The event between a head and its number ("that the store opens"), or None when the words
    there are no event ("the answer is no, 7/8 ...", "probability distribution X")."""
    ascii_head = head.text.isascii()
    if not copulas and (ascii_head or head.text == "вероятностью"):
        return None
    opener = texts[0]
    if (ascii_head and opener not in W.EVENT_OPENERS and opener not in _EVENT_PREPOSITIONS
            and not opener.startswith("qu'")):
        return None
    if head.text in W.ANSWER_HEADS and not is_prob and opener not in ("to", "for", "on", "is"):
        return None
    desc = texts[1:] if opener in W.EVENT_OPENERS or opener in _EVENT_PREPOSITIONS else texts
    return desc if len(desc) <= 35 else None


# --------------------------------------------------------------------------- the rules of this module

_ADOPTABLE = frozenset({"a share or a change (X% of, X% more)", "a share of something (X% of)",
                        "restated from the question", "quoted from the question", "labelled as something else"})


def _revision(reader: Reader, cands: list[Quantity]) -> list[Quantity]:
    kept: list[Quantity] = []
    for q in cands:
        if kept and reader.revision_between(kept[-1].last + 1, q.anchor if q.result else q.first):
            kept = []
        kept.append(q)
    return kept


def _final_answer(reader: Reader, cands: list[Quantity]) -> list[Quantity]:
    finals = [k for k, q in enumerate(cands) if q.final]
    if not finals:
        return cands
    return [q for q in cands[finals[0]:] if q.final or q.strength >= 2]


def _odds_as_percentage(reader: Reader, cands: list[Quantity]) -> list[Quantity]:
    restated = [r for r in cands if not r.fraction and r.pct]
    return [q for q in cands if not (q.fraction and any(abs(r.value - q.value) < 1 for r in restated))]


def _explicit_over_weak(reader: Reader, cands: list[Quantity]) -> list[Quantity]:
    return [q for q in cands if q.strength >= 2] if any(q.strength >= 2 for q in cands) else cands


def _point_over_range(reader: Reader, cands: list[Quantity]) -> list[Quantity]:
    return [q for q in cands if q.form == "point"] if any(q.form == "point" for q in cands) else cands


_NARROWING_RULES = (
    ("decide.revision", _revision,
     ("After a retraction cue (actually, on reflection, correction, let me revise, I'll go with, en fait, "
     "eigentlich, на самом деле, 实际上, ...) the later answer replaces the earlier ones.")),
    ("decide.final-answer", _final_answer,
     "A marked final answer (Final answer:, Answer:) wins over what came before it."),
    ("decide.odds-as-percentage", _odds_as_percentage,
     "Odds restated as a percentage count as that percentage (\"1 in 3 (about 33%)\" is 33)."),
    ("decide.explicit-over-weak", _explicit_over_weak,
     "An explicit presentation wins over the weak short-sentence or trailing-phrase form."),
    ("decide.point-over-range", _point_over_range,
     "A point estimate wins over a range (read as its midpoint) or a bound (read as the bound)."),
)
_NARROWING = tuple((rule(name, "", doc).name, narrow) for name, narrow, doc in _NARROWING_RULES)

CUT_ALTERNATIVE = rule("decide.cut-alternative", TRUNCATED,
                       "A reply cut off on the next alternative, on a number presented as an answer or on a result "
                       "that differs from the answer before it, is truncated as a whole.")
UNREAD_FORMULA = rule("decide.unread-formula", f"{CONFLICT} (later stated as a formula it does not work out)",
                      "The asked probability stated again after the answer as a formula the reply never works out "
                      "(\"So, the probability of E is 1 - (100%)\") leaves the answer unknown.")
UNDECIDED = rule("decide.undecided", CONFLICT,
                 "A reply that says it cannot decide (can't decide, torn between, je n'arrive pas à choisir, kann "
                 "mich nicht entscheiden, no puedo decidir, не могу решить, 决定不了, 決められない, ...) between "
                 "two or more values has conflicting answers -- unless an answer presented after the values "
                 "weighed settles it (\"... between 30 and 50, so I'll say 40\").")
UNDECIDED_FREE = rule("decide.undecided-unpresented", CONFLICT,
                      "With no presented answer, two or more percentages in a reply that opens with either, "
                      "depending, could be, ... are conflicting answers.")
DECIDE_CONFLICT = rule("decide.conflict", CONFLICT,
                       "Two or more different values remain (the same number repeated is one answer): "
                       "conflicting answers.")
DECIDE_OUT_OF_RANGE = rule("decide.out-of-range", OUT_OF_RANGE, "The one answer is above 100 or below 0.")
SCALE_RULE = rule("decide.scale-01", SCALE_01,
                  "A presented value strictly between 0 and 1 without a percent sign is multiplied by 100 when "
                  "the text restates it as a percentage or a sentence states it as a probability; bare or in a "
                  "labelled field it is ambiguous (0.6 or 60?).")
ADOPTED_BASE_RATE = rule("decide.adopted-base-rate", "",
                         "With no presented answer, a reply that adopts a base rate as its answer (\"so I'll go with "
                         "the base rate\", \"je retiens le taux de base\", \"采用基础比率\") answers with that "
                         "rate, when the reply states one rate.")
NO_ANSWER_TRUNCATED = rule("decide.truncated", TRUNCATED,
                           "No answer remains and the reply was cut off on a number (or an unfinished \"1 in\").")
CUT_IN_CALCULATION = rule("decide.cut-in-calculation", TRUNCATED,
                          "No answer remains and the reply was cut off on \"is 100\" (complete elsewhere) after "
                          "announcing arithmetic (multiply, divide, subtract, ...) or stating a whole number above "
                          "100: it may go on as \"100/1000\" or \"100 - 15\".")
NO_ANSWER_SCALE_01 = rule("decide.ambiguous", SCALE_01, "No answer remains but a 0-1 value of unknown scale.")
NO_ANSWER_REFUSAL = rule("decide.refusal", REFUSAL, "No answer, and the reply declines (I can't, depends on, ...).")
NO_ANSWER_YES_NO = rule("decide.yes-no", YES_NO, "No answer, and the reply starts with yes or no.")
NO_ANSWER_PER_MILLE = rule("decide.per-mille", PER_MILLE, "No answer but a per-mille value (5‰).")
NO_ANSWER_NO_NUMBER = rule("decide.no-number", NO_NUMBER, "No number at all (numbers in words in other roles "
                           "count as none).")
NO_ANSWER_OTHER_ROLES = rule("decide.other-roles", OTHER_ROLES, "Numbers, each in a role that is not the answer.")
NO_ANSWER_ECHO = rule("decide.echo", ECHO, "The whole reply is a stretch of the question.")

# Roles given while presenting a number, and by what the rest of the reply and the question say.
for _name, _text, _doc in (
    ("present.computed-value", "a computed value (many decimals, no percent sign)",
     "\"approximately 4.91111...\": a plain number with more than two decimals is a computed value."),
    ("present.self-defined", "a variable defined by itself (P = 1 - P = ...)", "\"P = 1 - P = 0\"."),
    ("present.label-of-other", "labelled as something else",
     "A label that names neither the answer nor the asked event (\"Base rate: 30%\", \"Step 2: 1\")."),
    ("present.cut-event", "the probability of an event that is cut off",
     "\"a 100% chance of attracting a\" (cut off): what the chance is of is unknown."),
    ("context.step", "a step the reply goes on from (then ..., however to get ...)",
     ("A value the reply goes on from (\"... is 50%. Then we'll subtract this probability from 1\", \"Next, we "
     "calculate the probability of ...\", \"Now, we need to find ...\", \"Multiplying this probability by itself "
     "...\") or disowns (\"but it is not the probability of ...\").")),
    ("context.restatement", "restates a number in another role",
     "\"is 1 (100%)\": a bracketed restatement of a number in another role."),
    ("context.alternative", "an alternative to a number in another role",
     "\"30% or 50%\" where one of the two is in another role: neither is the answer."),
    ("context.quoted", "quoted from the question",
     "The number and the tokens before it are a stretch of the question."),
    ("context.restated-from-question", "restated from the question",
     "A weakly presented number that the question states (a base rate restated)."),
    ("context.echo-number", "a number from the question (echo)",
     "\"the answer is 3\" to a yes/no question that names 3."),
    ("context.kind-of-probability", "a probability of a kind (the binomial probability), of no named event",
     "\"The binomial probability is 0.725\": a probability of a kind, naming no event."),
    ("context.other-event", "the probability of another event",
     ("A probability stated for an event other than the asked one (another subject, the complement, "
      "one part of a compound question, another time frame), also when the event is named after the number "
      "(\"50%, which is the probability of not applying\", \"the probability of one trial (1/2)\").")),
    ("context.given-asked-event", "conditional on the asked event (given that it happens, ...)",
     "\"Given that the machine does not pay for itself ..., there is a 50% chance ...\"."),
    ("context.premise", "the premise of a question the reply asks",
     "\"A salesman has a 40% chance of closing. What is the probability that ...?\"."),
):
    rule(_name, _text, _doc)

_PRESENTATIONS = {
    "label": rule("present.label", "", "A number after a label that names the answer, the probability, a rating or "
                  "the asked event (\"Answer: 25\", \"Final answer: 95\", \"Réponse : 35\", \"확률: 약 55%\")."),
    "head": rule("present.head", "", "A number stated for \"the probability\" or \"the answer\" (\"the "
                 "probability that E is X\", \"la probabilité est de X\", \"確率は約X\", \"my estimate is X\")."),
    "chance": rule("present.chance", "", "A chance of an event: \"X% chance that E\", \"a 0.75 probability\", "
                   "\"70 % wahrscheinlich\", \"90% confident\"."),
    "leadin": rule("present.leadin", "", "A first-person estimate: \"I'd say 70%\", \"I'd put it at 92%\", "
                   "\"Je dirais 70 %\", \"Ich schätze 70 %\"."),
    "phrase": rule("present.phrase", "", "The whole reply, or a phrase of nothing but the number and hedges, "
                   "bounds, lead-ins and connectors (\"About 65%.\", \"Zero.\", \"约65%。\")."),
    "short sentence": rule("present.short-sentence", "", "Weaker: a percentage alone in a short sentence, not "
                           "about a subject of its own (\"저는 40% 정도로 봅니다.\") and not working out arithmetic "
                           "(\"Multiplying this probability by 100 gives 80%\", \"(P of E) x 100%\")."),
}
BARE = rule("present.bare", "", "The reply is a whole number from 0 to 100 and nothing else (\"65\", \"65%\").")


def presentation_rule(q: Quantity) -> str | None:
    """The name of the rule that presented ``q`` as an answer (None: not presented)."""
    found = _PRESENTATIONS.get(q.how or "")
    return found.name if found is not None else None


def read(text: str, question: E.Question | None, truncated: bool | None,
         kept: list[Reader] | None = None) -> Reading:
    """The answer a prepared reply text presents (see the module docstring); ``kept``, when
    given, receives the reader, whose quantities say what each number was taken for."""
    toks = L.tokens(text)
    reader = Reader(toks, question, truncated)
    if kept is not None:
        kept.append(reader)
    if question is not None and _echoes(toks, question):
        return Reading(None, ECHO, NO_ANSWER_ECHO.name)
    reader.build()
    reader.structure()
    reader.roles()
    reader.present()
    reader.truncation()
    reading = reader.decide()
    reader.answer_at = reading.at
    return reading


def _echoes(toks: list[Tok], question: E.Question) -> bool:
    """The whole reply (two tokens or more, with numbers) is a stretch of the question, its
    last token possibly cut short ("A 37" of "A 37-year-old applies ...")."""
    words = [t.text for t in toks if t.kind != NL]
    if (len(words) < 2 or len(words) > 400 or not any(t.kind == NUM for t in toks)
            or not any(t.kind == WORD for t in toks)):
        return False
    return " " + " ".join(words) in question.tokens
