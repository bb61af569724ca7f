"""Reply text -> tokens, in one left-to-right pass.

Pure. ``prepare`` folds the text to one form (NFKC, native digits to ASCII, chat-template
tokens and markdown emphasis removed); ``tokenize`` cuts it into numbers, words, punctuation
and line breaks. Numbers are assembled here, once: thousands separators, decimal commas,
signs, and numbers written in words. Every step is linear in the length of the text: the
only regular expressions are single-token patterns applied with ``match`` at the scan
position, with no nested quantifiers, so nothing backtracks over the input.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import ClassVar

from . import words as W

# Token kinds.
NUM, WORD, PUNCT, NL = 0, 1, 2, 3

# Longer replies are examined in their first and last halves of this many characters: an
# answer sits at the start or the end, and this bounds the time per reply.
MAX_CHARS = 20_000

_TEMPLATE_TOKENS = ("<|", "<start_of_turn>", "<end_of_turn>", "<eos>", "<bos>", "</s>", "<s>")
_THOUSANDS_SPACES = "\u00a0\u202f\u2009\u2007"
# A fixed-width look-behind and look-ahead: linear, no backtracking.
_SPACED_THOUSANDS = re.compile(r"(?<=[0-9])[\u00a0\u202f\u2009\u2007](?=[0-9]{3}(?![0-9]))")

_COMBINING = ("\u0300-\u036f\u0483-\u0489\u0610-\u061a\u064b-\u065f\u0670\u06d6-\u06ed"
              "\u0900-\u0903\u093a-\u094f\u0951-\u0957\u0962\u0963\u0981-\u0983\u09bc-\u09d7"
              "\u200c\u200d\u3099\u309a")
_WORDCH = rf"(?:[^\W\d_]|[{_COMBINING}])"
_TOKEN = re.compile(rf"(\d+)|({_WORDCH}+(?:['\u2019]{_WORDCH}+)*)|(\n\s*)|([^\S\n]+)|(.)", re.DOTALL)
# Abbreviations whose full stop does not end a sentence.
ABBREVIATIONS = frozenset({"e", "i", "g", "eg", "ie", "etc", "vs", "approx", "ca", "z", "b", "d",
                            "h", "u", "s", "mr", "ms", "dr", "st", "no", "nr", "т", "е", "к",
                            "est", "resp", "fig", "ср", "ок", "около"})


_ELIDED = frozenset({"d", "l", "qu", "j", "n", "s", "c", "m", "t", "jusqu", "lorsqu", "puisqu"})


@dataclass(slots=True)
class Tok:
    """One token. For numbers, ``value`` is the number as written (not yet on 0-100)."""

    kind: int
    text: str          # lower-case word, the punctuation character, or the digits as written
    start: int
    end: int
    space: bool = False      # whitespace between the previous token and this one
    value: float = 0.0
    decimals: int = 0        # digits after the decimal separator
    words: bool = False      # a number written in words ("sixty-five")
    odd: bool = False        # "3.14.15", a date, a version: not a quantity
    pct: bool = False        # the token itself carries the percent (百分之四十, 七成)
    ratio: bool = False      # a fraction written as one token (三分之一): value is already 0-100
    fractional: bool = False  # a share in words ("half", "a third"): value is already 0-100
    listed: bool = False     # an item of "1,2,3" (commas and no spaces)
    newlines: int = 0        # NL tokens: how many line breaks


class _Fold(dict[int, str]):
    """``str.translate`` table built as characters are met: native digits to ASCII (Arabic-Indic
    ٦٥, Devanagari ६५, ...), the Arabic, full-width and small percent signs to "%", dashes and
    quotes to one form, Arabic and Devanagari punctuation to its Latin equivalent; markdown
    code marks and heading hashes go."""

    SPECIAL: ClassVar[dict[str, str]] = {"\u066b": ".", "\u066c": ",", "\u066a": "%", "\ufe6a": "%", "\uff05": "%",
               "\u2212": "-", "\u2010": "-", "\u2011": "-", "\u2012": "-", "\ufe63": "-",
               "\uff0d": "-", "\u2018": "'", "\u2019": "'", "\u02bc": "'", "\u201c": '"',
               "\u201d": '"', "\u00ab": '"', "\u00bb": '"', "\u201e": '"', "`": "", "#": " ",
               "\u061f": "?", "\u061b": ";", "\u060c": ", ", "\u0964": ". "}

    def __missing__(self, code: int) -> str:
        ch = chr(code)
        if ch in self.SPECIAL:
            out = self.SPECIAL[ch]
        elif ch.isdigit() and not ch.isascii():
            digit = unicodedata.decimal(ch, None)
            out = str(digit) if digit is not None else " "
        else:
            out = ch
        self[code] = out
        return out


_FOLD = _Fold()


def prepare(text: str) -> str:
    """Fold a reply to the one form the tokenizer reads (linear; C-speed after the first
    occurrence of each character)."""
    text = _strip_template_tokens(text)
    # CJK punctuation separates, it never makes a decimal ("65，3个月" is 65 then 3).
    text = text.replace("\uff0c", ", ").replace("\u3001", ", ").replace("\u3002", ". ")
    # Markdown emphasis ("**65**", "__Answer:__"); a single "*" may be a multiplication.
    text = text.replace("**", "").replace("__", "")
    # "10 000" with a no-break or thin space is one number (NFKC would make it two).
    if any(c in text for c in _THOUSANDS_SPACES):
        text = _SPACED_THOUSANDS.sub("", text)
    text = unicodedata.normalize("NFKC", text)
    return text.translate(_FOLD)


def turn_end(text: str) -> int | None:
    """Where the reply's own turn ends: at the first chat-template token after its text
    (``<|im_end|>``, ``<|im_start|>``, ``<end_of_turn>``, ``<eos>``). What follows is a turn the
    model wrote for someone else -- a base model continuing the chat as a document -- not its
    answer. None when there is no such token (leading ones are dropped by ``prepare``). Linear."""
    content = False  # the reply's own text has begun
    last = 0  # text[last:pos] has not been looked at yet
    pos = text.find("<")
    while pos >= 0:
        content = content or bool(text[last:pos].strip())
        rest = text[pos:pos + 20]
        matched = next((t for t in _TEMPLATE_TOKENS if rest.startswith(t)), None)
        close = text.find("|>", pos + 2, pos + 64) if matched == "<|" else -1
        if close >= 0 or matched not in (None, "<|"):
            if content and matched not in ("<bos>", "<s>"):
                return pos
            last = close + 2 if close >= 0 else pos + len(matched or "")
        else:
            content, last = True, pos + 1  # a "<" of the text ("< 5%")
        pos = text.find("<", last)
    return None


def _strip_template_tokens(text: str) -> str:
    """Chat-template tokens (``<|im_end|>``, ``<end_of_turn>``) become line breaks; a token
    cut off at the end of the reply (``<|im_e``, a lone ``<``) is dropped."""
    if "<" not in text:
        return text
    pieces = []
    pos = 0
    n = len(text)
    while pos < n:
        i = text.find("<", pos)
        if i < 0:
            pieces.append(text[pos:])
            break
        pieces.append(text[pos:i])
        rest = text[i:i + 20]
        matched = next((t for t in _TEMPLATE_TOKENS if rest.startswith(t)), None)
        if matched == "<|":
            j = text.find("|>", i + 2, i + 64)
            if j >= 0:
                pieces.append("\n")
                pos = j + 2
                continue
            if text.find("\n", i, i + 64) < 0 and n - i < 64:
                break  # an unfinished template token ends the reply
        elif matched is not None:
            pieces.append("\n")
            pos = i + len(matched)
            continue
        elif n - i < 24 and all(c.isalpha() or c in "_|" for c in text[i + 1:].rstrip()):
            break  # "<", "<end_of" at the very end
        pieces.append("<")
        pos = i + 1
    return "".join(pieces)


def cap(text: str) -> str:
    """The first and last ``MAX_CHARS // 2`` characters of a long reply."""
    if len(text) <= MAX_CHARS:
        return text
    half = MAX_CHARS // 2
    return text[:half] + "\n\n" + text[-half:]


