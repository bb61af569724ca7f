"""Elicitation benchmark: how close concurrent elicitation comes to the latency-bound ideal.

A FakeAPI in this process answers after an injected latency L on a fixed loopback port (the
base URL is part of the store's key). A generated Track B suite (200 pairs -> 400 prompts,
5 samples each) runs as ``python -m pytest`` subprocesses against it:

- ``openai:fake``: 5 samples come back from one request (``n``): N = 400 requests;
- ``anthropic:fake``: one request per sample: N = 2,000 requests;

each with ``--concurrency C`` for C in (16, 32), serially, with ``-n 2`` and with ``-n 4``,
each in a fresh store. The ideal elicitation time is N x L / C. Efficiency = ideal /
measured, where measured is (a) the whole session, (b) the session minus the same session
answered from the store (elicitation isolated; that rerun must send 0 requests), and (c) the
server's window, from the first request's arrival to the last answer. (b) includes the
provider SDK's import, which a session answered from the store never pays: the SDK's import
time is measured in the same run (a fresh interpreter importing it) and (b) is also shown
without it. ``--concurrency`` is per session (xdist workers share it), so the cap is C in
every mode. With N/C not a whole number the last round is partly empty: no schedule can
beat ceil(N/C) x L, so "round-bound" rates each run against that too.

``--inspect-python PY``: the same prompts (the openai rows' requests as the server saw them)
also run through inspect_ai (installed in its own venv, e.g. ``python -m venv /tmp/inspect-venv
&& /tmp/inspect-venv/bin/pip install inspect_ai openai``; not a dependency of this project), each
prompt asked ``samples`` times as single-answer requests (``epochs``) over C connections,
in the same run and against the same server: its whole wall time (start-up included) and
its server window, rated the same way (N = prompts x samples requests).

``--repeats R`` runs every variant R times, interleaved, and prints the medians.

The issue-29 workload (60 requests of n=4 at 1 s latency, concurrency 8, serial and -n 2):

    python bench/bench_elicitation.py --latency 1 --pairs 30 --samples 4 --concurrency 8 \
        --providers openai --modes serial "-n 2" --repeats 3 --inspect-python /tmp/inspect-venv/bin/python

Run: python bench/bench_elicitation.py [--latency 0.2] [--port 18731] [--stock-server]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from _harness import (
    SERVER_NOTE,
    Budget,
    PytestRun,
    TimedFakeAPI,
    bench_env,
    check,
    load_average,
    log,
    per_request_overhead,
    run_pytest,
    start_server,
    warm_up,
    write_pair_suite,
)

from pytest_optbench.providers.openai_provider import MAX_N as OPENAI_MAX_N  # samples one request returns

MODES = {"serial": [], "-n 2": ["-n", "2"], "-n 4": ["-n", "4"]}
STARTUP = {"serial": 8.0, "-n 2": 15.0, "-n 4": 25.0}  # rough seconds of a session's own work, to plan the budget
SDK_MODULE = {"openai": "openai", "anthropic": "anthropic"}
INSPECT_TASK = Path(__file__).with_name("_inspect_task.py")


def requests_per_prompt(provider: str, samples: int) -> int:
    return -(-samples // OPENAI_MAX_N) if provider == "openai" else samples


@dataclass
class Row:
    provider: str
    mode: str
    concurrency: int
    requests: int
    latency: float
    cold: PytestRun
    window: float
    mean_in_flight: float
    peak: int
    sdk_import: float  # seconds a fresh interpreter took to import the provider's SDK, this repeat
    store: PytestRun | None = None
    store_requests: int = -1  # requests the server saw during the rerun from the store

    @property
    def ideal(self) -> float:
        return self.requests * self.latency / self.concurrency

    @property
    def round_bound(self) -> float:
        """No schedule beats ceil(N / C) rounds of L."""
        return math.ceil(self.requests / self.concurrency) * self.latency

    @property
    def elicit(self) -> float:
        return self.cold.wall - self.store.wall if self.store else float("nan")

    def rates(self) -> dict[str, float]:
        elicit, engine = self.elicit, self.elicit - self.sdk_import
        return {"session": self.ideal / self.cold.wall,
                "elicit": self.ideal / elicit if elicit > 0 else float("nan"),
                "elicit - SDK import": self.ideal / engine if engine > 0 else float("nan"),
                "server": self.ideal / self.window if self.window else float("nan"),
                "server, round-bound": self.round_bound / self.window if self.window else float("nan")}

    @property
    def flag(self) -> str:
        """'*': the store rerun is over half the session, so their difference is mostly noise."""
        return "*" if self.store and self.store.wall > 0.5 * self.cold.wall else ""

    def cells(self) -> list[str]:
        rates = self.rates()
        return [self.provider, self.mode, str(self.concurrency), f"{self.requests:,}", f"{self.ideal:.2f}",
                f"{self.cold.wall:.2f}", f"{self.store.wall:.2f}" if self.store else "-", f"{self.elicit:.2f}",
                f"{self.sdk_import:.2f}", f"{self.window:.2f}",
                *(f"{rates[name]:.3f}{self.flag if name.startswith('elicit') else ''}" for name in RATES),
                f"{self.mean_in_flight:.1f}/{self.peak}"]


RATES = ("session", "elicit", "elicit - SDK import", "server", "server, round-bound")
HEADER = ["provider", "mode", "C", "requests", "N*L/C s", "session s", "store s", "elicit s", "SDK import s",
          "server s", *(f"eff {name}" for name in RATES), "in flight mean/peak"]


@dataclass
class InspectRun:
    requests: int
    latency: float
    concurrency: int
    wall: float  # the whole `python _inspect_task.py` process, spawn to exit
    imported: float  # of which importing inspect_ai
    window: float
    peak: int

    @property
    def ideal(self) -> float:
        return self.requests * self.latency / self.concurrency

    def rates(self) -> dict[str, float]:
        bound = math.ceil(self.requests / self.concurrency) * self.latency
        return {"session": self.ideal / self.wall, "server": self.ideal / self.window if self.window else math.nan,
                "server, round-bound": bound / self.window if self.window else math.nan}


def table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) if i > 1 else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths, strict=True)))
            for r in rows]


def sdk_import_seconds(provider: str) -> float:
    """What a fresh interpreter takes to import the provider's SDK (compiled modules cached)."""
    code = f"import time; t = time.perf_counter(); import {SDK_MODULE[provider]}; print(time.perf_counter() - t)"
    done = subprocess.run([sys.executable, "-c", code], env=bench_env(), capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def run_inspect(python: str, server: TimedFakeAPI, prompts: list[dict[str, str]], samples: int, concurrency: int,
                tmp: Path, label: str) -> InspectRun:
    """The same prompts through inspect_ai: ``samples`` single-answer requests each."""
    folder = tmp / f"inspect-{label}"
    folder.mkdir()
    (folder / "prompts.json").write_text(json.dumps(prompts), encoding="utf-8")
    server.reset()
    start = time.perf_counter()
    done = subprocess.run([python, str(INSPECT_TASK), str(folder / "prompts.json"), server.openai_url, str(samples),
                           str(concurrency), str(folder / "logs")], env=bench_env(), capture_output=True, text=True,
                          timeout=600, check=False)
    wall = time.perf_counter() - start
    line = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    result = json.loads(line) if line.startswith("{") else {}
    expected = len(prompts) * samples
    if done.returncode != 0 or result.get("status") != "success" or result.get("samples") != expected:
        sys.stderr.write(done.stdout[-2000:] + done.stderr[-4000:])
        hint = "" if done.stdout or done.stderr else " (it printed nothing: its venv needs the openai package too)"
        raise SystemExit(f"inspect_ai run {label}: expected {expected} successful samples, got {result or 'nothing'}"
                         f" (exit {done.returncode}){hint}")
    window, _, peak = server.server_window()
    log(f"inspect_ai {label}: {len(server.requests)} requests, wall {wall:.1f} s, server {window:.1f} s")
    return InspectRun(len(server.requests), server.latency, concurrency, wall, float(result["import"]), window, peak)


def median(values: list[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return statistics.median(finite) if finite else math.nan


def run_group(server: TimedFakeAPI, root: Path, tmp: Path, args: argparse.Namespace, budget: Budget, repeat: int,
              mode: str, provider: str, skipped: list[str]) -> list[Row]:
    """Every --concurrency of one provider and mode, each in a fresh store, then one rerun from
    the store (concurrency enters neither the key nor the work, so one rerun serves them all)."""
    url = server.openai_url if provider == "openai" else server.anthropic_url
    n_requests = 2 * args.pairs * requests_per_prompt(provider, args.samples)
    sdk = sdk_import_seconds(provider)
    group: list[tuple[Row, list[str]]] = []
    for concurrency in args.concurrency:
        label = f"{provider} {mode} C={concurrency} #{repeat + 1}"
        if budget.left() < n_requests * args.latency / concurrency + 2 * STARTUP[mode]:  # this run and its rerun
            skipped.append(label)
            continue
        cache = tmp / f"store-{provider}-{mode.replace(' ', '')}-{concurrency}-{repeat}"
        command = ["suite.yaml", "--model", f"{provider}:fake", "--base-url", url, "--concurrency", str(concurrency),
                   "--samples", str(args.samples), "--optbench-cache-dir", str(cache), *MODES[mode]]
        server.reset()
        cold = run_pytest(root, command, timeout=max(10.0, budget.left()))
        check(cold, args.pairs, label)
        window, mean_in_flight, peak = server.server_window()
        if provider == "openai" and not server.prompts:
            server.prompts = [{"system": r.system, "user": r.user} for r in server.requests]
        log(f"{label}: {len(server.requests)} requests, session {cold.wall:.1f} s, server {window:.1f} s "
            f"(at {budget.elapsed():.0f} s)")
        group.append((Row(provider, mode, concurrency, len(server.requests), args.latency, cold, window,
                          mean_in_flight, peak, sdk), command))
    if not group:
        return []
    server.reset()
    warm = run_pytest(root, group[0][1], timeout=max(10.0, budget.left()))
    check(warm, args.pairs, f"{provider} {mode} rerun from the store")
    log(f"{provider} {mode} from the store: {len(server.requests)} requests, {warm.wall:.1f} s")
    for row, _ in group:
        row.store, row.store_requests = warm, len(server.requests)
    return [row for row, _ in group]


def report(args: argparse.Namespace, rows: list[Row], inspect_runs: list[InspectRun], overheads: tuple[float, float],
           loads: tuple[str, str]) -> None:
    print(f"elicitation: {args.pairs} inverted pairs -> {2 * args.pairs} prompts x {args.samples} samples; "
          f"latency L = {args.latency:g} s; fake server 127.0.0.1:{args.port} "
          f"with {'the stock settings' if args.stock_server else SERVER_NOTE}")
    print(f"fake server's own time per sequential request at latency 0: stock {overheads[0] * 1e3:.1f} ms, "
          f"as used here {overheads[1] * 1e3:.1f} ms")
    print(f"load average before {loads[0]}, after {loads[1]} (2 cores, shared with other processes)")
    print("session = whole `python -m pytest` subprocess; store = the same command rerun from the store; "
          "elicit = session - store (it includes the SDK's import, which the store rerun never pays);")
    print("server = first request's arrival to last answer; eff X = (N*L/C) / X; round-bound = ceil(N/C)*L / server")
    print()
    if rows:
        for line in table([HEADER] + [r.cells() for r in rows]):
            print(line)
        if any(r.flag for r in rows):
            print("* the store rerun takes over half the session (startup dominates): session - store is "
                  "mostly noise there; read the server column")
        print()
        print("rerun from the store (same command, same store):")
        for row in rows:
            if row.store and row is next(r for r in rows if (r.provider, r.mode, r.store) == (row.provider, row.mode,
                                                                                               row.store)):
                print(f"  {row.provider:9} {row.mode:6}: server saw {row.store_requests} requests "
                      f"({'OK' if row.store_requests == 0 else 'EXPECTED 0'}); wall {row.store.wall:.2f} s")
    for row in rows:
        expected = 2 * args.pairs * requests_per_prompt(row.provider, args.samples)
        if row.requests != expected:
            print(f"  note: {row.provider} {row.mode} C={row.concurrency} sent {row.requests} requests, "
                  f"expected {expected}")
    groups: dict[tuple[str, str, int], list[Row]] = {}
    for row in rows:
        groups.setdefault((row.provider, row.mode, row.concurrency), []).append(row)
    if inspect_runs or any(len(g) > 1 for g in groups.values()):
        print()
        print(f"medians over the repeats ({', '.join(f'{len(g)}' for g in groups.values())} runs; "
              f"inspect_ai {len(inspect_runs)}):")
        print(f"  {'variant':28} {'requests':>8} {'to the answers s':>16} " + " ".join(f"{n:>20}" for n in RATES))
        for (provider, mode, concurrency), group in groups.items():
            cells = [f"{median([r.rates()[n] for r in group]):20.3f}" for n in RATES]
            print(f"  {f'optbench {provider} {mode} C={concurrency}':28} {group[0].requests:8} "
                  f"{median([r.cold.wall for r in group]):16.2f} " + " ".join(cells))
        if inspect_runs:
            cells = [f"{median([r.rates()[n] for r in inspect_runs]):20.3f}" if n in inspect_runs[0].rates()
                     else f"{'-':>20}" for n in RATES]
            print(f"  {f'inspect_ai C={inspect_runs[0].concurrency}':28} {inspect_runs[0].requests:8} "
                  f"{median([r.wall for r in inspect_runs]):16.2f} " + " ".join(cells))
            print("  inspect_ai runs (wall / of which importing inspect_ai / server s): "
                  + ", ".join(f"{r.wall:.1f}/{r.imported:.1f}/{r.window:.1f}" for r in inspect_runs))
            print("  'to the answers' = wall time of the whole process that gets every answer (start-up included);")
            print("  inspect_ai's 'session' rate is over its whole process too (there is no store to subtract)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the fake server waits per request")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 32])
    parser.add_argument("--providers", nargs="+", default=["openai", "anthropic"], choices=["openai", "anthropic"])
    parser.add_argument("--modes", nargs="+", default=["serial", "-n 4"], choices=list(MODES))
    parser.add_argument("--repeats", type=int, default=1, help="run every variant this many times, interleaved")
    parser.add_argument("--inspect-python", metavar="PY",
                        help="an interpreter with inspect_ai installed: run the same prompts through it too")
    parser.add_argument("--port", type=int, default=18731, help="fixed loopback port of the fake server")
    parser.add_argument("--stock-server", action="store_true",
                        help="keep the stock FakeAPI's Nagle and backlog (adds ~40 ms per request on loopback)")
    parser.add_argument("--budget", type=float, default=285.0,
                        help="seconds; runs that would not fit are skipped and said so")
    args = parser.parse_args()
    budget = Budget(args.budget)

    # What the fake server itself adds per request (latency 0, one request at a time).
    stock = start_server(0, stock=True)
    stock_overhead = per_request_overhead(stock)
    stock.stop()
    server = start_server(args.port, stock=args.stock_server)
    used_overhead = per_request_overhead(server)
    server.latency = args.latency
    load_before = load_average()

    rows: list[Row] = []
    inspect_runs: list[InspectRun] = []
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="optbench-bench-elicit-") as tmp:
        root = Path(tmp) / "suite"
        root.mkdir()
        write_pair_suite(root / "suite.yaml", args.pairs, samples=args.samples)
        write_pair_suite(root / "tiny.yaml", 2, samples=1, suite_id="warm-up")
        warm_up(root, [["tiny.yaml", "--model", f"{p}:fake", "--base-url",
                        server.openai_url if p == "openai" else server.anthropic_url,
                        "--optbench-cache-dir", str(Path(tmp) / f"warm-up-{p}")] for p in args.providers])
        for repeat in range(args.repeats):
            # Serial runs first, parallel last: under a tight budget the parallel rows are the ones dropped.
            for mode in args.modes:
                for provider in args.providers:
                    rows += run_group(server, root, Path(tmp), args, budget, repeat, mode, provider, skipped)
            if args.inspect_python and server.prompts:
                if budget.left() < 2 * len(server.prompts) * args.samples * args.latency / args.concurrency[0]:
                    skipped.append(f"inspect_ai #{repeat + 1}")
                else:
                    inspect_runs.append(run_inspect(args.inspect_python, server, server.prompts, args.samples,
                                                    args.concurrency[0], Path(tmp), str(repeat + 1)))
    server.stop()
    report(args, rows, inspect_runs, (stock_overhead, used_overhead), (load_before, load_average()))
    if skipped:
        print(f"skipped for the time budget of {args.budget:g} s: {', '.join(skipped)}")
    print(f"benchmark wall time {budget.elapsed():.0f} s")


if __name__ == "__main__":
    main()
