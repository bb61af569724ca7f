"""YAML files that people write (suites, thresholds), read safely. Pure.

The safe loader (libyaml's when present) with line numbers, no duplicate keys, bounded depth,
alias expansion and number size, and every encoding YAML allows. Every problem raises
``YamlError`` with one sentence naming the file (and line), because users fix these files by hand.
"""

from __future__ import annotations

import codecs
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml

from .display import one_line, shown


class YamlError(ValueError):
    """A YAML file cannot be read; ``str(err)`` is one readable sentence naming the file."""


# Bounds on what a YAML file may expand to. libyaml stops at 1,000 levels, but constructing
# Python objects recurses a few frames per level, so RecursionError comes much earlier; and
# aliases let a few hundred bytes stand for a billion nodes ("billion laughs").
MAX_DEPTH = 50
MAX_ALIAS_NODES = 100_000  # nodes aliases may add, at least; or 10x the file's own nodes
MAX_NUMBER_CHARS = 1000  # an integer of more digits is refused (Python refuses 4,300+)
# How a file's first bytes tell its encoding (YAML 1.2, 5.2): BOMs first, then the zeros
# that UTF-16 and UTF-32 put around ASCII characters.
_BOMS = (
    (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF8, "utf-8"), (codecs.BOM_UTF16_BE, "utf-16-be"), (codecs.BOM_UTF16_LE, "utf-16-le"),
)
_MERGE_TAG = "tag:yaml.org,2002:merge"


class _LineDict(dict):  # type: ignore[type-arg]
    """A mapping that remembers the 1-based line it started on."""

    line: int = 0


def yaml_encoding(head: bytes) -> tuple[str, int]:
    """(codec, BOM length) of a YAML file from its first four bytes."""
    for bom, codec in _BOMS:
        if head.startswith(bom):
            return codec, len(bom)
    if len(head) >= 4 and head[:3] == b"\0\0\0":
        return "utf-32-be", 0
    if len(head) >= 4 and head[1:4] == b"\0\0\0":
        return "utf-32-le", 0
    if len(head) >= 2 and head[0] == 0:
        return "utf-16-be", 0
    if len(head) >= 2 and head[1] == 0:
        return "utf-16-le", 0
    return "utf-8", 0


def decode_yaml(data: bytes, display: str) -> str:
    """The text of a YAML file in UTF-8, UTF-16 or UTF-32 (the encodings YAML allows)."""
    codec, bom = yaml_encoding(data[:4])
    try:
        return data[bom:].decode(codec)
    except UnicodeDecodeError as exc:
        raise YamlError(f"{display}: not {codec.upper().removesuffix('-BE').removesuffix('-LE')} text "
                         f"({exc.reason} at byte {exc.start + bom}).") from None


class _SuiteLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """Safe loader (libyaml's when present) that records lines, rejects duplicate keys
    (PyYAML keeps the last) and turns a value Python cannot hold into a YAML error."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError) as exc:  # a date such as 2024-13-45, a huge number
            raise yaml.constructor.ConstructorError(
                None, None, f"cannot read this value ({one_line(exc, 100)})", node.start_mark
            ) from None


def _construct_mapping(loader: _SuiteLoader, node: yaml.MappingNode) -> _LineDict:
    # Merge keys (<<: *base) bring keys an explicit key may override; only two explicit
    # keys with the same name are a duplicate.
    explicit = sum(1 for key_node, _ in node.value if key_node.tag != _MERGE_TAG)
    loader.flatten_mapping(node)
    merged = len(node.value) - explicit  # flatten_mapping puts the merged pairs first
    result = _LineDict()
    result.line = node.start_mark.line + 1
    seen: set[Any] = set()
    for index, (key_node, value_node) in enumerate(node.value):
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, Hashable):
            raise yaml.constructor.ConstructorError(
                None, None, "found a list or mapping used as a key", key_node.start_mark
            )
        if index >= merged:
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {shown(key)}", key_node.start_mark
                )
            seen.add(key)
        result[key] = loader.construct_object(value_node, deep=True)
    return result


def _construct_int(loader: _SuiteLoader, node: yaml.ScalarNode) -> int:
    if len(node.value) > MAX_NUMBER_CHARS:
        raise yaml.constructor.ConstructorError(
            None, None, f"a number of {len(node.value):,} digits is out of range", node.start_mark
        )
    return loader.construct_yaml_int(node)  # type: ignore[no-any-return]


_SuiteLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_SuiteLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_shape(root: yaml.Node, display: str) -> None:
    """Refuse documents nested deeper than ``MAX_DEPTH``, aliases that contain themselves,
    and aliases that expand to far more nodes than the file holds; iteratively, before
    anything recursive sees the document. (Scalars are counted where they are referenced:
    only collections are worth remembering.)"""
    if isinstance(root, yaml.ScalarNode):
        return
    size: dict[int, int] = {}  # expanded node count of each collection
    depth: dict[int, int] = {}
    entered: set[int] = set()
    literal = 0  # nodes written in the file
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            total, deepest = 1, 0
            for kid in _children(node):
                if isinstance(kid, yaml.ScalarNode):
                    total, deepest = total + 1, max(deepest, 1)
                else:
                    total, deepest = total + size[id(kid)], max(deepest, depth[id(kid)])
            size[key], depth[key] = total, deepest + 1
            entered.discard(key)
            if deepest + 1 > MAX_DEPTH:
                raise _shape_error(display, node, f"nested more than {MAX_DEPTH} levels deep")
            continue
        if key in size:
            continue
        entered.add(key)
        stack.append((node, True))
        for kid in _children(node):
            literal += 1
            if isinstance(kid, yaml.ScalarNode):
                continue
            if id(kid) in entered:
                raise _shape_error(display, kid, "an alias refers to a node that contains it")
            if id(kid) not in size:
                stack.append((kid, False))
    limit = max(MAX_ALIAS_NODES, 10 * literal)
    if size[id(root)] - literal > limit:
        raise YamlError(f"{display}: malformed YAML (its aliases expand to {size[id(root)]:,} nodes from "
                         f"{literal:,}; at most {limit:,} may come from aliases).")


def _shape_error(display: str, node: yaml.Node, problem: str) -> YamlError:
    mark = node.start_mark
    return YamlError(f"{display}, line {mark.line + 1}, column {mark.column + 1}: malformed YAML ({problem}).")


def read_yaml(path: Path, display: str) -> Any:
    """Parse one YAML file with the safe loader; malformed or hostile YAML is a ``YamlError``."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise YamlError(f"{display}: cannot read the file ({exc.strerror}).") from None
    text = decode_yaml(data, display)
    loader = _SuiteLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_shape(node, display)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f", line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise YamlError(f"{display}{where}: malformed YAML ({one_line(problem, 200)}).") from None
    except RecursionError:  # the pure-Python composer (no libyaml) recurses while parsing
        raise YamlError(f"{display}: malformed YAML (nested more than {MAX_DEPTH} levels deep).") from None
    finally:
        loader.dispose()