# Replies repeat ("About 65%." for many prompts) and no reader changes a token once the
# tokenizer is done, so a short text is tokenized once; the bound keeps it to a few MB.
SHORT_TEXT = 512


def tokens(text: str) -> list[Tok]:
    """``tokenize(text)``, shared with earlier calls for a short text (a new list each time,
    holding the same tokens: treat them as read-only)."""
    if len(text) > SHORT_TEXT:
        return tokenize(text)
    return list(_short_tokens(text))


@functools.lru_cache(maxsize=4096)
def _short_tokens(text: str) -> tuple[Tok, ...]:
    return tuple(tokenize(text))


def tokenize(text: str) -> list[Tok]:
    """Tokens of a prepared text; numbers assembled (separators, signs, words)."""
    toks: list[Tok] = []
    pos, n = 0, len(text)
    list_mode = False  # inside "1,2,3": a comma between digits is a list separator
    space = False
    match = _TOKEN.match
    while pos < n:
        m = match(text, pos)
        if m is None:  # pragma: no cover - the last alternative matches any character
            break
        kind = m.lastindex
        if kind == 1:
            tok, pos, list_mode = _read_number(text, pos, list_mode)
            tok.space = space
            _attach_sign(toks, tok)
            toks.append(tok)
        elif kind == 2:
            word = m.group(2).lower().replace("\u2019", "'")
            head, apostrophe, rest = word.partition("'")
            if apostrophe and head in _ELIDED and rest:
                # French and Italian elision: "d'environ" -> "d'" "environ", "l'article" -> "l'" "article"
                cut = pos + len(head) + 1
                toks.append(Tok(WORD, head + "'", pos, cut, space))
                toks.append(Tok(WORD, rest, cut, m.end(), False))
            else:
                toks.append(Tok(WORD, word, pos, m.end(), space))
            pos = m.end()
            list_mode = False
        elif kind == 3:
            toks.append(Tok(NL, "\n", pos, m.end(), space, newlines=m.group(3).count("\n")))
            pos = m.end()
            list_mode = False
        elif kind == 4:
            pos = m.end()
            space = True
            continue
        elif text[pos] == "." and _leading_dot(text, pos):
            tok, pos = _read_leading_dot(text, pos)
            tok.space = space
            _attach_sign(toks, tok)
            toks.append(tok)
            list_mode = False
        else:
            ch = m.group(5)
            toks.append(Tok(PUNCT, ch, pos, pos + 1, space))
            pos += 1
            if ch != ",":
                list_mode = False
        space = False
    toks = _fold_cjk(toks)
    return _fold_number_words(toks)


