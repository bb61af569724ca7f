"""Pass 2 of answer extraction: sentences and clauses, and the role rules.

Pure. ``Context`` adds to the quantities of a reply its sentences and clauses (ids, bounds,
counts, which sentences are questions or hypotheticals), computed once. A *role rule* says
why a quantity is **not** an answer from the tokens around it: each is a function with a
docstring, registered in ``ROLE_RULES`` under a name of ``rules.py`` and tried in that order;
the first that gives a role decides (``Quantity.rule`` keeps its name). Cue words live in
``words.py``, one table per rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import lexer as L
from . import words as W
from .lexer import NL, NUM, PUNCT, WORD, Tok
from .quantities import Numbers, Quantity, phrase_at, phrase_before
from .rules import Rule, rule

_SENTENCE_END = frozenset(".!?;")
_CLAUSE_PUNCT = frozenset(",:()[]—–→|/\"")
_PHRASE_PUNCT = frozenset("~≈()\"'!.,:;*<>≤≥→=|")
_OPERATOR_PUNCT = "-+×*/÷"
NUMBER_WORD_ROLE = "number in words"

_CJK_FILLERS = tuple(sorted(set(W.CJK_HEDGES) | set(W.CJK_FOLLOWERS_OK) | W.CJK_FILLER_WORDS, key=len, reverse=True))
_BOUND_WORDS = frozenset(w for p in W.BOUNDS_BEFORE | W.BOUNDS_AFTER for w in p) - W.NOT_BEFORE - {"no", "ne"}
_PERCENT_WORDS = frozenset(w for p in W.PERCENT_AFTER for w in p)
_RANGE_WORDS = frozenset(w for p in W.RANGE_OPENERS | W.RANGE_AND | W.RANGE_JOINERS for w in p if w.isalpha())
_REVISION_WORDS = frozenset(w for p in W.REVISION for w in p) - {"that", "me", "let", "no", "нет"}
_ANY_HEAD = W.PROBABILITY_HEADS | W.ANSWER_HEADS | W.PROSE_ANSWER_HEADS
_PHRASE_WORDS = (W.HEDGES | W.CONNECTORS | W.LEADIN_VERBS | W.FIRST_PERSON | W.YES_NO | _BOUND_WORDS
                 | _PERCENT_WORDS | _REVISION_WORDS | W.CONCLUSION | _RANGE_WORDS | W.PROBABILITY_HEADS
                 | {"estimate", "guess", "answer", "final"})


# --------------------------------------------------------------------------- helpers


def is_number_text(text: str) -> bool:
    return text.lstrip("-").replace(".", "", 1).isdigit()


def cjk_has(text: str, items: tuple[str, ...]) -> bool:
    return not text.isascii() and any(s in text for s in items)


def is_phrase_word(tok: Tok) -> bool:
    """A token allowed around the number in a phrase that is nothing but the answer."""
    if tok.kind == PUNCT:
        return tok.text in _PHRASE_PUNCT or tok.text in "-–—"
    if tok.kind == NL:
        return True
    if tok.kind != WORD:
        return False
    if tok.text in _PHRASE_WORDS:
        return True
    return not tok.text.isascii() and cjk_filler(tok.text)


def _strip_prefix(rest: str, prefixes: tuple[str, ...]) -> str | None:
    for f in prefixes:
        if rest.startswith(f):
            return rest[len(f):]
    return None


_CJK_OTHER_FILLERS = W.CJK_BOUNDS + W.CJK_PERCENT_PREFIXES + W.CJK_PROBABILITY_HEADS


def cjk_filler(t: str) -> bool:
    """A run of an unspaced script made of up to four hedges, copulas or lead-ins ("我估计大约是")."""
    rest: str | None = t
    for _ in range(4):
        if not rest:
            return True
        rest = _strip_prefix(rest, _CJK_FILLERS) if rest.startswith(_CJK_FILLERS) else _strip_prefix(
            rest, _CJK_OTHER_FILLERS)
        if rest is None:
            return False
    return not rest


def _is(tok: Tok | None, kind: int, texts: str | frozenset[str] | tuple[str, ...]) -> bool:
    """``tok`` exists, is of ``kind`` and its text is one of ``texts`` (characters of a str)."""
    return tok is not None and tok.kind == kind and tok.text in texts


# --------------------------------------------------------------------------- sentences and clauses


class Context(Numbers):
    """The quantities of a reply with its sentences and clauses (see ``structure``)."""

    def __init__(self, toks: list[Tok], question: object, truncated: bool | None) -> None:
        super().__init__(toks)
        self.truncated = truncated
        self.sent = [0] * self.n
        self.clause = [0] * self.n
        self.sent_start: list[int] = []
        self.clause_start: list[int] = []
        self.clause_end: list[int] = []
        self.sent_end: list[int] = []
        self.clause_other: list[int] = []   # tokens of the clause that are not phrase words
        self.clause_words: list[int] = []
        self.sent_words: list[int] = []
        self.sent_qs: list[int] = []
        self.other_tokens = 0               # tokens of the reply outside quantities and phrase words
        self.first_content = 0
        self.pct_before: list[int] = []
        self.head_before: list[int] = []
        self.anyhead_before: list[int] = []
        self.sent_interrogative: list[bool] = []
        self.sent_hypothetical_from: list[int] = []
        self._product_cue: dict[int, bool] = {}

    def structure(self) -> None:
        """Sentence and clause ids, and per-clause and per-sentence counts (computed once)."""
        self._boundaries()
        self._prefix_counts()
        self._counts()
        self._interrogatives()
        self._hypotheticals()

    def _boundaries(self) -> None:
        """Sentence ends (a line break; ".", "!", "?", ";" outside a quantity, not after an
        abbreviation) and clause ends (",", ":", brackets, dashes, ...)."""
        n = self.n
        sent = clause = 0
        self.sent_start.append(0)
        self.clause_start.append(0)
        toks, owner, sent_ids, clause_ids = self.toks, self.owner, self.sent, self.clause
        for i in range(n):
            sent_ids[i] = sent
            clause_ids[i] = clause
            t = toks[i]
            if t.kind == NL:
                boundary = 2
            elif t.kind != PUNCT or owner[i] >= 0:
                continue  # the common case
            elif t.text in _SENTENCE_END and not self.abbreviation(i):
                boundary = 2
            elif t.text in _CLAUSE_PUNCT or (t.text in "-–" and t.space and i + 1 < n and toks[i + 1].space):
                boundary = 1
            else:
                continue
            if boundary == 2:
                self.sent_end.append(i)
                sent += 1
                self.sent_start.append(i + 1)
            if boundary:
                self.clause_end.append(i)
                clause += 1
                self.clause_start.append(i + 1)
        self.sent_end.append(n)
        self.clause_end.append(n)
        self.first_content = next((i for i in range(n) if self.toks[i].kind != NL), n)

    def _prefix_counts(self) -> None:
        """Percentages and probability heads before each token (O(1) range checks)."""
        toks, n, owner, qs = self.toks, self.n, self.owner, self.qs
        pct = self.pct_before = [0] * (n + 1)
        head = self.head_before = [0] * (n + 1)
        anyhead = self.anyhead_before = [0] * (n + 1)
        for i in range(n):
            t = toks[i]
            word = t.kind == WORD
            pct[i + 1] = pct[i] + (owner[i] >= 0 and qs[owner[i]].pct)
            head[i + 1] = head[i] + (word and t.text in W.PROBABILITY_HEADS)
            anyhead[i + 1] = anyhead[i] + (word and t.text in _ANY_HEAD)

    def _counts(self) -> None:
        toks = self.toks
        nsent, nclause = len(self.sent_start), len(self.clause_start)
        self.clause_other = [0] * nclause
        self.clause_words = [0] * nclause
        self.sent_words = [0] * nsent
        self.sent_qs = [0] * nsent
        for i in range(self.n):
            if self.owner[i] >= 0:
                continue
            t = toks[i]
            if t.kind == WORD:
                self.clause_words[self.clause[i]] += 1
                self.sent_words[self.sent[i]] += 1
            if not is_phrase_word(t):
                self.clause_other[self.clause[i]] += 1
        self.other_tokens = sum(self.clause_other)
        for q in self.qs:
            if not q.words or q.pct:
                self.sent_qs[self.sent[q.first]] += 1

    def _interrogative(self, s: int) -> bool:
        """Sentence ``s`` is a question: it ends in "?" and has a word that is not a phrase word
        ("Is 40 prime?", not "Maybe 40%?"), or it starts with an interrogative and is not closed
        by "." ("What is the probability ...", "Is 2/3 less than 1/3" cut before its "?")."""
        toks, n = self.toks, self.n
        a, b = self.sent_start[s], self.sent_end[s]
        if a < n and b < n and _is(toks[b], PUNCT, "?") and any(
                self.owner[m] < 0 and not is_phrase_word(toks[m]) for m in range(a, b)):
            return True
        if b < n and _is(toks[b], PUNCT, ".!"):
            return False
        first = next((k for k in range(a, min(b, a + 3)) if toks[k].kind in (WORD, NUM)), None)
        if first is None or not _is(toks[first], WORD, W.INTERROGATIVES):
            return False
        nxt = toks[first + 1] if first + 1 < n else None
        return not (toks[first].text in W.AUXILIARY_INTERROGATIVES and nxt is not None and nxt.kind == PUNCT)

    def _interrogatives(self) -> None:
        self.sent_interrogative = [self._interrogative(s) for s in range(len(self.sent_start))]

    def _opens_hypothetical(self, i: int) -> bool:
        t = self.toks[i]
        if t.kind != WORD or not (t.text in W.HYPOTHETICAL or cjk_has(t.text, W.CJK_HYPOTHETICAL)):
            return False
        if phrase_at(self.toks, i, W.HYPOTHETICAL_EXCEPTIONS):
            return False  # "If I had to guess, 30%"
        return t.text != "were" or any(self.toks[m].text == "if" for m in range(max(0, i - 8), i))

    def _hypotheticals(self) -> None:
        """Where each sentence's hypothetical starts (-1: none); "70% (if funding closes),
        otherwise 30%": every number of a conditional is hypothetical."""
        toks = self.toks
        start = self.sent_hypothetical_from = [-1] * len(self.sent_start)
        found = False
        for i in range(self.n):
            t = toks[i]
            if t.kind != WORD or (t.text not in W.HYPOTHETICAL and t.text.isascii()):
                continue
            s = self.sent[i]
            if start[s] < 0 and self._opens_hypothetical(i):
                start[s] = i
                found = True
        if not found:
            return
        for i in range(self.n):
            s = self.sent[i]
            if 0 <= start[s] and _is(toks[i], WORD, W.OTHERWISE):
                start[s] = self.sent_start[s]

    def abbreviation(self, i: int) -> bool:
        """A full stop after "e.g", "i.e", "approx", a single letter: not a sentence end."""
        toks = self.toks
        if i == 0 or toks[i].text != ".":
            return False
        prev = toks[i - 1]
        if prev.kind == WORD and prev.text in L.ABBREVIATIONS and not toks[i].space:
            nxt = toks[i + 1] if i + 1 < self.n else None
            return nxt is not None and nxt.kind != NL
        return prev.kind == PUNCT and prev.text == "."  # "..." ends once

    def prev_index(self, i: int) -> int:
        """Index of the token before ``i``, skipping hedges and bound phrases ("about", "no more than")."""
        toks = self.toks
        k = i - 1
        while k >= 0:
            t = toks[k]
            m = phrase_before(toks, k + 1, W.BOUNDS_BEFORE)  # "не более", "no more than"
            if m:
                k -= m
            elif (t.kind == WORD and t.text in W.HEDGES) or (t.kind == PUNCT and t.text in "~≈<>≤≥"):
                k -= 1
            else:
                break
        return k

    def has_product_cue(self, s: int) -> bool:
        """Some word of sentence ``s`` is a verb of multiplying (looked for once per sentence)."""
        found = self._product_cue.get(s)
        if found is None:
            toks = self.toks
            found = self._product_cue[s] = any(toks[m].kind == WORD and _product_cue(toks[m])
                                               for m in range(self.sent_start[s], self.sent_end[s]))
        return found

    def whole_reply(self) -> bool:
        """The reply is nothing but quantities and phrase words ("0.", "About 65%.", "Zero.")."""
        return self.other_tokens == 0

    def asks_probability(self, s: int) -> bool:
        """Sentence ``s`` mentions a probability (it is a probability question)."""
        return self.head_before[self.sent_end[s]] > self.head_before[self.sent_start[s]] or any(
            cjk_has(self.toks[m].text, W.CJK_PROBABILITY_HEADS)
            for m in range(self.sent_start[s], min(self.sent_end[s], self.sent_start[s] + 40)))

    # ------------------------------------------------------------------ applying the role rules

    def roles(self) -> None:
        self.link()
        self._number_lists()
        for q in self.qs:
            if q.role is None:
                self._role(q)

    def _role(self, q: Quantity) -> None:
        """The first role rule that gives ``q`` a role decides (``q.rule`` names it)."""
        toks, n = self.toks, self.n
        first, last = q.first, q.last
        nxt = toks[last + 1] if last + 1 < n else None
        p = self.prev_index(first)
        word = toks[p] if p >= 0 and toks[p].kind == WORD else None
        at = At(toks[first - 1] if first > 0 else None, nxt, toks[last + 2] if last + 2 < n else None, self.sent[first],
                p, word)
        # What the quantity is, so that a rule for other quantities is not even asked.
        s = at.s
        have = (PCT if q.pct else PLAIN) | (WORDS if q.words else 0)
        if nxt is not None:
            have |= (0 if nxt.space else GLUED) | (NEXT_WORD if nxt.kind == WORD else NEXT_PUNCT if nxt.kind == PUNCT else 0)
        if at.prev is not None and at.prev.kind == WORD:
            have |= PREV_WORD
        if self.sent_interrogative[s]:
            have |= QUESTION
        if self.sent_hypothetical_from[s] >= 0:
            have |= HYPOTHETICAL
        asked = _ASKED.get(have)
        if asked is None:
            asked = _ASKED[have] = tuple((named.name, test) for named, test, needs in ROLE_RULES if not needs & ~have)
        for name, test in asked:
            role = test(self, q, at)
            if role is not None:
                q.role, q.rule = role, name
                return

    def _number_lists(self) -> None:
        """"19, 17, 17, 17": three or more numbers with nothing but commas between them are a
        list (of numbers from the question, of values considered), never an answer."""
        run: list[Quantity] = []
        for q in self.qs:
            if run and [t.text for t in self.gap(run[-1], q)] == [","]:
                run.append(q)
                continue
            _mark_list(run)
            run = [q]
        _mark_list(run)


