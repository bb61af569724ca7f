"""The bank table of docs/suites.md is the table the files give (``optbench bank suites``)."""

from __future__ import annotations

from pathlib import Path

from pytest_optbench.cli import main
from pytest_optbench.suite.bank import bank_markdown, bank_table
from pytest_optbench.suite.load import Suite, parse_suite

ROOT = Path(__file__).resolve().parents[3]
START, END = "<!-- bank-table:start -->\n", "<!-- bank-table:end -->"


def test_docs_bank_table_matches_the_files() -> None:
    page = (ROOT / "docs" / "suites.md").read_text(encoding="utf-8")
    shown = page[page.index(START) + len(START):page.index(END)].splitlines()
    assert shown == bank_table([ROOT / "suites"]), "run `optbench bank suites` and paste its table into docs/suites.md"


def suite(suite_id: str, language: str, n: int, arms: int = 1) -> Suite:
    conditions = {"base": {}, **{f"arm{k}": {} for k in range(1, arms)}}
    items = [{"id": f"i{k}", "scenario": f"Case {k} in {suite_id}.", "positive": "Up?", "negative": "Not up?"}
             for k in range(n)]
    return parse_suite({"optbench": 1, "suite": suite_id, "language": language, "conditions": conditions,
                        "items": items}, f"{suite_id}.yaml", suite_id)


def test_rows_are_banks_and_cells_count_items_and_arms() -> None:
    suites = [suite("pairs", "en", 3, arms=2), suite("pairs-ko", "ko", 3), suite("extra-fr", "fr", 2)]
    assert bank_markdown(suites) == [
        "| suite | en | fr | ko | all |",
        "|---|---:|---:|---:|---:|",
        "| extra-fr |  | 2 |  | 2 |",  # no English source: a bank of its own
        "| pairs | 3 x 2 |  | 3 | 6 |",
        "| **items** | 3 | 2 | 3 | **8** |",
        "| **item x arm results** | 6 | 2 | 3 | **11** |",
    ]


def test_optbench_bank_prints_the_table(tmp_path, capsys) -> None:
    (tmp_path / "a.yaml").write_text("optbench: 1\nsuite: a\nitems:\n  - {id: x, scenario: S., positive: P?, "
                                     "negative: N?}\n", encoding="utf-8")
    assert main(["bank", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines()[2] == "| a | 1 | 1 |"
