"""The response store: keys, round trips, first writer wins, corruption, shared access."""

from __future__ import annotations

import inspect
import re
import sqlite3

import pytest

from pytest_optbench.elicit.store import ResponseStore, StoredAnswer, StoreError, answer_key
from pytest_optbench.providers.anthropic_provider import AnthropicProvider
from pytest_optbench.providers.openai_provider import OpenAIProvider

IDENTITY = {"provider": "openai", "model": "gpt-4.1-mini", "base_url": "https://api.openai.com/v1"}
BASE = {"identity": IDENTITY, "system": "You estimate probabilities.", "user": "Will it rain?",
        "temperature": 0.7, "max_tokens": None, "mode": "sample"}


def key_of(**changes) -> str:
    return answer_key(**{**BASE, **changes})


@pytest.fixture
def store(tmp_path):
    store = ResponseStore(tmp_path / "responses.sqlite")
    yield store
    store.close()


# --------------------------------------------------------------------------- keys


def test_key_is_a_stable_sha256_hex_digest():
    assert key_of() == key_of()
    assert re.fullmatch(r"[0-9a-f]{64}", key_of())
    # The order of the identity's fields does not matter.
    assert key_of(identity=dict(reversed(list(IDENTITY.items())))) == key_of()


@pytest.mark.parametrize("change", [
    {"identity": {**IDENTITY, "provider": "anthropic"}},
    {"identity": {**IDENTITY, "model": "gpt-4.1"}},
    {"identity": {**IDENTITY, "base_url": "http://127.0.0.1:8000/v1"}},
    {"identity": {**IDENTITY, "base_url": None}},
    {"system": "You estimate probabilities!"},
    {"user": "Will it rain tomorrow?"},
    {"temperature": 0.0},
    {"temperature": 1.0},
    {"max_tokens": 16},
    {"mode": "logprobs"},
], ids=["provider", "model", "base_url", "no-base-url", "system", "user", "temperature-0",
        "temperature-1", "max_tokens", "mode"])
def test_key_changes_with_every_field_that_changes_an_answer(change):
    assert key_of(**change) != key_of()


def test_every_changed_field_gives_a_distinct_key():
    keys = {key_of(), key_of(max_tokens=16), key_of(max_tokens=17), key_of(temperature=0.5),
            key_of(mode="other"), key_of(user="Will it rain?\n"), key_of(system="")}
    assert len(keys) == 7


def test_key_function_takes_no_api_key():
    parameters = set(inspect.signature(answer_key).parameters)
    assert parameters == {"identity", "system", "user", "temperature", "max_tokens", "mode"}
    assert not any("key" in p or "secret" in p or "auth" in p for p in parameters)


def test_provider_identity_ignores_api_key_and_timeout():
    env_a = {"OPENAI_API_KEY": "sk-test-AAAAAAAAAAAA", "ANTHROPIC_API_KEY": "sk-ant-AAAAAAAAAAAA"}
    env_b = {"OPENAI_API_KEY": "sk-test-BBBBBBBBBBBB", "ANTHROPIC_API_KEY": "sk-ant-BBBBBBBBBBBB"}
    for cls, url in ((OpenAIProvider, "http://127.0.0.1:9/v1"), (AnthropicProvider, "http://127.0.0.1:9")):
        a = cls("some-model", base_url=url, env=env_a, timeout=5.0)
        b = cls("some-model", base_url=url, env=env_b, timeout=60.0)
        assert a.identity() == b.identity()
        assert set(a.identity()) == {"provider", "model", "base_url"}
        secret = env_a["OPENAI_API_KEY" if cls is OpenAIProvider else "ANTHROPIC_API_KEY"]
        assert secret not in repr(a.identity())
        other_model = cls("other-model", base_url=url, env=env_a, timeout=5.0)
        assert other_model.identity() != a.identity()


