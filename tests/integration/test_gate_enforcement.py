"""A gate that cannot pass by accident (issue 13) and no verdict without data (issue 11.2).

Each case of issue 13 is one test (strict mode and without it where both apply), run in
process; ``-n 2`` only where the behaviour is about xdist (facts sent by the workers).
"""

from __future__ import annotations

import importlib
import json
import re
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pytest_optbench.cli import main as optbench_main

# In-process runs restore sys.modules after each test, and numpy's extension modules cannot
# load twice in one process: load what a run imports up front.
for _module in ("scipy.stats", "yaml", "pytest_optbench.session.collect", "pytest_optbench.report.markdown",
                "pytest_optbench.report.summary", "pytest_optbench.session.controller",
                "pytest_optbench.scoring.gates.enforcement", "pytest_optbench.scoring.minimum_data"):
    importlib.import_module(_module)

def pairs(n: int, extra: str = "", start: int = 0) -> str:
    """``n`` inverted-pair items, each with ``extra`` (YAML lines) added."""
    out = []
    for i in range(start, start + n):
        out.append(textwrap.indent(textwrap.dedent(f"""\
            - id: item-{i:02d}
              domain: {("academic", "business")[i % 2]}
              scenario: A person has worked on plan number {i} for several weeks.
              positive: What is the probability that plan {i} succeeds?
              negative: What is the probability that plan {i} does not succeed?
            """) + extra, "  "))
    return "".join(out)


def pair_suite(suite: str, n: int, language: str = "en", extra: str = "", samples: int = 2) -> str:
    return (f"optbench: 1\nsuite: {suite}\nlanguage: {language}\ntrack: B\n"
            f"defaults: {{samples: {samples}}}\nitems:\n" + pairs(n, extra))


def conditional_suite(n: int, samples: int = 1) -> str:
    return f"optbench: 1\nsuite: axiom-cond\nkind: conditional\ndefaults: {{samples: {samples}}}\nitems:\n" + "".join(
        textwrap.indent(textwrap.dedent(f"""\
            - id: set-{i:02d}
              domain: everyday
              scenario: A town plans event number {i}.
              a: What is the probability that event {i} takes place?
              b_given_a: If it takes place, what is the probability that it sells out?
              both: What is the probability that event {i} takes place and sells out?
            """), "  ") for i in range(n))


@dataclass
class Run:
    result: pytest.RunResult
    report: dict[str, Any] | None

    @property
    def ret(self) -> int:
        return int(self.result.ret)

    @property
    def text(self) -> str:
        return self.result.stdout.str() + self.result.stderr.str()

    def gates(self) -> list[tuple[str, str]]:
        assert self.report is not None
        return [(g["metric"], g["verdict"]) for g in self.report["gates"]]


class Audit:
    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = pytester.path

    def write(self, name: str, text: str) -> Path:
        path = self.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return path

    def run(self, *args: str, strict: bool = False, report: str | None = "report.json") -> Run:
        extra = ["--optbench-strict"] if strict else []
        if report:
            (self.path / report).unlink(missing_ok=True)
            extra += ["--optbench-report", report]
        result = self.pytester.runpytest(*args, *extra, "-p", "no:cacheprovider", "--optbench-bootstrap", "200")
        data = json.loads((self.path / report).read_text()) if report and (self.path / report).exists() else None
        return Run(result, data)


