"""``--optbench-bank``: the bundled item bank in a session, and which gates a session applies.

The bank joins whatever pytest collects (the paths given, else the current directory or
``testpaths``), so ``-k``, markers, ``--language``, shards and batches narrow it as they narrow
any suite. Gates come from ``--thresholds`` (repeatable), else the project's
``thresholds.yaml`` at the rootdir, else, for a session that audits the bank, the bundled
default gates, which then judge the bundled suites only.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..options import THRESHOLDS_FILE, RunOptions
from ..suite.bundled import bank_suite_ids, bundled
from .controller import display_path

if TYPE_CHECKING:
    from ..scoring.gates.spec import Gate

NO_BANK = ("--optbench-bank: this installation of pytest-optbench carries no item bank (a wheel built without "
           "the repository's setup.py, or a checkout without suites/); reinstall it from a wheel or sdist of the "
           "project.")


def add_bank(config: pytest.Config) -> None:
    """Append the bank's directory to the session's arguments, unless a path given lies in
    it (``pytest --optbench-bank <bank>/en`` narrows it). A path that holds the bank (a
    checkout's root) does not stand for it: pytest skips virtualenvs and hidden folders, where
    an installed bank lives; a file collected twice is collected once."""
    found = bundled()
    if found is None:
        raise pytest.UsageError(NO_BANK)
    bank = found.suites.resolve()
    for arg in config.args:
        if Path(config.invocation_params.dir, arg.split("::")[0]).resolve().is_relative_to(bank):
            return
    config.args.append(str(bank))


def session_thresholds(options: RunOptions, root: Path) -> tuple[list[Gate], str | None, str | None]:
    """(gates, how the summary names their source, the files' multiplicity). Scoring is
    imported only when there are gates: a session that gates nothing loads none of it."""
    if options.thresholds_paths:
        from ..scoring.gates.spec import read_thresholds_files

        files = [(path, display_path(path, root)) for path in options.thresholds_paths]
        read = read_thresholds_files(files)
        return read.gates, " + ".join(display for _, display in files), read.multiplicity
    found = bundled() if options.bank else None
    if found is None:
        return [], None, None
    from ..scoring.gates.spec import read_thresholds

    read = read_thresholds(found.thresholds, str(found.thresholds))
    scope = bank_suite_ids(found.suites)
    gates = [replace(g, source=str(found.thresholds), scope=scope) for g in read.gates]
    display = (f"the bundled defaults of {found.origin} ({found.thresholds}), judging the bundled suites only: "
               f"no {THRESHOLDS_FILE} at {root} and no --thresholds")
    return gates, display, read.multiplicity
