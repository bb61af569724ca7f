"""Batch elicitation: every prompt the store lacks goes to the provider's batch API.

``BatchElicitor`` is the engine's ``ApiElicitor`` with another way of asking. Before the
first item runs it

1. polls the open batches that hold lines for this run's prompts (submitted by an earlier
   run, maybe on another machine: their ids are in the store) and stores what has ended;
2. submits every answer still missing and not already in an open batch, as one or more
   batches within the provider's limits (lines and bytes, or ``--optbench-batch-size``), and
   keeps each batch id and line in the store's batch ledger the moment the provider accepts it;
3. polls until every batch has ended or ``--optbench-batch-wait`` seconds have passed,
   storing each answer once (first writer wins) and resubmitting a failed or expired line at
   most once per run (a 400 that names a parameter is adapted first, as the real-time path does).

Items then read their answers from the store; samples still in an open batch come back as
pending answers (``Answer.batch`` set, no text), which the item reports as pending. Nothing
is ever asked in real time in batch mode.
"""

from __future__ import annotations

import asyncio
import functools
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..options import EngineSettings
from ..prompts.build import PromptSpec
from ..providers import batch_client
from ..providers.batch_api import CUSTOM_ID, BatchClient, BatchLine, BatchState, BatchTooLarge, LineResult, chunks
from ..providers.remote import ApiProvider, ApiRequest, CallFailed
from ..records.item import Answer, PromptRecord
from .batch_store import BatchLedger, BatchRow, LineRow, identity_text
from .counters import EngineStats
from .engine import ApiElicitor, _runs
from .store import ResponseStore, StoredAnswer

_SIZE_WORDS = ("too large", "too many", "exceed", "maximum", "limit", "size")
# A batch-API call (an upload of up to 200 MB, a result file) must be complete within this
# many times --optbench-timeout.
BATCH_CALL_TIMEOUT = 10.0


@dataclass(frozen=True)
class BatchSettings:
    wait: float = 0.0  # --optbench-batch-wait: seconds to wait for open batches to end
    max_lines: int | None = None  # --optbench-batch-size: lines per batch (default: the provider's limit)
    poll_first: float = 0.5  # first pause between polls; grows by half each round ...
    poll_max: float = 30.0  # ... up to this
    status_every: float = 30.0  # a status line at most this often (besides the progress bar)
    submit_retries: int = 4  # retries of a batch-API call that can succeed (429, 5xx)


@dataclass
class _Line:
    key: str
    first: int
    count: int
    request: ApiRequest

    @property
    def custom_id(self) -> str:
        return f"{self.key[:40]}-{self.first}-{self.count}"


class BatchUnsupported(ValueError):
    """--optbench-batch with a provider that has no batch API."""