def _digits_at(text: str, i: int) -> int:
    """End of the run of ASCII digits starting at ``i`` (``i`` when there is none)."""
    n = len(text)
    j = i
    while j < n and "0" <= text[j] <= "9":
        j += 1
    return j


# Before a decimal written without its leading zero (".94", "(.5)", "p=.05"): what may come first.
_BEFORE_LEADING_DOT = frozenset(" \t\n\r(:=~≈<>[\"'+-\u00a0\u2009\u202f")


def _leading_dot(text: str, pos: int) -> bool:
    """A "." at ``pos`` that starts a number: digits follow, and nothing or a space, a bracket,
    a colon or a sign comes before (not "3.5", "v.2", "...5")."""
    return (text[pos] == "." and pos + 1 < len(text) and "0" <= text[pos + 1] <= "9"
            and (pos == 0 or text[pos - 1] in _BEFORE_LEADING_DOT))


def _read_leading_dot(text: str, pos: int) -> tuple[Tok, int]:
    """".94" is 0.94 (and ".94%" 0.94 %), read like "0.94"; ".5.3" is no quantity."""
    end = _digits_at(text, pos + 1)
    tok = _num_tok("0", text[pos + 1:end], pos, end)
    if end + 1 < len(text) and text[end] in ".," and "0" <= text[end + 1] <= "9":
        tok.odd = True
        while end + 1 < len(text) and text[end] in ".," and "0" <= text[end + 1] <= "9":
            end = _digits_at(text, end + 1)
        tok.end = end
    return tok, end


def _to_float(int_part: str, frac: str) -> tuple[float, bool]:
    """Digits -> float without ever converting a huge string (40 kB of digits)."""
    int_part = int_part.lstrip("0") or "0"
    if len(int_part) > 15:
        return float("inf"), True
    return float(f"{int_part}.{frac[:15] or '0'}"), False


