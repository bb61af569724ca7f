"""The built-in simulated model's answers, computed ahead by a process pool.

A simulated answer and its reading depend on the prompt alone (every draw is seeded by the
prompt's meta and sample index), so the spare processes of a serial run
(``session/spare.py``) can answer its last items while this process runs the first. Chunks
of ``CHUNK`` items go to the pool from the last one backwards; when this process reaches a
chunk, it takes the records if the pool has them or is computing them, and answers the
chunk itself if the pool has not started it. Either way they are the same records to the
bit. A pool that fails leaves the rest to this process: nothing is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Executor, Future
from typing import Any

from ..prompts.build import PromptSpec
from ..records.item import PromptRecord

CHUNK = 24  # items per task: little work is done twice where the two sides meet
WAIT = 60.0  # seconds at most for a chunk the pool is computing (a sim chunk takes ~0.1 s)


def answer_chunk(model: Any, items: Sequence[Sequence[PromptSpec]]) -> list[list[PromptRecord]]:
    """In a pool process: the records of each item, as ``engine.elicit`` gives them."""
    from ..providers.base import as_model
    from .engine import elicit

    answering = as_model(model)
    return [elicit(answering, specs) for specs in items]


class AnswersAhead:
    """The chunks given to the pool, and the records taken back from it."""

    def __init__(self, pool: Executor, model: Any, items: Sequence[Sequence[PromptSpec]]) -> None:
        self._positions = {id(specs): index for index, specs in enumerate(items)}  # id(spec list) -> place
        self._chunks: list[Future[list[list[PromptRecord]]] | None] = [None] * -(-len(items) // CHUNK)
        self._taken: dict[int, list[list[PromptRecord]]] = {}  # chunk -> its records, once taken from the pool
        for chunk in reversed(range(len(self._chunks))):
            start = chunk * CHUNK
            try:
                self._chunks[chunk] = pool.submit(answer_chunk, model, [list(s) for s in items[start:start + CHUNK]])
            except Exception:  # noqa: BLE001 - a pool that takes no more work: the rest is answered here
                break

    def take(self, specs: Sequence[PromptSpec]) -> list[PromptRecord] | None:
        """The records of the item whose prompts are ``specs``, from the pool; None when this
        process should answer it (the pool had not started its chunk, or failed)."""
        index = self._positions.get(id(specs))
        if index is None:
            return None
        chunk = index // CHUNK
        if chunk in self._taken:  # its first item waited for the pool, the others need not
            return self._taken[chunk][index % CHUNK]
        future = self._chunks[chunk]
        if future is None or future.cancel():
            self._chunks[chunk] = None  # its other items are answered here too
            return None
        try:
            self._taken[chunk] = future.result(timeout=WAIT)
        except Exception:  # noqa: BLE001 - a broken pool, or a chunk past WAIT: answered here
            self._chunks[chunk] = None
            return None
        return self._taken[chunk][index % CHUNK]

    def close(self) -> None:
        """The items have run: the chunks nobody took are not computed."""
        for future in self._chunks:
            if future is not None:
                future.cancel()
        self._chunks = []
        self._taken = {}
        self._positions = {}