NUMBER_LIST = rule("role.number-list", "an item of a list of numbers (19, 17, 17)",
                   "Three or more numbers with nothing but commas between them are a list, never an answer.")


def _mark_list(run: list[Quantity]) -> None:
    if len(run) >= 3:
        for q in run:
            if q.role is None:
                q.role, q.rule = NUMBER_LIST.text, NUMBER_LIST.name


@dataclass(slots=True)
class At:
    """The tokens around a quantity: before its first token, after its last, and the one after
    that; ``s`` is its sentence."""

    prev: Tok | None
    nxt: Tok | None
    nxt2: Tok | None
    s: int
    p: int = -1           # ``Context.prev_index`` of the first token (past hedges and bounds)
    word: Tok | None = None  # the token there, when it is a word


RoleTest = Callable[[Context, Quantity, At], "str | None"]
ROLE_RULES: list[tuple[Rule, RoleTest, int]] = []
# What a rule needs of a quantity before it is asked (it checks the rest itself): a token glued
# to its end ("4th", "25°"), no percent (a plain number), a percent.
_ASKED: dict[int, tuple[tuple[str, RoleTest], ...]] = {}  # the rules asked, in order, by what a quantity is
GLUED, PLAIN, PCT, NEXT_WORD, NEXT_PUNCT, PREV_WORD, QUESTION, HYPOTHETICAL, WORDS = 1, 2, 4, 8, 16, 32, 64, 128, 256