def _read_number(text: str, i: int, list_mode: bool) -> tuple[Tok, int, bool]:
    """Read the number starting at ``i``: ``1,000`` and ``1.000.000`` and ``10 000`` are
    thousands; ``17,5`` and ``0,3`` have a decimal comma; ``1,1,1`` is a list; ``3.14.15`` (a
    version or a date) is marked odd."""
    n = len(text)
    j = _digits_at(text, i)
    int_part, frac = text[i:j], ""
    odd = False
    sep_used = ""
    if 1 <= len(int_part) <= 3 and int_part[0] != "0" and not list_mode and j < n and (
            text[j] in ",.'" or text[j] in _THOUSANDS_SPACES):
        int_part, j, sep_used = _thousands(text, j, int_part)
    # Decimal part.
    if j + 1 < n and text[j] in ".," and text[j] != sep_used and "0" <= text[j + 1] <= "9":
        end = _digits_at(text, j + 1)
        if text[j] == "," and (list_mode or (end < n and text[end] == "," and end + 1 < n
                                             and text[end + 1].isdigit())):
            # "1,1,1": commas between digits separate items of a list.
            tok = _num_tok(int_part, "", i, j)
            tok.listed = True
            return tok, j, True
        frac = text[j + 1:end]
        j, odd = _past_more_dots(text, end)
    tok = _num_tok(int_part, frac, i, j)
    tok.odd = odd or tok.odd
    tok.listed = list_mode
    next_list = list_mode and j < n and text[j] == ","
    return tok, j, next_list


def _past_more_dots(text: str, j: int) -> tuple[int, bool]:
    """After a decimal part ending at ``j``: "3.14.15", "12.05.2023" go on with more dotted
    digits (a version, a date: odd), read to their end."""
    n = len(text)
    if not (j + 1 < n and text[j] == "." and "0" <= text[j + 1] <= "9"):
        return j, False
    while j + 1 < n and text[j] in ".," and "0" <= text[j + 1] <= "9":
        j = _digits_at(text, j + 1)
    return j, True


def _thousands(text: str, j: int, int_part: str) -> tuple[str, int, str]:
    """Thousands groups after ``int_part`` (ending at ``j``, where a separator stands): the
    separator followed by exactly three digits, again and again. "1.000" alone reads as a
    decimal (1.0); "1.000.000" or "1.234,5" as thousands. Returns (the digits, the end, the
    separator used, "" for none)."""
    n = len(text)
    sep = text[j]
    k = j
    groups: list[str] = []
    while k < n and text[k] == sep:
        end = _digits_at(text, k + 1)
        if end - (k + 1) != 3:
            break
        groups.append(text[k + 1:end])
        k = end
    thousands = bool(groups)
    if sep == "." and len(groups) == 1:
        thousands = k + 1 < n and text[k] == "," and text[k + 1].isdigit()
    if not thousands:
        return int_part, j, ""
    return int_part + "".join(groups), k, sep


def _num_tok(int_part: str, frac: str, start: int, end: int) -> Tok:
    value, huge = _to_float(int_part, frac)
    tok = Tok(NUM, int_part + ("." + frac if frac else ""), start, end, value=value,
              decimals=len(frac))
    tok.odd = huge
    return tok


def _attach_sign(toks: list[Tok], tok: Tok) -> None:
    """A "-" or "+" glued to a number and preceded by a space, an opening bracket or nothing
    is its sign ("-5", "(+3%)"); between two numbers it is a range or an operator."""
    if not toks or tok.space:
        return
    sign = toks[-1]
    if sign.kind != PUNCT or sign.text not in "-+":
        return
    before = toks[-2] if len(toks) >= 2 else None
    if before is None or sign.space or (before.kind == PUNCT and before.text in "([{:=,"):
        if before is not None and before.kind == NUM:
            return
        toks.pop()
        if sign.text == "-":
            tok.value = -tok.value
            tok.text = "-" + tok.text
        tok.start = sign.start
        tok.space = sign.space


# --------------------------------------------------------------------------- CJK numerals

_CJK_NUMERALS = set(W.CJK_DIGITS) | {"十", "百"}


