"""Scale benchmark: an audit of 40,000 answers past one machine's rate.

A FakeAPI in this process answers chat requests after an injected latency L (default 0.2 s)
on a fixed loopback port. A generated Track B suite of P pairs x 2 prompts x 10 samples
(40,000 answers with --full; 4,000 by default) runs as ``python -m pytest`` subprocesses,
each in a fresh response store (as a fresh CI machine would):

1. serial: one session, ``--concurrency C`` (default 16); OpenAI's ``n`` puts 10 samples in one
   request, so N = 2P requests; the latency-bound ideal is N x L / C;
2. sharded: the four sessions of ``--optbench-shard i/4`` (each ``--concurrency C``, each in its
   own store: four CI jobs), (a) one after another, timing each alone as four CI machines would
   run it (sharded wall time = the slowest shard), and (b) all four at once on this machine;
   speed-up = serial / sharded wall time, efficiency = speed-up / 4, and every request is asked
   exactly once overall;
3. batch: one session with ``--optbench-batch`` (the fake's batches end at the second poll):
   how many batch-API calls replace the N requests;
4. the controller's memory per 10,000 answers (tracemalloc in a fresh process: the records it
   holds, and the peak while it scores them), and the time of ``optbench merge`` and
   ``optbench gate`` (10,000 bootstrap resamples) on the four shard reports, as subprocesses.

The merged and gated aggregates and verdicts are compared with the serial run's: they must be
identical. Loopback only; no real API.

Run: python bench/bench_scale.py [--full] [--latency 0.2] [--concurrency 16] [--port 18741]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _harness import (
    bench_env,
    load_average,
    log,
    start_server,
    warm_up,
    write_pair_suite,
)

SAMPLES = 10
THRESHOLDS = """\
optbench: 1
gates:
  - metric: skew
    max_abs: 5
    evidence: ci
  - metric: refusal_rate
    max: 0.2
"""


def pytest_command(root: Path, args: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "--rootdir", str(root), "-p", "no:cacheprovider", "-q",
            "-p", "no:hypothesispytest", "-p", "no:benchmark", *args]


def run(command: list[str], cwd: Path) -> tuple[float, subprocess.CompletedProcess[str]]:
    start = time.perf_counter()
    done = subprocess.run(command, check=False, cwd=cwd, env=bench_env(), capture_output=True, text=True,
                          timeout=3600)
    return time.perf_counter() - start, done


def must(done: subprocess.CompletedProcess[str], what: str, codes: tuple[int, ...] = (0, 1)) -> None:
    if done.returncode not in codes:
        sys.stderr.write((done.stdout + done.stderr)[-4000:])
        raise SystemExit(f"{what}: exit code {done.returncode}")


MEMORY = textwrap.dedent("""
    import json, sys, tracemalloc, gc
    from pathlib import Path
    from pytest_optbench.options import RunOptions
    from pytest_optbench.records.item import ItemRecord
    from pytest_optbench.session.controller import ControllerSession
    text = Path(sys.argv[1]).read_text()
    controller = ControllerSession(RunOptions(n_resamples=int(sys.argv[2])), [], None, "bench")
    gc.collect()
    tracemalloc.start()
    items = json.loads(text)["items"]  # each record arrives as JSON-like data (xdist: on its report)
    answers = sum(len(p["answers"]) for i in items for p in i["prompts"])
    for item in items:  # what add_report does with it
        record = ItemRecord.from_dict(item)
        controller.records[record.key] = record
    del items, item
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    controller.finish()
    peak = tracemalloc.get_traced_memory()[1]
    print(json.dumps({"answers": answers, "items": len(controller.records), "held": held, "peak": peak}))