def test_identity_base_url_drops_credentials_and_query():
    env = {"OPENAI_API_KEY": "sk-test-AAAAAAAAAAAA"}
    plain = OpenAIProvider("m", base_url="http://127.0.0.1:9/v1", env=env, timeout=5)
    with_secrets = OpenAIProvider("m", base_url="http://user:hunter2@127.0.0.1:9/v1/?api_key=abc", env=env,
                                  timeout=5)
    assert with_secrets.identity() == plain.identity()
    assert "hunter2" not in repr(with_secrets.identity())


# --------------------------------------------------------------------------- round trip


def test_put_get_count_round_trip(store):
    key = key_of()
    assert store.get(key) == {}
    assert store.count([key]) == {key: 0}
    written = store.put(key, 0, ["60", "65", "70"], input_tokens=40, output_tokens=6, run_id="run-1")
    assert written == [0, 1, 2]
    got = store.get(key)
    assert sorted(got) == [0, 1, 2]
    assert [got[i].text for i in range(3)] == ["60", "65", "70"]
    assert all(isinstance(a, StoredAnswer) and a.run_id == "run-1" for a in got.values())
    other = key_of(user="Something else?")
    assert store.count([key, other]) == {key: 3, other: 0}


def test_put_continues_at_first_sample(store):
    key = key_of()
    store.put(key, 0, ["1", "2"])
    assert store.put(key, 2, ["3"]) == [2]
    assert {i: a.text for i, a in store.get(key).items()} == {0: "1", 1: "2", 2: "3"}
    assert store.count([key]) == {key: 3}


def test_count_many_keys_in_chunks(store):
    keys = [key_of(user=f"question {i}") for i in range(1200)]
    for i, key in enumerate(keys[::3]):
        store.put(key, 0, [str(i)])
    counts = store.count(keys)
    assert len(counts) == 1200
    assert sum(counts.values()) == 400
    assert all(counts[k] == 1 for k in keys[::3])


def test_tokens_go_on_the_first_sample_of_a_request(store):
    key = key_of()
    store.put(key, 0, ["60", "61", "62"], input_tokens=120, output_tokens=9)
    store.put(key, 3, ["63", "64"], input_tokens=120, output_tokens=6)
    got = store.get(key)
    assert [(got[i].input_tokens, got[i].output_tokens) for i in range(5)] == [
        (120, 9), (0, 0), (0, 0), (120, 6), (0, 0)]
    assert sum(a.input_tokens for a in got.values()) == 240


def test_insert_or_ignore_first_writer_wins(store):
    key = key_of()
    assert store.put(key, 0, ["first-0", "first-1"], 10, 2, run_id="a") == [0, 1]
    # Another process stored samples 1 and 2 "meanwhile": only sample 2 is new.
    assert store.put(key, 1, ["second-1", "second-2"], 10, 2, run_id="b") == [2]
    got = store.get(key)
    assert got[0].text == "first-0" and got[1].text == "first-1" and got[2].text == "second-2"
    assert got[1].run_id == "a" and got[1].input_tokens == 0  # the loser's tokens were not stored on it
    assert got[2].run_id == "b" and got[2].input_tokens == 0  # sample 2 was the second text of its request
    assert store.put(key, 0, ["third-0"], run_id="c") == []
    assert store.get(key)[0].text == "first-0"


def test_unicode_and_empty_texts_round_trip(store):
    key = key_of(user="Wird es regnen? — ünïcødé ✓")
    store.put(key, 0, ["", "≈ 60 %", "line\nbreak"])
    assert [store.get(key)[i].text for i in range(3)] == ["", "≈ 60 %", "line\nbreak"]


def test_store_persists_across_reopen(tmp_path):
    path = tmp_path / "deep" / "dir" / "responses.sqlite"
    first = ResponseStore(path)  # creates the directories
    first.put(key_of(), 0, ["42"], 5, 1, "run-1")
    first.close()
    second = ResponseStore(path)
    try:
        assert second.get(key_of())[0] == StoredAnswer(0, "42", 5, 1, "run-1")
    finally:
        second.close()