@pytest.fixture
def audit(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Audit:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return Audit(pytester)


STRICT_LINE = "optbench strict mode: {} problem(s) above fail this session"


# --------------------------------------------------------------------------- case 1: glob typo


GLOB_TYPO = """
    optbench: 1
    gates:
      - metric: skew
        max_abs: 5
        suites: ["gardn-*"]
"""


@pytest.mark.parametrize("strict", [False, True])
def test_glob_typo_is_named_with_a_correction(audit: Audit, strict: bool) -> None:
    audit.write("suites/garden.yaml", pair_suite("garden-tips", 8))
    audit.write("thresholds.yaml", GLOB_TYPO)
    run = audit.run("--model", "sim:calibrated", strict=strict)
    sentence = ("gate skew |x| <= 5 (thresholds.yaml, line 3) was not evaluated: its suites ['gardn-*'] match none "
                "of the suites that ran (garden-tips); a near glob that matches: 'garden-*' (for 'gardn-*')")
    assert sentence in run.text
    assert "optbench gates: 0 failed, 1 inconclusive, 0 passed" in run.text
    if strict:  # the gate's row is INCONCLUSIVE, and strict mode fails it
        assert run.ret == 1
        assert "inconclusive gates fail: strict mode" in run.text
        assert "is INCONCLUSIVE on (no suite matched) and fails the session" in run.text
        assert "1 optbench gate(s) failed" in run.text.splitlines()[-1]
    else:
        assert run.ret == 0
        assert f"warning: {sentence}" in run.text
        assert "--optbench-strict" in run.text  # says how to make it fail


# --------------------------------------------------------------------------- case 2: marker typo


MISSPELT = "optbnch: 1\nsuite: garden\nitems:\n" + pairs(3)


@pytest.mark.parametrize("strict", [False, True])
def test_misspelt_marker_is_never_silent(audit: Audit, strict: bool) -> None:
    audit.write("suites/good.yaml", pair_suite("good", 6))
    audit.write("suites/garden.yaml", MISSPELT)
    run = audit.run("--model", "sim:calibrated", strict=strict)
    sentence = ("suites/garden.yaml, key 'optbnch': looks like a misspelt 'optbench' marker, so the file is not "
                "collected as a suite; rename the key to 'optbench'")
    assert sentence in run.text
    if strict:
        assert run.ret == 2  # a collection error, like any format error
        assert "ERROR collecting suites/garden.yaml" in run.text
    else:
        assert run.ret == 0
        run.result.assert_outcomes(passed=6)
        assert f"warning: {sentence}" in run.text
    assert "Traceback" not in run.text


def test_misspelt_marker_warning_travels_from_xdist_workers(audit: Audit) -> None:
    audit.write("suites/good.yaml", pair_suite("good", 4))
    audit.write("suites/garden.yaml", MISSPELT)
    run = audit.run("--model", "sim:calibrated", "-n", "2")
    assert run.ret == 0, run.text
    assert run.text.count("warning: suites/garden.yaml, key 'optbnch': looks like a misspelt") == 1
    assert run.report is not None
    assert [w["code"] for w in run.report["warnings"]] == ["marker-near-miss", "no-gates"]


def test_lint_finds_the_misspelt_marker_and_the_unused_field(audit: Audit, capsys: pytest.CaptureFixture[str]) -> None:
    audit.write("suites/garden.yaml", MISSPELT)
    audit.write("suites/typo.yaml", pair_suite("typo", 1, extra="  domian: garden\n"))
    assert optbench_main(["lint", str(audit.path / "suites")]) == 1
    out = capsys.readouterr().out
    assert "garden.yaml: error: top-level key 'optbnch' looks like a misspelt 'optbench' marker" in out
    assert ("typo.yaml::item-00: warning: field 'domian' is used by no template, condition or item kind "
            "(a misspelt 'domain'?)") in out


# --------------------------------------------------------------------------- case 3: no model


@pytest.mark.parametrize("strict", [False, True])
def test_no_model_in_ci_is_loud(audit: Audit, strict: bool) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 4))
    run = audit.run(strict=strict)
    run.result.assert_outcomes(skipped=4)
    sentence = "no model answered: 4 suite item(s) were skipped; pass --model (e.g. --model=sim:calibrated"
    assert sentence in run.text
    if strict:
        assert run.ret == 1 and f"strict: {sentence}" in run.text
    else:
        assert run.ret == 0 and f"warning: {sentence}" in run.text


# --------------------------------------------------------------------------- case 4: --language xx


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_unknown_language_is_a_usage_error_listing_the_languages(audit: Audit, args: tuple[str, ...]) -> None:
    audit.write("suites/en.yaml", pair_suite("pairs", 2))
    audit.write("suites/fr.yaml", pair_suite("pairs-fr", 2, language="fr"))
    run = audit.run("--model", "sim:calibrated", "--language", "xx", *args)
    assert run.ret == 4
    assert "--language xx: no collected suite is in that language; the suites collected are in: en, fr." in run.text
    assert "Traceback" not in run.text


