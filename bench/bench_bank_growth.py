"""The simulated audit of the bundled bank, and of the bank grown to every suite in all ten languages.

Issue 17 grows the bank from 1,810 items (2,230 item x arm results) to about 4,690 (8,890):
every English suite in each of the nine other languages, Track B with all eight arms. Until
the translations land, the grown bank is synthetic: the bundled suites, plus for each other
language a copy of each English suite it lacks (and of Track B, for its arms) with the suite
id ``<id>-<lang>`` and ``language: <lang>`` (the text stays English: the audit's cost does not
depend on the language). Each bank is audited as the README says, ``pytest suites
--model=sim:optimist`` with the repository's thresholds.yaml, in a subprocess; wall time and
the child's CPU time (user + sys) are printed, and CPU per item x arm result, whose
constancy across banks shows that no stage grows faster than the bank. On a shared machine
wall time follows the load; CPU time much less so.

Run: python bench/bench_bank_growth.py [--repeats 1]
"""

from __future__ import annotations

import argparse
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def grow(target: Path) -> None:
    """The bundled suites plus a synthetic translation of every English suite a language lacks."""
    shutil.copytree(ROOT / "suites", target)
    languages = sorted(p.name for p in (ROOT / "suites").iterdir() if p.is_dir() and p.name != "en")
    for lang in languages:
        for english in sorted((ROOT / "suites" / "en").glob("*.yaml")):
            if (target / lang / english.name).exists() and english.name != "track_b.yaml":
                continue
            text = english.read_text(encoding="utf-8")
            text = re.sub(r"^suite: (.+)$", rf"suite: \1-{lang}", text, count=1, flags=re.MULTILINE)
            text = re.sub(r"^language: .+$", f"language: {lang}", text, count=1, flags=re.MULTILINE)
            (target / lang / english.name).write_text(text, encoding="utf-8")


def audit(root: Path) -> tuple[float, float, str]:
    """(wall s, CPU s of the pytest process, pytest's last line)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pytest", "suites", "--model=sim:optimist", "-p", "no:cacheprovider",
                           "-q", "--rootdir", str(root)], cwd=root, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    if done.returncode not in (0, 1):
        raise SystemExit(f"the audit failed: {last}")
    return wall, cpu, last


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="optbench-bank-") as tmp:
        banks = {"bundled": Path(tmp) / "bundled", "grown": Path(tmp) / "grown"}
        shutil.copytree(ROOT / "suites", banks["bundled"] / "suites")
        grow(banks["grown"] / "suites")
        for root in banks.values():
            shutil.copy(ROOT / "thresholds.yaml", root / "thresholds.yaml")
        print(f"{'bank':<8}  {'results':>7}  {'wall s':>7}  {'CPU s':>6}  {'CPU ms/result':>13}")
        for name, root in banks.items():
            runs = [audit(root) for _ in range(args.repeats)]
            wall = statistics.median(r[0] for r in runs)
            cpu = statistics.median(r[1] for r in runs)
            found = re.search(r"(\d+) passed", runs[0][2])
            results = int(found.group(1)) if found else 0
            print(f"{name:<8}  {results:>7}  {wall:>7.1f}  {cpu:>6.1f}  {1000 * cpu / max(results, 1):>13.2f}")


if __name__ == "__main__":
    main()
