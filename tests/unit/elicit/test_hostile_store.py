"""The response store under faults: a foreign table and a read-only store are named at start
(before any answer is paid for), a read-only store is never called corrupt, and every SQLite
error is one sentence naming the file."""

from __future__ import annotations

import sqlite3

import pytest

from pytest_optbench.elicit import store as store_module
from pytest_optbench.elicit.store import ResponseStore, StoreError


def test_a_foreign_answers_table_is_refused_at_open(tmp_path):
    path = tmp_path / "responses.sqlite"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE answers (id INTEGER PRIMARY KEY, body TEXT)")
        db.execute("INSERT INTO answers (body) VALUES ('somebody else''s data')")
    with pytest.raises(StoreError) as info:
        ResponseStore(path)
    message = str(info.value)
    assert message.startswith(f"{path}: its table 'answers' is not a pytest-optbench response store's")
    assert "--optbench-cache-dir" in message and "\n" not in message
    with sqlite3.connect(path) as db:  # and nothing of theirs was touched
        assert db.execute("SELECT body FROM answers").fetchall() == [("somebody else's data",)]


def _read_only_connect(real):
    def connect(path, *args, **kwargs):
        if str(path).startswith("file:") or str(path) == ":memory:":
            return real(path, *args, **kwargs)
        return real(f"file:{path}?mode=ro", *args, uri=True, **kwargs)
    return connect


def test_a_read_only_store_is_not_called_corrupt(tmp_path, monkeypatch):
    path = tmp_path / "responses.sqlite"
    ResponseStore(path).close()
    # As root, file modes do not stop writes: SQLite's read-only mode gives the same error.
    monkeypatch.setattr(store_module.sqlite3, "connect", _read_only_connect(sqlite3.connect))
    with pytest.raises(StoreError) as info:
        ResponseStore(path)
    message = str(info.value)
    assert "not a readable SQLite database" not in message and "move it away" not in message
    assert message.startswith(f"{path}: the response store cannot be written (attempt to write a readonly database)")
    assert "--optbench-offline" in message


def test_offline_reads_a_store_without_writing_to_it(tmp_path):
    path = tmp_path / "responses.sqlite"
    writable = ResponseStore(path)
    writable.put("key", 0, ["61", "62"], 10, 2, run_id="earlier")
    writable.close()
    before = path.read_bytes()
    store = ResponseStore(path, read_only=True)
    try:
        assert [a.text for a in store.get("key").values()] == ["61", "62"]
        assert store.count(["key", "other"]) == {"key": 2, "other": 0}
        with pytest.raises(StoreError, match="the response store cannot be written"):
            store.put("key", 2, ["63"])
    finally:
        store.close()
    assert path.read_bytes() == before


def test_offline_without_a_store_reads_nothing_and_creates_nothing(tmp_path):
    path = tmp_path / "cache" / "responses.sqlite"
    store = ResponseStore(path, read_only=True)
    try:
        assert store.get("key") == {}
    finally:
        store.close()
    assert not path.parent.exists()


def test_a_write_that_fails_is_one_sentence_and_stores_none_of_the_request(tmp_path):
    store = ResponseStore(tmp_path / "responses.sqlite")
    try:
        db = store._db
        db.execute(f"PRAGMA max_page_count = {db.execute('PRAGMA page_count').fetchone()[0]}")
        with pytest.raises(StoreError) as info:
            store.put("key", 0, ["x" * 20_000, "y" * 20_000])
        assert str(info.value) == f"{store.path}: the response store cannot be written (database or disk is full)."
        assert store.get("key") == {}
    finally:
        store.close()


def test_a_lone_surrogate_is_stored_as_a_replacement_character(tmp_path):
    store = ResponseStore(tmp_path / "responses.sqlite")
    try:
        assert store.put("key", 0, ["5 \ud800"]) == [0]
        store.put_failure("other", "run", "bad \udfff")
        assert store.get("key")[0].text == "5 \ufffd"
        assert store.failure("other", "run") == "bad \ufffd"
    finally:
        store.close()


def test_text_that_is_not_text_in_a_store_reads_as_text(tmp_path):
    path = tmp_path / "responses.sqlite"
    ResponseStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("INSERT INTO answers (key, sample, text, input_tokens, output_tokens, run_id, created) "
                   "VALUES ('key', 0, 65, 1, 2, 'r', 0)")
    store = ResponseStore(path)
    try:
        assert store.get("key")[0].text == "65"
    finally:
        store.close()