""")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="40,000 answers (default: 4,000)")
    parser.add_argument("--answers", type=int, help="answers in the audit (a multiple of 20)")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--bootstrap", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=18741)
    args = parser.parse_args()
    answers = args.answers or (40_000 if args.full else 4_000)
    pairs = answers // (2 * SAMPLES)
    server = start_server(args.port, latency=args.latency)
    server.batches.polls = 1
    url = server.openai_url
    load_before = load_average()
    with tempfile.TemporaryDirectory(prefix="optbench-bench-scale-") as tmp:
        root = Path(tmp)
        (root / "suites").mkdir()
        write_pair_suite(root / "suites" / "pairs.yaml", pairs, samples=SAMPLES)
        (root / "thresholds.yaml").write_text(THRESHOLDS)
        write_pair_suite(root / "tiny.yaml", 2, samples=1, suite_id="warm-up")
        warm_up(root, [["tiny.yaml", "--model", "openai:fake", "--base-url", url, "--optbench-cache-dir",
                        str(root / "warm")]])
        common = ["suites", "--model", "openai:fake", "--base-url", url, "--concurrency", str(args.concurrency),
                  "--optbench-bootstrap", str(args.bootstrap)]
        requests_ideal = 2 * pairs
        ideal = requests_ideal * args.latency / args.concurrency

        log(f"serial: {answers:,} answers, {requests_ideal:,} requests")
        server.reset()
        serial_wall, done = run(pytest_command(root, [*common, "--optbench-cache-dir", str(root / "s-serial"),
                                                      "--optbench-report", "serial.json"]), root)
        must(done, "serial run")
        serial_requests = len(server.requests)

        log("4 shards, each alone")
        server.reset()
        alone = []
        for i in range(1, 5):
            wall, done = run(pytest_command(root, [*common, "--optbench-shard", f"{i}/4", "--optbench-cache-dir",
                                                   str(root / f"s-alone{i}"), "--optbench-report", f"shard{i}.json"]),
                             root)
            must(done, f"shard {i}/4")
            alone.append(wall)
        alone_requests = [r.user for r in server.requests]

        log("4 shards at once")
        server.reset()
        start = time.perf_counter()
        procs = [subprocess.Popen(pytest_command(root, [*common, "--optbench-shard", f"{i}/4",
                                                        "--optbench-cache-dir", str(root / f"s-shard{i}"),
                                                        "--optbench-report", f"at-once{i}.json"]),
                                  cwd=root, env=bench_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for i in range(1, 5)]
        ends = []
        for proc in procs:
            out, err = proc.communicate(timeout=3600)
            ends.append(time.perf_counter() - start)
            must(subprocess.CompletedProcess(proc.args, proc.returncode, out, err), "shard run")
        shard_wall = max(ends)
        shard_requests = len(server.requests)
        asked = [r.user for r in server.requests]
        shard_answers = [json.loads((root / f"shard{i}.json").read_text())["run"]["shard"]["answers"]
                         for i in range(1, 5)]

        log("merge and gate")
        cli = [sys.executable, "-m", "pytest_optbench.cli"]
        merge_wall, done = run([*cli, "merge", *[f"shard{i}.json" for i in range(1, 5)], "--output", "all.json"], root)
        must(done, "merge", (0,))
        gate_wall, done = run([*cli, "gate", "all.json", "--output", "gated.json"], root)
        must(done, "gate")
        serial = json.loads((root / "serial.json").read_text())
        gated = json.loads((root / "gated.json").read_text())
        identical = gated["aggregates"] == serial["aggregates"] and gated["gates"] == serial["gates"]

        log("batch")
        server.reset()
        calls_before = len(server.batches.calls)
        batch_wall, done = run(pytest_command(root, [*common, "--optbench-batch", "--optbench-batch-wait", "600",
                                                     "--optbench-cache-dir", str(root / "s-batch")]), root)
        must(done, "batch run")
        batch_calls = len(server.batches.calls) - calls_before
        batches = len(server.batches.created())

        log("controller memory")
        _, done = run([sys.executable, "-c", MEMORY, str(root / "serial.json"), str(args.bootstrap)], root)
        must(done, "memory", (0,))
        memory = json.loads(done.stdout)
    server.stop()

    per10k = 10_000 / memory["answers"]
    speedup = serial_wall / shard_wall
    alone_wall = max(alone)
    alone_speedup = serial_wall / alone_wall
    print(f"scale benchmark: {answers:,} answers ({pairs:,} pairs x 2 prompts x {SAMPLES} samples), fake API latency "
          f"{args.latency:g} s, --concurrency {args.concurrency} per process, {os.cpu_count()} CPUs, load average "
          f"{load_before} before")
    print(f"  serial           : {serial_requests:,} requests, {serial_wall:6.1f} s wall "
          f"(latency-bound ideal N x L / C = {ideal:.1f} s)")
    print(f"  4 shards, alone  : {len(alone_requests):,} requests (each prompt asked once: "
          f"{len(alone_requests) == len(set(alone_requests)) == serial_requests}), shards "
          f"{', '.join(f'{w:.1f}' for w in alone)} s: {alone_wall:6.1f} s wall on 4 machines (ideal {ideal / 4:.1f} s); "
          f"speed-up {alone_speedup:.2f}x, efficiency {alone_speedup / 4:.0%}; answers per shard "
          f"{', '.join(f'{a:,}' for a in shard_answers)}")
    print(f"  4 shards at once : {shard_requests:,} requests (each asked once: "
          f"{len(asked) == len(set(asked)) == serial_requests}), {shard_wall:6.1f} s wall on this machine "
          f"({os.cpu_count()} CPUs); speed-up {speedup:.2f}x, efficiency {speedup / 4:.0%}")
    print(f"  batch            : {batches} batch(es), {batch_calls} batch-API calls instead of {requests_ideal:,} "
          f"requests, {batch_wall:6.1f} s wall")
    print(f"  controller memory: {memory['held'] * per10k / 2**20:.1f} MiB of records held per 10,000 answers; "
          f"scoring peak {memory['peak'] / 2**20:.0f} MiB for {memory['items']:,} item results and "
          f"{args.bootstrap:,} resamples ({memory['peak'] * per10k / 2**20:.0f} MiB per 10,000 answers; tracemalloc)")
    print(f"  merge + gate     : {merge_wall:.1f} s + {gate_wall:.1f} s for {answers:,} answers "
          f"(subprocesses, {args.bootstrap:,} resamples); aggregates and verdicts identical to the serial run: "
          f"{identical}")
    if not identical:
        raise SystemExit("the merged and gated run differs from the serial run")


if __name__ == "__main__":
    main()