def test_failures_are_kept_per_session_and_never_as_answers(store):
    key = key_of()
    assert store.failure(key, "run-1") is None
    store.put_failure(key, "run-1", "openai: HTTP 401: Incorrect API key provided")
    assert store.failure(key, "run-1") == "openai: HTTP 401: Incorrect API key provided"
    assert store.failure(key, "run-2") is None  # a later session asks again: errors are not cached
    assert store.failure(key_of(user="other"), "run-1") is None
    assert store.get(key) == {} and store.count([key]) == {key: 0}
    store.put_failure(key, "run-1", "openai: HTTP 500 (after 6 retries)")  # the last word counts
    assert store.failure(key, "run-1") == "openai: HTTP 500 (after 6 retries)"


# --------------------------------------------------------------------------- sharing, errors


def test_two_stores_on_one_file_see_each_others_writes(tmp_path):
    path = tmp_path / "responses.sqlite"
    a, b = ResponseStore(path), ResponseStore(path)
    try:
        key = key_of()
        a.put(key, 0, ["from-a"], run_id="a")
        assert b.get(key)[0].text == "from-a"
        assert b.count([key]) == {key: 1}
        assert b.put(key, 0, ["from-b-0", "from-b-1"], run_id="b") == [1]
        got = a.get(key)
        assert got[0].text == "from-a" and got[1].text == "from-b-1"
        assert a.count([key]) == {key: 2}
        a.put_failure(key_of(user="x"), "run", "HTTP 401")
        assert b.failure(key_of(user="x"), "run") == "HTTP 401"  # how xdist workers share failures
    finally:
        a.close()
        b.close()


def _one_sentence(message: str, path) -> None:
    assert message.startswith(str(path)), message
    assert "\n" not in message
    assert message.endswith("."), message
    body = message[len(str(path)):]
    assert re.search(r"\.\s+[A-Z]", body) is None, f"more than one sentence: {message}"


def test_corrupt_file_raises_store_error_in_one_sentence(tmp_path):
    path = tmp_path / "responses.sqlite"
    path.write_bytes(b"\x00\xffnot a database at all\x13\x37" * 200)
    with pytest.raises(StoreError) as excinfo:
        ResponseStore(path)
    message = str(excinfo.value)
    _one_sentence(message, path)
    assert "not a readable SQLite database" in message
    assert "--optbench-cache-dir" in message
    assert excinfo.value.__cause__ is None and excinfo.value.__suppress_context__


def test_unsupported_schema_version_raises_store_error(tmp_path):
    path = tmp_path / "responses.sqlite"
    ResponseStore(path).close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value='99' WHERE name='schema'")
    with pytest.raises(StoreError) as excinfo:
        ResponseStore(path)
    _one_sentence(str(excinfo.value), path)
    assert "schema 99 is not supported" in str(excinfo.value)


