"""pytest collectors and items built from ``Suite`` objects.

Items are real ``pytest.Function``s (a plain ``pytest.Item`` gets no fixtures, pytest#3639),
so the model under test comes from the ``optbench_model`` fixture that a conftest.py may
override. Each item is one suite item under one condition; it elicits its prompts when it
runs and leaves an ``ItemRecord`` for the report hook to carry to the controller.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Iterator
from typing import Any

import pytest

from ..prompts.build import DEFAULT_TEMPLATE, PromptSpec, prompt_fingerprint, render_prompts
from ..providers.base import ModelError, as_model
from ..records.item import ItemRecord
from ..suite.checks import marker_near_miss, near_miss_sentence, unused_fields, unused_sentences
from ..suite.load import Condition, Item, Suite, SuiteError, load_suite
from ..text.yaml_input import yaml_encoding
from .spare import expect_items
from .worker import NO_MODEL_REASON, WORKER_KEY, get_worker

SUITE_SUFFIXES = (".yaml", ".yml")


def optbench_item() -> None:
    """Stand-in test function; ``runtest`` asks for the model fixture when it answers."""


def _head(path: Any) -> str:
    """The file's first 64 KiB as text, in whichever encoding YAML allows it is in."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(65536)
    except OSError:
        return ""
    codec, bom = yaml_encoding(raw[:4])
    return raw[bom:].decode(codec, errors="replace")


def looks_like_suite(path: Any) -> bool:
    """Cheap pre-check so unrelated YAML files are never parsed: does ``optbench`` occur
    anywhere in the file, in any encoding YAML allows? (``yaml.safe_dump`` sorts keys, so
    ``optbench:`` may come after megabytes of ``items``.) The linter reads every file."""
    if path.suffix not in SUITE_SUFFIXES:
        return False
    try:
        with open(path, "rb") as handle:
            head = handle.read(4)
            codec, bom = yaml_encoding(head)
            needle = "optbench".encode(codec)
            tail = head[bom:]
            while chunk := handle.read(1 << 20):
                if needle in tail + chunk:
                    return True
                tail = chunk[-len(needle):]
            return needle in tail
    except OSError:
        return False


def _near_miss(collector: pytest.Collector, path: Any) -> str | None:
    """The sentence for a file whose top-level marker looks misspelt (``optbnch: 1``)."""
    key = marker_near_miss(_head(path))
    if key is None:
        return None
    return near_miss_sentence(str(path.relative_to(collector.config.rootpath)) if path.is_relative_to(
        collector.config.rootpath) else str(path), key)


def near_miss_file(parent: pytest.Collector, path: Any) -> pytest.Collector | None:
    """A YAML file that is not a suite but looks meant to be one: under strict mode a
    collector whose collection fails with the sentence, otherwise a warning for the summary."""
    worker = parent.config.stash.get(WORKER_KEY, None)
    sentence = _near_miss(parent, path)
    if sentence is None or worker is None:
        return None
    if worker.options.strict:
        return MisspeltSuiteFile.from_parent(parent, path=path, sentence=sentence)
    if sentence not in worker.facts.near_misses:
        worker.facts.near_misses.append(sentence)
    return None


