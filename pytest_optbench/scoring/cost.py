"""Money: the prices a user supplies (a prices file), and what a run's answers cost at them.

Pure. Without prices a run counts tokens, as the provider bills them; with prices each
answer costs its input and output tokens at its model's price (per million tokens unless the
file says otherwise), at the batch share of that price when a provider batch delivered it.
A model is found by globs over what the answer says served it (the API's model id) and the
name that answered (``openai:gpt-4.1-mini``, also without its ``provider:`` part); the first
entry of the file that matches wins. An answer whose model has no price is counted apart and
named, never priced at zero in silence.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records.item import BATCH_PRICE, Answer, ItemRecord
from ..text.didyoumean import hint
from ..text.display import one_line
from ..text.yaml_input import YamlError, read_yaml

TOP_KEYS = ("optbench", "currency", "per", "prices")
PRICE_KEYS = ("input", "output", "batch")
DEFAULT_PER = 1_000_000  # prices are per million tokens, as both providers list them
MAX_PRICE = 1e9
MAX_ENTRIES = 10_000


class PricesError(ValueError):
    """A prices file cannot be used; one sentence naming the file, the model and the key."""


@dataclass(frozen=True)
class Price:
    input: float  # per ``per`` input tokens
    output: float  # per ``per`` output tokens
    batch: float = BATCH_PRICE  # share of the price an answer from a provider batch costs


@dataclass(frozen=True)
class Prices:
    source: str  # the file, as shown
    currency: str = "USD"
    per: int = DEFAULT_PER
    entries: tuple[tuple[str, Price], ...] = ()

    def find(self, names: Iterable[str]) -> tuple[str, Price] | None:
        """The first entry whose glob matches one of ``names`` (or their part after ``provider:``)."""
        candidates = [n for name in names if name for n in (name, name.partition(":")[2]) if n]
        for glob, price in self.entries:
            if any(fnmatch.fnmatchcase(name, glob) for name in candidates):
                return glob, price
        return None

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "currency": self.currency, "per_tokens": self.per,
                "models": {glob: {"input": p.input, "output": p.output, "batch": p.batch} for glob, p in self.entries}}


def _error(display: str, where: str | None, key: str | None, message: str) -> PricesError:
    parts = [display] + ([where] if where else []) + ([f"key '{one_line(key, 60)}'"] if key else [])
    return PricesError(one_line(", ".join(parts), 300) + f": {one_line(message, 500).rstrip('.')}.")


def _number(display: str, where: str | None, key: str, value: Any, low: float, high: float,
            above: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _error(display, where, key, f"must be a number, got {one_line(repr(value), 60)}")
    if value < low or value > high or (above and value == low):
        bound = f"above {low:g}" if above else f"at least {low:g}"
        raise _error(display, where, key, f"must be {bound} and at most {high:g}, got {value:g}")
    return float(value)


def parse_prices(data: Any, display: str) -> Prices:
    """A prices file's content, checked key by key."""
    if not isinstance(data, Mapping) or not isinstance(data.get("prices"), Mapping):
        raise _error(display, None, "prices", "must be a mapping of model globs to {input, output} prices "
                                              "(e.g. prices: {\"openai:gpt-4.1-mini\": {input: 0.4, output: 1.6}})")
    for key in data:
        if key not in TOP_KEYS:
            raise _error(display, None, str(key), f"is not a key of a prices file{hint(str(key), TOP_KEYS)}")
    if "optbench" in data and (data["optbench"] != 1 or isinstance(data["optbench"], bool)):
        raise _error(display, None, "optbench", f"must be 1 (the format version), got {data['optbench']!r}")
    currency = data.get("currency", "USD")
    if not isinstance(currency, str) or not currency.strip() or len(currency) > 12:
        raise _error(display, None, "currency", "must be a short label such as USD or EUR")
    per = _number(display, None, "per", data.get("per", DEFAULT_PER), 1, 1e12)
    if per != int(per):
        raise _error(display, None, "per", f"must be a whole number of tokens, got {per:g}")
    models = data["prices"]
    if len(models) > MAX_ENTRIES:
        raise _error(display, None, "prices", f"holds {len(models):,} models, more than {MAX_ENTRIES:,}")
    entries = []
    for glob, entry in models.items():
        where = f"model '{one_line(str(glob), 80)}'"
        if not isinstance(glob, str) or not glob.strip():
            raise _error(display, where, None, "a model glob must be a non-empty string")
        if not isinstance(entry, Mapping):
            raise _error(display, where, None, "must be a mapping with input and output prices")
        for key in entry:
            if key not in PRICE_KEYS:
                raise _error(display, where, str(key), f"is not a price key{hint(str(key), PRICE_KEYS)}")
        for key in ("input", "output"):
            if key not in entry:
                raise _error(display, where, key, "is required (the price of that many tokens)")
        price = Price(_number(display, where, "input", entry["input"], 0, MAX_PRICE),
                      _number(display, where, "output", entry["output"], 0, MAX_PRICE),
                      _number(display, where, "batch", entry.get("batch", BATCH_PRICE), 0, 1, above=True))
        entries.append((glob, price))
    return Prices(display, currency.strip(), int(per), tuple(entries))


