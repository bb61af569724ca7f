"""Is a recorded answer the model's own? Each json / logprobs answer against the greedy reply.

For each model, endpoint (chat, completions) and mode (json, logprobs) this runs the plugin as
``bench_real_model.py`` does (temperature 0 in both modes, so that nothing but the mode's
constraint or reading differs), then asks the same server the same prompt once more, greedy
and unconstrained: no grammar, no schema, no log-probabilities; the same system prompt and
question (chat) or the same scaffold (completions, with the mode's examples). That reply is
read by the text rules (answers/parse.py); where it parses, it is the model's own answer to
compare with. Per model, endpoint and mode it reports:

* usable: recorded answers with a value (of all prompts);
* agree / differ: recorded values equal to the greedy reply's number (json: within 0.5 pp;
  logprobs on numbers: within 5 pp), where that reply parses; a value that differs is a
  false reading (or a real difference between the constrained and the free model, listed
  so that it can be judged);
* declined: answers the mode gave no value, by reason;
* json: the number the model writes, without a grammar, after the grammar's fixed start
  (``{"probability": `` given: the completions prompt extended, the chat reply prefilled);
  where the greedy reply is prose (chat) this still shows whether the grammar changed the number;
* yes/no (logprobs): whether P(yes) > 50 says what the greedy reply says;
* a seeded random draw of ``--sample`` recorded values (default 40), each with the greedy
  reply and its number, written to ``OUT/<endpoint>/<model>/<mode>/check.md``.

    python bench/bench_real_check.py --dir /work/llama --out /tmp/check --models smollm2,gemma3

Servers as in bench_real_model.py (started or reused; ``--parallel`` slots). Figures go to
``OUT/check.json``.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import urllib.request
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_real_model  # a sibling script
import local_models

from pytest_optbench.answers.parse import parse_answer
from pytest_optbench.kinds import binary
from pytest_optbench.prompts import modes
from pytest_optbench.prompts.build import builtin_system_prompt
from pytest_optbench.providers import completions

JSON_TOLERANCE = 0.5  # pp: json values are the reply's own digits
LOGPROBS_TOLERANCE = 5.0  # pp: the bound between a distribution's mean and the greedy number


def system_for(suite: str, mode: str) -> tuple[str, bool]:
    """The built-in system prompt the plugin sent, and whether the item is a yes/no one."""
    if suite == "known-answers":
        return (binary.YES_NO_PROMPT if mode == modes.LOGPROBS else binary.SYSTEM_PROMPT), mode == modes.LOGPROBS
    return builtin_system_prompt("inverted_pair", "B"), False


def free_request(model: local_models.LocalModel, endpoint: str, mode: str, system: str, user: str, yes_no: bool,
                 max_tokens: int) -> dict[str, Any]:
    """The same prompt, greedy and unconstrained: (path, body)."""
    if endpoint == "completions":
        return {"path": "/v1/completions", "body": {
            "model": model.alias, "prompt": completions.scaffold(system, user, mode=mode, yes_no=yes_no),
            "temperature": 0, "max_tokens": max_tokens,
            "stop": completions.JSON_STOP if mode == modes.JSON else completions.STOP}}
    return {"path": "/v1/chat/completions", "body": {
        "model": model.alias, "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
        "temperature": 0, "max_tokens": max_tokens}}


def ask(model: local_models.LocalModel, request: dict[str, Any], timeout: float) -> tuple[str, str | None]:
    data = json.dumps(request["body"]).encode()
    url = f"http://127.0.0.1:{model.port}{request['path']}"
    req = urllib.request.Request(url, data, {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as response:
        choice = json.load(response)["choices"][0]
    text = choice.get("text") if "text" in choice else (choice.get("message") or {}).get("content")
    return str(text or ""), choice.get("finish_reason")


FIELD = '"' + modes.ANSWER_FIELD + '":'  # no trailing blank: the model writes " 0.25" itself
PREFIX = "{" + FIELD


def reply_start(raw: str | None) -> str:
    """The recorded reply up to the number's field (' {"probability":', or the reasoning
    before it), else the bare grammar's start."""
    return raw[: raw.index(FIELD) + len(FIELD)] if raw and FIELD in raw else PREFIX


