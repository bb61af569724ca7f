"""Command-line values a careless user or a script can give: each is one sentence and exit 4
before anything runs (a typo must not ask for 50 million answers or resample for days)."""

from __future__ import annotations

import pytest
import scipy.stats  # noqa: F401 - pytester's in-process runs drop what they import; numpy's C parts cannot load twice

SUITE = """
optbench: 1
suite: demo
items:
  - id: plan-01
    scenario: A team has planned a product launch for months.
    positive: What is the probability that the launch succeeds?
    negative: What is the probability that the launch does not succeed?
"""


@pytest.fixture
def run(pytester: pytest.Pytester):
    pytester.makefile(".yaml", suite=SUITE)

    def go(*args: str) -> tuple[int, str]:
        result = pytester.runpytest("-p", "no:cacheprovider", *args)
        return int(result.ret), result.stdout.str() + result.stderr.str()

    return go


@pytest.mark.parametrize(("args", "message"), [
    (["--samples", "50000000"], "argument --samples: must be at most 1000, got 5e+07"),
    (["--optbench-bootstrap", "2000000000"], "argument --optbench-bootstrap: must be at most 100000, got 2e+09"),
    (["--concurrency", "100000"], "argument --concurrency: must be at most 1024, got 100000"),
    (["--max-tokens", "0"], "argument --max-tokens: must be at least 1, got 0"),
    (["--optbench-retries", "-1"], "argument --optbench-retries: must be at least 0, got -1"),
    (["--optbench-timeout", "inf"], "argument --optbench-timeout: must be at most 604800, got inf"),
    (["--optbench-timeout", "nan"], "argument --optbench-timeout: must be a number, got 'nan'"),
    (["--temperature", "nan"], "argument --temperature: must be a number, got 'nan'"),
    (["--optbench-deadline", "0"], "argument --optbench-deadline: must be above 0, got 0"),
    (["--optbench-seed", "9" * 5000], "argument --optbench-seed: must be a whole number, got '9999999999"),
])
def test_out_of_range_values_are_one_sentence(run, args, message):
    status, text = run("--model", "sim:calibrated", *args)
    assert status == 4
    assert message in text
    assert "Traceback" not in text and "9" * 100 not in text


@pytest.mark.parametrize(("spec", "message"), [
    ("sim:optimist?noise_sd=-5", "parameter 'noise_sd' in 'sim:optimist?noise_sd=-5' must be from 0 to 100, got -5"),
    ("sim:optimist?refusal_rate=1.5", "parameter 'refusal_rate' in 'sim:optimist?refusal_rate=1.5' must be from 0 to 1"),
    ("sim:optimist?delta_plus=nan", "parameter 'delta_plus' in 'sim:optimist?delta_plus=nan' must be from -100 to 100"),
    ("sim:optimist?binary_sharpness=1e300", "must be from 0 to 10, got 1e300"),
    ("sim:calibrated?refusal_rate=0.6&prose_refusal_rate=0.6", "refusal_rate + prose_refusal_rate"),
])
def test_simulated_model_parameters_are_checked_at_start_up(run, spec, message):
    status, text = run("--model", spec)
    assert status == 4  # before: every call failed, one FAILED line per item
    assert message in text
    assert "FAILED" not in text and "Traceback" not in text


def test_a_system_prompt_that_is_not_utf8_is_one_sentence(run, pytester):
    path = pytester.path / "prompt.txt"
    path.write_bytes("Réponds par un nombre.".encode("latin-1"))
    status, text = run("--model", "sim:calibrated", "--system-prompt", str(path))
    assert status == 4
    assert f"--system-prompt {path}: not UTF-8 text (invalid continuation byte at byte 1); save it as UTF-8." in text
    assert "INTERNALERROR" not in text and "Traceback" not in text


def test_a_system_prompt_that_is_a_directory_is_one_sentence(run, pytester):
    status, text = run("--model", "sim:calibrated", "--system-prompt", str(pytester.path))
    assert status == 4
    assert f"--system-prompt {pytester.path}: cannot read the file (Is a directory)." in text


def test_a_utf8_system_prompt_with_a_bom_is_read(run, pytester):
    path = pytester.path / "prompt.txt"
    path.write_bytes("\ufeffReply with one number.".encode())
    status, text = run("--model", "sim:calibrated", "--system-prompt", str(path))
    assert status == 0, text


def test_values_at_the_bounds_are_accepted(run):
    status, text = run("--model", "sim:calibrated", "--samples", "1000", "--optbench-bootstrap", "50",
                       "--concurrency", "1024", "--optbench-deadline", "600", "--optbench-timeout", "604800")
    assert status == 0, text