def role_rule(name: str, text: str, needs: int = 0) -> Callable[[RoleTest], RoleTest]:
    """Register a role rule: ``text`` is the role it gives; the function's docstring says when;
    ``needs``: what a quantity must be for the rule to be asked (GLUED, PLAIN, PCT)."""
    def register(test: RoleTest) -> RoleTest:
        ROLE_RULES.append((rule(name, text, (test.__doc__ or "").strip()), test, needs))
        return test
    return register


# --------------------------------------------------------------------------- the role rules, in order


@role_rule("role.money", "money")
def money(c: Context, q: Quantity, at: At) -> str | None:
    """"$7,500", "USD 20", "20 dollars": an amount of money."""
    prev, nxt = at.prev, at.nxt
    if prev is not None and prev.kind == PUNCT and prev.text in W.CURRENCY_SIGNS and not c.toks[q.first].space:
        return "money"
    if (prev is not None and prev.kind == WORD and prev.text in W.CURRENCY_BEFORE) or (
            nxt is not None and nxt.kind == WORD and nxt.text in W.CURRENCY and not q.pct):
        return "money"
    return None


@role_rule("role.ordinal-or-unit", "an ordinal or a measurement", GLUED)
def ordinal_or_unit(c: Context, q: Quantity, at: At) -> str | None:
    """"4th", "2e", "10km", "5x": a suffix glued to the number makes it an ordinal or a measurement."""
    nxt = at.nxt
    if nxt is not None and not nxt.space and _is(nxt, WORD, W.GLUED_SUFFIXES):
        return "an ordinal or a measurement"
    return None


