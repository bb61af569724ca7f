"""The response store: every answer paid for, on disk, in SQLite (WAL).

An answer is stored under a key that hashes everything that changes it (provider, model,
base URL, system prompt, user message, temperature, max tokens, elicitation mode) and
nothing that does not (API key, concurrency, timeout), plus its sample index. Answers are
written as they arrive, so an interrupted run loses nothing; errors are never stored.
Several processes (xdist workers) share one store.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..text.display import one_line, well_formed

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS answers (
    key TEXT NOT NULL,
    sample INTEGER NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    run_id TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL,
    finish_reason TEXT,  -- why the text stopped, as the server said ("length": cut off); NULL: unknown
    mode TEXT,  -- the mode the server served when it differs from the key's (a fallback); NULL: the key's
    logprobs TEXT,  -- logprobs mode: the generated tokens and their alternatives (JSON); NULL: none
    served_model TEXT,  -- the model id the response named (a dated snapshot); NULL: not said
    system_fingerprint TEXT,  -- OpenAI's system_fingerprint of the response; NULL: not said
    PRIMARY KEY (key, sample)
);
-- Requests that failed for good in one session, so that the other xdist workers of that
-- session stop waiting for them. Never consulted by a later session: errors are not cached.
CREATE TABLE IF NOT EXISTS failures (
    key TEXT NOT NULL,
    run_id TEXT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (key, run_id)
);
"""


# The answers table's first columns in order; the _ADDED ones came later and may be missing
# (_migrate): each reads as NULL (unknown) in rows written before it.
_ANSWER_COLUMNS = ("key", "sample", "text", "input_tokens", "output_tokens", "run_id", "created")
_ADDED = ("finish_reason", "mode", "logprobs", "served_model", "system_fingerprint")


class StoreError(Exception):
    """The store cannot be opened, read or written; one sentence naming the file."""


# The columns this module reads and writes, per table: a table of the same name made by
# another tool is not written into.
_TABLE_COLUMNS = {
    "meta": {"name", "value"},
    "answers": {"key", "sample", "text", "input_tokens", "output_tokens", "run_id", "created"},
    "failures": {"key", "run_id", "message"},
}
# SQLite's words for a file that is not a database (or a damaged one), and for one that
# cannot be written: the first may be moved away, the second is a valid cache to keep.
_CORRUPT = ("not a database", "malformed", "file is encrypted")
_READ_ONLY = ("readonly", "read-only", "unable to open", "access permission")


def _problem(path: Path, exc: sqlite3.Error) -> StoreError:
    """One sentence for an SQLite error at open, that tells a damaged file from a read-only one."""
    text = str(exc)
    if any(word in text.lower() for word in _CORRUPT):
        return StoreError(f"{path}: the response store is not a readable SQLite database ({text}); "
                          "move it away or choose another --optbench-cache-dir.")
    if any(word in text.lower() for word in _READ_ONLY):
        return StoreError(f"{path}: the response store cannot be written ({text}); make it writable, "
                          "answer from it alone with --optbench-offline, or choose another --optbench-cache-dir.")
    return StoreError(f"{path}: the response store cannot be opened ({text}); choose another --optbench-cache-dir.")


