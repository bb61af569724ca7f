"""Elicitation benchmark: how close concurrent elicitation comes to the latency-bound ideal.

A FakeAPI in this process answers after an injected latency L on a fixed loopback port (the
base URL is part of the store's key). A generated Track B suite (200 pairs -> 400 prompts,
5 samples each) runs as ``python -m pytest`` subprocesses against it:

- ``openai:fake``: 5 samples come back from one request (``n``): N = 400 requests;
- ``anthropic:fake``: one request per sample: N = 2,000 requests;

each with ``--concurrency C`` for C in (16, 32), serially and with ``-n 4``, each in a
fresh store. The ideal elicitation time is N x L / C. Efficiency = ideal / measured, where
measured is (a) the whole session, (b) the session minus the same session answered from the
store (elicitation isolated; that rerun must send 0 requests), and (c) the server's window,
from the first request's arrival to the last answer. ``--concurrency`` is per process, so
under ``-n 4`` up to 4 x C requests are in flight: the "vs cap" columns rate every run
against its real cap, N x L / (C x workers).

Run: python bench/bench_elicitation.py [--latency 0.2] [--port 18731] [--stock-server]
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass
from pathlib import Path

from _harness import (
    SERVER_NOTE,
    Budget,
    PytestRun,
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

MODES = {"serial": [], "-n 4": ["-n", "4"]}
WORKERS = {"serial": 1, "-n 4": 4}
STARTUP = {"serial": 8.0, "-n 4": 25.0}  # rough seconds of a session's own work, to plan the budget


def requests_per_prompt(provider: str, samples: int) -> int:
    return -(-samples // OPENAI_MAX_N) if provider == "openai" else samples


@dataclass
class Row:
    provider: str
    mode: str
    concurrency: int
    requests: int
    ideal: float
    cold: PytestRun
    window: float
    mean_in_flight: float
    peak: int
    store: PytestRun | None = None
    store_requests: int = -1  # requests the server saw during the rerun from the store

    @property
    def flag(self) -> str:
        """'*': the store rerun is over half the session, so their difference is mostly noise."""
        return "*" if self.store and self.store.wall > 0.5 * self.cold.wall else ""

    def cells(self) -> list[str]:
        cap = self.concurrency * WORKERS[self.mode]
        elicit = self.cold.wall - self.store.wall if self.store else float("nan")
        ideal_cap = self.ideal * self.concurrency / cap
        return [self.provider, self.mode, str(self.concurrency), str(cap), f"{self.requests:,}",
                f"{self.ideal:.2f}", f"{self.cold.wall:.2f}", f"{self.store.wall:.2f}" if self.store else "-",
                f"{elicit:.2f}", f"{self.window:.2f}",
                f"{self.ideal / self.cold.wall:.2f}", f"{self.ideal / elicit:.2f}{self.flag}" if elicit > 0 else "n/a",
                f"{self.ideal / self.window:.2f}" if self.window else "n/a",
                f"{ideal_cap / elicit:.2f}{self.flag}" if elicit > 0 else "n/a",
                f"{ideal_cap / self.window:.2f}" if self.window else "n/a",
                f"{self.mean_in_flight:.1f}/{self.peak}"]


HEADER = ["provider", "mode", "C", "cap", "requests", "N*L/C s", "session s", "store s", "elicit s", "server s",
          "eff session", "eff elicit", "eff server", "elicit vs cap", "server vs cap", "in flight mean/peak"]


def table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.rjust(w) if i > 1 else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths, strict=True)))
            for r in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the fake server waits per request")
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 32])
    parser.add_argument("--providers", nargs="+", default=["openai", "anthropic"], choices=["openai", "anthropic"])
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
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
    skipped: list[str] = []
    with tempfile.TemporaryDirectory(prefix="optbench-bench-elicit-") as tmp:
        root = Path(tmp) / "suite"
        root.mkdir()
        write_pair_suite(root / "suite.yaml", args.pairs, samples=args.samples)
        write_pair_suite(root / "tiny.yaml", 2, samples=1, suite_id="warm-up")
        warm_up(root, [["tiny.yaml", "--model", f"{p}:fake", "--base-url",
                        server.openai_url if p == "openai" else server.anthropic_url,
                        "--optbench-cache-dir", str(Path(tmp) / f"warm-up-{p}")] for p in args.providers])
        # Serial runs first, -n 4 last: under a tight budget the parallel rows are the ones dropped.
        for mode in args.modes:
            for provider in args.providers:
                url = server.openai_url if provider == "openai" else server.anthropic_url
                n_requests = 2 * args.pairs * requests_per_prompt(provider, args.samples)
                startup = STARTUP[mode]
                group: list[tuple[Row, list[str]]] = []
                for concurrency in args.concurrency:
                    ideal = n_requests * args.latency / concurrency
                    label = f"{provider} {mode} C={concurrency}"
                    if budget.left() < ideal / WORKERS[mode] + 2 * startup:  # this run and its store rerun
                        skipped.append(label)
                        continue
                    cache = Path(tmp) / f"store-{provider}-{mode.replace(' ', '')}-{concurrency}"
                    command = ["suite.yaml", "--model", f"{provider}:fake", "--base-url", url,
                               "--concurrency", str(concurrency), "--samples", str(args.samples),
                               "--optbench-cache-dir", str(cache), *MODES[mode]]
                    server.reset()
                    cold = run_pytest(root, command, timeout=max(10.0, budget.left()))
                    check(cold, args.pairs, label)
                    window, mean_in_flight, peak = server.server_window()
                    log(f"{label}: {len(server.requests)} requests, session {cold.wall:.1f} s "
                        f"(at {budget.elapsed():.0f} s)")
                    group.append((Row(provider, mode, concurrency, len(server.requests), ideal, cold, window,
                                      mean_in_flight, peak), command))
                if not group:
                    continue
                # The same session answered from the store. Concurrency enters neither the key nor
                # the work, so one rerun serves every C of this provider and mode.
                server.reset()
                warm = run_pytest(root, group[0][1], timeout=max(10.0, budget.left()))
                check(warm, args.pairs, f"{provider} {mode} rerun from the store")
                log(f"{provider} {mode} from the store: {len(server.requests)} requests, {warm.wall:.1f} s")
                for row, _ in group:
                    row.store, row.store_requests = warm, len(server.requests)
                    rows.append(row)
    server.stop()

    print(f"elicitation: {args.pairs} inverted pairs -> {2 * args.pairs} prompts x {args.samples} samples; "
          f"latency L = {args.latency:g} s; fake server 127.0.0.1:{args.port} "
          f"with {'the stock settings' if args.stock_server else SERVER_NOTE}")
    print(f"fake server's own time per sequential request at latency 0: stock {stock_overhead * 1e3:.1f} ms, "
          f"as used here {used_overhead * 1e3:.1f} ms")
    print(f"load average before {load_before}, after {load_average()} (2 cores, shared with other processes)")
    print("session = whole `python -m pytest` subprocess; store = the same command rerun from the store; "
          "elicit = session - store;")
    print("server = first request's arrival to last answer; eff X = (N*L/C) / X; "
          "'vs cap' divides by the real in-flight cap C x workers instead of C")
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
            if row.store and row is next(r for r in rows if (r.provider, r.mode) == (row.provider, row.mode)):
                print(f"  {row.provider:9} {row.mode:6}: server saw {row.store_requests} requests "
                      f"({'OK' if row.store_requests == 0 else 'EXPECTED 0'}); wall {row.store.wall:.2f} s, "
                      f"{row.cold.wall / row.store.wall:.1f}x faster than eliciting at C={row.concurrency} "
                      f"({row.cold.wall:.2f} s)")
    for row in rows:
        expected = 2 * args.pairs * requests_per_prompt(row.provider, args.samples)
        if row.requests != expected:
            print(f"  note: {row.provider} {row.mode} C={row.concurrency} sent {row.requests} requests, "
                  f"expected {expected}")
    if skipped:
        print(f"skipped for the time budget of {args.budget:g} s: {', '.join(skipped)}")
    print(f"benchmark wall time {budget.elapsed():.0f} s")


if __name__ == "__main__":
    main()