class MisspeltSuiteFile(pytest.File):
    """Under --optbench-strict, a file with a misspelt marker is a collection error."""

    def __init__(self, *, sentence: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sentence = sentence

    def collect(self) -> Iterator[pytest.Item]:
        raise self.CollectError(self.sentence + ".")


class ItemFailed(Exception):
    """The item could not get its answers; shown as one line, without a traceback."""


class SuiteFile(pytest.File):
    """One suite YAML file; yields an ``OptbenchItem`` per item x condition."""

    def collect(self) -> Iterator[OptbenchItem]:
        run = get_worker(self.config)
        try:
            suite = load_suite(self.path, display=self.nodeid)
            if suite is None:  # "optbench" appears, but not as the marker: perhaps misspelt
                if (sentence := _near_miss(self, self.path)) is not None:
                    if run.options.strict:
                        raise self.CollectError(sentence + ".")
                    if sentence not in run.facts.near_misses:
                        run.facts.near_misses.append(sentence)
                return
            run.register_suite(suite)
        except SuiteError as exc:
            raise self.CollectError(str(exc)) from None
        unused = unused_sentences(unused_fields(suite))
        if unused and run.options.strict:
            raise self.CollectError("\n".join(f"{u} (an error under --optbench-strict)." for u in unused))
        run.facts.unused_fields.extend(u for u in unused if u not in run.facts.unused_fields)
        run.note_suite(suite, len(suite.items) * len(suite.conditions))
        if run.wants_language(suite.language):
            expect_items(self.config, len(suite.items) * len(suite.conditions))
        cases = [(item, condition, self._render(suite, item, condition, run.options.settings))
                 for item in suite.items for condition in suite.conditions]
        # Every prompt of the suite, selected or not: the hash names the suite's prompts, so a
        # run with -k or --language compares with a full one (the selection is not a change).
        suite_hash = suite_prompt_hash([(item.id, condition.name, spec) for item, condition, specs in cases
                                        for spec in specs])
        fixtureinfo = None
        for item, condition, specs in cases:
            node = self._make_item(suite, item, condition, specs, fixtureinfo)
            node.suite_prompt_hash = suite_hash
            # Resolved once per file, as pytest does for a parametrized test: every item of
            # the file has the same function, parents and fixtures.
            fixtureinfo = node._fixtureinfo
            yield node

    def _render(self, suite: Suite, item: Item, condition: Condition, settings: Any) -> list[PromptSpec]:
        try:
            return render_prompts(suite, item, condition, settings)
        except (KeyError, IndexError, ValueError, AttributeError) as exc:
            raise self.CollectError(
                f"{self.nodeid}, item '{item.id}' (line {item.line}): its prompt cannot be rendered "
                f"under condition '{condition.name}' ({type(exc).__name__}: {exc})."
            ) from None

    def _make_item(self, suite: Suite, item: Item, condition: Condition, specs: list[PromptSpec],
                   fixtureinfo: Any = None) -> OptbenchItem:
        base = condition.name == "base"
        name = item.id if base else f"{item.id}[{condition.name}]"
        node = OptbenchItem.from_parent(self, name=name, callobj=optbench_item, fixtureinfo=fixtureinfo)
        node.add_marker("optbench")
        # -k can select by suite, kind, domain, condition or language.
        node.extra_keyword_matches.update(
            k for k in (suite.id, item.kind, item.domain, condition.name, suite.language) if k
        )
        node.setup_case(suite, item, condition, specs)
        return node


def unusable_reason(record: ItemRecord) -> str | None:
    """Why an item has no usable answer (some prompt got no number at all), or None."""
    for prompt in record.prompts:
        if not prompt.values():
            answer = next((a for a in prompt.answers if a.raw is not None), None)
            seen = f": {answer.raw[:80]!r} ({answer.reason or 'no number'})" if answer and answer.raw else ""
            return f"no usable answer to '{prompt.role}' in {len(prompt.answers)} sample(s){seen}"
    return None


def suite_prompt_hash(prompts: list[tuple[str, str, PromptSpec]]) -> str:
    """Short hash of what a suite asks: every (item, condition, role, system, user text)."""
    texts = [f"{item}\x1f{condition}\x1f{spec.role}\x1f{spec.system}\x1f{spec.user}" for item, condition, spec in prompts]
    return hashlib.sha256("\x1e".join(sorted(texts)).encode()).hexdigest()[:16]


def item_properties(record: ItemRecord) -> list[tuple[str, str]]:
    """The item's answers and per-item values, as JUnit properties (compact JSON)."""
    means = {p.role: p.mean() for p in record.prompts}
    values: dict[str, Any] = {role: (None if math.isnan(mean) else round(mean, 3)) for role, mean in means.items()}
    if record.kind == "inverted_pair" and None not in (values.get("positive"), values.get("negative")):
        values["skew"] = round(values["positive"] - (100 - values["negative"]), 3)
    answers = {p.role: [a.raw if a.error is None else f"error: {a.error}" for a in p.answers] for p in record.prompts}
    return [("optbench_answers", json.dumps(answers, ensure_ascii=False)),
            ("optbench_values", json.dumps(values, ensure_ascii=False))]


class OptbenchItem(pytest.Function):
    """One suite item under one condition, run against the model fixture."""

    suite: Suite
    case: Item
    condition: Condition
    specs: list[PromptSpec]
    optbench_record: ItemRecord | None = None
    suite_prompt_hash: str = ""

    def setup_case(self, suite: Suite, case: Item, condition: Condition, specs: list[PromptSpec]) -> None:
        self.suite, self.case, self.condition, self.specs = suite, case, condition, specs

    def runtest(self) -> None:
        worker = get_worker(self.config)
        source = worker.answer_source(self)
        # --model answers unless a conftest fixture does (see AnswerSource): the fixture is
        # requested only then, so an unused override is never set up.
        target = worker.model if source.cli else self._request.getfixturevalue("optbench_model")
        if target is None:
            pytest.skip(NO_MODEL_REASON)
        try:
            prompts = worker.elicit(target, self.specs)
            model = as_model(target)
            name, version = model.name, str(getattr(model, "version", "") or "")
        except TypeError as exc:
            raise ItemFailed(str(exc)) from None
        worker.note_source(source, name)
        record = ItemRecord(
            suite=self.suite.id, item=self.case.id, condition=self.condition.name,
            kind=self.case.kind, file=self.suite.path, model=name,
            prompts=prompts, model_version=version,
            track=self.suite.track if self.case.kind == "inverted_pair" else None,
            domain=self.case.domain, language=self.suite.language,
            expected=self.case.fields.get("expected"), outcome=self.case.fields.get("outcome"),
            direction=self.case.fields.get("direction"),
            prompt_hash=prompt_fingerprint([s.system for s in self.specs] + [self.suite.template or DEFAULT_TEMPLATE]),
            suite_prompt_hash=self.suite_prompt_hash,
            notes=list(getattr(target, "notes", []) or []),
            elicit=self.specs[0].mode if self.specs else "text",
            faults=get_worker(self.config).faults(),
        )
        self.optbench_record = record
        self.user_properties.extend(item_properties(record))  # shown by --junitxml
        errors = record.errors
        if errors:
            total = len(record.answers())
            raise ItemFailed(f"{len(errors)} of {total} model calls failed; first: {record.first_error}")
        if pending := record.pending_batches:  # never a pass: skipped, or failed under strict mode
            worker = get_worker(self.config)
            note = worker.pending_note(pending)
            if worker.options.strict:
                raise ItemFailed(f"{note} (strict mode)")
            pytest.skip(note)
        if (reason := unusable_reason(record)) is not None:
            # Not a pass: the item enters no metric. Not a failure either: parse_rate and
            # min_n gates decide how many such items a run may have.
            pytest.xfail(reason)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        # pytest formats a traceback for pytest.xfail() too (then reports its reason, never
        # the traceback): milliseconds per unusable item, so it gets the one line as well.
        if isinstance(excinfo.value, (ItemFailed, ModelError, pytest.xfail.Exception)):
            return f"{self.nodeid}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self.case.line - 1 if self.case.line else None, f"{self.suite.id}::{self.name}"