@role_rule("role.degrees", "a measurement", GLUED)
def degrees(c: Context, q: Quantity, at: At) -> str | None:
    """"25°C", "90º": degrees."""
    nxt = at.nxt
    return "a measurement" if nxt is not None and not nxt.space and _is(nxt, PUNCT, "°º") else None


@role_rule("role.compound", "a measurement (a compound such as 50-year-old)", GLUED | PLAIN)
def compound(c: Context, q: Quantity, at: At) -> str | None:
    """"50-year-old", "a 2-year contract": a number glued by a hyphen to a word (not "50-50")."""
    nxt = at.nxt
    if (nxt is not None and not nxt.space and _is(nxt, PUNCT, "-") and at.nxt2 is not None
            and at.nxt2.kind == WORD and not q.pct):
        return "a measurement (a compound such as 50-year-old)"
    return None


@role_rule("role.ratio-or-time", "a ratio or a time of day")
def ratio_or_time(c: Context, q: Quantity, at: At) -> str | None:
    """"1:7", "10:30": numbers glued by a colon."""
    nxt, nxt2, toks = at.nxt, at.nxt2, c.toks
    if nxt is not None and not nxt.space and _is(nxt, PUNCT, ":") and nxt2 is not None and nxt2.kind == NUM \
            and not nxt2.space:
        return "a ratio or a time of day"
    first = q.first
    if not toks[first].space and _is(at.prev, PUNCT, ":") and first >= 2 and toks[first - 2].kind == NUM:
        return "a ratio or a time of day"
    return None


