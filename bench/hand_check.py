"""The hand-check listing of ``bench_real_model.py --dump``: for each model and mode, N random
answers that reached a metric, with what the model sent and the value taken from it.

    python bench/hand_check.py OUT [--count 50] [--seed 0] > listing.md

Each line carries a mechanical check, to be confirmed by reading: json, the reply is a JSON
object whose "probability" is the value; logprobs, the generated reply starts with the answer
(a number, or yes/no) and the value is the expected value of the stored distribution; text,
the value's digits occur in the reply (the extractor's rules decide which number is the
answer, so these lines need reading).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any


def check(row: dict[str, Any]) -> str:
    value, raw, mode = row["value"], row["raw"] or "", row.get("mode") or "text"
    if mode == "json":
        try:
            data = json.loads(raw)
        except ValueError:
            return "FAIL: not JSON"
        return "ok: field" if isinstance(data, dict) and data.get("probability") == value else "FAIL: field differs"
    if mode == "logprobs":
        dist = row.get("distribution") or {}
        if set(dist) <= {"yes", "no"} and dist:
            expected = 100 * dist.get("yes", 0.0) / max(1e-12, dist.get("yes", 0.0) + dist.get("no", 0.0))
        else:
            expected = sum(float(k) * p for k, p in dist.items()) / max(1e-12, sum(dist.values()))
        start = raw.lstrip()[:1]
        shape = start.isdigit() or raw.lstrip().lower().startswith(("yes", "no"))
        close = abs(expected - value) < 0.6  # the stored distribution is rounded to 4 places
        return "ok: EV" if close and shape and (row.get("mass") or 0) >= 0.5 else (
            f"CHECK: starts {start!r}, EV {expected:.1f}")
    digits = f"{value:g}"
    return "ok: in reply" if digits in raw.replace(",", "") else "CHECK: value not in reply"


def listing(out: Path, count: int, seed: int) -> str:
    lines = []
    for path in sorted(out.glob("*/*/answers.jsonl")):
        model, mode = path.parent.parent.name, path.parent.name
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        parsed = [r for r in rows if r["value"] is not None]
        sample = random.Random(seed).sample(parsed, min(count, len(parsed)))
        title = f"## {model}, {mode}: {len(sample)} of {len(parsed)} answers with a value ({len(rows)} answers)"
        lines += [title, "",
                  "| # | item/role | question (end) | reply | top of distribution | value | check | verdict |",
                  "|---|---|---|---|---|---|---|---|"]
        for n, row in enumerate(sample, 1):
            question = row["question"].strip().splitlines()[-1][-70:]
            dist = row.get("distribution") or {}
            top = ", ".join(f"{k}:{v:.2f}" for k, v in sorted(dist.items(), key=lambda kv: -kv[1])[:4])
            if row.get("mass") is not None:
                top += f" (mass {row['mass']:.2f})"
            raw = (row["raw"] or "").replace("\n", "\\n").replace("|", "\\|")[:80]
            verdict = check(row)
            # json and logprobs: the check is the rule (the field the grammar forced; the mean
            # of the answer position's distribution); text replies are judged by reading.
            mark = "yes" if verdict.startswith("ok") and (row.get("mode") or "text") != "text" else "?"
            lines.append(f"| {n} | {row['item']}/{row['role']} | {question.replace('|', '/')} | `{raw}` | {top} | "
                         f"{row['value']:.1f} | {verdict} | {mark} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, help="the --out directory of bench_real_model.py --dump")
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    sys.stdout.write(listing(args.out, args.count, args.seed) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
