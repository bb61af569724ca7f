"""--optbench-shard I/N, optbench merge and optbench gate end to end: four CI-like shard runs
of bundled suites, merged and gated, give the aggregates, verdicts and exit code of one serial
run of the same answers."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import yaml

from conftest import pair_suite
from pytest_optbench.cli import main as optbench_main

REPO = Path(__file__).resolve().parents[2]
# The first items of four bundled suites: enough for the Skew gate to fail and every kind to
# be sharded, few enough that the seven runs below stay quick.
SUITES = {"track_b.yaml": 16, "conjunction.yaml": 12, "dose_response.yaml": 8, "known_answers.yaml": 40}


def pytest_run(pytester: pytest.Pytester, report: Path, *args: str) -> pytest.RunResult:
    """In this process (the integration conftest preloads what scoring imports), as every
    end-to-end case runs; an xdist shard's workers are processes of their own anyway."""
    return pytester.runpytest_inprocess(
        "suites", "--model", "sim:optimist", "--optbench-report", str(report), "--optbench-bootstrap", "300",
        "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:benchmark", "-q", *args)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, preloaded: None) -> dict[str, object]:
    """One serial run and four shard runs (the third with -n 2) in one directory."""
    root = tmp_path_factory.mktemp("shards")
    (root / "suites").mkdir()
    for name, count in SUITES.items():
        suite = yaml.safe_load((REPO / "suites" / "en" / name).read_text(encoding="utf-8"))
        suite["items"] = suite["items"][:count]
        (root / "suites" / name).write_text(yaml.safe_dump(suite, allow_unicode=True), encoding="utf-8")
    shutil.copy(REPO / "thresholds.yaml", root / "thresholds.yaml")
    return {"root": root}


def run_here(pytester: pytest.Pytester, root: Path, report: str, *args: str) -> tuple[pytest.RunResult, dict]:
    for name in ("suites", "thresholds.yaml"):
        if not (pytester.path / name).exists():
            source = root / name
            (shutil.copytree if source.is_dir() else shutil.copy)(source, pytester.path / name)
    result = pytest_run(pytester, pytester.path / report, *args)
    return result, json.loads((pytester.path / report).read_text())


def keys(report: dict) -> set[tuple[str, str, str]]:
    return {(i["suite"], i["item"], i["condition"]) for i in report["items"]}


def test_four_shards_merged_and_gated_equal_a_serial_run(pytester, runs, capsys, monkeypatch):
    root = runs["root"]
    serial, serial_report = run_here(pytester, root, "serial.json")
    assert serial.ret == 1  # sim:optimist fails the Track B skew gate
    shard_reports = []
    for index in range(1, 5):
        extra = ("-n", "2") if index == 3 else ()
        result, report = run_here(pytester, root, f"shard{index}.json", "--optbench-shard", f"{index}/4", *extra)
        assert result.ret in (0, 1), result.stdout.str()
        assert report["run"]["shard"]["index"] == index and report["run"]["shard"]["count"] == 4
        shard_reports.append(report)

    # disjoint, complete, whole items (every condition of an item in one shard), balanced by answers
    parts = [keys(r) for r in shard_reports]
    assert sum(len(p) for p in parts) == len(keys(serial_report)) and set().union(*parts) == keys(serial_report)
    owners: dict[tuple[str, str], int] = {}
    for number, part in enumerate(parts):
        for suite, item, _ in part:
            assert owners.setdefault((suite, item), number) == number
    answers = [r["run"]["shard"]["answers"] for r in shard_reports]
    assert max(answers) - min(answers) <= 8 * 5 * 2  # at most one item's worth (8 arms x 5 samples x 2 prompts)
    assert len({r["run"]["shard"]["selection"] for r in shard_reports}) == 1

    # merge + gate == the serial session
    step_summary = pytester.path / "step-summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step_summary))
    monkeypatch.chdir(pytester.path)
    paths = [f"shard{i}.json" for i in (3, 1, 4, 2)]  # any order
    assert optbench_main(["merge", *paths, "--output", "all.json"]) == 0
    assert "holds" in capsys.readouterr().out
    code = optbench_main(["gate", "all.json", "--output", "gated.json", "--junitxml", "gates.xml",
                          "--markdown", "summary.md"])
    out = capsys.readouterr().out
    assert code == serial.ret == 1
    gated = json.loads((pytester.path / "gated.json").read_text())
    assert gated["aggregates"] == serial_report["aggregates"]
    assert gated["gates"] == serial_report["gates"]
    assert gated["languages"] == serial_report["languages"]
    assert gated["items"] == sorted(serial_report["items"], key=lambda i: (i["suite"], i["item"], i["condition"]))
    assert gated["run"]["prompt_hash"] == serial_report["run"]["prompt_hash"]
    assert gated["run"]["merge"]["complete"] is True and gated["run"]["merge"]["shards"] == 4
    assert "optbench summary" in out and "gate skew |x| <= 5 (ci) failed on track-b-probability/base" in out
    assert "exit code 1" in out
    assert step_summary.read_text() == (pytester.path / "summary.md").read_text()
    suite = ET.parse(pytester.path / "gates.xml").getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert int(suite.get("tests")) == len(cases) == len(gated["items"]) + len(gated["gates"])
    assert int(suite.get("failures")) == sum(g["verdict"] == "fail" for g in gated["gates"]) > 0

    # the third shard ran with -n 2: the same records as a serial run of that shard
    again, report = run_here(pytester, root, "shard3-serial.json", "--optbench-shard", "3/4")
    assert again.ret in (0, 1)
    assert report["items"] == shard_reports[2]["items"]
    assert report["aggregates"] == shard_reports[2]["aggregates"]


