"""The README and docs/ hold no dead link: every relative link names a file that exists and,
with an anchor, a heading of that file (GitHub's anchors); every docs page is linked from the
README's table of contents; and the README stays a page a new user reads in minutes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"(?<!\!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
README_WORDS = 1500  # about five minutes of reading


def prose(text: str, inline: bool = False) -> str:
    """The text without fenced code blocks and (unless ``inline``) inline code: a link there
    is no link, a heading there no heading."""
    text = re.sub(r"^(```|~~~).*?^\1", "", text, flags=re.DOTALL | re.MULTILINE)
    return text if inline else re.sub(r"`[^`\n]*`", "", text)


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose(path.read_text(encoding="utf-8"), inline=True).splitlines():
        match = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if match:
            slug = anchor(match.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            out.add(slug if count == 0 else f"{slug}-{count}")
    return out


def links(path: Path) -> list[str]:
    text = prose(path.read_text(encoding="utf-8"))
    return [m.group(1) for m in LINK.finditer(text)] + [m.group(1) for m in IMAGE.finditer(text)]


def relative(target: str) -> bool:
    return not re.match(r"^[a-z][a-z0-9+.-]*:", target)  # http:, https:, mailto:


@pytest.mark.parametrize("page", PAGES, ids=[p.relative_to(ROOT).as_posix() for p in PAGES])
def test_every_relative_link_resolves_to_a_file_and_heading(page: Path) -> None:
    dead = []
    for target in links(page):
        if not relative(target):
            continue
        file, _, fragment = target.partition("#")
        goal = (page.parent / file).resolve() if file else page
        if not goal.exists():
            dead.append(f"{target}: no file {goal.relative_to(ROOT) if goal.is_relative_to(ROOT) else goal}")
        elif fragment and goal.suffix == ".md" and fragment not in anchors(goal):
            dead.append(f"{target}: no heading with the anchor #{fragment} in {goal.name}")
    assert dead == [], f"dead links in {page.relative_to(ROOT)}"


def test_every_docs_page_is_linked_from_the_readme() -> None:
    linked = {(ROOT / t.partition("#")[0]).resolve() for t in links(ROOT / "README.md") if relative(t)}
    unlinked = [p.name for p in PAGES[1:] if p.resolve() not in linked]
    assert unlinked == [], "add these pages to the README's table of contents"


def test_the_readme_is_short_and_keeps_the_commands_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(re.findall(r"\w+", prose(readme))) <= README_WORDS
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    # .ci/run runs the README's two commands: the audit (biased: exit 1) and the plugin's tests
    assert "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/pytest suites --model=sim:optimist" in readme
    assert ("python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/python -m pytest tests -n 2"
            in readme)
    assert "pytest suites --model=sim:optimist" in ci and "-m pytest tests -n 2" in ci
    for section in ("## Install", "## Two commands", "## Quick start", "## Documentation", "## Layout"):
        assert section in readme


def test_the_link_checker_finds_a_dead_file_and_a_dead_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Title\n\n## Gates: `thresholds.yaml`\n\n[x](b.md) [y](a.md#nope) "
                                   "[z](#gates-thresholdsyaml) `[not](a link.md)`\n```\n[no](c.md)\n```\n")
    assert links(tmp_path / "a.md") == ["b.md", "a.md#nope", "#gates-thresholdsyaml"]
    assert anchors(tmp_path / "a.md") == {"title", "gates-thresholdsyaml"}
