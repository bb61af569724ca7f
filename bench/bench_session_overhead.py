"""Session overhead: 4,000 items answered from the response store against plain pytest.

A store is first filled by one session against a FakeAPI with latency 0 (timed, for
information). Then, over a few repetitions (interleaved, so that a change in the machine's
load hits every variant alike), these ``python -m pytest -p no:cacheprovider -q``
subprocesses are timed, and their medians compared:

- optbench, store: 4,000 items (``--samples 1``) with ``--model openai:fake``, every answer
  read from the store (the server must see 0 requests);
- optbench, sim:   the same items on ``--model sim:calibrated`` (no store, no SDK), for reference;
- plain pytest:    ``@pytest.mark.parametrize("i", range(4000)) def test_x(i): pass``, with the
  plugin disabled (``-p no:optbench``) and, for reference, with it loaded but idle.

Items are 4,000 binary questions by default; ``--kind pairs`` uses 2,000 inverted pairs x 2
conditions instead (8,000 prompts: the fill takes twice as long). "startup" is the wall time
outside pytest's own "in N s" (interpreter, imports, plugin configuration). Last, one more
session of each of the two compared variants runs with bench/_phases.py loaded, to show
where the time goes: start-up, collection, the items, what runs after them (optbench:
scoring, gates, reports) and the summary and exit.

Bytecode: every variant alike runs with compiled modules cached (PYTHONDONTWRITEBYTECODE
removed, a private PYTHONPYCACHEPREFIX), as a user's sessions run; with ``--no-bytecode``
every variant alike runs with PYTHONDONTWRITEBYTECODE=1, as some containers set it, and
reads no compiled module either: each session then compiles everything it imports and
pytest rewrites every plugin's asserts again (see _harness.bench_env). The output names
the setting used.

The whole bank: ``--bank`` (on by default; ``--no-bank`` skips it) also times the first
command a newcomer runs, ``pytest suites --model=sim:optimist`` from the repository root
(its thresholds.yaml and conftest.py included), against plain pytest running as many
trivial parametrized tests (one per item x condition result) in the same venv, interleaved,
best of ``--bank-repeats`` (2) each, with CPU seconds (user + system) beside the wall times.

Run: python bench/bench_session_overhead.py [--repeats 3] [--kind binary|pairs] [--port 18732] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _harness import (
    PHASES,
    Budget,
    PytestRun,
    bench_env,
    check,
    load_average,
    log,
    run_phases,
    run_pytest,
    start_server,
    write_binary_suite,
    write_pair_suite,
)

ITEMS = 4000
PLAIN_TEST = """import pytest


@pytest.mark.parametrize("i", range({n}))
def test_x(i):
    pass
"""


def session_seconds(run: PytestRun) -> float:
    """pytest's own "in N s" (collection, tests and summary; not interpreter start-up)."""
    match = re.search(r" in ([\d.]+)s", run.tail)
    return float(match.group(1)) if match else float("nan")


REPOSITORY = Path(__file__).resolve().parents[1]
BANK_COMMAND = ["suites", "--model=sim:optimist"]


def timed_session(cwd: Path, args: list[str], bytecode: bool) -> tuple[float, float, str]:
    """(wall s, CPU s of the session's processes, pytest's last line) of ``python -m pytest ARGS``."""
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args]
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=bench_env(bytecode), capture_output=True, text=True, timeout=900,
                          check=False)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    lines = done.stdout.strip().splitlines()
    return wall, cpu, lines[-1] if lines else done.stderr[-500:]


