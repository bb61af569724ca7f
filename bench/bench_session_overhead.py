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

Run: python bench/bench_session_overhead.py [--repeats 3] [--kind binary|pairs] [--port 18732] [--no-bytecode]
"""

from __future__ import annotations

import argparse
import re
import statistics
import tempfile
from pathlib import Path

from _harness import (
    PHASES,
    Budget,
    PytestRun,
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--kind", choices=["binary", "pairs"], default="binary")
    parser.add_argument("--port", type=int, default=18732, help="fixed loopback port of the fake server")
    parser.add_argument("--budget", type=float, default=285.0, help="seconds; repetitions that would not fit are dropped")
    parser.add_argument("--no-bytecode", dest="bytecode", action="store_false",
                        help="run every variant with PYTHONDONTWRITEBYTECODE=1 (no compiled modules cached)")
    args = parser.parse_args()
    bytecode = args.bytecode
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
    print(f"benchmark wall time {budget.elapsed():.0f} s")


if __name__ == "__main__":
    main()