def prefix_request(model: local_models.LocalModel, endpoint: str, system: str, user: str,
                   start: str = PREFIX) -> dict[str, Any]:
    """json mode: the constrained reply's own start given (the text up to its colon), the
    number left free (no grammar): what the model writes there unconstrained is what the
    grammar may only cut, never change."""
    if endpoint == "completions":
        prompt = completions.scaffold(system, user, mode=modes.JSON) + start
        return {"path": "/v1/completions", "body": {"model": model.alias, "prompt": prompt, "temperature": 0,
                                                    "max_tokens": 24, "stop": ["}", "\n"]}}
    return {"path": "/v1/chat/completions", "body": {  # llama.cpp continues a final assistant message
        "model": model.alias, "temperature": 0, "max_tokens": 24, "stop": ["}", "\n"],
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user},
                     {"role": "assistant", "content": start}]}}


def prefix_value(continuation: str) -> float | None:
    """The number the model wrote after the prefix, on the schema's scale (None: not a number).
    Unconstrained after a reasoning, a model may quote it ("100%", "The answer is 100%."):
    that string is read by the text rules."""
    text = continuation.split(FIELD, 1)[1] if FIELD in continuation else continuation
    # (llama.cpp's chat reply repeats the prefilled start)
    if text.lstrip().startswith('"'):
        quoted = text.lstrip()[1:].split('"')[0]
        return parse_answer(quoted).value
    text = text.split("}")[0].strip().rstrip(",")
    reading = modes.json_value(PREFIX + " " + text + "}")
    return reading[0] if reading else None


def yes_no_of(text: str) -> str | None:
    words = text.strip().lower().lstrip("*\"'").split()
    first = words[0].strip(".,!:;") if words else ""
    return first if first in ("yes", "no") else None


def check(model: local_models.LocalModel, endpoint: str, mode: str, report: dict[str, Any],
          args: argparse.Namespace, cache: dict[str, tuple[str, str | None]]) -> dict[str, Any]:
    rows = []
    for item, prompt, _index, answer in bench_real_model._answers(report):
        system, yes_no = system_for(item["suite"], mode)
        request = free_request(model, endpoint, mode, system, prompt["user"], yes_no, args.free_tokens)
        key = json.dumps(request, sort_keys=True)
        if key not in cache:
            cache[key] = ask(model, request, args.timeout)
        free_text, finish = cache[key]
        free = parse_answer(free_text, question=prompt["user"], truncated=finish == "length")
        prefixed: float | None = None
        if mode == modes.JSON and args.prefix_check:
            request = prefix_request(model, endpoint, system, prompt["user"], reply_start(answer["raw"]))
            key = json.dumps(request, sort_keys=True)
            if key not in cache:
                cache[key] = ask(model, request, args.timeout)
            prefixed = prefix_value(cache[key][0])
        rows.append({"item": item["item"], "role": prompt["role"], "suite": item["suite"], "yes_no": yes_no,
                     "user": prompt["user"],
                     "raw": answer["raw"], "value": answer["value"], "reason": answer["reason"],
                     "answer_mode": answer.get("mode") or mode, "error": answer["error"],
                     "free": free_text, "free_finish": finish, "free_value": free.value, "free_reason": free.reason,
                     "free_rule": free.rule,
                     "free_yes_no": yes_no_of(free_text) if yes_no else None, "prefixed_value": prefixed})
    tolerance = LOGPROBS_TOLERANCE if mode == modes.LOGPROBS else JSON_TOLERANCE
    figures = summarise(rows, tolerance, mode)
    rng = random.Random(args.seed)
    recorded = [r for r in rows if r["value"] is not None and not r["yes_no"]] if mode == modes.LOGPROBS else \
        [r for r in rows if r["value"] is not None]
    drawn = rng.sample(recorded, min(args.sample, len(recorded)))
    figures["sample"] = sample_figures(drawn, tolerance)
    figures["rows"] = rows
    figures["drawn"] = drawn
    return figures


