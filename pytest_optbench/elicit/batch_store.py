"""The batch ledger: which provider batches exist, which lines they hold, what came of them.

It lives in the response store's SQLite file (its own tables, next to ``answers``), so the
store is all a machine needs to pick up a batch another run submitted: ``batches`` (one
row per provider batch: id, provider identity, state, expiry), ``batch_lines`` (one row per
line: the answer key and samples it asks for, and what came of it), ``batch_answers``
(which stored samples a batch delivered, for their price) and ``batch_shares`` (xdist
workers telling each other that their share of a run is settled). Never an API key.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .store import StoreError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    identity TEXT NOT NULL,          -- JSON: provider, model, base URL (public form)
    state TEXT NOT NULL,             -- open | collected | failed
    lines INTEGER NOT NULL,
    submitted REAL NOT NULL,
    expires REAL,
    run_id TEXT NOT NULL,
    detail TEXT
);
CREATE TABLE IF NOT EXISTS batch_lines (
    batch_id TEXT NOT NULL,
    custom_id TEXT NOT NULL,
    key TEXT NOT NULL,
    first_sample INTEGER NOT NULL,
    count INTEGER NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',   -- pending | done | failed | expired
    message TEXT,
    PRIMARY KEY (batch_id, custom_id)
);
CREATE INDEX IF NOT EXISTS batch_lines_key ON batch_lines (key, state);
CREATE TABLE IF NOT EXISTS batch_answers (
    key TEXT NOT NULL,
    sample INTEGER NOT NULL,
    batch_id TEXT NOT NULL,
    PRIMARY KEY (key, sample)
);
CREATE TABLE IF NOT EXISTS batch_shares (
    run_id TEXT NOT NULL,
    shard INTEGER NOT NULL,
    beat REAL NOT NULL,
    settled INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, shard)
);
"""


@dataclass(frozen=True)
class BatchRow:
    id: str
    provider: str
    identity: dict[str, Any]
    state: str
    lines: int
    submitted: float
    expires: float | None
    run_id: str
    detail: str | None = None


@dataclass(frozen=True)
class LineRow:
    batch_id: str
    custom_id: str
    key: str
    first: int
    count: int
    state: str = "pending"
    message: str | None = None


def identity_text(identity: Mapping[str, Any]) -> str:
    return json.dumps(dict(sorted(identity.items())), sort_keys=True)


