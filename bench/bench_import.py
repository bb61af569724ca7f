"""What the plugin costs a repository that has no suites.

pytest loads every installed ``pytest11`` plugin in every session, so pytest-optbench is
imported wherever it is installed. Two figures, each the minimum over interleaved runs (the
minimum is the least noisy estimate of a fixed cost on a shared machine):

1. import: ``import pytest, pytest_optbench.plugin`` minus ``import pytest`` (ms);
2. session: ``pytest`` on a directory with one trivial test, with the plugin minus with
   ``-p no:optbench`` (ms, and the ratio of the two sessions).

Usage: python bench/bench_import.py [--runs 15]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def minimum_pair(first: list[str], second: list[str], cwd: Path, runs: int) -> tuple[float, float]:
    """Interleaved runs, so both commands see the same load."""
    a, b = [], []
    for _ in range(runs):
        a.append(timed(first, cwd))
        b.append(timed(second, cwd))
    return min(a), min(b)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        cwd = Path(tmp)
        (cwd / "test_trivial.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        bare, plugin = minimum_pair([python, "-c", "import pytest"],
                                    [python, "-c", "import pytest, pytest_optbench.plugin"], cwd, args.runs)
        print(f"import: pytest alone {bare * 1000:.0f} ms, with pytest_optbench.plugin {plugin * 1000:.0f} ms: "
              f"plugin import costs {(plugin - bare) * 1000:.0f} ms")
        without, with_plugin = minimum_pair(
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:optbench"],
            [python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd, args.runs)
        print(f"session with one trivial test: {without * 1000:.0f} ms without the plugin, "
              f"{with_plugin * 1000:.0f} ms with it: +{(with_plugin - without) * 1000:.0f} ms "
              f"({with_plugin / without:.2f}x)")
        heavy = subprocess.run(
            [python, "-c", ("import sys, pytest_optbench.plugin; "
                           "print(' '.join(m for m in ('numpy', 'scipy', 'yaml', 'openai', 'anthropic', "
                           "'matplotlib') if m in sys.modules))")],
            cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()
        print(f"heavy modules loaded by the plugin import: {heavy or 'none'}")


if __name__ == "__main__":
    main()
