"""Is the event a reply states a probability for the event the question asked about?

Pure and lexical (no parser, no synonyms). The question's event is the clause after
"probability that/of" (or before 確率/概率/확률 in Chinese, Japanese and Korean); a yes/no
question is its own event. A reply's event is the clause after its own "probability
that/of" (or the words of a label such as "Chance the store fails: 60"). They match when
they agree on negation (not, fail, nicht, 不, 않 ...), neither is one part of a compound
question, they name no different ordinal or time frame (first vs second attempt), and the
reply's words contain the question's verb (English: the word after is/does not, or the first
verb-like word after the subject) or its subject plus half of its content words. Generic
references ("this event", "the answer to this question") match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from . import lexer as L
from . import words as W

_AUX = frozenset({"is", "are", "was", "were", "be", "been", "being", "will", "would", "gets", "get"})
_DO = frozenset({"does", "do", "did", "doesn't", "don't", "didn't", "won't", "isn't", "aren't"})
_GENERIC = frozenset({"this", "that", "it", "event", "outcome", "question", "answer", "happening",
                      "occurring", "true", "correct", "happen", "happens", "occur", "occurs",
                      "yes", "case", "so"})
_QUESTION_HEADS = W.PROBABILITY_HEADS | frozenset({"recommend", "significant", "significance",
                                                   "likely", "empfehlen", "recommanderiez",
                                                   "recomendaría", "рекомендовали"})
_MAX_EVENT = 40


@dataclass(frozen=True)
class Event:
    """The content of an event description, ready to compare."""

    words: tuple[str, ...]          # content words, lower-case, in order
    negative: bool
    predicate: str | None = None    # English: the main verb of the event
    subject: str | None = None      # English: the first content word
    compound: bool = False          # "X and Y" / "X or Y" after the verb
    contrasts: frozenset[str] = frozenset()
    bigrams: frozenset[str] = frozenset()  # unspaced scripts
    mentions_answer: str | None = None     # "the answer is yes/no" -> "yes"/"no"
    reference: bool = False                # "this event", "it": refers to an event named before


@dataclass(frozen=True)
class Question:
    """What a reply's numbers are compared with: the asked event and the question's numbers."""

    event: Event | None
    binary: bool                    # a yes/no question (no "probability that" in it)
    plain_numbers: frozenset[float]
    percent_numbers: frozenset[float]
    # (word, word, number) for each number of the question: a reply that has the same two
    # tokens before the same number is quoting the question ("At a company, 1...").
    contexts: frozenset[tuple[str, str, str]] = frozenset()
    tokens: str = ""    # the question's tokens joined by spaces, to find quoted stretches


def _is_cjk(text: str) -> bool:
    """Chinese, Japanese or Korean text (compared by character pairs, not words)."""
    return any("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af"
               for c in text)


def _negative(tokens: list[str]) -> bool:
    for t in tokens:
        if t in W.NEGATIONS or t.endswith("n't"):
            return True
        if not t.isascii() and any(neg in t for neg in W.CJK_NEGATIONS):
            return True
    return False


def _content(tokens: list[str]) -> list[str]:
    out = []
    for t in tokens:
        t = t.removesuffix("'s").removesuffix("'")
        if not t or t in W.STOPWORDS or t in W.NEGATIONS or t.endswith("n't"):
            continue
        if len(t) == 1 and t.isascii() and not t.isdigit():
            continue
        out.append(t)
    return out


def _bigrams(text: str) -> frozenset[str]:
    chars = [c for c in text if c.isalpha()]
    return frozenset(chars[i] + chars[i + 1] for i in range(len(chars) - 1))


def same_word(a: str, b: str) -> bool:
    """Crude stemming by prefix: launched/launches, admit/admitted, apply/applied."""
    if a == b:
        return True
    short = min(len(a), len(b))
    cp = 0
    while cp < short and a[cp] == b[cp]:
        cp += 1
    if cp == short and short >= 3:
        return True
    return cp >= 5 or (cp >= 4 and short <= 6)


def _english_predicate(tokens: list[str]) -> tuple[str | None, str | None]:
    """(subject, predicate) of an English event clause, by position."""
    subject = None
    for k, t in enumerate(tokens):
        base = t.removesuffix("'s")
        if subject is None:
            if base not in W.STOPWORDS and base.isalpha():
                subject = base
            continue
        if t in _AUX or t in _DO or t.endswith("n't"):
            for nxt in tokens[k + 1:k + 4]:
                if nxt in ("not", "be", "been", "being", "to", "a", "an", "the", "get"):
                    continue
                return subject, nxt
            return subject, None
        if len(base) > 3 and base.endswith("s") and not base.endswith("ss") and base == t and base.isalpha():
            return subject, base
    return subject, None


def make_event(tokens: list[str], raw: str = "") -> Event:
    """Event from the lower-case tokens of its description (``raw`` for unspaced scripts)."""
    tokens = [L_WORDS.get(t, t) for t in tokens[:_MAX_EVENT]]
    words = _content(tokens)
    subject, predicate = (None, None)
    if all(t.isascii() for t in tokens):
        subject, predicate = _english_predicate(tokens)
    compound = False
    if predicate is not None and predicate in tokens:
        after = tokens[tokens.index(predicate) + 1:]
        compound = any(t in ("and", "or") for t in after)
    contrasts = frozenset(t for group in W.CONTRASTS for t in tokens if t in group)
    answer = None
    if "answer" in tokens:
        answer = "yes" if "yes" in tokens else "no" if "no" in tokens else "other"
    negative = _negative(tokens + [raw] if raw else tokens)
    reference = bool(tokens) and all(t in _GENERIC or t in ("the", "a", "an", "of") for t in tokens)
    return Event(tuple(words), negative, predicate, subject, compound, contrasts,
                 _bigrams(raw) if raw and _is_cjk(raw) else frozenset(), answer, reference)


# Numbers written in words inside events ("within three years" = "within 3 years").
L_WORDS = {w: str(v) for w, v in {**W.UNITS_EN, **W.TENS_EN}.items()}


def is_generic(event: Event) -> bool:
    """"this event", "it", "the outcome": a reference, not a description."""
    return event.reference


@lru_cache(maxsize=4096)
def matches(reply: Event, question: Question | None) -> bool:
    """Does a reply's event name the question's event (see the module docstring)?"""
    if question is None or question.event is None:
        return True
    asked = question.event
    if reply.negative != asked.negative:
        return False
    if reply.mentions_answer is not None and question.binary:
        return reply.mentions_answer == "yes"
    words = [w for w in reply.words if w not in _GENERIC]
    if not words and not reply.bigrams:
        return True
    if (reply.contrasts and asked.contrasts and not (reply.contrasts & asked.contrasts)) or (
            asked.compound and not reply.compound):
        return False
    if reply.bigrams and asked.bigrams:
        # Unspaced scripts: a third of the reply's character pairs are the question's.
        return 3 * len(reply.bigrams & asked.bigrams) >= len(reply.bigrams)
    if not asked.words:
        return True
    return _words_match(words, asked)


def _words_match(words: list[str], asked: Event) -> bool:
    """The reply's content words name the asked event: its verb (with the same object), or
    its subject and half its words; in other languages (no verb found) half of its words, or
    two of them."""
    asked_words = list(asked.words)
    shared = [a for a in asked_words if any(same_word(a, r) for r in words)]
    coverage = len(shared) / len(asked_words)
    if asked.predicate is None:
        return coverage >= 0.5 or len(shared) >= 2
    verb = next((k for k, r in enumerate(words) if same_word(asked.predicate, r)), None)
    if verb is not None:
        # The same verb with another object is another event: "the person not taking the
        # elevator" for "... no longer taking the stairs", "not filling any spots" for "not
        # fill all of its places".
        return not _other_object(words[verb + 1:], asked)
    subject_named = asked.subject is not None and any(same_word(asked.subject, r) for r in words)
    if any(len(r) > 5 and r.endswith("ing") and not any(same_word(a, r) for a in asked_words) for r in words):
        return False  # "the person eating takeaway food on weekdays" for "... cooking ... on weekdays"
    return subject_named and coverage >= 0.5 and len(shared) >= 2


def _other_object(after: list[str], asked: Event) -> bool:
    """The words after the reply's verb share none with the words after the question's."""
    if asked.predicate is None or asked.predicate not in asked.words:
        return False
    target = [w for w in asked.words[asked.words.index(asked.predicate) + 1:] if not w.isdigit()]
    if asked.subject is not None:
        target.append(asked.subject)  # "admitting the graduate" for "the graduate is admitted"
    after = [w for w in after if not w.isdigit() and w not in _GENERIC]
    if not target or not after:
        return False
    return not any(same_word(a, r) for a in target for r in after)


@lru_cache(maxsize=512)
def read_question(question: str) -> Question:
    """The asked event and the numbers of a question (the user message sent)."""
    text = L.prepare(question[:4000])
    toks = L.tokenize(text)
    plain = frozenset(t.value for i, t in enumerate(toks) if t.kind == L.NUM and not _pct_after(toks, i))
    pct = frozenset(t.value for i, t in enumerate(toks) if t.kind == L.NUM and _pct_after(toks, i))
    contexts = frozenset(number_context(toks, i) for i, t in enumerate(toks) if t.kind == L.NUM and i >= 2)
    joined = " " + " ".join(t.text for t in toks if t.kind != L.NL) + " "
    # The last sentence that asks about a probability (or the last sentence at all).
    sentences: list[list[L.Tok]] = [[]]
    for t in toks:
        if t.kind == L.NL or (t.kind == L.PUNCT and t.text in ".?!;"):
            if sentences[-1]:
                sentences.append([])
            continue
        sentences[-1].append(t)
    sentences = [s for s in sentences if s]
    if not sentences:
        return Question(None, True, plain, pct, contexts, joined)
    asking = [s for s in sentences if any(_is_head(t) for t in s)]
    sentence = asking[-1] if asking else sentences[-1]
    binary = not asking
    return Question(_event_of(sentence, binary), binary, plain, pct, contexts, joined)


def number_context(toks: list[L.Tok], i: int) -> tuple[str, str, str]:
    """The two tokens before the number at ``i`` and the number itself."""
    return toks[i - 2].text, toks[i - 1].text, f"{toks[i].value:g}"


def _pct_after(toks: list[L.Tok], i: int) -> bool:
    nxt = toks[i + 1] if i + 1 < len(toks) else None
    return toks[i].pct or (nxt is not None and (nxt.text == "%" or (nxt.kind == L.WORD and (nxt.text,) in W.PERCENT_AFTER)))


def _is_head(t: L.Tok) -> bool:
    if t.kind != L.WORD:
        return False
    if t.text in _QUESTION_HEADS:
        return True
    return not t.text.isascii() and _CJK_HEAD.search(t.text) is not None


# Any of the probability heads inside a run of CJK text (one search instead of one per head).
_CJK_HEAD = re.compile("|".join(map(re.escape, W.CJK_PROBABILITY_HEADS)))


def _event_of(sentence: list[L.Tok], binary: bool) -> Event:
    texts = [t.text for t in sentence if t.kind in (L.WORD, L.NUM)]
    if binary:
        raw = "".join(t.text for t in sentence if t.kind == L.WORD)
        return make_event(texts, raw)
    head = next(k for k, t in enumerate(sentence) if _is_head(t))
    head_tok = sentence[head]
    if not head_tok.text.isascii() and any(h in head_tok.text for h in W.CJK_PROBABILITY_HEADS):
        # Unspaced and SOV scripts: the event comes before the word for probability.
        before = [t for t in sentence[:head + 1] if t.kind in (L.WORD, L.NUM)]
        raw = "".join(t.text for t in before)
        for h in W.CJK_PROBABILITY_HEADS:
            if h in raw:
                raw = raw[:raw.rindex(h)]
                break
        return make_event([t.text for t in before[:-1]], raw)
    after = [t.text for t in sentence[head + 1:] if t.kind in (L.WORD, L.NUM)]
    while after and (after[0] in W.EVENT_OPENERS or after[0] in ("is", "are", "the", "potential",
                                                                  "upside", "downside", "would",
                                                                  "you", "ist", "es", "est",
                                                                  "है", "that")):
        after = after[1:]
    if not after:
        # "संभावना" is said last in Hindi; "احتمال X" in Arabic: take the whole sentence.
        after = texts
    return make_event(after)
