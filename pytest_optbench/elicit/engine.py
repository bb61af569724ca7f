"""Elicitation: prompts -> raw answers -> parsed values, as ``PromptRecord``s.

Two paths. A plain model (simulated, or a user's callable) is asked directly, one sample
after another, when its item runs. An API provider goes through ``ApiElicitor``: before the
first item runs, the prompts of every selected item (this worker's shard of them, by a
stable hash) are elicited concurrently, with bounded and adaptive concurrency, back-off
that honours Retry-After, and each answer written to the response store as it arrives;
items then read their answers from the store.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..options import EngineSettings
from ..prompts import PromptSpec
from ..providers.api import ApiProvider, ApiRequest, CallFailed, cut_off
from ..providers.base import Model, Prompt
from ..providers.loop import LoopThread
from ..records import Answer, PromptRecord
from . import distribution, modes
from .parse import parse_answer
from .store import ResponseStore, StoredAnswer, answer_key

T = TypeVar("T")


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def parsed_answer(raw: str, question: str | None = None, truncated: bool | None = None, **extra: Any) -> Answer:
    """``truncated``: the reply was cut off at the token limit; None when nobody said (a plain
    model returns only text)."""
    parsed = parse_answer(raw, question=question, truncated=truncated)
    return Answer(raw=raw, value=parsed.value, reason=parsed.reason, truncated=truncated, **extra)


def read_answer(raw: str, mode: str, question: str | None = None, truncated: bool | None = None, *,
                positions: Sequence[distribution.Position] | None = None, yes_no: bool = False,
                asked: str | None = None, **extra: Any) -> Answer:
    """A reply read as its mode says (elicit/modes.py). ``mode`` is what the server served;
    a json reply that is no JSON object, and a logprobs reply without log-probabilities, are
    read as text (and recorded as text answers). ``asked``: the mode asked for, when the
    server served another (a fallback): the answer is then recorded as a text answer."""
    if mode == modes.LOGPROBS and positions:
        # The reply stops at a few tokens by design; the answer is at its start, not cut off.
        reading = distribution.read(positions, yes_no=yes_no)
        return Answer(raw=raw, value=reading.value, reason=reading.reason, truncated=None, mode=mode,
                      mass=round(reading.mass, 4), distribution=reading.distribution or None, **extra)
    if mode == modes.JSON:
        strict = modes.json_value(raw)
        if strict is not None:
            return Answer(raw=raw, value=strict[0], reason=strict[1], truncated=truncated, mode=mode, **extra)
    answer = parsed_answer(raw, question, truncated, **extra)
    answer.mode = modes.TEXT if (asked or mode) != modes.TEXT else None
    return answer


def elicit(model: Model, specs: Sequence[PromptSpec]) -> list[PromptRecord]:
    """Ask a plain model every prompt ``samples`` times and read each answer.

    In logprobs mode a model with a ``logprobs(prompt)`` method gives the answer tokens'
    distribution (``distribution.Position`` list); one without it answers in text."""
    records = []
    for spec in specs:
        record = PromptRecord(spec.role, spec.user)
        logprobs = getattr(model, "logprobs", None) if spec.mode == modes.LOGPROBS else None
        for sample in range(spec.samples):
            prompt = Prompt(spec.system, spec.user, spec.temperature, sample, spec.meta, spec.mode)
            try:
                if callable(logprobs):
                    positions = list(logprobs(prompt))
                    raw = "".join(p.token for p in positions)
                    record.answers.append(read_answer(raw, modes.LOGPROBS, spec.user, None, positions=positions,
                                                      yes_no=spec.yes_no))
                    continue
                raw = model.complete(prompt)
            except Exception as exc:  # noqa: BLE001 - any model failure is data, not a crash
                record.answers.append(Answer(raw=None, error=_describe(exc)))
                continue
            served = modes.TEXT if spec.mode == modes.LOGPROBS else spec.mode
            record.answers.append(read_answer(raw, served, spec.user, truncated=None, asked=spec.mode))
        records.append(record)
    return records


# --------------------------------------------------------------------------- API path


@dataclass
class EngineStats:
    """Counters for the progress display and the summary (this process only)."""

    total: int = 0
    done: int = 0
    cached: int = 0
    in_flight: int = 0
    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    timeouts: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    started: float = field(default_factory=time.monotonic)


class AdaptiveLimit:
    """At most ``limit`` requests in flight; halves on a 429 (once per second), grows by one
    per ``limit`` successes (AIMD, as TCP and inspect_ai do), and pauses everyone while a
    server's Retry-After runs."""

    def __init__(self, limit: int) -> None:
        self.ceiling = max(1, limit)
        self.limit = float(self.ceiling)
        self.in_flight = 0
        self.resume_at = 0.0
        self._last_cut = 0.0
        self._changed = asyncio.Condition()

    async def acquire(self) -> None:
        async with self._changed:
            while True:
                wait = self.resume_at - time.monotonic()
                if wait > 0:
                    try:
                        await asyncio.wait_for(self._changed.wait(), timeout=wait)
                    except TimeoutError:
                        pass
                    continue
                if self.in_flight < int(self.limit):
                    self.in_flight += 1
                    return
                await self._changed.wait()

    async def release(self, *, rate_limited: bool = False, pause: float | None = None) -> None:
        async with self._changed:
            self.in_flight -= 1
            now = time.monotonic()
            if rate_limited:
                if now - self._last_cut > 1.0:
                    self.limit = max(1.0, self.limit / 2)
                    self._last_cut = now
                if pause:
                    self.resume_at = max(self.resume_at, now + pause)
            else:
                self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)
            if rate_limited and pause:
                self._changed.notify_all()  # sleepers re-read resume_at
            else:  # wake only as many waiters as there are free slots (no thundering herd)
                self._changed.notify(max(1, int(self.limit) - self.in_flight))