def _variable_or_bracket(tok: Tok | None, brackets: str) -> bool:
    return tok is not None and ((tok.kind == PUNCT and tok.text in brackets) or (tok.kind == WORD and len(tok.text) == 1))


_OPERAND_NEXT = frozenset(_OPERATOR_PUNCT) | {")", "×"} | W.TIMES_WORDS
_OPERAND_PREV = frozenset(_OPERATOR_PUNCT) | {"("}


def _times_word(tok: Tok | None) -> bool:
    return _is(tok, WORD, W.TIMES_WORDS)


@role_rule("role.operand", "formula operand")
def operand(c: Context, q: Quantity, at: At) -> str | None:
    """An operand of a formula with variables or brackets: "1 - (1 - p)", "100 * p", "(10% of
    100) * (...)", "1 - (1 - 20)", and of a product the reply leaves unfinished: "(100/100) x",
    "0.5 ×" at the end."""
    if not ((at.nxt is not None and at.nxt.text in _OPERAND_NEXT) or (at.prev is not None and at.prev.text in _OPERAND_PREV)):
        return None  # the common case, at once
    before2 = c.toks[q.first - 2] if q.first >= 2 else None
    if _operator_next(at.nxt, at.nxt2) or _operator_before(at.prev, before2) or _unfinished_product(at.nxt, at.nxt2):
        return "formula operand"
    return None