def _cjk_value(s: str) -> int | None:
    """六十五 -> 65, 十 -> 10, 一百 -> 100, 四十 -> 40, 五 -> 5; None if not a plain numeral."""
    if not s or any(c not in _CJK_NUMERALS for c in s):
        return None
    if s in ("百", "一百"):
        return 100
    if "百" in s:
        return None
    if "十" not in s:
        return W.CJK_DIGITS[s] if len(s) == 1 else None
    tens, _, units = s.partition("十")
    t = W.CJK_DIGITS.get(tens, -1) if tens else 1
    u = W.CJK_DIGITS.get(units, -1) if units else 0
    if t < 0 or u < 0 or "十" in units:
        return None
    return t * 10 + u


def _fold_cjk(toks: list[Tok]) -> list[Tok]:
    """Inside runs of Chinese or Japanese characters: 百分之四十 and 四十パーセント (40%),
    七成/三割 (70%/30%), 三分之一/3分の1 (one in three). A run with none of them is left as it is."""
    out: list[Tok] = []
    for k, tok in enumerate(toks):
        if tok.kind == WORD and not tok.text.isascii() and _has_cjk_number(tok.text):
            out.extend(_split_cjk(tok))
        elif (tok.kind == NUM and k + 2 < len(toks) and toks[k + 1].kind == WORD
              and toks[k + 1].text in ("分の", "분의") and toks[k + 2].kind == NUM
              and tok.value > 0 and (not toks[k + 2].space or toks[k + 1].text == "분의")):
            # 3分の1 / 3분의 1: "one of three", written total first.
            total, part = tok.value, toks[k + 2].value
            frac = Tok(NUM, f"{part:g}/{total:g}", tok.start, toks[k + 2].end, tok.space,
                       value=100 * part / total, ratio=True, decimals=3)
            toks[k + 2] = Tok(PUNCT, "", toks[k + 2].start, toks[k + 2].start)  # consumed
            toks[k + 1] = Tok(PUNCT, "", toks[k + 1].start, toks[k + 1].start)
            out.append(frac)
        elif tok.kind == PUNCT and tok.text == "":
            continue
        else:
            out.append(tok)
    return [t for t in out if not (t.kind == PUNCT and t.text == "")]


def _has_cjk_number(s: str) -> bool:
    return not _CJK_NUMERALS.isdisjoint(s) or _CJK_PERCENT_OR_SHARE.search(s) is not None


# Even chances and halves written inside a run: "五分五分です", "大约一半", "約半分".
_CJK_SHARES = ("五分五分", "一半一半", "五五开", "五五開", "반반", "一半", "半分")
_CJK_PERCENT_OR_SHARE = re.compile("|".join(map(re.escape, ("百分之", *_CJK_SHARES))))  # any of them, in one search


def _split_cjk(tok: Tok) -> list[Tok]:
    s = tok.text
    alone = _cjk_value(s)
    if alone is not None:  # a run that is only a numeral ("零。", "六十五"): a number in words
        return [Tok(NUM, s, tok.start, tok.end, tok.space, value=float(alone), words=True)]
    for even in _CJK_SHARES:
        at = s.find(even)
        if at >= 0:  # an even chance or a half inside a run: "五分五分です", "大约一半"
            end = at + len(even)
            parts = [Tok(WORD, s[:at], tok.start, tok.start + at, tok.space)] if at else []
            parts.append(Tok(NUM, even, tok.start + at, tok.start + end, tok.space and not at, value=50.0,
                             pct=True, words=True))
            if end < len(s):
                parts.append(Tok(WORD, s[end:], tok.start + end, tok.end))
            return parts
    out: list[Tok] = []
    i, n, last = 0, len(s), 0

    def emit_word(a: int, b: int) -> None:
        if b > a:
            out.append(Tok(WORD, s[a:b], tok.start + a, tok.start + b, tok.space and a == 0))

    while i < n:
        if s[i] in _CJK_NUMERALS:
            j = i
            while j < n and s[j] in _CJK_NUMERALS:
                j += 1
            value = _cjk_value(s[i:j])
            before = s[max(0, i - 3):i]
            after = s[j:j + 5]
            num: Tok | None = None
            if value is not None:
                if before == W.CJK_PERCENT_BEFORE:
                    num = Tok(NUM, s[i:j], tok.start + i, tok.start + j, value=float(value), pct=True,
                              words=True)
                    i_word_end = i - 3
                    emit_word(last, i_word_end)
                    out.append(num)
                    last = i = j
                    continue
                if after[:1] in W.CJK_TENTHS and value <= 10:
                    num = Tok(NUM, s[i:j + 1], tok.start + i, tok.start + j + 1,
                              value=float(value * 10), pct=True, words=True)
                    emit_word(last, i)
                    out.append(num)
                    last = i = j + 1
                    continue
                if after.startswith("パーセント"):
                    num = Tok(NUM, s[i:j], tok.start + i, tok.start + j, value=float(value), pct=True,
                              words=True)
                    emit_word(last, i)
                    out.append(num)
                    last = i = j + len("パーセント")
                    continue
                if after[:2] in ("分之", "分の") and value > 0:
                    k = j + 2
                    while k < n and s[k] in _CJK_NUMERALS:
                        k += 1
                    part = _cjk_value(s[j + 2:k])
                    if part is not None:
                        emit_word(last, i)
                        out.append(Tok(NUM, s[i:k], tok.start + i, tok.start + k,
                                       value=100 * part / value, ratio=True, words=True,
                                       decimals=3))
                        last = i = k
                        continue
            i = j
        else:
            i += 1
    if not out:
        return [tok]
    emit_word(last, n)
    return out