@dataclass(frozen=True)
class Job:
    key: str
    spec: PromptSpec
    first: int  # first missing sample index
    count: int


class ApiElicitor:
    """Concurrent, resumable elicitation against an API provider, through the store."""

    def __init__(self, provider: ApiProvider, store: ResponseStore, settings: EngineSettings,
                 shard: tuple[int, int] = (0, 1), on_progress: Callable[[EngineStats], None] | None = None) -> None:
        self.provider, self.store, self.settings = provider, store, settings
        self.shard_index, self.shard_count = shard
        self.stats = EngineStats()
        self.failures: dict[str, str] = {}
        self.on_progress = on_progress or (lambda stats: None)
        # Without --max-tokens, the provider's default: part of the store key, like any limit.
        self.max_tokens = settings.max_tokens or getattr(provider, "default_max_tokens", None)

    def key(self, spec: PromptSpec) -> str:
        return answer_key(self.provider.identity(), spec.system, spec.user, spec.temperature,
                          self.tokens_for(spec), modes.STORE_MODES[spec.mode])

    def tokens_for(self, spec: PromptSpec) -> int | None:
        """Logprobs mode reads the first few tokens only (modes.LOGPROBS_MAX_TOKENS)."""
        if spec.mode == modes.LOGPROBS:
            return min(self.max_tokens or modes.LOGPROBS_MAX_TOKENS, modes.LOGPROBS_MAX_TOKENS)
        return self.max_tokens

    def owns(self, key: str) -> bool:
        """Stable sharding between xdist workers (a hash, never ``hash()``)."""
        return int(key[:12], 16) % self.shard_count == self.shard_index

    def plan(self, specs: Sequence[PromptSpec], only_own: bool = True) -> list[Job]:
        """Jobs for every missing sample; identical prompts (same key) are asked once."""
        wanted: dict[str, PromptSpec] = {}
        for spec in specs:
            key = self.key(spec)
            if only_own and not self.owns(key):
                continue
            if key not in wanted or spec.samples > wanted[key].samples:
                wanted[key] = spec
        stored = self.store.count(list(wanted))
        jobs = []
        for key, spec in wanted.items():
            have = self.store.get(key) if stored[key] else {}
            missing = [i for i in range(spec.samples) if i not in have]
            if only_own:  # the prefetch plan is what the progress display counts
                self.stats.total += spec.samples
                self.stats.cached += spec.samples - len(missing)
                self.stats.done += spec.samples - len(missing)
            for first, count in _runs(missing):
                jobs.append(Job(key, spec, first, count))
        return jobs

    def prefetch(self, specs: Sequence[PromptSpec]) -> None:
        """Elicit every missing answer of this process's share, concurrently."""
        jobs = self.plan(specs)
        self.on_progress(self.stats)
        if jobs and not self.settings.offline:
            self._runner().run(self._run(jobs))
        self.on_progress(self.stats)

    def _runner(self) -> LoopThread:
        return self.provider.runner()

    def close(self) -> None:
        self.provider.close()

    def request_counts(self) -> dict[str, int]:
        """What this process asked of the server, for the summary and the report."""
        stats = self.stats
        resent = int(getattr(self.provider, "resent", 0))
        return {"requests": stats.requests + resent, "retries": stats.retries, "rate_limited": stats.rate_limited,
                "timeouts": stats.timeouts, "failed_answers": stats.failed,
                "parameter_changes": int(getattr(self.provider, "parameter_changes", 0))}

    async def _run(self, jobs: Sequence[Job]) -> None:
        limit = AdaptiveLimit(self.settings.concurrency)
        await asyncio.gather(*(self._job(job, limit) for job in jobs))

    async def _job(self, job: Job, limit: AdaptiveLimit) -> None:
        sample, remaining, attempt = job.first, job.count, 0
        stats = self.stats
        while remaining > 0:
            n = max(1, min(remaining, self.provider.max_n))
            request = ApiRequest(job.spec.system, job.spec.user, job.spec.temperature, self.tokens_for(job.spec), n,
                                 job.spec.mode, job.spec.yes_no)
            await limit.acquire()
            stats.in_flight += 1
            stats.requests += 1
            self.on_progress(stats)
            try:
                result = await self.provider.generate(request)
                if not result.texts:
                    raise CallFailed(f"{self.provider.provider}: the response holds no answer", retryable=True)
            except CallFailed as failure:
                stats.in_flight -= 1
                if failure.rate_limited:
                    stats.rate_limited += 1
                if failure.timed_out:
                    stats.timeouts += 1
                delay = self._delay(failure, attempt)
                await limit.release(rate_limited=failure.rate_limited,
                                    pause=delay if failure.retry_after is not None else None)
                if failure.retryable and attempt < self.settings.max_retries:
                    attempt += 1
                    stats.retries += 1
                    self.on_progress(stats)
                    await asyncio.sleep(delay)
                    continue
                stats.failed += remaining
                suffix = f" (after {attempt} retries)" if attempt else ""
                self._fail(job.key, self.provider.redact(str(failure)) + suffix)
                self.on_progress(stats)
                return
            except Exception as exc:  # noqa: BLE001 - a provider bug must not kill the run
                stats.in_flight -= 1
                await limit.release()
                stats.failed += remaining
                self._fail(job.key, self.provider.redact(_describe(exc)))
                return
            stats.in_flight -= 1
            await limit.release()
            texts = result.texts[:n]
            logprobs = [result.logprobs_of(i) for i in range(len(texts))]
            self.store.put(job.key, sample, texts, result.input_tokens, result.output_tokens, self.settings.run_id,
                           finish_reasons=[result.finish_reason(i) for i in range(len(texts))],
                           mode=result.mode if result.mode != job.spec.mode else None,
                           logprobs=[json.dumps(lp, ensure_ascii=False) if lp else None for lp in logprobs])
            stats.input_tokens += result.input_tokens
            stats.output_tokens += result.output_tokens
            stats.done += len(texts)
            sample, remaining, attempt = sample + len(texts), remaining - len(texts), 0
            self.on_progress(stats)

    def _fail(self, key: str, message: str) -> None:
        """Remember a request that failed for good, here and for the other workers of this run."""
        self.failures[key] = message
        self.store.put_failure(key, self.settings.run_id, message)

    def _delay(self, failure: CallFailed, attempt: int) -> float:
        """Retry-After when the server gave one, else capped exponential back-off with jitter."""
        if failure.retry_after is not None:
            return min(failure.retry_after, self.settings.backoff_cap * 2)
        return random.uniform(0, min(self.settings.backoff_cap, self.settings.backoff_base * 2 ** attempt))

    def record(self, spec: PromptSpec) -> PromptRecord:
        """The answers of one prompt, from the store; eliciting what is still missing."""
        key = self.key(spec)
        stored = self.store.get(key)
        if len(stored) < spec.samples and key not in self.failures and not self.settings.offline:
            if not self.owns(key):
                stored = self._wait_for_peer(key, spec.samples)
            if len(stored) < spec.samples and key not in self.failures:
                self._runner().run(self._run(self.plan([spec], only_own=False)))
                stored = self.store.get(key)
        return PromptRecord(spec.role, spec.user, [self._answer(key, stored.get(i), spec)
                                                   for i in range(spec.samples)])

    def _wait_for_peer(self, key: str, samples: int) -> dict[int, StoredAnswer]:
        """Another worker owns this prompt and is probably eliciting it right now; stop
        waiting when it has the answers, or when it gave up on them (never ask again then)."""
        deadline = time.monotonic() + self.settings.peer_wait
        stored = self.store.get(key)
        last_write, last_change = self.store.last_write(), time.monotonic()
        while len(stored) < samples and time.monotonic() < deadline:
            if (message := self.store.failure(key, self.settings.run_id)) is not None:
                self.failures[key] = message
                break
            if (written := self.store.last_write()) != last_write:
                last_write, last_change = written, time.monotonic()
            elif time.monotonic() - last_change > self.settings.peer_stall:
                break  # nobody is storing anything: the owner died; ask ourselves
            time.sleep(0.2)
            stored = self.store.get(key)
        return stored

    def _answer(self, key: str, stored: StoredAnswer | None, spec: PromptSpec) -> Answer:
        if stored is None:
            if self.settings.offline:
                return Answer(raw=None, error="not in the response store (--optbench-offline)")
            return Answer(raw=None, error=self.failures.get(key, "no answer was received"))
        positions = None
        if stored.logprobs:
            try:
                positions = distribution.from_json(json.loads(stored.logprobs))
            except ValueError:
                positions = None
        return read_answer(stored.text, stored.mode or spec.mode, spec.user, cut_off(stored.finish_reason),
                           positions=positions, yes_no=spec.yes_no, asked=spec.mode,
                           cached=stored.run_id != self.settings.run_id,
                           input_tokens=stored.input_tokens, output_tokens=stored.output_tokens)


def _runs(indices: Sequence[int]) -> list[tuple[int, int]]:
    """[0, 1, 2, 5, 6] -> [(0, 3), (5, 2)]: consecutive missing samples form one job."""
    out: list[tuple[int, int]] = []
    for i in indices:
        if out and out[-1][0] + out[-1][1] == i:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((i, 1))
    return out