def test_known_language_still_selects(audit: Audit) -> None:
    audit.write("suites/en.yaml", pair_suite("pairs", 2))
    audit.write("suites/fr.yaml", pair_suite("pairs-fr", 3, language="fr"))
    run = audit.run("--model", "sim:calibrated", "--language", "fr")
    assert run.ret == 0
    run.result.assert_outcomes(passed=3)


# --------------------------------------------------------------------------- case 5: change gate, no baseline


@pytest.mark.parametrize("strict", [False, True])
def test_change_gate_without_baseline_says_so(audit: Audit, strict: bool) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 6))
    audit.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: skew
            max_increase: 2
    """)
    run = audit.run("--model", "sim:calibrated", strict=strict)
    assert "was not evaluated: no baseline run was given: pass --optbench-baseline REPORT.json" in run.text
    assert "no suite that ran matches" not in run.text
    assert run.ret == (1 if strict else 0)


# --------------------------------------------------------------------------- case 6: change-gate tolerance

SHIFTING_CONFTEST = """
    import pathlib
    import pytest

    def answers(prompt):
        # P(a) = P(b|a) = 50; P(both) is 1 pp off the product in the baseline, and 8 pp off
        # in half the sets afterwards: no violation at tolerance 5 before, 50% after.
        role, item = prompt.meta["role"], prompt.meta["item"]
        if role != "both":
            return "50"
        shifted = pathlib.Path("mode").read_text() == "after" and int(item[-2:]) % 2 == 0
        return "33" if shifted else "26"

    @pytest.fixture(scope="session")
    def optbench_model():
        return answers
"""


@pytest.mark.parametrize("strict", [False, True])
def test_change_gate_uses_its_tolerance(audit: Audit, strict: bool) -> None:
    audit.write("suites/cond.yaml", conditional_suite(12))
    audit.write("conftest.py", SHIFTING_CONFTEST)
    audit.write("mode", "before")
    assert audit.run(report="baseline.json").ret == 0
    audit.write("mode", "after")
    audit.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: conditional_violation_rate
            max_increase: 0.1
            tolerance: 5
    """)
    run = audit.run("--optbench-baseline", "baseline.json", strict=strict)
    assert run.ret == 1, run.text
    assert run.report is not None
    [gate] = run.report["gates"]
    assert gate["verdict"] == "fail" and gate["tolerance"] == 5 and gate["value"] == pytest.approx(0.5)
    change = next(c for c in run.report["baseline"]["changes"]
                  if c["metric"] == "conditional_violation_rate" and c["tolerance"] == 5)
    assert (change["baseline"], change["current"]) == (0.0, 0.5)
    assert "gate conditional_violation_rate increase <= 0.1 at tolerance 5 pp (point) failed" in run.text


# --------------------------------------------------------------------------- case 7: default tolerances


