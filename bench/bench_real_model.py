"""The plugin against real local models: two small GGUF models served by llama.cpp.

Starts (or reuses) ``llama-server`` for each model (see ``bench/local_models.py``), runs the
English Track B suite and the known-answer suite through the plugin exactly as a user would::

    pytest suites/en/track_b.yaml suites/en/known_answers.yaml \\
        --model=openai:NAME --base-url=http://127.0.0.1:PORT/v1 \\
        --samples 1 --max-tokens 48 --optbench-report OUT/NAME/report.json ...

(``--xdist N`` adds ``-n N``: the same prompts through N xdist workers, one of which asks.)

then reads the JSON report and prints, per model: answer-level parse rate, usable items
(pairs with a usable answer on both sides; known-answer items with a usable answer), Skew and
Brier with their 95% CIs, requests and tokens per answer, the share of answers cut off at the
token limit, and wall time. ``--dump`` writes every answer (question, raw text, parsed value)
to ``OUT/NAME/answers.jsonl`` for a hand check; ``--show N`` prints N random parsed answers.

By default only Track B's ``base`` arm runs (60 pairs = 120 prompts, plus 240 known-answer
prompts), one sample each, 48 tokens at most: a few minutes per model on 2 cores.
``--conditions all`` adds the seven other Track B arms (960 Track B prompts).

    python bench/bench_real_model.py --dir ~/.cache/optbench-llama --out results --dump --show 20

Each run starts from an empty response store (``OUT/NAME/store``) so that wall time and
tokens measure real requests; ``--reuse-store`` keeps it (a rerun then costs nothing).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import local_models  # a sibling script, not a package

from pytest_optbench.prompts import modes

REPO = Path(__file__).resolve().parent.parent
SUITES = {"track_b": "suites/en/track_b.yaml", "known_answers": "suites/en/known_answers.yaml"}
TRACK_B_ARMS = ("base", "narrative_up", "narrative_down", "perspective_you", "perspective_friend", "debiased",
                "anchor_hint", "anchor_rate")


def provider_for(model: local_models.LocalModel, endpoint: str) -> str:
    """chat: openai (the server's chat template); completions: openai-completions (the
    base-model scaffold); auto: completions for a base model, chat otherwise."""
    if endpoint == "auto":
        endpoint = "completions" if model.kind == "base" else "chat"
    return "openai-completions" if endpoint == "completions" else "openai"


def pytest_command(model: local_models.LocalModel, args: argparse.Namespace, out: Path,
                   mode: str = "text") -> list[str]:
    cmd = [sys.executable, "-m", "pytest", *(SUITES[s] for s in args.suites),
           f"--model={provider_for(model, args.endpoint)}:{model.alias}", f"--base-url={model.base_url()}",
           f"--optbench-elicit={mode}",
           "--optbench-report", str(out / "report.json"),
           "--optbench-cache-dir", str(out / "store"),
           "--samples", str(args.samples), "--max-tokens", str(args.max_tokens),
           "--concurrency", str(args.concurrency), "--optbench-timeout", str(args.timeout),
           "--optbench-bootstrap", str(args.bootstrap),
           "-q", "-p", "no:cacheprovider"]
    if args.temperature is not None:
        cmd += ["--temperature", str(args.temperature)]
    if args.xdist:
        cmd += ["-n", str(args.xdist)]
    keyword = args.k
    if args.conditions != ["all"]:
        arms = " or ".join(args.conditions)
        keyword = f"({arms}) and ({keyword})" if keyword else arms
    if keyword:
        cmd += ["-k", keyword]
    return cmd


def _answers(report: dict[str, Any]) -> Iterator[tuple[dict[str, Any], dict[str, Any], int, dict[str, Any]]]:
    for item in report["items"]:
        for prompt in item["prompts"]:
            for index, answer in enumerate(prompt["answers"]):
                yield item, prompt, index, answer


def _aggregate(report: dict[str, Any], suite: str, metric: str, condition: str = "base") -> dict[str, Any] | None:
    for row in report["aggregates"]:
        if (row["suite"], row["condition"], row["metric"], row.get("domain")) == (suite, condition, metric, None):
            return dict(row)
    return None


def _fmt(row: dict[str, Any] | None, digits: int, signed: bool = False) -> str:
    if row is None or row.get("value") is None:
        return "n/a"
    spec = f"{'+' if signed else ''}.{digits}f"
    low, high = row.get("ci_low"), row.get("ci_high")
    ci = f" [{low:{spec}}, {high:{spec}}]" if low is not None and high is not None else ""
    return f"{row['value']:{spec}}{ci} (n={row.get('n')})"


def summarize(report: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """The figures this benchmark is for, from a JSON report."""
    answers = list(_answers(report))
    by_suite: dict[str, dict[str, int]] = {}
    for item, _prompt, _i, answer in answers:
        s = by_suite.setdefault(item["suite"], {"answers": 0, "parsed": 0, "errors": 0, "fifty": 0})
        s["answers"] += 1
        s["parsed"] += answer["value"] is not None
        s["errors"] += answer["error"] is not None
        s["fifty"] += answer["value"] == 50
    usable: dict[str, dict[str, int]] = {}
    for item in report["items"]:
        key = f"{item['suite']}[{item['condition']}]"
        u = usable.setdefault(key, {"items": 0, "usable": 0, "usable_no_50": 0})
        u["items"] += 1
        sides = [[a["value"] for a in p["answers"] if a["value"] is not None] for p in item["prompts"]]
        u["usable"] += all(sides)
        u["usable_no_50"] += all(any(v != 50 for v in side) for side in sides)
    fresh = [a for _, _, _, a in answers if a["error"] is None and not a["cached"]]
    requests = sum(1 for a in fresh if a["input_tokens"] > 0)  # a request's usage goes on its first sample
    single = all(len(p["answers"]) == 1 for item in report["items"] for p in item["prompts"])
    cut = sum(1 for a in fresh if a["output_tokens"] >= max_tokens) if single else None
    reasons: dict[str, int] = {}
    for _, _, _, a in answers:
        if a["error"] is None and a["value"] is None:
            reason = (a["reason"] or "?").split(" (")[0]
            reasons[reason] = reasons.get(reason, 0) + 1
    conditions = sorted({item["condition"] for item in report["items"] if item["kind"] == "inverted_pair"},
                        key=lambda c: (c != "base", c))
    masses = [a["mass"] for _, _, _, a in answers if a.get("mass") is not None]
    modes: dict[str, int] = {}
    for _, _, _, a in answers:
        if a["error"] is None:
            modes[a.get("mode") or "text"] = modes.get(a.get("mode") or "text", 0) + 1
    return {
        "model": report["run"]["model"],
        "elicit": report["run"].get("elicit", "text"),
        "answers_by_mode_read": modes,
        "mean_mass": sum(masses) / len(masses) if masses else None,
        "usage": report["run"]["usage"],
        "provider_notes": report["run"].get("provider_notes", []),
        "by_suite": by_suite,
        "usable": usable,
        "requests": requests,
        "answers_fresh": len(fresh),
        "input_tokens_per_answer": sum(a["input_tokens"] for a in fresh) / max(1, len(fresh)),
        "output_tokens_per_answer": sum(a["output_tokens"] for a in fresh) / max(1, len(fresh)),
        "cut_off_at_limit": cut,
        # From the server's finish_reason, as the parser got it (None: the report predates it).
        "truncated": sum(1 for _, _, _, a in answers if a.get("truncated") is True),
        "truncated_known": sum(1 for _, _, _, a in answers if a.get("truncated") is not None),
        "unparsed_reasons": dict(sorted(reasons.items(), key=lambda kv: -kv[1])),
        "parse_rate": {s: _aggregate(report, s, "parse_rate") for s in by_suite},
        "skew": {c: _aggregate(report, "track-b-probability", "skew", c) for c in conditions},
        "brier": _aggregate(report, "known-answers", "brier"),
        "climatology_brier": _aggregate(report, "known-answers", "climatology_brier"),
        "auc": _aggregate(report, "known-answers", "auc"),
        "accuracy": _aggregate(report, "known-answers", "accuracy"),
    }


def print_summary(name: str, model: local_models.LocalModel, figures: dict[str, Any], wall: float,
                  server: dict[str, int] | None) -> None:
    print(f"\n== {name}: {model.description} [{model.kind}]")
    for suite, s in figures["by_suite"].items():
        rate = s["parsed"] / s["answers"] if s["answers"] else float("nan")
        print(f"  {suite:22s} answers {s['answers']:4d}  parsed {s['parsed']:4d} ({rate:6.1%})  "
              f"exactly 50: {s['fifty']:3d}  errors {s['errors']}  | plugin parse_rate[base] "
              f"{_fmt(figures['parse_rate'][suite], 3)}")
    for key, u in figures["usable"].items():
        what = "pairs" if key.startswith("track-b") else "items"
        print(f"  usable {what} {key:40s} {u['usable']:3d}/{u['items']}  (without exact-50 answers: "
              f"{u['usable_no_50']})")
    for condition, row in figures["skew"].items():
        quadrant = f"  quadrant {row.get('quadrant')}" if row else ""
        print(f"  Skew (pp) {condition:20s} {_fmt(row, 1, signed=True)}{quadrant}")
    print(f"  Brier     {_fmt(figures['brier'], 3)}   climatology {_fmt(figures['climatology_brier'], 3)}")
    print(f"  AUC       {_fmt(figures['auc'], 3)}   accuracy {_fmt(figures['accuracy'], 3)}")
    per = figures["requests"] / max(1, figures["answers_fresh"])
    logged = (f"; server log: {server['requests']} requests, {server['completions']} completions"
              if server else "")
    print(f"  requests {figures['requests']} for {figures['answers_fresh']} fresh answers ({per:.2f} per answer"
          f"{logged}); tokens per answer: {figures['input_tokens_per_answer']:.0f} in, "
          f"{figures['output_tokens_per_answer']:.1f} out")
    if figures["cut_off_at_limit"] is not None:
        print(f"  answers that used the whole token limit (cut off): {figures['cut_off_at_limit']}"
              f"/{figures['answers_fresh']}")
    print(f"  answers cut off by the server's finish_reason (passed to the parser as truncated): "
          f"{figures['truncated']} of {figures['truncated_known']} with a known finish reason")
    print("  why the rest did not parse: " + ", ".join(f"{k} {v}" for k, v in figures["unparsed_reasons"].items()))
    usage = figures["usage"]
    print(f"  failed calls {usage['failed_calls']}, unparsed {usage['unparsed']}, from store {usage['from_store']}; "
          f"wall time {wall:.0f} s (whole pytest session: collection, elicitation, scoring)")
    for note in figures["provider_notes"]:
        print(f"  note: {note}")


def dump(report: dict[str, Any], path: Path) -> int:
    """Every answer, one JSON object a line: enough to judge each parsed number by hand."""
    with path.open("w", encoding="utf-8") as out:
        n = 0
        for item, prompt, index, answer in _answers(report):
            out.write(json.dumps({
                "model": item["model"], "suite": item["suite"], "item": item["item"],
                "condition": item["condition"], "role": prompt["role"], "sample": index,
                "question": prompt["user"], "raw": answer["raw"], "value": answer["value"],
                "reason": answer["reason"], "error": answer["error"],
                "outcome": item.get("outcome"), "output_tokens": answer["output_tokens"],
                "truncated": answer.get("truncated"), "mode": answer.get("mode"), "mass": answer.get("mass"),
                "distribution": answer.get("distribution"),
            }, ensure_ascii=False) + "\n")
            n += 1
    return n


def show(report: dict[str, Any], count: int, seed: int) -> None:
    parsed = [(item, prompt, a) for item, prompt, _, a in _answers(report) if a["value"] is not None]
    rng = random.Random(seed)
    for n, (item, prompt, answer) in enumerate(rng.sample(parsed, min(count, len(parsed))), 1):
        question = prompt["user"].strip().splitlines()[-1]
        print(f"  {n:2d}. {item['item']}/{prompt['role']} q={question[:90]!r}\n"
              f"      raw={answer['raw']!r}\n      parsed={answer['value']:g}")


def server_counts(logfile: Path, offset: int) -> dict[str, int] | None:
    """Requests and completions llama-server logged since ``offset`` (a slot launch per
    completion; ``is_child = 0`` for the first completion of each request)."""
    if not logfile.exists():
        return None
    with logfile.open("rb") as handle:
        handle.seek(offset)
        text = handle.read().decode("utf-8", "replace")
    return {"requests": len(re.findall(r"launch_slot_.*is_child = 0", text)),
            "completions": len(re.findall(r"launch_slot_", text))}


def token_limit(mode: str, max_tokens: int, provider: str = "openai") -> int:
    """The limit the plugin sent in ``mode``: logprobs reads a few tokens (modes.LOGPROBS_MAX_TOKENS),
    json gets at least enough for its object (modes.JSON_MIN_TOKENS; the chat endpoint's
    reasoned object modes.REASONED_MIN_TOKENS)."""
    if mode == modes.LOGPROBS:
        return min(max_tokens, modes.LOGPROBS_MAX_TOKENS)
    if mode == modes.JSON:
        return max(max_tokens, modes.JSON_MIN_TOKENS if provider == "openai-completions" else modes.REASONED_MIN_TOKENS)
    return max_tokens


def run_model(model: local_models.LocalModel, args: argparse.Namespace, mode: str = "text") -> dict[str, Any]:
    out = args.out / model.key / mode
    out.mkdir(parents=True, exist_ok=True)
    if not args.reuse_store:
        shutil.rmtree(out / "store", ignore_errors=True)
    logfile = local_models.run_dir(args.dir) / f"{model.key}.log"
    offset = logfile.stat().st_size if logfile.exists() else 0
    cmd = pytest_command(model, args, out, mode)
    env = {**os.environ, "OPENAI_API_KEY": "local-dummy-key", "PYTHONPATH": str(REPO)}
    env.pop("OPENAI_BASE_URL", None)
    print(f"\n$ {' '.join(cmd)}", flush=True)
    start = time.monotonic()
    with (out / "pytest.log").open("w", encoding="utf-8") as log:
        code = subprocess.run(cmd, cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                              check=False).returncode
    wall = time.monotonic() - start
    if code not in (0, 1):  # 1: an optbench gate failed, which is expected of these models
        tail = (out / "pytest.log").read_text(encoding="utf-8").splitlines()[-15:]
        raise RuntimeError(f"pytest exited with {code}; see {out / 'pytest.log'}:\n" + "\n".join(tail))
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    figures = summarize(report, token_limit(mode, args.max_tokens, provider_for(model, args.endpoint)))
    figures.update(wall_seconds=wall, pytest_exit=code, command=cmd, server=server_counts(logfile, offset))
    print_summary(f"{model.key} [{mode}]", model, figures, wall, figures["server"])
    if figures["mean_mass"] is not None:
        print(f"  logprobs: mean probability mass on the answer {figures['mean_mass']:.2f}")
    print(f"  answers read as: {figures['answers_by_mode_read']}")
    (out / "figures.json").write_text(json.dumps(figures, indent=1) + "\n", encoding="utf-8")
    if args.dump:
        n = dump(report, out / "answers.jsonl")
        print(f"  dumped {n} answers to {out / 'answers.jsonl'}")
    if args.show:
        print(f"  {args.show} random parsed answers (seed {args.seed}):")
        show(report, args.show, args.seed)
    return figures


def main_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(local_models.MODELS), help="comma-separated: smollm2,gemma3")
    parser.add_argument("--suites", default="track_b,known_answers", help="comma-separated: track_b,known_answers")
    parser.add_argument("--conditions", default="base",
                        help=f"Track B arms, comma-separated, or 'all' (default base; arms: {', '.join(TRACK_B_ARMS)})")
    parser.add_argument("-k", default="", help="extra pytest -k expression (e.g. 'academic or geography')")
    parser.add_argument("--samples", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=48)
    parser.add_argument("--temperature", type=float, help="default: the suites' own (0.7)")
    parser.add_argument("--xdist", type=int, default=0, metavar="N",
                        help="run each session under pytest-xdist with N workers (default: serially)")
    parser.add_argument("--concurrency", type=int, default=local_models.PARALLEL,
                        help=f"requests in flight (default {local_models.PARALLEL}, the server's slots)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request (default 120)")
    parser.add_argument("--bootstrap", type=int, default=10_000, help="bootstrap resamples per CI")
    parser.add_argument("--dir", type=Path, default=local_models.DEFAULT_DIR,
                        help=f"llama-server build and models (default {local_models.DEFAULT_DIR})")
    parser.add_argument("--server-bin", help="llama-server binary (default: the build under --dir)")
    parser.add_argument("--threads", type=int, default=local_models.THREADS,
                        help=f"llama-server -t (default {local_models.THREADS}: see local_models.THREADS)")
    parser.add_argument("--out", type=Path, default=Path("optbench-real-model"),
                        help="reports, logs and dumps go to OUT/<model>/ (default ./optbench-real-model)")
    parser.add_argument("--reuse-store", action="store_true", help="keep OUT/<model>/store between runs")
    parser.add_argument("--dump", action="store_true", help="write OUT/<model>/answers.jsonl")
    parser.add_argument("--show", type=int, default=0, metavar="N", help="print N random parsed answers")
    parser.add_argument("--seed", type=int, default=0, help="seed of --show's draw")
    parser.add_argument("--keep-servers", action="store_true", help="leave servers this run started running")
    parser.add_argument("--modes", default="text", help="elicitation modes to compare, comma-separated: "
                        "text,json,logprobs (default text)")
    parser.add_argument("--endpoint", choices=("auto", "chat", "completions"), default="auto",
                        help="auto (default): the completions endpoint with the scaffold for base models, chat "
                             "otherwise")
    parser.add_argument("--parallel", type=int, default=local_models.PARALLEL,
                        help=f"llama-server -np for servers this run starts (default {local_models.PARALLEL})")
    parser.add_argument("--ports", default="", help="use servers on other ports, e.g. smollm2=8191,gemma3=8192")
    args = parser.parse_args(argv)
    args.modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    args.suites = [s.strip() for s in args.suites.split(",") if s.strip()]
    if unknown := [s for s in args.suites if s not in SUITES]:
        parser.error(f"unknown suites {unknown}; choose from {sorted(SUITES)}")
    args.conditions = [c.strip() for c in args.conditions.split(",") if c.strip()]
    if args.conditions != ["all"] and (unknown := [c for c in args.conditions if c not in TRACK_B_ARMS]):
        parser.error(f"unknown Track B arms {unknown}")
    args.out = args.out.resolve()
    models = local_models.selected(args.models)
    ports = dict(pair.split("=", 1) for pair in args.ports.split(",") if "=" in pair)
    args.models_selected = [dataclasses.replace(m, port=int(ports[m.key])) if m.key in ports else m for m in models]
    return args


def main(argv: list[str] | None = None) -> int:
    args = main_args(argv)
    models = args.models_selected
    started: list[local_models.LocalModel] = []
    results: dict[str, Any] = {}
    try:
        for model in models:  # one at a time: the machine has 2 cores
            if local_models.start(model, args.dir, server_bin=args.server_bin, threads=args.threads,
                                  parallel=args.parallel):
                started.append(model)
            results[model.key] = {mode: run_model(model, args, mode) for mode in args.modes}
            if model in started and not args.keep_servers:
                local_models.stop(model, args.dir)
                started.remove(model)
    finally:
        if not args.keep_servers:
            for model in started:
                local_models.stop(model, args.dir)
    (args.out / "figures.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
