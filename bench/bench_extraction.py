"""Answer-extraction benchmark: the parser against the labelled corpus of model replies.

Reads the corpus (one JSON object a line; the labelling standard is the corpus's README)
from $OPTBENCH_PARSER_CORPUS, by default ../shared/data/parser-corpus.jsonl relative to the
repository root. Each reply is parsed as the engine parses it: with the question that was
sent and, where recorded, whether the reply hit the token limit. Prints the false-parse
rate (a number where the label is null), the miss rate (no number where there is a label)
and the wrong-value rate (tolerance 0.01), overall and per source and language, then lists
every failure. Exits 1 when a target is missed: false parses <= 1% of the null-labelled
replies, the exact value on >= 97% of the labelled ones.

Run: python bench/bench_extraction.py [--quiet]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from pytest_optbench.answers.parse import parse_answer

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = ROOT.parent / "shared" / "data" / "parser-corpus.jsonl"
TOLERANCE = 0.01
MAX_FALSE_PARSE = 0.01
MIN_EXACT = 0.97


@dataclass
class Tally:
    labelled: int = 0
    null: int = 0
    false_parse: int = 0
    miss: int = 0
    wrong: int = 0

    def add(self, outcome: str, labelled: bool) -> None:
        if labelled:
            self.labelled += 1
        else:
            self.null += 1
        if outcome == "false parse":
            self.false_parse += 1
        elif outcome == "miss":
            self.miss += 1
        elif outcome == "wrong value":
            self.wrong += 1

    def row(self, name: str) -> str:
        def rate(k: int, n: int) -> str:
            return f"{k:>3}/{n:<3} {100 * k / n:5.1f}%" if n else "     -        "
        exact = self.labelled - self.miss - self.wrong
        return (f"{name:<22} false parse {rate(self.false_parse, self.null)}  miss {rate(self.miss, self.labelled)}"
                f"  wrong value {rate(self.wrong, self.labelled)}  exact {rate(exact, self.labelled)}")


def outcome(value: float | None, label: float | None) -> str:
    if label is None:
        return "ok" if value is None else "false parse"
    if value is None:
        return "miss"
    return "ok" if abs(value - label) <= TOLERANCE else "wrong value"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quiet", action="store_true", help="do not list the failures")
    args = parser.parse_args()
    path = Path(os.environ.get("OPTBENCH_PARSER_CORPUS", DEFAULT_CORPUS))
    if not path.is_file():
        print(f"corpus not found: {path} (set OPTBENCH_PARSER_CORPUS)", file=sys.stderr)
        return 2
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    overall = Tally()
    groups: dict[str, Tally] = defaultdict(Tally)
    failures = []
    for rec in records:
        parsed = parse_answer(rec["answer"], question=rec.get("question"), truncated=rec.get("hit_token_limit"))
        label = rec["label"]
        result = outcome(parsed.value, label)
        labelled = label is not None
        overall.add(result, labelled)
        groups[f"source={rec['source']}"].add(result, labelled)
        groups[f"language={rec['language']}"].add(result, labelled)
        if result != "ok":
            failures.append((rec, parsed, result))
    print(f"corpus: {path} ({len(records)} replies)")
    print(overall.row("overall"))
    for name in sorted(groups):
        print(groups[name].row(name))
    false_rate = overall.false_parse / overall.null if overall.null else 0.0
    exact_rate = (overall.labelled - overall.miss - overall.wrong) / overall.labelled if overall.labelled else 1.0
    if failures and not args.quiet:
        print(f"\nfailures ({len(failures)}):")
        for rec, parsed, result in failures:
            got = "None" if parsed.value is None else f"{parsed.value:g}"
            print(f"  {rec['id']:<11} {result:<11} label {rec['label']!s:<9} got {got:<7} "
                  f"reason {parsed.reason!r}\n      answer {rec['answer'][:160]!r}")
    ok = false_rate <= MAX_FALSE_PARSE and exact_rate >= MIN_EXACT
    print(f"\ntargets: false parses {100 * false_rate:.2f}% (<= {100 * MAX_FALSE_PARSE:g}%), "
          f"exact value {100 * exact_rate:.2f}% (>= {100 * MIN_EXACT:g}%): {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