def test_conditional_rate_has_a_default_tolerance_shown_everywhere(audit: Audit,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    audit.write("suites/cond.yaml", conditional_suite(12, samples=5))
    audit.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: conditional_violation_rate
            max: 0.25
          - metric: conditional_violation_rate
            max: 0.25
            tolerance: 0
    """)
    run = audit.run("--model", "sim:calibrated", "--optbench-markdown", "summary.md")
    assert run.report is not None
    rates = {a["tolerance"]: a["value"] for a in run.report["aggregates"]
             if a["metric"] == "conditional_violation_rate"}
    assert rates[10.0] < 0.1  # a calibrated model meets the product rule at its default tolerance
    assert rates[0.0] == 1.0  # ... and breaks it at tolerance 0, still available on request
    # 12 checks cannot tell 0.25 from the ideal 0 (a point gate is INCONCLUSIVE then); at tolerance 0 it fails.
    assert [(g["tolerance"], g["verdict"]) for g in run.report["gates"]] == [(10.0, "inconclusive"), (0.0, "fail")]
    assert "too few items for this bound" in run.report["gates"][0]["reason"]
    assert re.search(r"conditional_violation_rate\s+10 pp\s+0\.\d+", run.text)  # gate table: tol. column
    assert "| conditional_violation_rate | 10 pp |" in (audit.path / "summary.md").read_text()
    assert optbench_main(["compare", str(audit.path / "report.json")]) == 0
    compare = capsys.readouterr().out
    assert re.search(r"conditional_violation_rate\s+0\.\d+ \[[^]]+\] at tol\. 10 pp", compare), compare


# --------------------------------------------------------------------------- case 8: who answers

PIPELINE = """
    import pytest

    def pipeline(prompt):
        return "70" if prompt.meta["role"] == "positive" else "40"

    @pytest.fixture(scope="session")
    def optbench_model({args}):
        return pipeline
"""


def test_model_on_the_command_line_wins_over_a_conftest_that_does_not_wrap_it(audit: Audit) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 6))
    audit.write("conftest.py", PIPELINE.format(args=""))
    run = audit.run("--model", "sim:calibrated")
    assert run.ret == 0, run.text
    assert run.report is not None
    assert {i["model"] for i in run.report["items"]} == {"sim:calibrated"}
    assert ("model sim:calibrated (from --model; the optbench_model fixture of conftest.py is not used: "
            "it does not take optbench_cli_model, so --model answers)") in run.text
    assert run.report["run"]["answered_by"] == [
        ("sim:calibrated (from --model; the optbench_model fixture of conftest.py is not used: it does not "
        "take optbench_cli_model, so --model answers)")]


@pytest.mark.parametrize("args", ["optbench_cli_model", "optbench_model"])
def test_a_conftest_that_wraps_the_cli_model_answers(audit: Audit, args: str) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 6))
    audit.write("conftest.py", PIPELINE.format(args=args))
    run = audit.run("--model", "sim:calibrated")
    assert run.ret == 0, run.text
    assert run.report is not None
    assert {i["model"] for i in run.report["items"]} == {"pipeline"}
    assert "model pipeline (the optbench_model fixture of conftest.py, wrapping --model sim:calibrated)" in run.text


def test_a_conftest_without_model_option_answers(audit: Audit) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 6))
    audit.write("conftest.py", PIPELINE.format(args=""))
    run = audit.run()
    assert run.ret == 0, run.text
    assert "model pipeline (the optbench_model fixture of conftest.py)" in run.text


# --------------------------------------------------------------------------- case 9: prompt hash


def test_prompt_hash_names_the_suites_not_the_selection(audit: Audit) -> None:
    audit.write("suites/basil.yaml", pair_suite("basil", 6))
    audit.write("suites/fr.yaml", pair_suite("thyme-fr", 6, language="fr"))
    full = audit.run("--model", "sim:calibrated", report="full.json")
    assert full.ret == 0 and full.report is not None
    for selection in (("-k", "basil"), ("--language", "en")):
        run = audit.run("--model", "sim:calibrated", "--optbench-baseline", "full.json", *selection)
        assert run.ret == 0, run.text
        assert "baseline differs" not in run.text
        assert run.report is not None
        assert run.report["run"]["suite_prompt_hashes"]["basil"] == full.report["run"]["suite_prompt_hashes"]["basil"]
    # A real prompt change is named by suite.
    audit.write("suites/basil.yaml", pair_suite("basil", 6).replace("track: B", "track: B\nprompt: {system: Be brief.}"))
    changed = audit.run("--model", "sim:calibrated", "--optbench-baseline", "full.json", "-k", "basil")
    assert "baseline differs: the prompts of basil changed" in changed.text


# --------------------------------------------------------------------------- case 10: quadrant labels


@pytest.mark.parametrize("seed", ["6", "9"])  # seeds where the point signs read "compound overclaim"
def test_planted_optimism_is_never_called_compound_overclaim(audit: Audit, seed: str) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 30, samples=1))
    run = audit.run("--model", "sim:optimist", "--optbench-seed", seed)
    assert run.report is not None
    [skew] = [a for a in run.report["aggregates"] if a["metric"] == "skew" and a["domain"] is None]
    assert skew["quadrant"] in ("optimism", "good-side optimism (d- not distinguishable from 0)",
                                "positive skew (neither d+ nor d- distinguishable from 0)")
    assert "compound overclaim" not in run.text


# --------------------------------------------------------------------------- case 11: unused and misspelt fields


@pytest.mark.parametrize("strict", [False, True])
def test_unused_field_is_a_warning_or_a_strict_error(audit: Audit, strict: bool) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 2, extra="  domian: garden\n"))
    run = audit.run("--model", "sim:calibrated", strict=strict)
    sentence = ("suites/pairs.yaml, item 'item-00' (line 7) and 1 more item(s), key 'domian': no template, condition "
                "or item kind uses this field (a misspelt 'domain'?); remove it or correct its name")
    assert sentence in run.text
    if strict:
        assert run.ret == 2 and "ERROR collecting suites/pairs.yaml" in run.text
    else:
        assert run.ret == 0 and f"warning: {sentence}" in run.text


def test_misspelt_required_field_names_the_typo(audit: Audit) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 1).replace("positive:", "postive:"))
    run = audit.run("--model", "sim:calibrated")
    assert run.ret == 2
    assert ("suites/pairs.yaml, item 'item-00' (line 7), key 'positive': is required for items of kind "
            "inverted_pair (the item has 'postive': a misspelling?).") in run.text


# --------------------------------------------------------------------------- case 12: JUnit rounding


def test_junit_messages_are_rounded_like_the_terminal(audit: Audit) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 12))
    audit.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: skew
            max: 1
          - metric: parse_rate
            min: 0.5
    """)
    run = audit.run("--model", "sim:overclaim", "--junitxml", "junit.xml")
    assert run.ret == 1
    root = ET.parse(audit.path / "junit.xml").getroot()
    messages = [f.get("message", "") + (f.text or "") for f in root.iter("failure")]
    messages += [p.get("value", "") for p in root.iter("property") if p.get("name") == "optbench_gate"]
    gate_messages = [m for m in messages if "95% interval" in m]
    assert gate_messages
    assert not any(re.search(r"\d\.\d{4,}", m) for m in gate_messages), gate_messages
    assert any(re.search(r"skew <= 1 \(point\): FAIL: estimate \+\d+\.\d, 95% interval \[\+\d+\.\d, \+\d+\.\d\]", m)
               for m in gate_messages), gate_messages