# --------------------------------------------------------------------------- numbers in words

_EN_ALL = {**W.UNITS_EN, **W.TENS_EN}
_ES_ALL = {**W.UNITS_ES, **W.TENS_ES}
_RU_ALL = {**W.UNITS_RU, **W.TENS_RU}
_FR_ALL = {**W.UNITS_FR, **W.TENS_FR}
_AR_ALL = {**W.UNITS_AR, **W.TENS_AR}
_WORD_NUMBER_START = (set(_EN_ALL) | set(_ES_ALL) | set(_RU_ALL) | set(_FR_ALL) | set(_AR_ALL)
                      | set(W.WORDS_HI) | set(W.UNITS_DE) | set(W.TENS_DE) | W.HUNDRED
                      | {"a", "ein", "fifty", "quatre", "hundert", "einhundert"}
                      | {p[0] for p in W.EVEN_CHANCE} | set(W.FRACTION_WORDS) | set(W.FRACTION_COUNTS))


def _german(word: str) -> int | None:
    """fünfundsechzig -> 65, zwanzig -> 20, hundert/einhundert -> 100."""
    if word in ("hundert", "einhundert"):
        return 100
    if word in W.UNITS_DE:
        return W.UNITS_DE[word]
    if word in W.TENS_DE:
        return W.TENS_DE[word]
    unit, sep, tens = word.partition("und")
    if sep and tens in W.TENS_DE:
        u = 1 if unit == "ein" else W.UNITS_DE.get(unit)
        if u is not None and 1 <= u <= 9:
            return W.TENS_DE[tens] + u
    return None


def _fold_number_words(toks: list[Tok]) -> list[Tok]:
    """Numbers written in words become NUM tokens flagged ``words``: "sixty-five",
    "sixty five", "one hundred", "fünfundsechzig", "soixante-quinze", "quatre-vingt-dix",
    "sesenta y cinco", "шестьдесят пять", "पचास", "خمسة وعشرين". The even-chance idiom
    ("fifty-fifty") becomes 50 percent."""
    out: list[Tok] = []
    i, n = 0, len(toks)
    while i < n:
        tok = toks[i]
        if tok.kind != WORD or (tok.text not in _WORD_NUMBER_START and tok.text not in _EVEN_WORDS
                                and _german(tok.text) is None):
            out.append(tok)
            i += 1
            continue
        even = _even_chance(toks, i) or (1 if tok.text in _EVEN_WORDS else 0)
        if even:
            last = toks[i + even - 1]
            out.append(Tok(NUM, "fifty-fifty", tok.start, last.end, tok.space, value=50.0, words=True,
                           pct=True))
            i += even
            continue
        share, used = _fraction_word(toks, i)
        if used:
            last = toks[i + used - 1]
            out.append(Tok(NUM, " ".join(t.text for t in toks[i:i + used]), tok.start, last.end,
                           tok.space, value=share, words=True, pct=True, fractional=True))
            i += used
            continue
        value, used = _word_number(toks, i)
        if used == 1 and tok.text in _ARTICLES and not _odds_follow(toks, i + 1):
            used = 0  # "un", "one", "ein": an article unless "one in three" follows
        if used:
            last = toks[i + used - 1]
            out.append(Tok(NUM, " ".join(t.text for t in toks[i:i + used]), tok.start, last.end,
                           tok.space, value=float(value), words=True))
            i += used
        else:
            out.append(tok)
            i += 1
    return out