def read_prices(path: Path, display: str | None = None) -> Prices:
    display = display or str(path)
    if not path.is_file():
        raise PricesError(f"{display}: no such prices file.")
    try:
        data = read_yaml(path, display)
    except YamlError as exc:
        raise PricesError(str(exc)) from None
    return parse_prices(data, display)


# --------------------------------------------------------------------------- what answers cost


@dataclass
class Cost:
    """What answers cost at a set of prices."""

    prices: Prices
    input: float = 0.0  # paid in this run
    output: float = 0.0
    from_store: float = 0.0  # what the answers read back from the store cost when they were paid for
    unpriced: dict[str, int] = field(default_factory=dict)  # model -> answers with tokens and no price
    by_model: dict[str, float] = field(default_factory=dict)  # the entry (glob) -> cost in this run

    @property
    def total(self) -> float:
        return self.input + self.output

    def to_dict(self) -> dict[str, Any]:
        return {"currency": self.prices.currency, "paid_this_run": self.total, "input": self.input,
                "output": self.output, "from_store": self.from_store, "by_model": dict(self.by_model),
                "unpriced_answers": dict(self.unpriced), "prices": self.prices.to_dict()}


def answer_cost(answer: Answer, price: Price, per: int) -> tuple[float, float]:
    """(input, output) cost of one answer's billed tokens."""
    share = price.batch if answer.batch else 1.0
    return (answer.input_tokens * price.input / per * share, answer.output_tokens * price.output / per * share)


def run_cost(records: Iterable[ItemRecord], prices: Prices) -> Cost:
    """The cost of every answer with billed tokens: those paid in this run, and apart from
    them what the answers read back from the store cost when they were paid for."""
    cost = Cost(prices)
    found: dict[tuple[str | None, str], tuple[str, Price] | None] = {}
    for record in records:
        for answer in record.answers():
            if not (answer.input_tokens or answer.output_tokens) or answer.pending:
                continue
            key = (answer.served_model, record.model)
            if key not in found:
                found[key] = prices.find([n for n in key if n])
            match = found[key]
            if match is None:
                name = answer.served_model or record.model
                cost.unpriced[name] = cost.unpriced.get(name, 0) + 1
                continue
            spent_in, spent_out = answer_cost(answer, match[1], prices.per)
            if answer.cached:
                cost.from_store += spent_in + spent_out
                continue
            cost.input += spent_in
            cost.output += spent_out
            cost.by_model[match[0]] = cost.by_model.get(match[0], 0.0) + spent_in + spent_out
    return cost


def cost_per_answer(records: Sequence[ItemRecord], prices: Prices) -> float | None:
    """The mean cost of one answer of these records at these prices, paid now or earlier
    (a request's tokens sit on its first sample, so the mean is over every answer with text);
    None when no answer has billed tokens or a priced model (a simulated model)."""
    answers, spent, priced = 0, 0.0, False
    for record in records:
        for answer in record.answers():
            if answer.raw is None:
                continue
            answers += 1
            if not (answer.input_tokens or answer.output_tokens):
                continue
            match = prices.find([n for n in (answer.served_model, record.model) if n])
            if match is None:
                return None
            priced = True
            spent += sum(answer_cost(answer, match[1], prices.per))
    return spent / answers if priced and answers else None


def money(amount: float, currency: str) -> str:
    """``USD 1.23``; amounts under one keep three significant digits (``USD 0.0616``,
    ``USD 0.000412``), so that small parts still add up to their total on the page."""
    if amount == 0:
        return f"{currency} 0"
    if abs(amount) < 1:
        return f"{currency} {amount:.3g}"
    return f"{currency} {amount:,.2f}"


def cost_line(cost: Cost, from_store_answers: int) -> str:
    """The summary's sentence on money."""
    text = (f"cost at the prices of {cost.prices.source}: {money(cost.total, cost.prices.currency)} paid in this run "
            f"({money(cost.input, cost.prices.currency)} input + {money(cost.output, cost.prices.currency)} output)")
    if cost.from_store:
        text += (f"; the {from_store_answers:,} answers read from the store had cost "
                 f"{money(cost.from_store, cost.prices.currency)}")
    if cost.unpriced:
        named = ", ".join(f"{one_line(m, 80)} ({n:,})" for m, n in sorted(cost.unpriced.items())[:3])
        text += f"; answers of a model with no price in {cost.prices.source}, not counted: {named}"
    return text


def prices_of_report(run: Any) -> Prices | None:
    """The prices a report's run was costed at (``run.usage.cost.prices``), or None."""
    usage = run.get("usage") if isinstance(run, Mapping) else None
    cost = usage.get("cost") if isinstance(usage, Mapping) else None
    stored = cost.get("prices") if isinstance(cost, Mapping) else None
    if not isinstance(stored, Mapping):
        return None
    source = one_line(str(stored.get("source") or "the report"), 200)
    try:
        return parse_prices({"currency": stored.get("currency", "USD"), "per": stored.get("per_tokens", DEFAULT_PER),
                             "prices": stored.get("models")}, source)
    except PricesError:  # an edited report: no prices rather than wrong ones
        return None


def run_price(items: int, prompts_per_item: float, samples: float, per_answer: float) -> float:
    """What asking ``items`` items, each with its prompts answered ``samples`` times, costs at
    ``per_answer`` (the mean cost of one answer in the run the estimate comes from)."""
    return items * prompts_per_item * samples * per_answer