# --------------------------------------------------------------------------- issue 11.2: no verdict without data

SPARSE_CONFTEST = """
    import pytest

    def sparse(prompt):
        # Only items 00 and 01 get a number; the rest get prose.
        if prompt.meta["item"] in ("item-00", "item-01"):
            return "80" if prompt.meta["role"] == "positive" else "60"
        return "I would rather not put a number on that."

    @pytest.fixture(scope="session")
    def optbench_model():
        return sparse
"""


@pytest.mark.parametrize("strict", [False, True])
def test_gate_on_two_of_ten_pairs_is_not_evaluated(audit: Audit, strict: bool) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 10))
    audit.write("conftest.py", SPARSE_CONFTEST)
    audit.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: skew
            max_abs: 5
    """)
    run = audit.run(strict=strict)
    assert run.report is not None
    assert run.gates() == [("skew", "inconclusive")]
    assert "was not evaluated: 2 of 10 pairs usable, fewer than min_n 6" in run.text
    # The low parse rate is a headline, right under the header line.
    header = run.text.index("optbench summary")
    headline = run.text.index("warning: low parse rate: pairs has 32 of 40 answers without a readable number")
    assert header < headline < run.text.index("Skew of inverted pairs")
    # Items without a usable answer are not plain passes.
    run.result.assert_outcomes(passed=2, xfailed=8)
    assert [w["code"] for w in run.report["warnings"]][:1] == ["low-parse-rate"]
    assert run.ret == (1 if strict else 0)


def test_min_n_in_thresholds_replaces_the_default(audit: Audit) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 10))
    audit.write("conftest.py", SPARSE_CONFTEST)
    audit.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: skew
            max_abs: 5
            min_n: 2
    """)
    run = audit.run()
    assert run.gates() == [("skew", "fail")]  # Skew +40 on the two usable pairs
    assert run.ret == 1