def _compare(row: dict[str, Any], tolerance: float) -> str | None:
    if row["value"] is None or row["free_value"] is None:
        return None
    return "agree" if abs(row["value"] - row["free_value"]) <= tolerance else "differ"


def summarise(rows: list[dict[str, Any]], tolerance: float, mode: str) -> dict[str, Any]:
    numeric = [r for r in rows if not r["yes_no"]]
    out: dict[str, Any] = {"prompts": len(rows), "usable": sum(r["value"] is not None for r in rows),
                           "errors": sum(r["error"] is not None for r in rows)}
    out["numeric"] = {"prompts": len(numeric), "usable": sum(r["value"] is not None for r in numeric),
                      "free_parsed": sum(r["free_value"] is not None for r in numeric)}
    verdicts = [(_compare(r, tolerance), r) for r in numeric]
    out["numeric"]["both"] = sum(v is not None for v, _ in verdicts)
    out["numeric"]["agree"] = sum(v == "agree" for v, _ in verdicts)
    out["numeric"]["differ"] = sum(v == "differ" for v, _ in verdicts)
    declined: dict[str, int] = {}
    for r in rows:
        if r["value"] is None and r["error"] is None:
            reason = (r["reason"] or "?").split(" (")[0]
            declined[reason] = declined.get(reason, 0) + 1
    out["declined"] = dict(sorted(declined.items(), key=lambda kv: -kv[1]))
    if mode == modes.JSON:
        pairs = [r for r in rows if r["value"] is not None and r.get("prefixed_value") is not None]
        out["prefix_check"] = {"both": len(pairs), "agree": sum(abs(r["value"] - r["prefixed_value"]) <= tolerance
                                                                for r in pairs)}
    out["read_as"] = {}
    for r in rows:
        out["read_as"][r["answer_mode"]] = out["read_as"].get(r["answer_mode"], 0) + 1
    if mode == modes.LOGPROBS:
        yes_no = [r for r in rows if r["yes_no"] and r["value"] is not None and r["free_yes_no"] is not None]
        out["yes_no"] = {"prompts": sum(r["yes_no"] for r in rows), "usable": sum(
            r["yes_no"] and r["value"] is not None for r in rows), "both": len(yes_no),
            "agree": sum((r["value"] > 50) == (r["free_yes_no"] == "yes") for r in yes_no)}
    return out


def sample_figures(drawn: list[dict[str, Any]], tolerance: float) -> dict[str, int]:
    verdicts = [_compare(r, tolerance) for r in drawn]
    return {"drawn": len(drawn), "free_parsed": sum(v is not None for v in verdicts),
            "agree": verdicts.count("agree"), "differ": verdicts.count("differ")}


def _cell(text: Any, width: int = 90) -> str:
    shown = json.dumps(text, ensure_ascii=False) if isinstance(text, str) else str(text)
    shown = shown if len(shown) <= width else shown[: width - 3] + '..."'
    return shown.replace("|", "\\|")