_EVEN_WORDS = frozenset(p[0] for p in W.EVEN_CHANCE if len(p) == 1)
_ARTICLES = frozenset({"un", "une", "uno", "una", "ein", "eine", "one", "один", "одна", "одного",
                       "واحد", "واحدة", "एक"})


# The odds joiners by their first word, in their order (reading a question asks for each word).
_ODDS_BY_WORD: dict[str, list[tuple[str, ...]]] = {}
for _phrase in W.ODDS_BETWEEN:
    _ODDS_BY_WORD.setdefault(_phrase[0], []).append(_phrase)


def _odds_follow(toks: list[Tok], i: int) -> bool:
    """An odds joiner ("in", "out of", "sur", "из", ...) starts at ``i``."""
    for phrase in _ODDS_BY_WORD.get(toks[i].text, ()) if i < len(toks) else ():
        k = len(phrase)
        if i + k <= len(toks) and all(toks[i + m].text == phrase[m] for m in range(k)):
            return True
    return False


def _fraction_word(toks: list[Tok], i: int) -> tuple[float, int]:
    """"half" (50), "a third", "two thirds", "ein Drittel", "la moitié", "un quart", "треть":
    (share on 0-100, tokens used), or (0, 0)."""
    n = len(toks)
    w = toks[i].text
    if w in W.FRACTION_WORDS:
        return W.FRACTION_WORDS[w], 1
    nxt = toks[i + 1].text if i + 1 < n and toks[i + 1].kind == WORD else ""
    if w in W.FRACTION_COUNTS and nxt in W.FRACTION_WORDS:
        return W.FRACTION_COUNTS[w] * W.FRACTION_WORDS[nxt], 2
    if w in W.FRACTION_COUNTS and nxt == "-" and i + 2 < n and toks[i + 2].text in W.FRACTION_WORDS:
        return W.FRACTION_COUNTS[w] * W.FRACTION_WORDS[toks[i + 2].text], 3
    return 0.0, 0


def _even_chance(toks: list[Tok], i: int) -> int:
    """Tokens of the even-chance idiom starting at ``i`` (the longest: "fifty-fifty chance"), or 0."""
    if toks[i].kind != WORD:
        return 0
    best = 0
    for phrase in _EVEN_BY_FIRST.get(toks[i].text, ()):
        k = len(phrase)
        if k > best and i + k <= len(toks) and all(toks[i + m].text == phrase[m] for m in range(1, k)):
            best = k
    return best


_EVEN_BY_FIRST: dict[str, list[tuple[str, ...]]] = {}
for _phrase in W.EVEN_CHANCE:
    _EVEN_BY_FIRST.setdefault(_phrase[0], []).append(_phrase)


def _word_at(toks: list[Tok], k: int) -> str:
    return toks[k].text if k < len(toks) and toks[k].kind == WORD else ""


def _word_number(toks: list[Tok], i: int) -> tuple[int, int]:
    """(value, tokens used) of a number in words starting at ``i``; used 0 if none. One reader
    per language, tried in turn."""
    w = _word_at(toks, i)
    for read in (_english, _german_at, _french_at, _spanish, _russian, _hindi, _arabic):
        found = read(toks, i, w)
        if found is not None:
            return found
    return (100, 1) if w in W.HUNDRED else (0, 0)