def answer_key(identity: Mapping[str, Any], system: str, user: str, temperature: float,
               max_tokens: int | None, mode: str = "sample") -> str:
    """Hash of everything that changes an answer. ``identity`` names provider, model, base URL."""
    payload = {
        "identity": dict(sorted(identity.items())), "system": system, "user": user,
        "temperature": round(float(temperature), 6), "max_tokens": max_tokens, "mode": mode,
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


def _text_or_none(value: str | None) -> str | None:
    """Text a UTF-8 store can hold (a lone surrogate in a token would stop the write)."""
    return None if value is None else well_formed(value)


@dataclass(frozen=True)
class StoredAnswer:
    sample: int
    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    run_id: str = ""  # the session that paid for it
    finish_reason: str | None = None  # as the server said; None: unknown (or stored before it was kept)
    mode: str | None = None  # served in another mode than the key's (a fallback to text); None: the key's
    logprobs: str | None = None  # JSON of the tokens and their alternatives (logprobs mode)
    served_model: str | None = None  # the model id the response named; None: not said (or stored before)
    system_fingerprint: str | None = None  # OpenAI's system_fingerprint; None: not said


class ResponseStore:
    """``read_only``: open an existing store without writing to it (``--optbench-offline``);
    a missing one reads as empty."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        try:
            if read_only:
                self._db = self._open_read_only(path)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
                self._db.execute("PRAGMA busy_timeout=60000")
                self._db.executescript(_SCHEMA)
                # A read-only file opens without complaint and fails on the first write,
                # after answers were paid for: find out now.
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    self._db.execute("INSERT OR REPLACE INTO meta VALUES ('write check', '')")
                finally:
                    self._db.execute("ROLLBACK")
            self._check_tables()
            row = self._db.execute("SELECT value FROM meta WHERE name='schema'").fetchone()
            if row is None and not read_only:
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif row is not None and row[0] != str(SCHEMA_VERSION):
                raise StoreError(f"{path}: response store schema {one_line(row[0], 40)} is not supported (expected "
                                 f"{SCHEMA_VERSION}); use another --optbench-cache-dir.")
            self._migrate()
            self._db.execute("SELECT count(*) FROM answers LIMIT 1").fetchone()
        except sqlite3.Error as exc:
            raise _problem(path, exc) from None
        except OSError as exc:
            raise StoreError(f"{path}: cannot open the response store ({exc.strerror}).") from None

    def _migrate(self) -> None:
        """Add the columns later versions introduced to a store written before them (schema 1
        throughout: older plugins read and write such a store unchanged). Their old rows read
        as unknown. A store that cannot be changed (read-only) is read without them."""
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(answers)")}
        for name in _ADDED:
            if name not in columns:
                try:
                    self._db.execute(f"ALTER TABLE answers ADD COLUMN {name} TEXT")
                except sqlite3.OperationalError:  # another process added it first, or read-only
                    pass
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(answers)")}
        self.kept = tuple(name for name in _ADDED if name in columns)
        self.keeps_finish_reason = "finish_reason" in columns

    keeps_finish_reason = True  # False: a store without the column that could not be given it
    kept: tuple[str, ...] = _ADDED  # the added columns this store has

    @staticmethod
    def _open_read_only(path: Path) -> sqlite3.Connection:
        if not path.exists():
            db = sqlite3.connect(":memory:", isolation_level=None, check_same_thread=False)
            db.executescript(_SCHEMA)
            return db
        uri = f"{path.resolve().as_uri()}?mode=ro"
        return sqlite3.connect(uri, uri=True, timeout=60, isolation_level=None, check_same_thread=False)

    def _check_tables(self) -> None:
        """A table of ours with other columns belongs to another tool: refuse it now, before
        any answer is paid for, rather than fail on the first write."""
        for table, columns in _TABLE_COLUMNS.items():
            found = {row[1] for row in self._db.execute(f"PRAGMA table_info({table})")}
            if found and not columns <= found:
                missing = ", ".join(sorted(columns - found))
                raise StoreError(f"{self.path}: its table '{table}' is not a pytest-optbench response store's "
                                 f"(no column {missing}); choose another --optbench-cache-dir.")

    def _read_error(self, exc: Exception) -> StoreError:
        return StoreError(f"{self.path}: the response store cannot be read ({exc}).")

    def _write_error(self, exc: sqlite3.Error) -> StoreError:
        return StoreError(f"{self.path}: the response store cannot be written ({exc}).")

    def get(self, key: str) -> dict[int, StoredAnswer]:
        try:
            added = ", ".join(name if name in self.kept else "NULL" for name in _ADDED)
            rows = self._db.execute(
                f"SELECT sample, text, input_tokens, output_tokens, run_id, {added} FROM answers WHERE key=?", (key,)
            ).fetchall()
            # Coerced: a store edited by hand must not put a number where text belongs.
            return {int(r[0]): StoredAnswer(int(r[0]), str(r[1]), int(r[2] or 0), int(r[3] or 0), str(r[4] or ""),
                                            *(None if v is None else str(v) for v in r[5:5 + len(_ADDED)]))
                    for r in rows}
        except (sqlite3.Error, ValueError, TypeError) as exc:
            raise self._read_error(exc) from None

    def count(self, keys: Sequence[str]) -> dict[str, int]:
        """How many samples are stored for each key (0 when none)."""
        out = dict.fromkeys(keys, 0)
        try:
            for start in range(0, len(keys), 500):
                chunk = list(keys[start:start + 500])
                marks = ",".join("?" * len(chunk))
                for key, n in self._db.execute(
                    f"SELECT key, count(*) FROM answers WHERE key IN ({marks}) GROUP BY key", chunk
                ):
                    out[key] = n
        except sqlite3.Error as exc:
            raise self._read_error(exc) from None
        return out

    def put(self, key: str, first_sample: int, texts: Sequence[str], input_tokens: int = 0,
            output_tokens: int = 0, run_id: str = "",
            finish_reasons: Sequence[str | None] = (), mode: str | None = None,
            logprobs: Sequence[str | None] = (), served_model: str | None = None,
            system_fingerprint: str | None = None) -> list[int]:
        """Store the texts of one request as samples first_sample, first_sample+1, ...

        Tokens are billed once per request, so they go on its first sample; ``finish_reasons``
        go with their texts (missing ones are unknown), as do ``logprobs`` (JSON text); ``mode``
        is the mode served when it is not the key's; ``served_model`` and ``system_fingerprint``
        what the response said served it (every sample of the request). Samples that another process stored
        meanwhile are kept (first writer wins); returns the indices actually written. Raises
        StoreError when it cannot write (a full disk, a read-only store): the caller keeps
        what it paid for in memory.
        """
        now = time.time()
        written = []
        try:
            self._db.execute("BEGIN IMMEDIATE")  # all of a request's samples or none
            for offset, text in enumerate(texts):
                tokens = (input_tokens, output_tokens) if offset == 0 else (0, 0)
                added = {"finish_reason": finish_reasons[offset] if offset < len(finish_reasons) else None,
                         "mode": mode, "logprobs": _text_or_none(logprobs[offset] if offset < len(logprobs) else None),
                         "served_model": served_model, "system_fingerprint": system_fingerprint}
                names = [*_ANSWER_COLUMNS, *self.kept]
                row: tuple[Any, ...] = (key, first_sample + offset, well_formed(text), *tokens, run_id, now,
                                        *(added[name] for name in self.kept))
                cursor = self._db.execute(
                    f"INSERT OR IGNORE INTO answers ({', '.join(names)}) VALUES ({', '.join('?' * len(row))})", row)
                if cursor.rowcount:
                    written.append(first_sample + offset)
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            if self._db.in_transaction:
                try:
                    self._db.execute("ROLLBACK")
                except sqlite3.Error:
                    pass  # SQLite may have rolled back already (a full disk does that)
            raise self._write_error(exc) from None
        return written

    def version(self) -> int:
        """A number that changes when another connection (another process) commits to the
        store (SQLite's data_version): a cheap test of "anything new?" to poll often."""
        try:
            return int(self._db.execute("PRAGMA data_version").fetchone()[0])
        except sqlite3.Error as exc:
            raise self._read_error(exc) from None

    def put_failure(self, key: str, run_id: str, message: str) -> None:
        try:
            self._db.execute("INSERT OR REPLACE INTO failures (key, run_id, message) VALUES (?, ?, ?)",
                             (key, run_id, well_formed(message)))
        except sqlite3.Error as exc:
            raise self._write_error(exc) from None

    def failure(self, key: str, run_id: str) -> str | None:
        try:
            row = self._db.execute("SELECT message FROM failures WHERE key=? AND run_id=?", (key, run_id)).fetchone()
        except sqlite3.Error as exc:
            raise self._read_error(exc) from None
        return str(row[0]) if row else None

    def empty(self) -> bool:
        """True when the store holds no answer at all (a first run): every prompt will be asked."""
        try:
            return self._db.execute("SELECT 1 FROM answers LIMIT 1").fetchone() is None
        except sqlite3.Error as exc:
            raise self._read_error(exc) from None

    def close(self) -> None:
        self._db.close()