class BatchElicitor(ApiElicitor):
    """Resumable batch elicitation against an API provider, through the store."""

    batch_mode = True

    def __init__(self, provider: ApiProvider, store: ResponseStore, settings: EngineSettings,
                 batch: BatchSettings = BatchSettings(), shard: tuple[int, int] = (0, 1),
                 on_progress: Callable[[EngineStats], None] | None = None,
                 on_status: Callable[[str], None] | None = None, client: BatchClient | None = None) -> None:
        super().__init__(provider, store, settings, shard=shard, on_progress=on_progress)
        found = client or batch_client(provider)
        if found is None:
            raise BatchUnsupported(f"--optbench-batch: provider {provider.provider!r} has no batch API "
                                   "(openai and anthropic have one); leave the option out to ask in real time.")
        self.client: BatchClient = found
        self.batch = batch
        self.ledger = BatchLedger(store.path)
        self.on_status = on_status or (lambda text: None)
        self.counts = {"batches_submitted": 0, "batch_lines": 0, "batch_lines_resubmitted": 0,
                       "batch_lines_failed": 0, "batch_lines_expired": 0, "batches_collected": 0,
                       "batch_calls_retried": 0, "batch_answers": 0, "batch_input_tokens": 0,
                       "batch_output_tokens": 0}
        self.specs: dict[str, PromptSpec] = {}  # the prompts of this process's share, by key
        self.mine: set[str] = set()  # batches this process submitted in this run
        self.asked_again: set[tuple[str, int]] = set()  # (key, first sample) resubmitted in this run
        self.expiry: dict[str, float | None] = {}
        self._last_status = 0.0
        self._deadline = 0.0
        self.line_cap = batch.max_lines  # lowered when a server refuses a batch for its size
        self.poll_problem: str | None = None

    # -- the prefetch ----------------------------------------------------------------------

    def prefetch(self, specs: Sequence[PromptSpec], meanwhile: Callable[[], None] | None = None) -> None:
        # The batch bodies carry no schema and no logprobs: json and logprobs prompts are
        # asked in real time, then read from the store like the rest.
        if other := [s for s in specs if s.mode != "text"]:
            super().prefetch(other)
            specs = [s for s in specs if s.mode == "text"]
        if meanwhile is not None:  # a batch is awaited for minutes: the caller's work goes first
            meanwhile()
        jobs = self.plan(specs)
        for job in jobs:
            self.specs[job.key] = job.spec
        self.on_progress(self.stats)
        self.ledger.beat(self.settings.run_id, self.shard_index)
        try:
            if jobs and not self.settings.offline:
                self._runner().run(self._batches())
        finally:
            self.ledger.beat(self.settings.run_id, self.shard_index, settled=True)
        self._update_in_flight()
        self.on_progress(self.stats)

    async def _batches(self) -> None:
        self._deadline = time.monotonic() + self.batch.wait
        await self._poll(self._relevant_open())  # 1. what earlier runs submitted (lines to ask again
        await self._submit(self._missing_lines())  # 2. are missing now): what nobody has asked yet
        interval, first = self.batch.poll_first, True
        while True:  # 3. poll (at once, then after growing pauses), collect, resubmit once
            self._update_in_flight()
            self._status()
            open_ = self._relevant_open()
            if not open_:
                break
            if not first:
                remaining = self._deadline - time.monotonic()
                if remaining <= 0:
                    break
                await asyncio.sleep(min(interval, remaining))
                interval = min(interval * 1.5, self.batch.poll_max)
            first = False
            self.ledger.beat(self.settings.run_id, self.shard_index)
            await self._submit(await self._poll(open_))
        self._status(final=True)

    def _relevant_open(self) -> list[BatchRow]:
        """Open batches of this provider identity that this process submitted or that hold a
        line for one of its prompts."""
        open_ = self.ledger.open_batches(self.provider.identity())
        wanted = {b for samples in self.ledger.pending(list(self.specs)).values() for b in samples.values()}
        return [b for b in open_ if b.id in self.mine or b.id in wanted]

    def _missing_lines(self) -> list[_Line]:
        """Every sample of this share that is neither stored nor in an open batch."""
        keys = list(self.specs)
        pending = self.ledger.pending(keys)
        stored = self.store.count(keys)
        lines: list[_Line] = []
        for key in keys:
            spec = self.specs[key]
            have = set(self.store.get(key)) if stored[key] else set()
            have |= set(pending.get(key, {}))
            missing = [i for i in range(spec.samples) if i not in have]
            for first, count in _runs(missing):
                lines.extend(self._lines(key, first, count))
        return lines

    def _lines(self, key: str, first: int, count: int) -> list[_Line]:
        spec = self.specs[key]
        step = max(1, int(self.provider.max_n))
        out = []
        for start in range(first, first + count, step):
            n = min(step, first + count - start)
            out.append(_Line(key, start, n, ApiRequest(spec.system, spec.user, spec.temperature, self.max_tokens, n)))
        return out

    # -- submitting -----------------------------------------------------------------------

    async def _submit(self, lines: Sequence[_Line]) -> None:
        if not lines:
            return
        batch_lines = [BatchLine(line.custom_id, line.request) for line in lines]
        by_id = {line.custom_id: line for line in lines}
        for chunk in chunks(self.client, batch_lines, self.line_cap):
            await self._submit_chunk([by_id[b.custom_id] for b in chunk])

    async def _submit_chunk(self, lines: list[_Line]) -> None:
        if not all(CUSTOM_ID.match(line.custom_id) for line in lines):  # keys are hex: never happens
            raise ValueError("a batch custom_id does not fit the providers' pattern")
        try:
            state = await self._call(lambda: self.client.submit([BatchLine(x.custom_id, x.request) for x in lines]))
        except BatchTooLarge as refused:
            if len(lines) == 1:
                self._fail_lines(lines, self.provider.redact(str(refused)))
                return
            half = len(lines) // 2
            self.line_cap = min(self.line_cap or half, half)  # the server's limit is lower than ours
            await self._submit_chunk(lines[:half])
            await self._submit_chunk(lines[half:])
            return
        except CallFailed as failure:
            self._fail_lines(lines, self.provider.redact(str(failure)))
            return
        # Recorded at once: the provider bills it whatever happens next, and a rerun must
        # poll it, not submit it again (the state was read by a reader that cannot fail).
        rows = [LineRow(state.id, x.custom_id, x.key, x.first, x.count) for x in lines]
        self.ledger.add_batch(state.id, self.provider.identity(), state.expires_at, self.settings.run_id, rows)
        self._note_state(state)
        self.mine.add(state.id)
        self.expiry[state.id] = state.expires_at
        self.ledger.beat(self.settings.run_id, self.shard_index)  # alive, for the other xdist workers
        self.counts["batches_submitted"] += 1
        self.counts["batch_lines"] += len(lines)

    async def _call(self, make: Callable[[], Any]) -> Any:
        """A batch-API call, retried (with back-off, Retry-After honoured) when it can succeed."""
        attempt = 0
        timeout = getattr(self.provider, "timeout", None)
        limit = BATCH_CALL_TIMEOUT * float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None
        while True:
            try:
                try:
                    return await asyncio.wait_for(make(), limit)
                except TimeoutError:  # a server that trickles: every read in time, the whole never
                    raise CallFailed(f"{self.client.provider} batch: the reply was not complete after {limit:g} s "
                                     f"({BATCH_CALL_TIMEOUT:g} x --optbench-timeout)", retryable=True,
                                     timed_out=True) from None
            except CallFailed as failure:
                if isinstance(failure, BatchTooLarge) or not failure.retryable \
                        or attempt >= self.batch.submit_retries:
                    raise
                attempt += 1
                self.counts["batch_calls_retried"] += 1
                self.stats.retries += 1
                if failure.rate_limited:
                    self.stats.rate_limited += 1
                delay = failure.retry_after if failure.retry_after is not None else \
                    random.uniform(0, min(self.settings.backoff_cap, self.settings.backoff_base * 2 ** attempt))
                await asyncio.sleep(min(delay, self.settings.backoff_cap))

    def _fail_lines(self, lines: Sequence[_Line], message: str) -> None:
        """Lines that cannot be asked in this run: their items fail with the reason."""
        for line in lines:
            if line.key not in self.failures:
                self._fail(line.key, message)
            self.stats.failed += line.count
        self.counts["batch_lines_failed"] += len(lines)

    # -- polling and collecting ------------------------------------------------------------

    async def _poll(self, batches: Sequence[BatchRow]) -> list[_Line]:
        """Poll each batch once; collect those that ended. Returns the lines to ask again."""
        again: list[_Line] = []
        for row in batches:
            try:
                state = await self._call(functools.partial(self.client.retrieve, row.id))
            except CallFailed as failure:
                if failure.status == 404:  # deleted, or another account or server: its lines are missing
                    again += self._batch_failed(row, BatchState(row.id, "not found", failed=True,
                                                                message="the provider does not know this batch"))
                else:
                    self._note_poll_failure(row, failure)
                continue
            self.expiry[row.id] = state.expires_at or row.expires
            self._note_state(state)
            if state.failed:
                again += self._batch_failed(row, state)
            elif state.ended:
                try:
                    results = await self._call(functools.partial(self.client.results, row.id))
                except CallFailed as failure:
                    if failure.status == 404:  # results no longer kept (Anthropic: 29 days)
                        again += self._batch_failed(row, BatchState(row.id, "results gone", failed=True,
                                                                    message="its results are no longer available"))
                    else:
                        self._note_poll_failure(row, failure)
                    continue
                again += self._collect(row, results)
        return again

    def _note_state(self, state: BatchState) -> None:
        """Fields of a batch object that were of no use (an expiry that is no time): noted once."""
        if state.problem:
            self.provider.note(f"{self.provider.model}: batch {state.id}: {state.problem} (read as unknown)")

    def _note_poll_failure(self, row: BatchRow, failure: CallFailed) -> None:
        """The batch stays open (its answers still come); the reason shows in the status line."""
        self.poll_problem = f"could not poll {row.id}: {self.provider.redact(str(failure))}"

    def _batch_failed(self, row: BatchRow, state: BatchState) -> list[_Line]:
        """A batch that failed as a whole: none of its lines ran."""
        message = f"batch {row.id} failed: {state.message or state.status}"
        lines = self.ledger.lines(row.id)
        self.ledger.finish_lines([(row.id, c, "failed", message) for c, line in lines.items()
                                  if line.state == "pending"])
        self.ledger.close_batch(row.id, "failed", message)
        self.counts["batches_collected"] += 1
        oversize = any(word in (state.message or "").lower() for word in _SIZE_WORDS) and row.lines > 1
        if oversize:  # the next batches get half as many lines
            self.line_cap = min(self.line_cap or row.lines, max(1, row.lines // 2))
        again = []
        for line in lines.values():
            if line.state != "pending":
                continue
            self.counts["batch_lines_failed"] += 1
            again += self._again(line, message, retryable=True, free=oversize)
        return again

    def _collect(self, row: BatchRow, results: Sequence[LineResult]) -> list[_Line]:
        """Store every answer of an ended batch once; mark each line; return what to ask again."""
        lines = self.ledger.lines(row.id)
        updates: list[tuple[str, str, str, str | None]] = []
        delivered: list[tuple[str, int, str]] = []
        again: list[_Line] = []
        seen: set[str] = set()
        for result in results:
            line = lines.get(result.custom_id)
            if line is None or line.state != "pending" or result.custom_id in seen:
                continue  # not ours, or already handled (a duplicate line)
            seen.add(result.custom_id)
            if result.ok and result.texts:
                texts = result.texts[:line.count]
                written = self.store.put(line.key, line.first, texts, result.input_tokens, result.output_tokens,
                                         self.settings.run_id, served_model=result.served_model,
                                         system_fingerprint=result.system_fingerprint)
                delivered += [(line.key, sample, row.id) for sample in written]
                self.counts["batch_answers"] += len(written)
                self.counts["batch_input_tokens"] += result.input_tokens
                self.counts["batch_output_tokens"] += result.output_tokens
                if line.key in self.specs:
                    self.stats.done += len(written)
                    self.stats.input_tokens += result.input_tokens
                    self.stats.output_tokens += result.output_tokens
                updates.append((row.id, line.custom_id, "done", None))
                self.provider.usage_note(result.usage_problem)
                if len(texts) < line.count:  # a server that ignored n, or answers that failed their checks
                    rest = LineRow(row.id, line.custom_id, line.key, line.first + len(texts), line.count - len(texts))
                    again += self._again(rest, result.problem or "fewer samples than asked", retryable=True,
                                         free=result.problem is None)
                continue
            if result.expired:
                self.counts["batch_lines_expired"] += 1
                updates.append((row.id, line.custom_id, "expired", result.error))
                again += self._again(line, f"expired in batch {row.id}", retryable=True)
                continue
            self.counts["batch_lines_failed"] += 1
            updates.append((row.id, line.custom_id, "failed", result.error))
            adapted = line.key in self.specs and self.client.adapt(result, self._request(line))
            again += self._again(line, result.error or "failed", retryable=result.retryable or adapted)
        for custom_id, line in lines.items():
            if line.state == "pending" and custom_id not in seen:  # the provider returned nothing for it
                self.counts["batch_lines_expired"] += 1
                updates.append((row.id, custom_id, "expired", "no result was returned for this line"))
                again += self._again(line, f"no result for it in batch {row.id}", retryable=True)
        self.ledger.mark_answers(delivered)
        self.ledger.finish_lines(updates)
        self.ledger.close_batch(row.id, "collected")
        self.counts["batches_collected"] += 1
        return again

    def _request(self, line: LineRow) -> ApiRequest:
        spec = self.specs[line.key]
        return ApiRequest(spec.system, spec.user, spec.temperature, self.max_tokens, line.count)

    def _again(self, line: LineRow, message: str, retryable: bool, free: bool = False) -> list[_Line]:
        """Resubmit a line that failed or expired, at most once per run; a line of a prompt
        this process does not hold is left for the run that does (its samples are missing).
        ``free``: a split batch or a short answer, not a failure: no resubmission used up."""
        if line.key not in self.specs:
            return []
        if line.batch_id not in self.mine:  # an earlier run's line: its samples are simply missing now
            retryable = True
        spot = (line.key, line.first)
        if not retryable or (spot in self.asked_again and not free):
            self._fail(line.key, message if not retryable else f"{message}; it was already asked again once in this run")
            self.stats.failed += line.count
            return []
        if not free:
            self.asked_again.add(spot)
            self.counts["batch_lines_resubmitted"] += 1
        return self._lines(line.key, line.first, line.count)

    # -- progress ----------------------------------------------------------------------------

    def _update_in_flight(self) -> None:
        pending = self.ledger.pending(list(self.specs))
        self.stats.in_flight = sum(len(samples) for samples in pending.values())
        self.on_progress(self.stats)

    def _status(self, final: bool = False) -> None:
        now = time.monotonic()
        if not final and now - self._last_status < self.batch.status_every and self._last_status:
            return
        self._last_status = now
        self.on_status(self.status_line(final))

    def status_line(self, final: bool = False) -> str:
        collecting = not self.specs  # optbench collect: every open batch, no prompts of its own
        open_ = self.ledger.open_batches(self.provider.identity()) if collecting else self._relevant_open()
        left = max(0.0, self._deadline - time.monotonic())
        stats = self.stats
        shown = f" ({', '.join(b.id for b in open_[:3])}{', ...' if len(open_) > 3 else ''})" if open_ else ""
        if collecting:
            parts = [f"{self.counts['batch_answers']:,} answers stored", f"{len(open_)} batch(es) open{shown}"]
        else:
            parts = [f"{stats.done:,} of {stats.total:,} answers in ({stats.cached:,} from the store)",
                     f"{len(open_)} batch(es) open{shown}",
                     (f"{self.counts['batches_submitted']} submitted, "
                      f"{self.counts['batch_lines_resubmitted']:,} line(s) resubmitted")]
        if open_ and not final and left >= 1:
            parts.append(f"waiting up to {_duration(left)} more")
        if self.poll_problem:
            parts.append(self.poll_problem)
        return "optbench batch: " + "; ".join(parts)

    def request_counts(self) -> dict[str, int]:
        counts = super().request_counts()
        counts.update(self.counts)
        return counts

    # -- answers for items ---------------------------------------------------------------

    def record(self, spec: PromptSpec) -> PromptRecord:
        """The answers of one prompt from the store; samples still in an open batch are pending.
        Never asks in real time."""
        key = self.key(spec)
        stored = self.store.get(key)
        if len(stored) < spec.samples and not self.owns(key) and not self.settings.offline:
            stored = self._wait_for_owner(key, spec.samples)
        pending = self.ledger.pending([key]).get(key, {}) if len(stored) < spec.samples else {}
        delivered = self.ledger.delivered(key)
        answers = []
        for sample in range(spec.samples):
            found: StoredAnswer | None = stored.get(sample)
            if found is not None:
                answers.append(replace(self._answer(key, found, spec), batch=delivered.get(sample)))
            elif sample in pending:
                answers.append(Answer(raw=None, batch=pending[sample]))
            else:
                answers.append(self._answer(key, None, spec))
        return PromptRecord(spec.role, spec.user, answers)

    @property
    def asks_for_all(self) -> bool:
        return self.shard_count < 2  # under xdist each worker submits its own share

    def owns(self, key: str) -> bool:
        """Under xdist each worker submits the batches of its own share of the prompts (a
        stable hash of the key, never ``hash()``), json and logprobs prompts asked in real
        time included."""
        return self.shard_count < 2 or self._owner(key) == self.shard_index

    def _owner(self, key: str) -> int:
        return int(key[:12], 16) % self.shard_count

    def _wait_for_owner(self, key: str, samples: int) -> dict[int, StoredAnswer]:
        """Under xdist another worker submits and collects this prompt: wait until its share is
        settled (or it stops beating: a dead worker), then read what the store has."""
        owner = self._owner(key)
        stall = self.settings.peer_stall * 3
        started = time.monotonic()
        stored = self.store.get(key)
        while len(stored) < samples:
            share = self.ledger.share(self.settings.run_id, owner)
            if share is not None and share[1]:
                break
            beat = share[0] if share is not None else None
            if (beat is None and time.monotonic() - started > stall) or (beat is not None and time.time() - beat > stall):
                break
            time.sleep(0.2)
            stored = self.store.get(key)
        if (message := self.store.failure(key, self.settings.run_id)) is not None:
            self.failures[key] = message
        return self.store.get(key)

    def collect_all(self) -> list[BatchRow]:
        """``optbench collect``: poll every open batch of this provider identity (whoever submitted
        it) until all have ended or the wait is over; store what they delivered. Lines that failed
        or expired are left missing: the next run asks for them again. Returns the batches still open."""
        return self._runner().run(self._collect_all())

    async def _collect_all(self) -> list[BatchRow]:
        self._deadline = time.monotonic() + self.batch.wait
        interval = self.batch.poll_first
        identity = self.provider.identity()
        while True:
            await self._poll(self.ledger.open_batches(identity))
            open_ = self.ledger.open_batches(identity)
            self._status()
            remaining = self._deadline - time.monotonic()
            if not open_ or remaining <= 0:
                return open_
            await asyncio.sleep(min(interval, remaining))
            interval = min(interval * 1.5, self.batch.poll_max)

    def open_info(self) -> dict[str, dict[str, Any]]:
        """The open batches that still owe this process's prompts answers: for the report."""
        return {row.id: {"provider": row.provider, "submitted": row.submitted, "expires": row.expires,
                         "lines": row.lines} for row in self._relevant_open()}

    def pending_note(self, batch_ids: Sequence[str]) -> str:
        """One sentence for an item whose answers are still in open batches."""
        sentence = pending_sentence(batch_ids, {b: r.expires for b, r in self.ledger.batches(batch_ids).items()})
        return f"{sentence} ({self.poll_problem})" if self.poll_problem else sentence

    def close(self) -> None:
        super().close()
        self.ledger.close()


def pending_sentence(batch_ids: Sequence[str], expires: dict[str, float | None]) -> str:
    """``answers pending in batch b1 (ends by ... at the latest): rerun ...``, one sentence."""
    ids = sorted(set(batch_ids))
    shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    latest = max((t for t in (expires.get(b) for b in ids) if t), default=None)
    when = f"; it ends by {_utc(latest)} at the latest (most batches end within an hour)" if latest else ""
    return (f"answers pending in batch{'es' if len(ids) > 1 else ''} {shown}{when}: rerun the same command (or "
            "`optbench collect`) to pick them up without submitting again")


def _utc(t: float) -> str:
    return datetime.fromtimestamp(t, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    return f"{seconds / 3600:.1f} h"


def collect_batches(store_path: Path, wait: float, base_url: str | None, env: Mapping[str, str],
                    write: Callable[[str], None], poll_first: float = 0.5) -> int:
    """``optbench collect``: pick up every open batch in a store, from any machine that has the
    store and the provider's API key. Returns the exit code (0; 2 when a provider cannot be built)."""
    import uuid

    from ..providers import ProviderError, build_model
    from ..providers.remote import ProviderOptions

    store = ResponseStore(store_path)
    ledger = BatchLedger(store_path)
    try:
        groups: dict[str, list[BatchRow]] = {}
        for row in ledger.open_batches():
            groups.setdefault(identity_text(row.identity), []).append(row)
        if not groups:
            write(f"optbench collect: no open batches in {store_path}; nothing to do.")
            return 0
        run_id = f"collect-{uuid.uuid4().hex}"
        totals = dict.fromkeys(("batches_collected", "batch_answers", "batch_input_tokens", "batch_output_tokens",
                                "batch_lines_expired", "batch_lines_failed"), 0)
        still_open: list[BatchRow] = []
        for rows in groups.values():
            identity = rows[0].identity
            spec = f"{identity.get('provider')}:{identity.get('model')}"
            try:
                provider = build_model(spec, ProviderOptions(base_url or identity.get("base_url"), 60.0, 0, env))
            except ProviderError as exc:
                write(f"optbench collect: {exc}")
                return 2
            if not isinstance(provider, ApiProvider):
                write(f"optbench collect: {spec} is not an API provider; its batches cannot be collected.")
                return 2
            elicitor = BatchElicitor(provider, store, EngineSettings(run_id=run_id),
                                     BatchSettings(wait=wait, poll_first=poll_first), on_status=write)
            try:
                still_open += elicitor.collect_all()
            finally:
                elicitor.close()
            for name in totals:
                totals[name] += elicitor.counts[name]
        write(collect_sentence(totals, still_open))
        return 0
    finally:
        ledger.close()
        store.close()


def collect_sentence(totals: Mapping[str, int], still_open: Sequence[BatchRow]) -> str:
    text = (f"optbench collect: {totals['batches_collected']} batch(es) collected, {totals['batch_answers']:,} "
            f"answers stored ({totals['batch_input_tokens']:,} input + {totals['batch_output_tokens']:,} output "
            "tokens at the batch price)")
    if totals["batch_lines_expired"] or totals["batch_lines_failed"]:
        text += (f"; {totals['batch_lines_expired'] + totals['batch_lines_failed']:,} line(s) expired or failed "
                 "and are asked again by the next run")
    if still_open:
        text += "; " + pending_sentence([b.id for b in still_open], {b.id: b.expires for b in still_open}) \
            .replace("answers pending in", "still open:")
    return text + "."
