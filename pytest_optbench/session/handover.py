"""The prompts an xdist worker hands to the controller that asks for them (session/asker.py).

A file in ``--optbench-cache-dir``, one per run, written whole by a rename and removed once
taken; only the fields a request and its store key are made of (engine.ApiElicitor.key).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a prompt is built: the plugin loads this module for every session
    from ..prompts.build import PromptSpec

PLANS = "plans"  # the folder of the hand-over files, in --optbench-cache-dir
FIELDS = ("system", "user", "samples", "temperature", "mode", "yes_no")


def plan_path(cache_dir: Path, run_id: str) -> Path:
    return cache_dir / PLANS / f"{run_id}.json"


def hand_over(cache_dir: Path, run_id: str, specs: Sequence[PromptSpec]) -> bool:
    """A worker's prompts for the controller, written whole or not at all (every worker
    collects the same prompts, so whichever writes last writes the same). False when the
    folder cannot be written (a full disk): the workers then ask themselves."""
    path = plan_path(cache_dir, run_id)
    payload = json.dumps([[getattr(spec, name) for name in FIELDS] for spec in specs], ensure_ascii=False)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{run_id}.", suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(payload)
        os.replace(temporary, path)
        return True
    except OSError:
        return False
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)


def take_over(path: Path) -> list[PromptSpec] | None:
    """The prompts handed over, or None while there are none yet; the file is removed."""
    from ..prompts.build import PromptSpec

    try:
        rows = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # not there yet (the hand-over is a rename: never half a file)
        return None
    with contextlib.suppress(OSError):
        path.unlink()
    return [PromptSpec("", system, user, samples, temperature, {}, mode, yes_no)
            for system, user, samples, temperature, mode, yes_no in rows]
