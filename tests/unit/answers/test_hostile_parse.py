"""Bug 9 of issue 15: a reply of 40 kB of digits is "no answer" with a reason, within a bounded
number of steps (the parser reads in linear time). The bound is CPU time in a child process,
not the wall clock of this one."""

from __future__ import annotations

import pytest
from _limits import run_limited


@pytest.mark.parametrize("reply", ["7" * 40_000, "5" * 20_000 + " percent", "1." + "0" * 30_000])
def test_a_long_reply_of_digits_is_no_answer_within_bounded_steps(reply):
    status, result, stderr = run_limited(f"""
        import json
        from pytest_optbench.answers.parse import parse_answer
        result = parse_answer({reply!r})
        print(json.dumps([result.value, result.reason]))
    """, cpu_seconds=5, memory_mb=1000)
    assert status == 0, f"status {status} (SIGXCPU is -24): {stderr}"
    value, reason = result
    assert value is None and reason