def test_merge_names_what_differs_or_is_missing(pytester, runs, capsys, monkeypatch):
    root = runs["root"]
    for index in (1, 2):
        run_here(pytester, root, f"s{index}.json", "--optbench-shard", f"{index}/3")
    run_here(pytester, root, "seed.json", "--optbench-shard", "3/3", "--optbench-seed", "7")
    run_here(pytester, root, "other.json", "--optbench-shard", "2/3", "-k", "not known")
    monkeypatch.chdir(pytester.path)
    capsys.readouterr()  # what the runs printed

    def merge(*paths: str) -> tuple[int, str]:
        code = optbench_main(["merge", *paths, "--output", "m.json"])
        captured = capsys.readouterr()
        return code, (captured.out + captured.err).strip()

    code, text = merge("s1.json", "s2.json")
    assert code == 2 and text == "optbench merge: shard 3/3 is missing: merge all 3 shards of the run."
    code, text = merge("s1.json", "s2.json", "s2.json")
    assert code == 2 and text == "optbench merge: shard 2/3 is given twice (s2.json and s2.json)."
    code, text = merge("s1.json", "s2.json", "seed.json")
    assert code == 2 and "differs from s1.json in seed (7 vs 0)" in text
    code, text = merge("s1.json", "other.json")
    assert code == 2 and "ran another selection" in text
    assert "Traceback" not in text
    code = optbench_main(["gate", "missing.json"])
    assert code == 4 and "cannot read the report" in capsys.readouterr().err


def test_more_shards_than_items_leaves_empty_shards_that_pass_and_merge(pytester, preloaded, capsys, monkeypatch):
    (pytester.path / "suites").mkdir()
    (pytester.path / "suites" / "pairs.yaml").write_text(pair_suite(n=2))
    codes = []
    for index in range(1, 4):
        result = pytester.runpytest_inprocess(
            "suites", "--model", "sim:calibrated", "--optbench-shard", f"{index}/3", "--optbench-report",
            f"p{index}.json", "--optbench-bootstrap", "200", "-p", "no:cacheprovider")
        codes.append(result.ret)
    assert codes == [0, 0, 0]
    reports = [json.loads((pytester.path / f"p{i}.json").read_text()) for i in range(1, 4)]
    assert sorted(len(r["run"]["shard"]["assigned"]) for r in reports) == [0, 1, 1]
    monkeypatch.chdir(pytester.path)
    capsys.readouterr()
    assert optbench_main(["merge", "p1.json", "p2.json", "p3.json", "--output", "all.json"]) == 0
    assert optbench_main(["gate", "all.json"]) == 0
    assert "2 item results scored" in capsys.readouterr().out
