"""Suite files (format v1) -> validated, immutable ``Suite`` / ``Item`` objects.

Pure: imports nothing from pytest and does no I/O beyond reading the file it is given.
Every problem raises ``SuiteError`` with one sentence naming the file, the item (and its
line) and the key, because users fix these files by hand.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import kinds
from ..kinds.base import FieldError
from ..text.didyoumean import hint, is_near_miss
from ..text.display import one_line, shown
from ..text.yaml_input import YamlError, read_yaml

FORMAT_VERSION = 1

# Fields every kind requires, and the optional ones it understands (from the kind registry).
KIND_FIELDS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = kinds.DerivedTable(
    lambda: {name: (kinds.required_fields(k), kinds.optional_fields(k)) for name, k in kinds.KINDS.items()}
)
# Keys of an item that are settings or labels, not text fields.
ITEM_SETTING_KEYS = ("id", "kind", "domain", "samples", "temperature", "elicit")
# Free text fields for readers, not the model: ``adapted`` says why a translated item
# replaces its English question (translations.py). No template needs to use them.
ANNOTATION_KEYS = ("adapted",)
TOP_LEVEL_KEYS = (
    "optbench", "suite", "kind", "track", "language", "description",
    "defaults", "prompt", "conditions", "items",
)
DEFAULT_KEYS = ("samples", "temperature", "elicit")
# How an answer is asked for (elicit/modes.py); each is a different elicitation.
ELICIT_MODES = ("text", "json", "logprobs")
PROMPT_KEYS = ("system", "template")
# Fields a prompt template may use besides the item's own fields.
TEMPLATE_BUILTINS = ("scenario", "question", "id", "domain")

# Ids become parts of test ids: no brackets, "::", slashes, or spaces at the ends.
# Nor control or bidi characters: a test id reaches the terminal as it is.
_CONTROLS = r"\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_ID_RE = re.compile(rf"^(?!.*::)[^\s\[\]/\\{_CONTROLS}](?:[^\[\]/\\{_CONTROLS}]*[^\s\[\]/\\{_CONTROLS}])?$")
_LANG_RE = re.compile(r"^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$")
MAX_SAMPLES = 1000
# A placeholder's format spec (str.format mini-language) with a width and precision of at
# most two digits.
_SPEC_RE = re.compile(r"(?:.?[<>=^])?[+\- ]?z?#?0?\d{0,2}[,_]?(?:\.\d{1,2})?[bcdeEfFgGnosxX%]?")
MAX_MESSAGE = 1000  # characters of an error message after its file, item and key


class SuiteError(YamlError):
    """A suite file violates the format; ``str(err)`` is one readable sentence."""


@dataclass(frozen=True)
class Condition:
    """One factorial arm: field transforms plus optional system-prompt changes."""

    name: str
    transforms: Mapping[str, str] = field(default_factory=dict)
    system: str | None = None
    system_prefix: str | None = None


BASE_CONDITION = Condition("base")


@dataclass(frozen=True)
class Item:
    """One validated item. ``fields`` holds every text/data field as written."""

    id: str
    kind: str
    line: int
    fields: Mapping[str, Any]
    domain: str | None = None
    samples: int | None = None
    temperature: float | None = None
    elicit: str | None = None


@dataclass(frozen=True)
class Suite:
    id: str
    path: str
    kind: str
    language: str
    items: tuple[Item, ...]
    conditions: tuple[Condition, ...] = (BASE_CONDITION,)
    track: str | None = None
    description: str = ""
    samples: int | None = None
    temperature: float | None = None
    system_prompt: str | None = None
    elicit: str | None = None
    template: str | None = None

    @property
    def has_explicit_conditions(self) -> bool:
        return self.conditions != (BASE_CONDITION,)


# --------------------------------------------------------------------------- YAML

def is_suite_document(data: Any) -> bool:
    """A suite is a mapping with ``optbench`` that is not a thresholds file (``gates``)."""
    return isinstance(data, dict) and "optbench" in data and not (
        "gates" in data and "items" not in data
    )


def misplaced_suite(data: Any) -> bool:
    """A top-level list holding a suite mapping: ``- optbench: 1`` (an indentation slip)."""
    return isinstance(data, list) and any(isinstance(entry, dict) and "optbench" in entry for entry in data)


# --------------------------------------------------------------------------- validation


@dataclass
class _Where:
    """Builds the one-sentence error prefix: file, item and line, key."""

    display: str
    item_id: str | None = None
    line: int | None = None

    def error(self, key: str | None, message: str) -> SuiteError:
        parts = [self.display]
        if self.item_id is not None:
            parts.append(f"item '{self.item_id}'" + (f" (line {self.line})" if self.line else ""))
        elif self.line:
            parts.append(f"line {self.line}")
        if key is not None:
            parts.append(f"key '{key}'")
        # Messages quote the offending value: keep them one short line whatever it holds.
        return SuiteError(one_line(", ".join(parts), 300) + f": {one_line(message, MAX_MESSAGE).rstrip('.')}.")


def _check_keys(where: _Where, mapping: Mapping[str, Any], allowed: Sequence[str], what: str) -> None:
    for key in mapping:
        if key not in allowed:
            raise where.error(str(key), f"unknown {what} key{hint(str(key), allowed)} (allowed: {', '.join(allowed)})")


def _text(where: _Where, key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise where.error(key, "must be a non-empty string")
    return value


def _samples(where: _Where, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_SAMPLES:
        raise where.error(key, f"must be a whole number from 1 to {MAX_SAMPLES}, got {value!r}")
    return value


def _temperature(where: _Where, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 2:
        raise where.error(key, f"must be a number from 0 to 2, got {value!r}")
    return float(value)


def _elicit(where: _Where, key: str, value: Any) -> str:
    if value not in ELICIT_MODES:
        raise where.error(key, f"must be one of {', '.join(ELICIT_MODES)}, got {value!r}")
    return str(value)


def template_fields(template: str) -> list[str]:
    """Names a ``str.format`` template refers to; ``ValueError`` if malformed or not plain."""
    names = []
    for _literal, name, spec, _conv in string.Formatter().parse(template):
        if name is None:
            continue
        if spec and "{" in spec:
            raise ValueError(f"placeholder {{{name}}} has a nested field in its format spec")
        if not name.isidentifier():
            raise ValueError(f"placeholder {{{name}}} is not a plain field name")
        if spec and not _SPEC_RE.fullmatch(spec):
            # {x:>300000000} would render a 300 MB prompt for every item
            raise ValueError(f"placeholder {{{name}}} has the format spec {shown(spec, 40)}; a spec may "
                             "set alignment, sign and type, and a width and precision of at most 2 digits")
        names.append(name)
    return names


def _template(where: _Where, key: str, value: Any) -> tuple[str, list[str]]:
    text = _text(where, key, value)
    try:
        return text, template_fields(text)
    except ValueError as exc:
        raise where.error(key, f"malformed template ({exc})") from None


def load_suite(path: Path, display: str | None = None) -> Suite | None:
    """Load and validate one suite file; ``None`` when the YAML is not a suite."""
    display = display or str(path)
    try:
        data = read_yaml(path, display)
    except YamlError as exc:  # the same sentence, as the suite error callers catch
        raise SuiteError(str(exc)) from None
    if misplaced_suite(data):
        raise SuiteError(f"{display}: the suite is inside a list; 'optbench: 1' and the other suite keys "
                         "belong at the top level (remove the '- ' before 'optbench').")
    if not is_suite_document(data):
        return None
    return parse_suite(data, display, default_id=path.stem)


def parse_suite(data: Mapping[str, Any], display: str, default_id: str) -> Suite:
    """Validate an already-parsed suite document."""
    top = _Where(display)
    _check_keys(top, data, TOP_LEVEL_KEYS, "top-level")
    version = data["optbench"]
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise top.error("optbench", f"unsupported format version {version!r} (this plugin reads version {FORMAT_VERSION})")

    suite_id = data.get("suite", default_id)
    if not isinstance(suite_id, str) or not _ID_RE.fullmatch(suite_id):
        raise top.error("suite", f"must be a non-empty id without brackets, slashes or '::', got {suite_id!r}")
    kind = data.get("kind", "inverted_pair")
    if not isinstance(kind, str) or kind not in kinds.KINDS:
        raise top.error("kind", f"unknown kind {kind!r}{hint(str(kind), kinds.KINDS)} (one of: {', '.join(kinds.KINDS)})")
    spec = kinds.kind_of(kind)
    track = data.get("track")
    if track is not None:
        if not spec.tracks:
            raise top.error("track", f"applies only to suites of kind {' or '.join(kinds.tracked_kinds())}")
        if track not in spec.tracks:
            raise top.error("track", f"must be one of {', '.join(spec.tracks)}, got {track!r}")
    else:
        track = spec.default_track
    language = data.get("language", "en")
    if not isinstance(language, str) or not _LANG_RE.fullmatch(language):
        raise top.error("language", f"must be a BCP-47 tag such as 'en' or 'pt-BR', got {language!r}")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise top.error("description", "must be a string")

    samples = temperature = elicit = None
    defaults = data.get("defaults") or {}
    if not isinstance(defaults, Mapping):
        raise top.error("defaults", "must be a mapping")
    _check_keys(top, defaults, DEFAULT_KEYS, "defaults")
    if "samples" in defaults:
        samples = _samples(top, "defaults.samples", defaults["samples"])
    if "temperature" in defaults:
        temperature = _temperature(top, "defaults.temperature", defaults["temperature"])
    if "elicit" in defaults:
        elicit = _elicit(top, "defaults.elicit", defaults["elicit"])

    prompt = data.get("prompt") or {}
    if not isinstance(prompt, Mapping):
        raise top.error("prompt", "must be a mapping with 'system' and/or 'template'")
    _check_keys(top, prompt, PROMPT_KEYS, "prompt")
    system_prompt = _text(top, "prompt.system", prompt["system"]) if "system" in prompt else None
    template: str | None = None
    template_names: list[str] = []
    if "template" in prompt:
        template, template_names = _template(top, "prompt.template", prompt["template"])

    conditions = _parse_conditions(top, data.get("conditions"))

    raw_items = data.get("items")
    if not isinstance(raw_items, list) or not raw_items:
        raise top.error("items", "must be a non-empty list of items")
    items: list[Item] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(raw_items):
        item = _parse_item(display, index, raw, kind, track)
        if item.id in seen:
            raise _Where(display, item.id, item.line).error(
                "id", f"duplicate id (first used on line {seen[item.id]})"
            )
        seen[item.id] = item.line
        where = _Where(display, item.id, item.line)
        for condition in conditions:
            _check_condition_applies(where, condition, item)
        for name in template_names:
            if name not in TEMPLATE_BUILTINS and name not in item.fields:
                raise where.error("prompt.template", f"the template uses {{{name}}}, which this item does not have")
        items.append(item)

    return Suite(
        id=suite_id, path=display, kind=kind, track=track, language=language,
        description=description, samples=samples, temperature=temperature, elicit=elicit,
        system_prompt=system_prompt, template=template,
        conditions=conditions, items=tuple(items),
    )


def _parse_conditions(top: _Where, raw: Any) -> tuple[Condition, ...]:
    if raw is None:
        return (BASE_CONDITION,)
    if not isinstance(raw, Mapping) or not raw:
        raise top.error("conditions", "must be a non-empty mapping of condition name to transforms")
    conditions = []
    for name, spec in raw.items():
        key = f"conditions.{name}"
        if not isinstance(name, str) or not _ID_RE.fullmatch(name):
            raise top.error(key, "a condition name must be non-empty, without brackets, slashes or '::'")
        spec = spec or {}
        if not isinstance(spec, Mapping):
            raise top.error(key, "must be a mapping of field name to template (or {} for no change)")
        transforms: dict[str, str] = {}
        system = prefix = None
        for field_name, value in spec.items():
            sub = f"{key}.{field_name}"
            if not isinstance(field_name, str) or not field_name.isidentifier():
                raise top.error(sub, "must name an item field, 'system' or 'system_prefix'")
            if field_name in ITEM_SETTING_KEYS or field_name in kinds.typed_fields():
                raise top.error(sub, f"'{field_name}' is a setting or typed field, not text a condition can transform")
            if field_name == "system":
                system = _text(top, sub, value)
            elif field_name == "system_prefix":
                prefix = _text(top, sub, value)
            else:
                transforms[field_name] = _template(top, sub, value)[0]
        conditions.append(Condition(name, transforms, system, prefix))
    return tuple(conditions)


def _check_condition_applies(where: _Where, condition: Condition, item: Item) -> None:
    known = kinds.field_names(kinds.kind_of(item.kind))
    for field_name, template in condition.transforms.items():
        key = f"conditions.{condition.name}.{field_name}"
        if field_name not in item.fields and field_name not in known:
            raise where.error(key, f"condition '{condition.name}' sets field '{field_name}', which items of kind {item.kind} do not have")
        for name in template_fields(template):
            if name not in item.fields and name not in ("id", "domain"):
                raise where.error(key, f"condition '{condition.name}' uses {{{name}}}, but item '{item.id}' has no field '{name}'")


def _parse_item(display: str, index: int, raw: Any, suite_kind: str, track: str | None) -> Item:
    line = getattr(raw, "line", None)
    if not isinstance(raw, Mapping):
        raise _Where(display, f"#{index + 1}", line).error(None, "each entry of 'items' must be a mapping")
    raw_id = raw.get("id")
    label = str(raw_id) if isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool) else f"#{index + 1}"
    if not label.isprintable():
        label = repr(label)[1:-1]  # keep the error message on one line
    where = _Where(display, label, line)
    if raw_id is None:
        raise where.error("id", "is required")
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or not _ID_RE.fullmatch(str(raw_id)):
        raise where.error("id", "must be non-empty, without brackets, slashes or '::' (it becomes the test id)")
    kind = raw.get("kind", suite_kind)
    if not isinstance(kind, str) or kind not in kinds.KINDS:
        raise where.error("kind", f"unknown kind {kind!r}{hint(str(kind), kinds.KINDS)} (one of: {', '.join(kinds.KINDS)})")
    domain = raw.get("domain")
    if domain is not None and (not isinstance(domain, str) or not domain.strip()):
        raise where.error("domain", "must be a non-empty string")
    samples = _samples(where, "samples", raw["samples"]) if "samples" in raw else None
    temperature = _temperature(where, "temperature", raw["temperature"]) if "temperature" in raw else None
    elicit = _elicit(where, "elicit", raw["elicit"]) if "elicit" in raw else None

    spec = kinds.kind_of(kind)
    required = kinds.required_fields(spec)
    for key in required:
        if key not in raw or raw[key] is None:
            typo = next((str(k) for k in raw if k not in required and is_near_miss(str(k), key)), None)
            found = f" (the item has '{typo}': a misspelling?)" if typo else ""
            raise where.error(key, f"is required for items of kind {kind}{found}")
    fields = {k: v for k, v in raw.items() if k not in ITEM_SETTING_KEYS}
    self_checked = kinds.self_checked_fields(spec)
    for key, value in fields.items():
        if not isinstance(key, str) or not key.isidentifier():
            raise where.error(str(key), "field names must be plain identifiers")
        if key in self_checked:
            continue  # numbers, booleans, lists: the kind checks them below
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise where.error(key, "must be a string")
        if isinstance(value, str) and not value.strip():
            raise where.error(key, "must be a non-empty string")
    for key in fields:
        owner = kinds.reserving_kind(key)
        if owner is not None and owner != kind:
            raise where.error(key, f"applies only to {owner} items, not {kind}")
    try:
        fields = spec.check_fields(fields, track)
    except FieldError as exc:
        raise where.error(exc.key, exc.message) from None
    return Item(
        id=str(raw_id), kind=kind, line=line or 0, fields=fields, domain=domain,
        samples=samples, temperature=temperature, elicit=elicit,
    )