def write_listing(path: Path, title: str, figures: dict[str, Any], tolerance: float) -> None:
    drawn = f"Random draw of {len(figures['drawn'])} recorded values (seed in check.json): {figures['sample']}"
    lines = [f"# {title}", "", drawn, "",
             "| # | item / role | recorded | reply (constrained) | greedy reply (unconstrained) | its number | verdict |",
             "|---|---|---|---|---|---|---|"]
    for n, r in enumerate(figures["drawn"], 1):
        verdict = _compare(r, tolerance) or f"- ({(r['free_reason'] or '').split(' (')[0]})"
        lines.append(f"| {n} | {r['item']}/{r['role']} | {r['value']:g} | {_cell(r['raw'], 40)} | {_cell(r['free'])} "
                     f"| {'-' if r['free_value'] is None else format(r['free_value'], 'g')} | {verdict} |")
    differ = [r for r in figures["rows"] if _compare(r, tolerance) == "differ"]
    lines += ["", f"All {len(differ)} recorded values that differ from the greedy reply's number:", ""]
    for r in differ:
        lines.append(f"- {r['item']}/{r['role']}: recorded {r['value']:g} from {_cell(r['raw'], 60)}; greedy "
                     f"{r['free_value']:g} from {_cell(r['free'])}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def print_figures(label: str, figures: dict[str, Any]) -> None:
    n = figures["numeric"]
    print(f"\n== {label}")
    print(f"  usable {figures['usable']}/{figures['prompts']} (errors {figures['errors']}); read as "
          f"{figures['read_as']}")
    print(f"  numeric: usable {n['usable']}/{n['prompts']}, greedy reply parses {n['free_parsed']}, both "
          f"{n['both']}: agree {n['agree']}, differ {n['differ']}")
    print(f"  random draw: {figures['sample']}")
    if "prefix_check" in figures:
        c = figures["prefix_check"]
        print(f"  the number after the grammar's fixed start, unconstrained: {c['both']} read, {c['agree']} the "
              "recorded value")
    if "yes_no" in figures:
        y = figures["yes_no"]
        print(f"  yes/no: usable {y['usable']}/{y['prompts']}, greedy says yes/no {y['both']}: same side {y['agree']}")
    print("  declined: " + (", ".join(f"{k} {v}" for k, v in figures["declined"].items()) or "none"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=local_models.DEFAULT_DIR)
    parser.add_argument("--out", type=Path, default=Path("optbench-real-check"))
    parser.add_argument("--models", default=",".join(local_models.MODELS))
    parser.add_argument("--endpoints", default="chat,completions")
    parser.add_argument("--modes", default="json,logprobs")
    parser.add_argument("-k", default="academic or business or everyday or ka-00 or ka-01 or ka-02 or ka-03 or ka-04",
                        help="pytest -k (default: the 30 Track B and 49 known-answer items of docs/local-models.md)")
    parser.add_argument("--max-tokens", type=int, default=48, help="--max-tokens of the plugin runs")
    parser.add_argument("--free-tokens", type=int, default=64, help="token limit of the greedy unconstrained reply")
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=300.0)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--parallel", type=int, default=2, help="llama-server -np for servers this run starts")
    parser.add_argument("--no-prefix-check", dest="prefix_check", action="store_false",
                        help="json mode: skip asking for the free number after the grammar's fixed start")
    parser.add_argument("--reuse-store", action="store_true")
    parser.add_argument("--keep-servers", action="store_true")
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    base = bench_real_model.main_args(["--dir", str(args.dir), "--samples", "1", "--max-tokens", str(args.max_tokens),
                                       "--temperature", "0", "--concurrency", str(args.concurrency), "-k", args.k,
                                       "--timeout", str(args.timeout), "--dump"]
                                      + (["--reuse-store"] if args.reuse_store else []))
    results: dict[str, Any] = {"seed": args.seed, "sample": args.sample, "k": args.k}
    for model in local_models.selected(args.models):
        started = local_models.start(model, args.dir, parallel=args.parallel)
        try:
            for endpoint in [e.strip() for e in args.endpoints.split(",") if e.strip()]:
                cache: dict[str, tuple[str, str | None]] = {}
                for mode in [m.strip() for m in args.modes.split(",") if m.strip()]:
                    run = copy.copy(base)
                    run.out, run.endpoint = args.out / endpoint, endpoint
                    bench_real_model.run_model(model, run, mode)
                    report = json.loads((run.out / model.key / mode / "report.json").read_text(encoding="utf-8"))
                    figures = check(model, endpoint, mode, report, args, cache)
                    label = f"{model.key} / {endpoint} / {mode}"
                    print_figures(label, figures)
                    tolerance = LOGPROBS_TOLERANCE if mode == modes.LOGPROBS else JSON_TOLERANCE
                    write_listing(run.out / model.key / mode / "check.md", label, figures, tolerance)
                    rows = figures.pop("rows")
                    with (run.out / model.key / mode / "check_rows.jsonl").open("w", encoding="utf-8") as out:
                        out.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
                    figures.pop("drawn")
                    results.setdefault(model.key, {}).setdefault(endpoint, {})[mode] = figures
                    (args.out / "check.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
        finally:
            if started and not args.keep_servers:
                local_models.stop(model, args.dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