class BatchLedger:
    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA busy_timeout=60000")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{path}: the response store is not a readable SQLite database ({exc}); "
                             "move it away or choose another --optbench-cache-dir.") from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot open the response store ({exc.strerror}).") from None

    def _run(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        try:
            return self._db.execute(sql, params).fetchall()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: the batch ledger cannot be read or written ({exc}).") from None

    # -- batches --------------------------------------------------------------------------

    def add_batch(self, batch_id: str, identity: Mapping[str, Any], expires: float | None, run_id: str,
                  lines: Sequence[LineRow]) -> None:
        """Record a batch the provider accepted and every line in it, in one transaction."""
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.execute(
                    "INSERT OR REPLACE INTO batches (id, provider, identity, state, lines, submitted, expires, run_id) "
                    "VALUES (?, ?, ?, 'open', ?, ?, ?, ?)",
                    (batch_id, str(identity.get("provider", "")), identity_text(identity), len(lines), time.time(),
                     expires, run_id))
                self._db.executemany(
                    "INSERT OR REPLACE INTO batch_lines (batch_id, custom_id, key, first_sample, count, state) "
                    "VALUES (?, ?, ?, ?, ?, 'pending')",
                    [(batch_id, line.custom_id, line.key, line.first, line.count) for line in lines])
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: the batch ledger cannot be written ({exc}).") from None

    def open_batches(self, identity: Mapping[str, Any] | None = None) -> list[BatchRow]:
        """Batches nobody has collected yet (of one provider identity, or all)."""
        if identity is None:
            rows = self._run("SELECT * FROM batches WHERE state='open' ORDER BY submitted, id")
        else:
            rows = self._run("SELECT * FROM batches WHERE state='open' AND identity=? ORDER BY submitted, id",
                             (identity_text(identity),))
        return [_batch(r) for r in rows]

    def batch(self, batch_id: str) -> BatchRow | None:
        rows = self._run("SELECT * FROM batches WHERE id=?", (batch_id,))
        return _batch(rows[0]) if rows else None

    def batches(self, ids: Iterable[str]) -> dict[str, BatchRow]:
        out: dict[str, BatchRow] = {}
        for batch_id in ids:
            row = self.batch(batch_id)
            if row is not None:
                out[batch_id] = row
        return out

    def close_batch(self, batch_id: str, state: str, detail: str | None = None) -> None:
        self._run("UPDATE batches SET state=?, detail=? WHERE id=?", (state, detail, batch_id))

    # -- lines ----------------------------------------------------------------------------

    def lines(self, batch_id: str) -> dict[str, LineRow]:
        rows = self._run("SELECT batch_id, custom_id, key, first_sample, count, state, message FROM batch_lines "
                         "WHERE batch_id=?", (batch_id,))
        return {r[1]: LineRow(*r) for r in rows}

    def finish_lines(self, updates: Sequence[tuple[str, str, str, str | None]]) -> None:
        """(batch_id, custom_id, state, message) for lines whose result is in."""
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("UPDATE batch_lines SET state=?, message=? WHERE batch_id=? AND custom_id=?",
                                     [(state, message, b, c) for b, c, state, message in updates])
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: the batch ledger cannot be written ({exc}).") from None

    def pending(self, keys: Sequence[str]) -> dict[str, dict[int, str]]:
        """For each key: sample -> id of the open batch that will deliver it."""
        out: dict[str, dict[int, str]] = {}
        for start in range(0, len(keys), 500):
            chunk = list(keys[start:start + 500])
            marks = ",".join("?" * len(chunk))
            for key, first, count, batch_id in self._run(
                "SELECT l.key, l.first_sample, l.count, l.batch_id FROM batch_lines l JOIN batches b "
                f"ON b.id = l.batch_id WHERE b.state='open' AND l.state='pending' AND l.key IN ({marks})",
                chunk,
            ):
                samples = out.setdefault(key, {})
                for sample in range(first, first + count):
                    samples.setdefault(sample, batch_id)
        return out

    # -- answers a batch delivered ---------------------------------------------------------

    def mark_answers(self, rows: Sequence[tuple[str, int, str]]) -> None:
        """(key, sample, batch_id) of stored answers a batch delivered (their price is the batch's)."""
        if not rows:
            return
        try:
            with self._db:
                self._db.execute("BEGIN IMMEDIATE")
                self._db.executemany("INSERT OR IGNORE INTO batch_answers (key, sample, batch_id) VALUES (?, ?, ?)",
                                     rows)
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path}: the batch ledger cannot be written ({exc}).") from None

    def delivered(self, key: str) -> dict[int, str]:
        return {int(s): str(b) for s, b in self._run("SELECT sample, batch_id FROM batch_answers WHERE key=?", (key,))}

    # -- xdist workers' shares ------------------------------------------------------------

    def beat(self, run_id: str, shard: int, settled: bool = False) -> None:
        self._run("INSERT INTO batch_shares (run_id, shard, beat, settled) VALUES (?, ?, ?, ?) "
                  "ON CONFLICT (run_id, shard) DO UPDATE SET beat=excluded.beat, settled=max(settled, excluded.settled)",
                  (run_id, shard, time.time(), int(settled)))

    def share(self, run_id: str, shard: int) -> tuple[float, bool] | None:
        """(last heartbeat, settled) of one worker's share of a run, or None before it started."""
        rows = self._run("SELECT beat, settled FROM batch_shares WHERE run_id=? AND shard=?", (run_id, shard))
        return (float(rows[0][0]), bool(rows[0][1])) if rows else None

    def close(self) -> None:
        self._db.close()


def _batch(row: Sequence[Any]) -> BatchRow:
    identity = json.loads(row[2]) if row[2] else {}
    return BatchRow(row[0], row[1], identity, row[3], int(row[4]), float(row[5]),
                    float(row[6]) if row[6] is not None else None, row[7], row[8])