def test_unopenable_path_raises_store_error(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    path = blocker / "responses.sqlite"  # its parent is a file, not a directory
    with pytest.raises(StoreError) as excinfo:
        ResponseStore(path)
    assert str(excinfo.value).startswith(str(path))
    assert "\n" not in str(excinfo.value)


# --------------------------------------------------------------------------- finish reasons

OLD_SCHEMA = """
CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta VALUES ('schema', '1');
CREATE TABLE answers (key TEXT NOT NULL, sample INTEGER NOT NULL, text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
    run_id TEXT NOT NULL DEFAULT '', created REAL NOT NULL, PRIMARY KEY (key, sample));
CREATE TABLE failures (key TEXT NOT NULL, run_id TEXT NOT NULL, message TEXT NOT NULL,
    PRIMARY KEY (key, run_id));
"""


def old_store(path):
    """A store as versions before finish reasons wrote it, holding one answer."""
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
        db.execute("INSERT INTO answers VALUES (?, 0, 'I would say 3', 7, 5, 'old-run', 1.0)", (key_of(),))
    db.close()


def test_finish_reasons_round_trip_with_their_texts(store):
    key = key_of()
    store.put(key, 0, ["60", "I'd say 3", "65"], 40, 6, "run-1", finish_reasons=["stop", "length"])
    assert [a.finish_reason for a in store.get(key).values()] == ["stop", "length", None]  # missing: unknown
    store.put(key, 3, ["70"])
    assert store.get(key)[3] == StoredAnswer(3, "70", 0, 0, "", None)


def test_a_store_written_before_finish_reasons_opens_reads_and_gains_the_column(tmp_path):
    path = tmp_path / "responses.sqlite"
    old_store(path)
    store = ResponseStore(path)
    try:
        assert store.get(key_of()) == {0: StoredAnswer(0, "I would say 3", 7, 5, "old-run", None)}
        assert store.put(key_of(), 1, ["I would say 3"], finish_reasons=["length"]) == [1]
        assert store.get(key_of())[1].finish_reason == "length"
    finally:
        store.close()
    again = ResponseStore(path)  # the migration ran once; opening again changes nothing
    try:
        assert [a.finish_reason for a in again.get(key_of()).values()] == [None, "length"]
    finally:
        again.close()
    with sqlite3.connect(path) as db:  # still schema 1: older plugins keep reading and writing it
        assert db.execute("SELECT value FROM meta WHERE name='schema'").fetchone() == ("1",)
        db.execute("INSERT INTO answers (key, sample, text, created) VALUES (?, 2, '40', 2.0)", (key_of(),))
    db.close()


class StaleFirstLook:
    """A connection whose first look at the columns predates another process's migration."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self.db, self.looked = db, False

    def execute(self, sql: str, *args):
        if sql.startswith("PRAGMA table_info") and not self.looked:
            self.looked = True
            return [row for row in self.db.execute(sql) if row[1] != "finish_reason"]
        return self.db.execute(sql, *args)


def test_two_processes_migrating_one_old_store_both_succeed(tmp_path):
    path = tmp_path / "responses.sqlite"
    old_store(path)
    first = ResponseStore(path)  # adds the column
    second = ResponseStore.__new__(ResponseStore)
    second.path = path
    db = sqlite3.connect(path, isolation_level=None)
    second._db = StaleFirstLook(db)  # type: ignore[assignment]
    try:
        second._migrate()  # its ALTER fails: a duplicate column
        assert second._db.looked and second.keeps_finish_reason
        second._db = db
        second.put(key_of(), 1, ["55"], finish_reasons=["stop"])
        assert first.get(key_of())[1].finish_reason == "stop"
    finally:
        db.close()
        first.close()


def test_an_old_store_that_cannot_be_changed_is_read_without_finish_reasons(tmp_path):
    path = tmp_path / "responses.sqlite"
    old_store(path)
    store = ResponseStore.__new__(ResponseStore)
    store.path = path
    store._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    try:
        store._migrate()  # the ALTER fails: read-only
        assert not store.keeps_finish_reason
        assert store.get(key_of()) == {0: StoredAnswer(0, "I would say 3", 7, 5, "old-run", None)}
    finally:
        store.close()


def test_who_served_an_answer_round_trips_and_an_older_store_gains_the_columns(tmp_path):
    """Served model and system_fingerprint go on every sample of their request; a store from
    before they were kept opens, reads them as unknown and takes them from then on."""
    path = tmp_path / "responses.sqlite"
    old_store(path)
    store = ResponseStore(path)
    try:
        assert store.get(key_of())[0].served_model is None and store.get(key_of())[0].system_fingerprint is None
        store.put(key_of(), 1, ["60", "61"], 9, 4, "run-2", served_model="m-2025-01-01", system_fingerprint="fp_1")
        got = store.get(key_of())
        assert [(a.served_model, a.system_fingerprint) for a in got.values()] == [
            (None, None), ("m-2025-01-01", "fp_1"), ("m-2025-01-01", "fp_1")]
        assert {"served_model", "system_fingerprint"} <= set(store.kept)
    finally:
        store.close()