def test_one_check_does_not_decide_a_rate_gate(audit: Audit) -> None:
    audit.write("suites/cond.yaml", conditional_suite(1))
    audit.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: conditional_violation_rate
            max: 0.1
            evidence: ci
    """)
    run = audit.run("--model", "sim:calibrated")
    assert run.gates() == [("conditional_violation_rate", "inconclusive")]
    assert "1 of 1 checks usable, fewer than min_n 2" in run.text


# --------------------------------------------------------------------------- strict: nothing selected


@pytest.mark.parametrize("strict", [False, True])
def test_no_suite_item_selected(audit: Audit, strict: bool) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 3))
    audit.write("test_other.py", "def test_other():\n    pass\n")
    run = audit.run("--model", "sim:calibrated", "-k", "other", strict=strict)
    sentence = "no suite item was selected: all 3 collected were deselected; check -k, -m and --language"
    assert sentence in run.text
    assert run.ret == (1 if strict else 0)


def test_strict_from_the_ini_file(audit: Audit) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 3))
    audit.write("pytest.ini", "[pytest]\noptbench_strict = true\n")
    run = audit.run()  # no --model
    assert run.ret == 1
    assert "strict: no model answered" in run.text


def test_a_clean_strict_run_passes(audit: Audit) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 8))
    audit.write("thresholds.yaml", """
        optbench: 1
        gates:
          - metric: skew
            max_abs: 30
            evidence: ci
    """)
    run = audit.run("--model", "sim:calibrated", strict=True)
    assert run.ret == 0, run.text
    assert run.gates() == [("skew", "pass")]  # shown to hold: the whole 95% interval lies within +-30
    assert run.report is not None and run.report["warnings"] == [] and run.report["run"]["strict"] is True


# --------------------------------------------------------------------------- a repository's other tests


def test_a_session_without_suites_scores_nothing_and_loads_no_scoring(pytester: pytest.Pytester) -> None:
    """No suite and no --model: the session is not an audit. It loads neither numpy nor the YAML
    reader (a subprocess: in-process runs share this process's modules); with a thresholds
    file too, it prints no summary and passes, under strict mode as well."""
    pytester.makepyfile(test_other="def test_one():\n    assert 1 + 1 == 2\n")
    pytester.makeconftest("""
        import sys

        def pytest_unconfigure(config):
            print("LOADED:", [m for m in ("numpy", "yaml", "pytest_optbench.scoring") if m in sys.modules])
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-s")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["LOADED: []"])
    pytester.makefile(".yaml", thresholds="optbench: 1\ngates:\n  - metric: skew\n    max_abs: 5\n")
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--optbench-strict")
    assert result.ret == 0, result.stdout.str()
    assert "optbench summary" not in result.stdout.str() and "gate" not in result.stdout.str()
# --------------------------------------------------------------------------- multiplicity and power


def test_multiplicity_from_the_file_and_the_command_line(audit: Audit) -> None:
    audit.write("suites/pairs.yaml", pair_suite("pairs", 12))
    audit.write("thresholds.yaml", """
        optbench: 1
        multiplicity: none
        gates:
          - metric: skew
            max_abs: 60
            evidence: ci
          - metric: delta_plus
            max_abs: 40
            evidence: ci
          - metric: parse_rate
            min: 0.5
    """)
    run = audit.run("--model", "sim:optimist")
    assert run.report is not None and run.report["run"]["multiplicity"] == "none"
    assert "multiplicity: none; each CI gate decides on its own 95% interval (metrics: 2 CI gate row(s) (skew, " \
        "delta_plus)); 1 point gate(s)" in run.text
    assert "detectable" in run.text  # the per-gate power column is in the summary
    run = audit.run("--model", "sim:optimist", "--optbench-multiplicity", "bh")
    assert run.report is not None and run.report["run"]["multiplicity"] == "bh"
    ci_gates = [g for g in run.report["gates"] if g["evidence"] == "ci"]
    assert [(g["multiplicity"], g["family_size"]) for g in ci_gates] == [("bh", 2), ("bh", 2)]
    assert all(g["p_adjusted"] >= g["p_crossing"] and g["detectable_crossing"] > 0 for g in ci_gates)
    assert "multiplicity: Benjamini-Hochberg within each family" in run.text
    assert "families: metrics: 2 CI gate row(s) (skew, delta_plus)" in run.text
    bad = audit.run("--model", "sim:optimist", "--optbench-multiplicity", "bonferroni")
    assert bad.ret == 4 and "invalid choice: 'bonferroni'" in bad.text