def bank_ratio(repeats: int, bytecode: bool) -> None:
    """The full-bank simulated audit against plain pytest with as many trivial tests."""
    log("whole bank: counting its results")
    wall, cpu, tail = timed_session(REPOSITORY, BANK_COMMAND, bytecode)  # also compiles what it imports
    match = re.search(r"(\d+) passed", tail)
    if not match:
        raise SystemExit(f"the bank audit did not run: {tail}")
    results = int(match.group(1)) + sum(int(m) for m in re.findall(r"(\d+) (?:xfailed|skipped)", tail))
    runs: dict[str, list[tuple[float, float]]] = {"bank": [], "plain": []}
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="optbench-bench-bank-") as tmp:
        plain = Path(tmp)
        (plain / "test_plain.py").write_text(PLAIN_TEST.format(n=results), encoding="utf-8")
        timed_session(plain, ["test_plain.py", "-p", "no:optbench"], bytecode)  # untimed: compile
        for repeat in range(repeats):
            for name, (cwd, args) in {"plain": (plain, ["test_plain.py", "-p", "no:optbench"]),
                                      "bank": (REPOSITORY, BANK_COMMAND)}.items():
                wall, cpu, tail = timed_session(cwd, args, bytecode)
                runs[name].append((wall, cpu))
                log(f"whole bank, repetition {repeat + 1}: {name} {wall:.1f} s wall, {cpu:.1f} s CPU ({tail})")
    best = {name: min(r[0] for r in values) for name, values in runs.items()}
    best_cpu = {name: min(r[1] for r in values) for name, values in runs.items()}
    print()
    print(f"whole bank: `pytest {' '.join(BANK_COMMAND)}` ({results:,} item x condition results) against plain "
          f"pytest with {results:,} trivial parametrized tests, same venv, interleaved, best of {repeats}")
    print(f"load average before {load_before}, after {load_average()} (2 cores, shared with other processes)")
    for name, label in (("bank", "optbench bank"), ("plain", "plain pytest")):
        print(f"  {label:14} best {best[name]:7.2f} s wall, {best_cpu[name]:7.2f} s CPU; runs (wall/CPU s): "
              + ", ".join(f"{w:.1f}/{c:.1f}" for w, c in runs[name]))
    print(f"ratio whole bank / plain pytest: {best['bank'] / best['plain']:.2f}x wall, "
          f"{best_cpu['bank'] / best_cpu['plain']:.2f}x CPU (aim: 3x or less)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kind", choices=["binary", "pairs"], default="binary")
    parser.add_argument("--port", type=int, default=18732, help="fixed loopback port of the fake server")
    parser.add_argument("--budget", type=float, default=285.0, help="seconds; repetitions that would not fit are dropped")
    parser.add_argument("--no-bytecode", dest="bytecode", action="store_false",
                        help="run every variant with PYTHONDONTWRITEBYTECODE=1 (no compiled modules cached)")
    parser.add_argument("--bank", action=argparse.BooleanOptionalAction, default=True,
                        help="also time the whole-bank simulated audit against plain pytest (default: on)")
    parser.add_argument("--bank-repeats", type=int, default=2)
    parser.add_argument("--bank-only", action="store_true", help="only the whole-bank ratio")
    args = parser.parse_args()
    bytecode = args.bytecode
    if args.bank_only:
        bank_ratio(args.bank_repeats, bytecode)
        return
    budget = Budget(args.budget)
    server = start_server(args.port, latency=0.0)
    load_before = load_average()

    with tempfile.TemporaryDirectory(prefix="optbench-bench-session-") as tmp:
        root = Path(tmp) / "suite"
        plain_root = Path(tmp) / "plain"
        root.mkdir()
        plain_root.mkdir()
        if args.kind == "binary":
            write_binary_suite(root / "suite.yaml", ITEMS, samples=1)
            prompts = ITEMS
        else:
            write_pair_suite(root / "suite.yaml", ITEMS // 2, samples=1,
                             conditions={"base": "{}", "narrative_up": '{scenario: "{scenario} {narrative_up}"}'})
            prompts = 2 * ITEMS
        (plain_root / "test_plain.py").write_text(PLAIN_TEST.format(n=ITEMS), encoding="utf-8")
        store = ["suite.yaml", "--model", "openai:fake", "--base-url", server.openai_url, "--samples", "1",
                 "--optbench-cache-dir", str(Path(tmp) / "store")]
        variants: dict[str, tuple[Path, list[str]]] = {
            "optbench, store": (root, store),
            "optbench, sim": (root, ["suite.yaml", "--model", "sim:calibrated", "--samples", "1"]),
            "plain pytest": (plain_root, ["test_plain.py", "-p", "no:optbench"]),
            "plain, plugin idle": (plain_root, ["test_plain.py"]),
        }

        server.reset()
        fill = run_pytest(root, [*store, "--concurrency", "32"], timeout=max(10.0, budget.left()), bytecode=bytecode)
        check(fill, ITEMS, "filling the store")
        fill_requests = len(server.requests)
        log(f"store filled: {fill_requests} requests in {fill.wall:.1f} s")
        run_pytest(plain_root, variants["plain pytest"][1], timeout=120, bytecode=bytecode)  # untimed: compile

        times: dict[str, list[PytestRun]] = {name: [] for name in variants}
        store_requests = 0
        for repeat in range(args.repeats):
            longest = max((max(r.wall for r in runs) for runs in times.values() if runs), default=60.0)
            if repeat and budget.left() < 1.3 * sum(max(r.wall for r in runs) for runs in times.values()):
                log(f"time budget: stopping after {repeat} repetitions")
                break
            for name, (where, command) in variants.items():
                server.reset()
                run = run_pytest(where, command, timeout=max(10.0, min(budget.left(), 4 * longest)), bytecode=bytecode)
                check(run, ITEMS, name)
                times[name].append(run)
                if name == "optbench, store":
                    store_requests += len(server.requests)
            log(f"repetition {repeat + 1}: " + ", ".join(f"{n} {r[-1].wall:.1f} s" for n, r in times.items()))
        phases = {name: run_phases(variants[name][0], variants[name][1], timeout=120, bytecode=bytecode)
                  for name in ("optbench, store", "plain pytest")}
    server.stop()

    medians = {name: statistics.median(r.wall for r in runs) for name, runs in times.items()}
    inner = {name: statistics.median(session_seconds(r) for r in runs) for name, runs in times.items()}
    repeats = len(times["plain pytest"])
    print(f"session overhead: {ITEMS:,} items ({args.kind}: {prompts:,} prompts, --samples 1); "
          f"median of {repeats} interleaved runs each; `python -m pytest -p no:cacheprovider -q`")
    print("bytecode: " + ("compiled modules cached (PYTHONDONTWRITEBYTECODE unset, a private PYTHONPYCACHEPREFIX)"
                          if bytecode else "PYTHONDONTWRITEBYTECODE=1 and an empty PYTHONPYCACHEPREFIX (every session compiles "
                             "and rewrites everything again)")
          + ", the same for every variant")
    print(f"store filled first against a FakeAPI at latency 0: {fill_requests:,} requests, {fill.wall:.1f} s "
          f"({fill.wall / max(fill_requests, 1) * 1e3:.1f} ms a request, --concurrency 32)")
    print(f"load average before {load_before}, after {load_average()} (2 cores, shared with other processes)")
    print()
    print(f"{'variant':20} {'wall s':>8} {'startup s':>10} {'pytest s':>9} {'per item ms':>12}  runs (s)")
    for name, runs in times.items():
        print(f"{name:20} {medians[name]:8.2f} {medians[name] - inner[name]:10.2f} {inner[name]:9.2f} "
              f"{medians[name] / ITEMS * 1e3:12.2f}  {', '.join(f'{r.wall:.2f}' for r in runs)}")
    print()
    ratio = medians["optbench, store"] / medians["plain pytest"]
    print(f"ratio optbench from the store / plain pytest: {ratio:.2f}x (aim: 2x or less) "
          f"[pytest's own time only: {inner['optbench, store'] / inner['plain pytest']:.2f}x]")
    print(f"ratio optbench on sim:calibrated / plain pytest: {medians['optbench, sim'] / medians['plain pytest']:.2f}x")
    print(f"plain pytest with the plugin installed but unused / disabled: "
          f"{medians['plain, plugin idle'] / medians['plain pytest']:.2f}x")
    print()
    print("where the time goes (one more session each, with bench/_phases.py; seconds):")
    print(f"{'variant':20} " + " ".join(f"{name:>16}" for name in PHASES))
    for name, spent in phases.items():
        print(f"{name:20} " + " ".join(f"{spent[phase]:16.2f}" for phase in PHASES))
    print(f"requests the server saw while answering from the store: {store_requests} "
          f"({'OK' if store_requests == 0 else 'EXPECTED 0'})")
    if args.bank:
        bank_ratio(args.bank_repeats, bytecode)
    print(f"benchmark wall time {budget.elapsed():.0f} s")


if __name__ == "__main__":
    main()