def _is_operator(tok: Tok | None) -> bool:
    return tok is not None and tok.kind == PUNCT and tok.text in _OPERATOR_PUNCT


def _operator_next(nxt: Tok | None, nxt2: Tok | None) -> bool:
    """"1 - (...", "100 * p", "(10% of 100) * ...", "(100/100) x"."""
    if _is_operator(nxt) and _variable_or_bracket(nxt2, "("):
        return True
    return _is(nxt, PUNCT, ")") and nxt2 is not None and (_is_operator(nxt2) or _times_word(nxt2))


def _operator_before(prev: Tok | None, before2: Tok | None) -> bool:
    """"(1 - 20", "p * 100", "- (20"."""
    if _is_operator(prev) and _variable_or_bracket(before2, "()"):
        return True
    return _is(prev, PUNCT, "(") and _is_operator(before2)


def _unfinished_product(nxt: Tok | None, nxt2: Tok | None) -> bool:
    """"0.5 x" at the end, "0.5 × (": the other operand is not there."""
    return (_times_word(nxt) or _is(nxt, PUNCT, "×")) and (nxt2 is None or nxt2.kind == NL or _is(nxt2, PUNCT, "("))


@role_rule("role.subtracted-from", "formula operand", PREV_WORD)
def subtracted_from(c: Context, q: Quantity, at: At) -> str | None:
    """"subtracting ... from 1": the number subtracted from."""
    if not _is(at.prev, WORD, ("from",)):
        return None
    toks = c.toks
    lo = max(c.sent_start[at.s], q.first - 30)
    if any(toks[m].kind == WORD and toks[m].text.startswith(W.SUBTRACT_STEMS) for m in range(lo, q.first)):
        return "formula operand"
    return None


def _product_cue(tok: Tok) -> bool:
    text = tok.text
    return text.startswith(W.PRODUCT_STEMS) or cjk_has(text, W.CJK_PRODUCT)


@role_rule("role.product-operand", "an operand of a product the reply describes (multiplying ...)")
def product_operand(c: Context, q: Quantity, at: At) -> str | None:
    """"calculated by multiplying the probability of each step (0.025 or 2...": a number after
    a verb of multiplying in its sentence, with no result word ("is", "=", "gives") between,
    is a factor, not the result. In every bundled language (``words.PRODUCT_STEMS``)."""
    if not c.has_product_cue(at.s):
        return None
    toks = c.toks
    lo = max(c.sent_start[at.s], q.first - 25)
    for m in range(q.first - 1, lo - 1, -1):
        t = toks[m]
        if t.kind == WORD and t.text in W.RESULT_WORDS or t.kind == PUNCT and t.text in "=≈:":
            return None
        if t.kind == WORD and _product_cue(t):
            return "an operand of a product the reply describes (multiplying ...)"
    return None


@role_rule("role.whole-of-share", "the whole of a share (X% of N)", PREV_WORD)
def whole_of_share(c: Context, q: Quantity, at: At) -> str | None:
    """"10% of 100": the whole a share is taken of."""
    first = q.first
    if _is(at.prev, WORD, ("of",)) and first >= 2 and c.owner[first - 2] >= 0 and c.qs[c.owner[first - 2]].pct:
        return "the whole of a share (X% of N)"
    return None


@role_rule("role.year", "a year", PLAIN)
def year(c: Context, q: Quantity, at: At) -> str | None:
    """A plain whole number from 1000 to 2100 written without a thousands separator: a year
    ("In 2019"; "1,250 of the" is a count)."""
    t = c.toks[q.first]
    if not q.pct and q.form == "point" and 1000 <= q.value <= 2100 and float(q.value).is_integer() \
            and t.decimals == 0 and t.end - t.start == len(t.text):
        return "a year"
    return None


def _numbered(c: Context, q: Quantity) -> bool:
    """A small whole number that may number an item."""
    t = c.toks[q.first]
    return not q.pct and q.form == "point" and not t.decimals and 0 <= t.value <= 100


@role_rule("role.bracket-numbering", "numbering ((1))", PLAIN | NEXT_PUNCT)
def bracket_numbering(c: Context, q: Quantity, at: At) -> str | None:
    """"(1)", "(53)": an option number ("(80%)" has its percent sign)."""
    if _numbered(c, q) and _is(at.prev, PUNCT, "(") and _is(at.nxt, PUNCT, ")"):
        return "numbering ((1))"
    return None


