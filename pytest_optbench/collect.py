"""pytest collectors and items built from ``Suite`` objects.

Items are real ``pytest.Function``s (a plain ``pytest.Item`` gets no fixtures, pytest#3639),
so the model under test comes from the ``optbench_model`` fixture that a conftest.py may
override. Each item is one suite item under one condition; it elicits its prompts when it
runs and leaves an ``ItemRecord`` for the report hook to carry to the controller.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from .prompts import DEFAULT_TEMPLATE, PromptSpec, prompt_fingerprint, render_prompts
from .providers.base import ModelError, as_model
from .records import ItemRecord
from .session.worker import get_worker
from .suites import Condition, Item, Suite, SuiteError, load_suite

SUITE_SUFFIXES = (".yaml", ".yml")


def optbench_item(optbench_model: Any) -> None:
    """Stand-in test function: its signature is what requests the model fixture."""


def looks_like_suite(path: Any) -> bool:
    """Cheap pre-check so unrelated YAML files are never parsed."""
    if path.suffix not in SUITE_SUFFIXES:
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return "optbench" in handle.read(65536)
    except OSError:
        return False


class ItemFailed(Exception):
    """The item could not get its answers; shown as one line, without a traceback."""


class SuiteFile(pytest.File):
    """One suite YAML file; yields an ``OptbenchItem`` per item x condition."""

    def collect(self) -> Iterator[OptbenchItem]:
        run = get_worker(self.config)
        try:
            suite = load_suite(self.path, display=self.nodeid)
            if suite is None:
                return
            run.register_suite(suite)
        except SuiteError as exc:
            raise self.CollectError(str(exc)) from None
        for item in suite.items:
            for condition in suite.conditions:
                yield self._make_item(suite, item, condition, run.options.settings)

    def _make_item(self, suite: Suite, item: Item, condition: Condition, settings: Any) -> OptbenchItem:
        try:
            specs = render_prompts(suite, item, condition, settings)
        except (KeyError, IndexError, ValueError, AttributeError) as exc:
            raise self.CollectError(
                f"{self.nodeid}, item '{item.id}' (line {item.line}): its prompt cannot be rendered "
                f"under condition '{condition.name}' ({type(exc).__name__}: {exc})."
            ) from None
        base = condition.name == "base"
        name = item.id if base else f"{item.id}[{condition.name}]"
        node = OptbenchItem.from_parent(self, name=name, callobj=optbench_item)
        node.add_marker("optbench")
        # -k can select by suite, kind, domain, condition or language.
        node.extra_keyword_matches.update(
            k for k in (suite.id, item.kind, item.domain, condition.name, suite.language) if k
        )
        node.setup_case(suite, item, condition, specs)
        return node


def item_properties(record: ItemRecord) -> list[tuple[str, str]]:
    """The item's answers and per-item values, as JUnit properties (compact JSON)."""
    means = {p.role: p.mean() for p in record.prompts}
    values: dict[str, Any] = {role: (None if mean != mean else round(mean, 3)) for role, mean in means.items()}
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

    def setup_case(self, suite: Suite, case: Item, condition: Condition, specs: list[PromptSpec]) -> None:
        self.suite, self.case, self.condition, self.specs = suite, case, condition, specs

    def runtest(self) -> None:
        target = self.funcargs["optbench_model"]
        try:
            prompts = get_worker(self.config).elicit(target, self.specs)
            name = as_model(target).name
        except TypeError as exc:
            raise ItemFailed(str(exc)) from None
        record = ItemRecord(
            suite=self.suite.id, item=self.case.id, condition=self.condition.name,
            kind=self.case.kind, file=self.suite.path, model=name,
            prompts=prompts,
            track=self.suite.track if self.case.kind == "inverted_pair" else None,
            domain=self.case.domain, language=self.suite.language,
            expected=self.case.fields.get("expected"), outcome=self.case.fields.get("outcome"),
            direction=self.case.fields.get("direction"),
            prompt_hash=prompt_fingerprint([s.system for s in self.specs] + [self.suite.template or DEFAULT_TEMPLATE]),
            notes=list(getattr(target, "notes", []) or []),
        )
        self.optbench_record = record
        self.user_properties.extend(item_properties(record))  # shown by --junitxml
        errors = record.errors
        if errors:
            total = len(record.answers())
            raise ItemFailed(f"{len(errors)} of {total} model calls failed; first: {errors[0]}")
        if pending := record.pending_batches:  # never a pass: skipped, or failed under strict mode
            worker = get_worker(self.config)
            note = worker.pending_note(pending)
            if getattr(worker.options, "strict", False):
                raise ItemFailed(f"{note} (strict mode)")
            pytest.skip(note)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, (ItemFailed, ModelError)):
            return f"{self.nodeid}: {excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        return self.path, self.case.line - 1 if self.case.line else None, f"{self.suite.id}::{self.name}"