def _english(toks: list[Tok], i: int, w: str) -> tuple[int, int] | None:
    """[a|one] hundred | tens[-unit] | unit."""
    if w in ("a", "one") and _word_at(toks, i + 1) == "hundred":
        return 100, 2
    if w == "hundred":
        return 100, 1
    if w in W.TENS_EN:
        hyphen = i + 1 < len(toks) and toks[i + 1].kind == PUNCT and toks[i + 1].text == "-"
        unit = _word_at(toks, i + 2) if hyphen else _word_at(toks, i + 1)
        if unit in W.UNITS_EN and 1 <= W.UNITS_EN[unit] <= 9:
            return W.TENS_EN[w] + W.UNITS_EN[unit], 3 if hyphen else 2
        return W.TENS_EN[w], 1
    if w in W.UNITS_EN and w != "a":
        return W.UNITS_EN[w], 1
    return None


def _german_at(toks: list[Tok], i: int, w: str) -> tuple[int, int] | None:
    de = _german(w)
    return (de, 1) if de is not None and w not in ("ein", "eine") else None


def _french_at(toks: list[Tok], i: int, w: str) -> tuple[int, int] | None:
    """soixante-dix, quatre-vingt(s)(-dix), vingt et un, cent."""
    return _french(toks, i) if w in _FR_ALL or w == "cent" else None


def _spanish(toks: list[Tok], i: int, w: str) -> tuple[int, int] | None:
    """sesenta y cinco, cien."""
    if w in ("cien", "ciento"):
        return 100, 1
    if w not in _ES_ALL:
        return None
    unit = _word_at(toks, i + 2)
    if w in W.TENS_ES and _word_at(toks, i + 1) == "y" and unit in W.UNITS_ES and 1 <= W.UNITS_ES[unit] <= 9:
        return W.TENS_ES[w] + W.UNITS_ES[unit], 3
    return (1, 1) if w in ("un", "una") else (_ES_ALL[w], 1)


def _russian(toks: list[Tok], i: int, w: str) -> tuple[int, int] | None:
    """шестьдесят пять, сто."""
    if w == "сто":
        return 100, 1
    if w not in _RU_ALL:
        return None
    unit = _word_at(toks, i + 1)
    if w in W.TENS_RU and unit in W.UNITS_RU and 1 <= W.UNITS_RU[unit] <= 9:
        return W.TENS_RU[w] + W.UNITS_RU[unit], 2
    return _RU_ALL[w], 1


def _hindi(toks: list[Tok], i: int, w: str) -> tuple[int, int] | None:
    return (W.WORDS_HI[w], 1) if w in W.WORDS_HI else None


def _arabic(toks: list[Tok], i: int, w: str) -> tuple[int, int] | None:
    """خمسة وعشرين (the tens word carries the conjunction و), مائة."""
    if w in ("مائة", "مئة", "مية"):
        return 100, 1
    if w not in _AR_ALL:
        return None
    nxt = _word_at(toks, i + 1)
    if w in W.UNITS_AR and nxt.startswith("و") and nxt[1:] in W.TENS_AR:
        return W.TENS_AR[nxt[1:]] + W.UNITS_AR[w], 2
    return _AR_ALL[w], 1


def _french(toks: list[Tok], i: int) -> tuple[int, int]:
    n = len(toks)
    seq: list[str] = []
    k = i
    while k < n:
        t = toks[k]
        if t.kind == WORD and (t.text in _FR_ALL or t.text in ("cent", "cents")):
            seq.append(t.text)
            k += 1
        elif t.kind == PUNCT and t.text == "-" and k + 1 < n and toks[k + 1].kind == WORD and (
                toks[k + 1].text in _FR_ALL or toks[k + 1].text in ("cent", "cents")) or t.kind == WORD and t.text == "et" and seq and k + 1 < n and toks[k + 1].text in ("un", "une", "onze"):
            k += 1
        else:
            break
    if not seq:
        return 0, 0
    total, used = 0, 0
    value = 0
    idx = 0
    while idx < len(seq):
        w = seq[idx]
        if w in ("cent", "cents"):
            value = (value or 1) * 100
        elif w == "quatre" and idx + 1 < len(seq) and seq[idx + 1] in ("vingt", "vingts"):
            value += 80
            idx += 1
        elif w in W.TENS_FR:
            value += W.TENS_FR[w]
        else:
            value += W.UNITS_FR[w]
        idx += 1
    total = value
    used = k - i
    if total > 100:
        return 0, 0
    return total, used