@role_rule("role.list-numbering", "list numbering (1.)", PLAIN | NEXT_PUNCT)
def list_numbering(c: Context, q: Quantity, at: At) -> str | None:
    """"1. What is ...", "order. 2. The ...": a number with "." or ")" starting a line or a
    sentence with text after it. At the very start of a reply only "1." or a number whose
    successor starts a later line ("65. Most papers ..." is an answer). A line that is only
    "1." after a line ending with a colon is numbering too."""
    toks, prev, nxt, after = c.toks, at.prev, at.nxt, at.nxt2
    t = toks[q.first]
    if not _numbered(c, q) or t.value > 50 or not _is(nxt, PUNCT, ".)"):
        return None
    line_first = prev is None or prev.kind == NL
    if not (line_first or _is(prev, PUNCT, ".!?;")):
        return None
    text_follows = after is not None and after.kind in (WORD, NUM) and after.space
    if text_follows and (q.first > 0 or t.value == 1 or _list_continues(c, q.last + 1, t.value)):
        return "list numbering (1.)"
    if line_first and q.first > 0 and (after is None or after.kind == NL):
        k = q.first - 1
        while k >= 0 and toks[k].kind == NL:
            k -= 1
        if k >= 0 and _is(toks[k], PUNCT, ":"):
            return "list numbering (1.)"
    return None


def _list_continues(c: Context, i: int, value: float) -> bool:
    """A later line starts with "<value + 1>."."""
    toks = c.toks
    for m in range(i, c.n - 2):
        if toks[m].kind == NL and toks[m + 1].kind == NUM and toks[m + 1].value == value + 1 \
                and toks[m + 2].text in ".)":
            return True
    return False


@role_rule("role.inside-question", "inside a question (an echo or an invented question)", QUESTION)
def inside_question(c: Context, q: Quantity, at: At) -> str | None:
    """A number in a sentence that asks a question ("What is the probability that a number is
    40 or more?"): an echo of the question or a question the reply invents."""
    return "inside a question (an echo or an invented question)" if c.sent_interrogative[at.s] else None


@role_rule("role.hypothetical", "hypothetical", HYPOTHETICAL)
def hypothetical(c: Context, q: Quantity, at: At) -> str | None:
    """"If the probability were 0.3, ...", "70% (if funding closes), otherwise 30%": a number
    for a variant (not "If I had to guess, 30%")."""
    hyp = c.sent_hypothetical_from[at.s]
    return "hypothetical" if hyp >= 0 and (hyp < q.first or c.clause[hyp] == c.clause[q.first]) else None


@role_rule("role.negated", "negated (is not X)")
def negated(c: Context, q: Quantity, at: At) -> str | None:
    """"is not 0.9", "neither 100% nor ...", "ist nicht 50 %": a number the reply denies."""
    word = at.word
    if word is None or word.text not in W.NOT_BEFORE:
        return None
    if word.text != "no" or (at.p >= 1 and c.toks[at.p - 1].text in ("is", "are", "was")):
        return "negated (is not X)"
    return None


@role_rule("role.change", "a change (by X)")
def change(c: Context, q: Quantity, at: At) -> str | None:
    """"by 10 percent", "increased 5%", "um 10 %", "на 10%": a change, not a level."""
    word = at.word
    if word is not None and word.text in W.CHANGE_BEFORE and not (word.text == "de" and q.pct):
        return "a change (by X)"
    return None


@role_rule("role.label-of-other", "numbering or a label of something else")
def label_of_other(c: Context, q: Quantity, at: At) -> str | None:
    """"Option 2", "Step 3", "age 40", "Schritt 2": a number naming something else."""
    word = at.word
    return "numbering or a label of something else" if word is not None and word.text in W.NUMBERING_BEFORE else None


def _cjk_share_particle(c: Context, q: Quantity) -> bool:
    """"40%の", "40퍼센트의": a CJK percent word with a particle of a share."""
    tok = c.toks[q.last]
    if tok.kind != WORD or tok.text.isascii():
        return False
    rest = _strip_prefix(tok.text, W.CJK_PERCENT_PREFIXES) or tok.text
    return rest.startswith(W.PROPORTION_AFTER_CJK) and not cjk_has(rest, W.CJK_PROBABILITY_HEADS)


