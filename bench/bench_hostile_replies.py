"""Memory of whole sessions against hostile replies (issue 24), as a user runs them.

Each case is one ``python -m pytest`` subprocess in a temporary directory (a suite of 3
inverted pairs, 1 sample per prompt unless said, ``--optbench-report``), against a FakeAPI in
this process (its bodies are made while they are sent: the server holds 1 MiB at a time), and
reports the child's peak resident memory (``os.wait4``), its wall time, the response store's
and the report's sizes, and what the answers' errors say:

- normal:        ordinary replies (the reference);
- 300 MB body:   every reply body is 300 MB of JSON (a number 300 million digits long);
- 60 MiB x 6:    json mode, 2 samples, every reply's content is 60 MiB of JSON text;
- conftest 50 MB: a conftest model that returns 50 MB of digits (no server).

Run: python bench/bench_hostile_replies.py [--max-reply MB]
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

from pytest_optbench.testing import FakeAPI
from pytest_optbench.testing.server import huge_reply

CONFTEST_50MB = """
import pytest

@pytest.fixture(scope="session")
def optbench_model():
    digits = "7" * 50_000_000
    return lambda prompt: digits
"""


def suite(samples: int, elicit: str = "text") -> str:
    items = [{"id": f"item-{i}", "scenario": "A team has planned a launch for months.",
              "positive": f"What is the probability that launch {i} succeeds?",
              "negative": f"What is the probability that launch {i} fails?"} for i in range(3)]
    return yaml.safe_dump({"optbench": 1, "suite": "hostile", "defaults": {"samples": samples, "elicit": elicit},
                           "items": items})


def run(name: str, server: FakeAPI | None, samples: int, elicit: str, extra: list[str],
        conftest: str | None = None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="optbench-bench-") as tmp:
        root = Path(tmp)
        (root / "hostile.yaml").write_text(suite(samples, elicit))
        if conftest:
            (root / "conftest.py").write_text(conftest)
        args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--optbench-report", "report.json",
                "--optbench-bootstrap", "200", *extra]
        if server is not None:
            args += ["--model", "openai:fake", "--base-url", server.openai_url]
        env = {**os.environ, "OPENAI_API_KEY": "sk-bench-not-a-key"}
        started = time.perf_counter()
        proc = subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert proc.stdout is not None
        output = proc.stdout.read().decode("utf-8", "replace")
        _pid, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        seconds = time.perf_counter() - started
        store = root / ".optbench" / "responses.sqlite"
        report = root / "report.json"
        errors: set[str] = set()
        if report.exists():
            data = json.loads(report.read_text(encoding="utf-8"))
            errors = {a["error"][:110] for i in data["items"] for p in i["prompts"] for a in p["answers"]
                      if a.get("error")}
        stored = 0
        if store.exists():
            with sqlite3.connect(store) as db:
                stored = int(db.execute("SELECT count(*) FROM answers").fetchone()[0])
        return {"case": name, "exit": proc.returncode, "peak_rss_mb": round(usage.ru_maxrss / 1024),
                "seconds": round(seconds, 1), "store_mb": round(store.stat().st_size / 1e6, 2) if store.exists() else 0,
                "stored_answers": stored, "report_mb": round(report.stat().st_size / 1e6, 2) if report.exists() else 0,
                "traceback": "Traceback" in output or "INTERNALERROR" in output, "errors": sorted(errors),
                "last_line": output.strip().splitlines()[-1][:160] if output.strip() else ""}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-reply", type=float, default=None, help="--optbench-max-reply MB (default: its default)")
    args = parser.parse_args()
    extra = ["--optbench-max-reply", str(args.max_reply)] if args.max_reply else []
    results = []
    with FakeAPI() as server:
        results.append(run("normal", server, 1, "text", extra))
        server.reconfigure(mangle=lambda what, body: huge_reply(300_000_000))
        results.append(run("300 MB body", server, 1, "text", extra))
        server.reconfigure(mangle=lambda what, body: huge_reply(
            60 * 2 ** 20, head=b'{"choices": [{"index": 0, "message": {"content": "{\\"probability\\": 65, \\"p\\": \\"',
            tail=b'\\"}"}, "finish_reason": "stop"}]}', fill=b"x"))
        results.append(run("60 MiB x 6 (json)", server, 2, "json", extra))
    results.append(run("conftest 50 MB", None, 1, "text", extra, CONFTEST_50MB))
    for result in results:
        print(json.dumps(result))


if __name__ == "__main__":
    main()
