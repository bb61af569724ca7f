"""docs/options.md lists every command-line option the plugin declares (two branches once each
added an option and only one of them documented it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest_optbench.options

ROOT = Path(__file__).resolve().parents[2]


def test_every_option_is_in_the_options_page() -> None:
    declared = re.findall(r'addoption\(\s*"(--[a-z-]+)"', Path(pytest_optbench.options.__file__).read_text("utf-8"))
    page = (ROOT / "docs" / "options.md").read_text("utf-8")
    assert len(declared) > 20 and [o for o in declared if f"`{o}" not in page and f", {o}" not in page] == []