@role_rule("role.share-cjk", "a share of something (X% of)", PCT)
def share_cjk(c: Context, q: Quantity, at: At) -> str | None:
    """"40%の学生", "40퍼센트의", "30% 的": a percentage with a particle of a share (Chinese,
    Japanese, Korean), not a probability (unless a word for probability follows: "40%の確率")."""
    if not q.pct or at.nxt is None:
        return None
    nxt = at.nxt
    if _cjk_share_particle(c, q) or (nxt.kind == WORD and not nxt.text.isascii()
                                     and nxt.text.startswith(W.PROPORTION_AFTER_CJK)
                                     and not cjk_has(nxt.text, W.CJK_PROBABILITY_HEADS)):
        return "a share of something (X% of)"
    return None


@role_rule("role.share", "a share or a change (X% of, X% more)", PCT | NEXT_WORD)
def share(c: Context, q: Quantity, at: At) -> str | None:
    """"30% of applicants", "10% more", "5% a year", "30 % der": a percentage of something or
    a change, not a probability ("a 30% chance", "30% of the chances" are not shares)."""
    nxt, after = at.nxt, at.nxt2
    if not q.pct or nxt is None or nxt.kind != WORD or nxt.text not in W.PROPORTION_AFTER:
        return None
    word = nxt.text
    if word in ("of", "de", "des", "del") and after is not None and after.kind == WORD and (
            after.text in W.PROBABILITY_HEADS or after.text in ("chances", "probabilidad", "posibilidades")):
        return None
    if word in ("a", "an") and not _is(after, WORD, ("year", "month", "week", "day")):
        return None
    return "a share or a change (X% of, X% more)"




@role_rule("role.number-in-words", NUMBER_WORD_ROLE, PLAIN | WORDS)
def number_in_words(c: Context, q: Quantity, at: At) -> str | None:
    """"one of the three", "zwei Jahre": a plain number in words is no answer -- unless it is
    the whole reply with nothing but phrase words around it ("Zero.", "Cero.", "零。")."""
    if not q.words or q.pct:
        return None
    if c.whole_reply() and len(c.qs) == 1:
        return None
    return NUMBER_WORD_ROLE


@role_rule("role.count-of", "a count (N of ...)", PLAIN | NEXT_WORD)
def count_of(c: Context, q: Quantity, at: At) -> str | None:
    """"3 of the 10 applicants": a plain number followed by "of" is a count."""
    if not q.pct and not q.words and q.form == "point" and _is(at.nxt, WORD, ("of",)):
        return "a count (N of ...)"
    return None


@role_rule("role.percentile", "a percentile", PLAIN | NEXT_WORD)
def percentile(c: Context, q: Quantity, at: At) -> str | None:
    """"the 90 percentile": a rank, not a probability."""
    return "a percentile" if not q.pct and not q.words and _is(at.nxt, WORD, ("percentile",)) else None


@role_rule("role.count", "a count or a measurement", PLAIN | NEXT_WORD)
def count(c: Context, q: Quantity, at: At) -> str | None:
    """"3 boys", "10 years", "3个月", "10名": a plain number followed by a noun -- not by a
    word that may follow an answer ("65 because ...", "65 chance", "65 or more", "65です")."""
    nxt = at.nxt
    if nxt is None or nxt.kind != WORD or q.words or q.pct:
        return None
    word = nxt.text
    if word in W.FOLLOWERS_OK or word in _BOUND_AFTER_FIRST:
        return None
    if not word.isascii() and not any(ch.isalpha() and ord(ch) < 0x3000 for ch in word[:1]):
        if word.startswith(W.CJK_FOLLOWERS_OK + W.CJK_BOUNDS) or cjk_filler(word):
            return None
        return "a count or a measurement"
    if word in W.PROBABILITY_HEADS or word == "likely":
        return None
    return "a count or a measurement"


_BOUND_AFTER_FIRST = frozenset(p[0] for p in W.BOUNDS_AFTER)
