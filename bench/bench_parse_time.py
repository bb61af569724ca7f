"""Parse-time benchmark: the answer parser's time grows linearly with the length of a reply.

Replies of about 1 kB, 10 kB and 100 kB in several shapes (long digit runs, prose full of
numbers, list-like and pathological inputs such as 40 kB of digits or "1,1,1,..."), each
parsed with the question it answers. Prints the CPU time per kB (the least of --repeat runs), and the
ratio of the time per kB at 10 kB and 100 kB to that at 1 kB (1.0 = linear; above 1 =
superlinear). Two columns: as used (replies longer than ``MAX_CHARS`` are read in their
first and last halves of that length, so the time levels off) and with that cap lifted (the
scanner itself). Exits 1 when the uncapped time per kB at 100 kB is more than 3x that at 1 kB.

Run: python bench/bench_parse_time.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable

from pytest_optbench.answers.extract import lexer
from pytest_optbench.answers.parse import parse_answer

QUESTION = ("A graduate program admits 25% of the people who apply to it. A student whose application is "
            "typical applies this year.\n\nWhat is the probability that the student is not admitted?")
SIZES_KB = (1, 10, 100)
MAX_RATIO = 3.0


def _fill(unit: str, kb: int, tail: str = "") -> str:
    size = kb * 1000
    return (unit * (size // len(unit) + 1))[:size - len(tail)] + tail


SHAPES: dict[str, Callable[[int], str]] = {
    "digits": lambda kb: _fill("9", kb),
    "digits then an answer": lambda kb: _fill("1234567890", kb, "\n\nAnswer: 75"),
    "1,1,1,...": lambda kb: _fill("1,", kb),
    "1.1.1....": lambda kb: _fill("1.", kb),
    "prose with numbers": lambda kb: _fill(
        "In 2019, 1,250 of the 5,000 applicants (25%) were admitted after 3 rounds; a 40-year-old "
        "applicant paid $7,500. ", kb, "I'd estimate 75%."),
    "probability sentences": lambda kb: _fill(
        "The probability that the student is not admitted is 75%. ", kb),
    "heads without numbers": lambda kb: _fill("probability of the answer is that ", kb, "40%"),
    "brackets": lambda kb: _fill("((((", kb, "65"),
    "percent signs": lambda kb: _fill("5% ", kb),
    "CJK": lambda kb: _fill("该论文被接受发表的概率约为百分之四十。", kb),
    "template tokens": lambda kb: _fill("<|im_end|>", kb),
}


def _time(text: str, repeat: int) -> float:
    """Least CPU time of ``repeat`` parses (CPU time of this process, so other work on a shared
    machine does not count; the least, because interference only ever adds)."""
    runs = []
    for _ in range(repeat):
        start = time.process_time()
        parse_answer(text, question=QUESTION)
        runs.append(time.process_time() - start)
    return min(runs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per reply (the least counts)")
    args = parser.parse_args()
    parse_answer("warm up 65%", question=QUESTION)
    cap = lexer.MAX_CHARS
    header = "shape".ljust(24) + "".join(f"{kb:>4} kB ms/kB" for kb in SIZES_KB)
    worst = 0.0
    for capped in (True, False):
        lexer.MAX_CHARS = cap if capped else 10**9
        title = f"as used (replies over {cap:,} characters read in their first and last halves)" if capped \
            else "cap lifted (the scanner alone)"
        print(f"\n{title}\n{header}   ratio 10/1  100/1")
        for name, make in SHAPES.items():
            per_kb = [1000 * _time(make(kb), args.repeat) / kb for kb in SIZES_KB]
            ratios = [p / per_kb[0] for p in per_kb[1:]]
            if not capped:
                worst = max(worst, ratios[-1])
            print(name.ljust(24) + "".join(f"{p:>13.3f}" for p in per_kb)
                  + "".join(f"{r:>10.2f}" for r in ratios))
    lexer.MAX_CHARS = cap
    ok = worst <= MAX_RATIO
    print(f"\nworst uncapped time-per-kB ratio 100 kB / 1 kB: {worst:.2f} (<= {MAX_RATIO:g}: "
          f"{'linear' if ok else 'SUPERLINEAR'})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
