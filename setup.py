"""Build hook: the bundled item bank and default gates travel in the wheel.

The repository keeps one copy of them, at the top level (``suites/`` and ``thresholds.yaml``,
which ``pytest suites`` and the README use); the sdist carries them there (MANIFEST.in), and
building the wheel copies them into the package as ``pytest_optbench/bundled/``. An editable
install builds no wheel: ``pytest_optbench.suite.bundled`` finds the checkout's copy instead.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUNDLED = ("suites", "thresholds.yaml")  # top-level sources -> pytest_optbench/bundled/


class BuildWithBank(build_py):
    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "pytest_optbench" / "bundled"
        if target.exists():
            shutil.rmtree(target)
        target.mkdir(parents=True)
        for name in BUNDLED:
            source = ROOT / name
            if not source.exists():
                raise SystemExit(f"setup.py: {source} is missing; the wheel must carry the bundled bank.")
            if source.is_dir():
                shutil.copytree(source, target / name, ignore=shutil.ignore_patterns("__pycache__", ".*"))
            else:
                shutil.copy2(source, target / name)


setup(cmdclass={"build_py": BuildWithBank})
