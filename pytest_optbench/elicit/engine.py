"""Elicitation: prompts -> raw answers -> parsed values, as ``PromptRecord``s.

Two paths. A plain model (simulated, or a user's callable) is asked directly, one sample
after another, when its item runs. An API provider goes through ``ApiElicitor``: before the
first item runs, the prompts of every selected item are elicited concurrently, with bounded
and adaptive concurrency, back-off that honours Retry-After, and each answer written to the
response store as it arrives; items then read their answers from the store. Under xdist one
process asks for them all, the controller where it can (session/asker.py), otherwise one
worker (``ASKER``), and the workers read the store as its answers arrive.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from ..answers import distribution
from ..answers.parse import json_answer, parse_answer
from ..options import EngineSettings
from ..prompts import modes
from ..prompts.build import PromptSpec
from ..providers.base import Model, Prompt
from ..providers.loop import LoopThread
from ..providers.remote import DEFAULT_MAX_REPLY, ApiProvider, ApiRequest, ApiResult, CallFailed, cut_off
from ..records.item import NOT_ASKED, Answer, PromptRecord
from ..text.display import one_line, well_formed
from .counters import EngineStats
from .store import ResponseStore, StoredAnswer, StoreError, answer_key

T = TypeVar("T")

# The failures-table keys under which a stopped session tells its other xdist workers, and
# under which ASKER tells them it has asked for every prompt of the prefetch.
STOP_KEY = "*session stopped*"
DONE_KEY = "*prefetch asked*"
PEER_POLL = 0.02  # seconds between two looks at the store while another worker asks
MAX_ERROR = 500  # characters of an error message kept with an answer
TOTAL_TIMEOUT = 2.0  # a request's whole reply must arrive within this many times --optbench-timeout
# The xdist worker that asks for every prompt of the prefetch, with all of --concurrency: the
# SDK is imported and its connections opened once, one adaptive limit meets the server's 429s,
# and no worker waits for a share that another, later-started worker has not begun (on 2 cores
# the second worker starts ~0.5-0.8 s after the first, and both importing an SDK at once slow
# each other). The other workers run their items as its answers reach the store.
ASKER = 0


def is_asker(shard: tuple[int, int]) -> bool:
    """Whether the process of this (index, count) shard asks for every prompt of the prefetch:
    a serial run's, or xdist's ASKER."""
    index, count = shard
    return count < 2 or index == ASKER


def _describe(exc: BaseException) -> str:
    text = one_line(str(exc).strip(), MAX_ERROR)
    if isinstance(exc, ReplyTooLong):
        return text
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def parsed_answer(raw: str, question: str | None = None, truncated: bool | None = None, **extra: Any) -> Answer:
    """``truncated``: the reply was cut off at the token limit; None when nobody said (a plain
    model returns only text)."""
    raw = well_formed(raw)  # a lone surrogate would stop the store and every report writer
    parsed = parse_answer(raw, question=question, truncated=truncated)
    return Answer(raw=raw, value=parsed.value, reason=parsed.reason, truncated=truncated, rule=parsed.rule, **extra)


def read_answer(raw: str, mode: str, question: str | None = None, truncated: bool | None = None, *,
                positions: Sequence[distribution.Position] | None = None, yes_no: bool = False,
                asked: str | None = None, probes: distribution.Probes | None = None, **extra: Any) -> Answer:
    """A reply read as its mode says (elicit/modes.py). ``mode`` is what the server served;
    a json reply that is no JSON object, and a logprobs reply without log-probabilities, are
    read as text (and recorded as text answers). ``asked``: the mode asked for, when the
    server served another (a fallback): the answer is then recorded as a text answer.
    ``probes``: a number followed digit by digit (providers/completions.py)."""
    if mode == modes.LOGPROBS and positions:
        # The reply stops at a few tokens by design; the answer is at its start, not cut off.
        reading = distribution.read(positions, yes_no=yes_no, probes=probes)
        return Answer(raw=raw, value=reading.value, reason=reading.reason, truncated=None, mode=mode,
                      mass=round(reading.mass, 4), distribution=reading.distribution or None, **extra)
    if mode == modes.JSON:
        strict = json_answer(raw, question)
        if strict is not None:
            return Answer(raw=raw, value=strict.value, reason=strict.reason, truncated=truncated, mode=mode, **extra)
    answer = parsed_answer(raw, question, truncated, **extra)
    answer.mode = modes.TEXT if (asked or mode) != modes.TEXT else None
    return answer


def not_asked(records: Sequence[PromptRecord]) -> str | None:
    """Why the session stopped asking, when some answers of these records were not asked."""
    for record in records:
        for answer in record.answers:
            if answer.error and answer.error.startswith(NOT_ASKED):
                return answer.error
    return None


class CallTimeout(BaseException):
    """A plain model's call ran past its time. A BaseException, so that a pipeline's own
    ``except Exception`` (a retry loop) cannot swallow it and hang again."""


def _alarm_free() -> bool:
    """SIGALRM can time a call: the main thread of a POSIX process, no timer of another
    plugin (pytest-timeout's signal method) running."""
    return (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
            and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
            and signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None))


class ModelCalls:
    """The limits on a plain model (a user's conftest model): each call at most ``timeout``
    seconds (by SIGALRM, in the calling thread, so a pipeline keeps its thread-bound state),
    every call within the session ``deadline``, and no more calls after ``max_timeouts``
    timeouts in a row (a hung pipeline would otherwise cost a timeout per answer); each
    reply within ``max_reply`` characters."""

    def __init__(self, timeout: float | None, deadline: float | None = None, max_timeouts: int = 3,
                 clock: Callable[[], float] = time.monotonic, max_reply: int | None = DEFAULT_MAX_REPLY) -> None:
        self.timeout, self.deadline, self.max_timeouts, self.clock = timeout, deadline, max_timeouts, clock
        self.max_reply = max_reply  # characters of one reply at most (--optbench-max-reply)
        self.ends = clock() + deadline if deadline else None
        self.stop_reason: str | None = None
        self._timeouts = 0

    def refuse(self) -> str | None:
        """Why no more calls may be made, or None."""
        if self.stop_reason is None and self.ends is not None and self.clock() >= self.ends:
            self.stop_reason = f"the session deadline of {self.deadline:g} s (--optbench-deadline) passed"
        return self.stop_reason

    def call(self, function: Callable[[Prompt], str], prompt: Prompt) -> str:
        limit = self.timeout
        if self.ends is not None:
            limit = max(0.001, min(limit or float("inf"), self.ends - self.clock()))
        if limit is None or limit == float("inf") or not _alarm_free():
            return function(prompt)

        def on_alarm(signum: int, frame: Any) -> None:
            raise CallTimeout

        previous = signal.signal(signal.SIGALRM, on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
        try:
            result = function(prompt)
        except CallTimeout:
            self._timeouts += 1
            if self._timeouts >= self.max_timeouts:
                self.stop_reason = (f"the model timed out {self._timeouts} times in a row "
                                    f"(--optbench-timeout {self.timeout:g} s)")
            self.refuse()
            raise
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        self._timeouts = 0
        return result


def elicit(model: Model, specs: Sequence[PromptSpec], calls: ModelCalls | None = None) -> list[PromptRecord]:
    """Ask a plain model every prompt ``samples`` times and read each answer; ``calls``
    bounds the time of each call and of all of them, and the size of each reply.

    In logprobs mode a model with a ``logprobs(prompt)`` method gives the answer tokens'
    distribution (``distribution.Position`` list); one without it answers in text."""
    records = []
    for spec in specs:
        record = PromptRecord(spec.role, spec.user)
        for sample in range(spec.samples):
            prompt = Prompt(spec.system, spec.user, spec.temperature, sample, spec.meta, spec.mode)
            if calls is not None and (reason := calls.refuse()):
                record.answers.append(Answer(raw=None, error=NOT_ASKED + reason))
                continue
            try:
                record.answers.append(_ask(model, spec, prompt, calls))
            except CallTimeout:
                limit = calls.timeout if calls is not None else None
                record.answers.append(Answer(raw=None, error=f"timed out after {limit:g} s (--optbench-timeout)"
                                             if limit else "timed out (--optbench-deadline)"))
            except Exception as exc:  # noqa: BLE001 - any model failure is data, not a crash
                record.answers.append(Answer(raw=None, error=_describe(exc)))
        records.append(record)
    return records


class ReplyTooLong(ValueError):
    """A plain model's reply beyond --optbench-max-reply."""


def _ask(model: Model, spec: PromptSpec, prompt: Prompt, calls: ModelCalls | None) -> Answer:
    """One sample of a plain model, its reply checked as a server's would be: within the
    reply size, log-probabilities finite and <= 0."""
    logprobs = getattr(model, "logprobs", None) if spec.mode == modes.LOGPROBS else None
    most = calls.max_reply if calls is not None else None
    if callable(logprobs):
        given = calls.call(logprobs, prompt) if calls is not None else logprobs(prompt)
        positions = distribution.checked(given)
        raw = "".join(p.token for p in positions)
        return read_answer(raw, modes.LOGPROBS, spec.user, None, positions=positions, yes_no=spec.yes_no)
    raw = calls.call(model.complete, prompt) if calls is not None else model.complete(prompt)
    if most is not None and len(raw) > most:
        raise ReplyTooLong(f"the model's reply is {len(raw):,} characters, more than the {most / 1e6:g} MB "
                           "--optbench-max-reply allows; it was not read")
    served = modes.TEXT if spec.mode == modes.LOGPROBS else spec.mode
    return read_answer(raw, served, spec.user, truncated=None, asked=spec.mode)


# --------------------------------------------------------------------------- API path


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
    """Concurrent, resumable elicitation against an API provider, through the store.

    It stops asking, for the whole session and its other xdist workers, at the first answer
    that no request can get (a bad key, no quota, no such model), when ``deadline`` seconds
    have passed, after ``max_timeouts`` time-outs or ``max_dead_requests`` failures in a row
    (a server that stopped answering, or is down), and when the xdist controller (``parent_pid``) has gone. Answers the store cannot
    take (a full disk, another session's answer first) are kept in memory for this session.
    """

    def __init__(self, provider: ApiProvider, store: ResponseStore, settings: EngineSettings,
                 shard: tuple[int, int] = (0, 1), on_progress: Callable[[EngineStats], None] | None = None,
                 parent_pid: int | None = None, clock: Callable[[], float] = time.monotonic,
                 asks: bool | None = None) -> None:
        self.provider, self.store, self.settings = provider, store, settings
        self.shard_index, self.shard_count = shard
        # ``asks`` given: the xdist controller asks (True there, False in every worker), so this
        # process has peers even under -n 1; otherwise the shard decides (is_asker).
        self._asks = is_asker(shard) if asks is None else asks
        self.peers = self.shard_count > 1 or asks is not None
        self.stats = EngineStats()
        self.failures: dict[str, str] = {}
        self.on_progress = on_progress or (lambda stats: None)
        # Without --max-tokens, the provider's default: part of the store key, like any limit.
        self.max_tokens = settings.max_tokens or getattr(provider, "default_max_tokens", None)
        self.parent_pid, self.clock = parent_pid, clock
        self.ends = clock() + settings.deadline if settings.deadline else None
        self.stop_reason: str | None = None
        self.memory: dict[str, dict[int, StoredAnswer]] = {}  # paid for here, not in the store
        self.store_error: str | None = None  # the first write or read the store refused
        self.kept_in_memory = 0
        self._failed_in_a_row = 0
        self._timeouts_in_a_row = 0
        self._peers_checked = 0.0
        self._keys: dict[tuple[Any, ...], str] = {}
        self._stopping = _StopSignal()  # bound to the loop of each run (_run)
        self._prefetched: set[str] = set()  # the keys of the prefetch (note_prefetch): ASKER asks for them
        self._slots_full = threading.Event()  # every request slot of the prefetch holds a request
        self._slots = settings.concurrency

    def key(self, spec: PromptSpec) -> str:
        # Asked for every prompt twice (prefetch, then its item): hashed once.
        fields = (spec.system, spec.user, spec.temperature, self.tokens_for(spec), self._store_mode(spec.mode))
        key = self._keys.get(fields)
        if key is None:
            key = self._keys[fields] = answer_key(self.provider.identity(), *fields)
        return key

    def tokens_for(self, spec: PromptSpec) -> int | None:
        """Logprobs mode reads the first few tokens only (modes.LOGPROBS_MAX_TOKENS); json mode
        gets at least enough for the object (modes.JSON_MIN_TOKENS, REASONED_MIN_TOKENS)."""
        if spec.mode == modes.LOGPROBS:
            return min(self.max_tokens or modes.LOGPROBS_MAX_TOKENS, modes.LOGPROBS_MAX_TOKENS)
        if spec.mode == modes.JSON and self.max_tokens is not None:
            return max(self.max_tokens, modes.REASONED_MIN_TOKENS if self.provider.json_reasoned else modes.JSON_MIN_TOKENS)
        return self.max_tokens

    def _store_mode(self, mode: str) -> str:
        reasoned = mode == modes.JSON and self.provider.json_reasoned
        return modes.REASONED_STORE_MODE if reasoned else modes.STORE_MODES[mode]

    @property
    def asks_for_all(self) -> bool:
        """This process asks for every prompt of the prefetch (a serial run, the xdist
        controller that asks, or xdist's ASKER)."""
        return self._asks

    def owns(self, key: str) -> bool:
        """Whether this process asks for a prompt: ASKER for those of the prefetch; a prompt
        outside it, whoever needs it (nobody else would ask for it)."""
        return self.asks_for_all or key not in self._prefetched

    def note_prefetch(self, specs: Sequence[PromptSpec]) -> None:
        """Note the prompts of the prefetch: under xdist, ASKER asks for them and every other
        worker waits for them in the store. Every worker collects the same items, so each
        knows the same prompts, from the prompts alone (not from the store, which is being
        written)."""
        if self.peers:
            self._prefetched = {self.key(spec) for spec in specs}

    # -- the store, and memory where the store fails ------------------------------------------

    def _store_failed(self, exc: StoreError) -> None:
        if self.store_error is None:
            self.store_error = str(exc).rstrip(".")

    def faults(self) -> list[str]:
        """What went wrong that does not make any answer wrong but must fail the session."""
        if self.store_error is None:
            return []
        return [f"{self.store_error}; the answers it did not take are kept in memory and in this run's reports only"]

    def stored(self, key: str) -> dict[int, StoredAnswer]:
        """The answers of one prompt: the store's, and over them the ones paid for here."""
        try:
            found = self.store.get(key)
        except StoreError as exc:
            self._store_failed(exc)
            found = {}
        return {**found, **self.memory.get(key, {})}

    def _keep(self, key: str, first: int, texts: Sequence[str], result: ApiResult, asked: str = modes.TEXT) -> None:
        """Store one request's answers; keep in memory what the store did not take. With
        them go the mode served when it is not the one asked (a fallback) and, in logprobs
        mode, the tokens and their alternatives."""
        reasons = [result.finish_reason(i) for i in range(len(texts))]
        served = result.mode if result.mode != asked else None
        logprobs = [json.dumps(lp, ensure_ascii=False) if (lp := result.logprobs_of(i)) else None
                    for i in range(len(texts))]
        try:
            written = set(self.store.put(key, first, texts, result.input_tokens, result.output_tokens,
                                         self.settings.run_id, finish_reasons=reasons, mode=served,
                                         logprobs=logprobs, served_model=result.served_model,
                                         system_fingerprint=result.system_fingerprint))
        except StoreError as exc:
            self._store_failed(exc)
            written = set()
        for offset, text in enumerate(texts):
            if first + offset in written:
                continue
            # Not written: the disk refused it, or another session stored that sample first.
            # Either way this session paid for it, and reports it as paid for.
            tokens = (result.input_tokens, result.output_tokens) if offset == 0 else (0, 0)
            self.memory.setdefault(key, {})[first + offset] = StoredAnswer(
                first + offset, text, *tokens, run_id=self.settings.run_id, finish_reason=reasons[offset],
                mode=served, logprobs=logprobs[offset], served_model=result.served_model,
                system_fingerprint=result.system_fingerprint)
            if self.store_error is not None:
                self.kept_in_memory += 1

    def _counts(self, keys: Sequence[str]) -> dict[str, int]:
        try:
            return self.store.count(keys)
        except StoreError as exc:
            self._store_failed(exc)
            return dict.fromkeys(keys, 1)  # unknown: read each key (and memory) one by one

    # -- stopping ----------------------------------------------------------------------------

    def _stop(self, reason: str) -> str:
        if self.stop_reason is None:
            self.stop_reason = reason
            self._stopping.set()  # the requests in flight are cut short (_generate)
            self._announce(STOP_KEY, reason)  # tell the other workers of this session
        return self.stop_reason

    def ask_here(self) -> None:
        """The controller cannot be handed the prompts: xdist's ASKER asks for them after all
        (with the one request at a time a waiting worker was given: a fallback, not a path)."""
        self._asks = is_asker((self.shard_index, self.shard_count))

    def halt(self, reason: str) -> None:
        """Stop asking, now and for the session's other processes (its items have all run)."""
        self._stop(reason)

    def should_stop(self) -> str | None:
        """Why no more requests may be sent, or None."""
        if self.stop_reason is not None:
            return self.stop_reason
        now = self.clock()
        if self.ends is not None and now >= self.ends:
            return self._stop(f"the session deadline of {self.settings.deadline:g} s (--optbench-deadline) passed")
        if self.parent_pid is not None and os.getppid() != self.parent_pid:
            return self._stop("the xdist controller has gone")
        if self.peers and now - self._peers_checked > 0.5:
            self._peers_checked = now
            try:
                reason = self.store.failure(STOP_KEY, self.settings.run_id)
            except StoreError as exc:
                self._store_failed(exc)
                reason = None
            if reason is not None:
                self.stop_reason = reason  # a peer stopped the session
                self._stopping.set()
        return self.stop_reason

    # -- planning and running ----------------------------------------------------------------

    def plan(self, specs: Sequence[PromptSpec], only_own: bool = True) -> list[Job]:
        """Jobs for every missing sample; identical prompts (same key) are asked once."""
        wanted: dict[str, PromptSpec] = {}
        for spec in specs:
            key = self.key(spec)
            if only_own and not self.owns(key):
                continue
            if key not in wanted or spec.samples > wanted[key].samples:
                wanted[key] = spec
        counts = self._counts(list(wanted))
        jobs = []
        for key, spec in wanted.items():
            have = self.stored(key) if counts[key] or key in self.memory else {}
            missing = [i for i in range(spec.samples) if i not in have]
            if only_own:  # the prefetch plan is what the progress display counts
                self.stats.total += spec.samples
                self.stats.cached += spec.samples - len(missing)
                self.stats.done += spec.samples - len(missing)
            for first, count in _runs(missing):
                jobs.append(Job(key, spec, first, count))
        return jobs

    def prefetch(self, specs: Sequence[PromptSpec], meanwhile: Callable[[], None] | None = None) -> None:
        """Elicit every missing answer of this process's share, concurrently. ``meanwhile``:
        work of the caller's thread done while the answers are awaited, once every request
        slot holds a request (or the requests are over); it must not raise."""
        self.note_prefetch(specs)
        jobs = self.plan(specs)
        self.on_progress(self.stats)
        if jobs and not self.settings.offline:
            self._slots_full = threading.Event()
            self._slots = min(self.settings.concurrency, len(jobs))
            self._runner().run(self._run(jobs), meanwhile, self._slots_full)
        elif meanwhile is not None:
            meanwhile()
        if self.peers and self.asks_for_all:
            self._announce(DONE_KEY, "asked")
        self.on_progress(self.stats)

    def _announce(self, key: str, message: str) -> None:
        """A word to the session's other xdist workers, through the store."""
        try:
            self.store.put_failure(key, self.settings.run_id, message)
        except StoreError as exc:
            self._store_failed(exc)

    def preload(self) -> None:
        """Import the provider's SDK and build its client in the background now (the caller
        knows it will ask): see ApiProvider.preload."""
        if not self.settings.offline:
            preload = getattr(self.provider, "preload", None)
            if callable(preload):
                preload()

    def _runner(self) -> LoopThread:
        return self.provider.runner()

    def close(self) -> None:
        self.provider.close()

    def request_counts(self) -> dict[str, int]:
        """What this process asked of the server, for the summary and the report."""
        stats = self.stats
        resent = int(getattr(self.provider, "resent", 0))
        probes = int(getattr(self.provider, "probes", 0))
        return {"requests": stats.requests + resent + probes, "probe_requests": probes, "retries": stats.retries, "rate_limited": stats.rate_limited,
                "timeouts": stats.timeouts, "failed_answers": stats.failed,
                "parameter_changes": int(getattr(self.provider, "parameter_changes", 0))}

    async def _run(self, jobs: Sequence[Job]) -> None:
        # Every slot opens at once. A request that cannot succeed (a bad key, no quota, no
        # such model) is refused and not billed: the first such answer stops the session,
        # and the requests still in flight are cut short then (_generate), so a bad key costs
        # at most one request per slot and no waiting, and a good one no probe round-trip.
        self._stopping = _StopSignal(asyncio.get_running_loop())
        if self.stop_reason is not None:
            self._stopping.set()
        limit = AdaptiveLimit(self.settings.concurrency)
        await asyncio.gather(*(self._job(job, limit) for job in jobs))

    async def _generate(self, request: ApiRequest) -> ApiResult:
        """One request, within --optbench-timeout in all (a server that trickles its reply
        byte by byte passes every read timeout), cut short when the session stops while it
        waits (another request's fatal answer, the deadline passing)."""
        timeout = getattr(self.provider, "timeout", None)
        # Twice the SDK's own time-outs (each read, connecting): those fire first on a server
        # that sends nothing; this one on a server that sends a byte now and then.
        limit = TOTAL_TIMEOUT * float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else None
        left = max(0.0, self.ends - self.clock()) if self.ends is not None else None
        by_deadline = left is not None and (limit is None or left <= limit)
        call = asyncio.ensure_future(self.provider.generate(request))
        stopped = asyncio.ensure_future(self._stopping.event.wait())
        done: set[asyncio.Future[Any]] = set()
        try:
            done, _ = await asyncio.wait((call, stopped), timeout=left if by_deadline else limit,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not call.done():
                call.cancel()  # the session stopped, it timed out, or this task was cancelled (Ctrl-C)
        if not call.done():
            await asyncio.wait((call,))  # let the SDK close the request it was making
        if not call.cancelled() and (call in done or call.exception() is None):
            return call.result()  # answered (or failed) before it could be cut short
        if self.stop_reason is None:
            if by_deadline:
                self._stop(f"the session deadline of {self.settings.deadline:g} s (--optbench-deadline) passed")
            else:
                raise CallFailed(f"{self.provider.provider}: the reply was not complete after {limit:g} s (twice "
                                 "--optbench-timeout)", retryable=True, timed_out=True)
        raise _Stopped(self.stop_reason)

    async def _job(self, job: Job, limit: AdaptiveLimit) -> None:
        sample, remaining, attempt = job.first, job.count, 0
        stats = self.stats
        while remaining > 0:
            n = max(1, min(remaining, self.provider.max_n))
            request = ApiRequest(job.spec.system, job.spec.user, job.spec.temperature, self.tokens_for(job.spec), n,
                                 job.spec.mode, job.spec.yes_no)
            if (reason := self.should_stop()) is not None:
                return self._not_asked(job.key, remaining, reason)
            await limit.acquire()
            if (reason := self.should_stop()) is not None:  # it may have stopped while we waited
                await limit.release()
                return self._not_asked(job.key, remaining, reason)
            stats.in_flight += 1
            stats.requests += 1
            if stats.in_flight >= self._slots:
                self._slots_full.set()  # the caller's meanwhile may start (prefetch)
            self.on_progress(stats)
            try:
                result = _checked(await self._generate(request), self.provider.provider)
                if not result.texts:
                    raise CallFailed(result.problems[0] if result.problems else
                                     f"{self.provider.provider}: the response holds no answer", retryable=True)
            except _Stopped as stopped:
                stats.in_flight -= 1
                await limit.release()
                return self._not_asked(job.key, remaining, str(stopped))
            except CallFailed as failure:
                stats.in_flight -= 1
                if not await self._failed(job, failure, attempt, remaining, limit):
                    return
                attempt += 1
                continue
            except Exception as exc:  # noqa: BLE001 - a provider bug must not kill the run
                stats.in_flight -= 1
                await limit.release()
                stats.failed += remaining
                message = self.provider.redact(_describe(exc))
                self._count_failure(False, message)
                self._fail(job.key, message)
                return
            stats.in_flight -= 1
            self._failed_in_a_row = self._timeouts_in_a_row = 0
            await limit.release()
            # The request waiting for this slot is sent before this answer is stored: answers
            # come back in bursts (a round of requests sent together), and each storing would
            # otherwise hold back every later request of the burst.
            await asyncio.sleep(0)
            # A server may echo the key it got; text a UTF-8 store cannot hold is repaired.
            texts = [well_formed(text) for text in self.provider.redact_result(result).texts[:n]]
            self._keep(job.key, sample, texts, result, job.spec.mode)
            stats.input_tokens += result.input_tokens
            stats.output_tokens += result.output_tokens
            stats.done += len(texts)
            sample, remaining = sample + len(texts), remaining - len(texts)
            self.on_progress(stats)
            if result.problems and remaining > 0:
                # Some answers of the reply failed their checks: the good ones are stored, the
                # rest asked again like any unusable response (within --optbench-retries).
                partial = CallFailed(result.problems[0], retryable=True)
                if not await self._retry_or_fail(job, partial, attempt, remaining):
                    return
                attempt += 1
            else:
                attempt = 0

    async def _failed(self, job: Job, failure: CallFailed, attempt: int, remaining: int,
                      limit: AdaptiveLimit) -> bool:
        """A request failed: count it, release its slot; True when it is to be asked again."""
        stats = self.stats
        if failure.rate_limited:
            stats.rate_limited += 1
        message = self.provider.redact(one_line(str(failure), MAX_ERROR))
        if failure.fatal and self.stop_reason is not None:
            # Refused too, after another request's refusal stopped the session: one prompt
            # carries the reason, the others were not asked (one FAILED item).
            await limit.release()
            self._not_asked(job.key, remaining, self.stop_reason)
            return False
        if failure.fatal:
            self._stop(message)
        else:
            self._count_failure(failure.rate_limited, message)
        if failure.timed_out:
            stats.timeouts += 1
            self._count_timeout()
        delay = self._delay(failure, attempt)
        await limit.release(rate_limited=failure.rate_limited,
                            pause=delay if failure.retry_after is not None else None)
        return await self._retry_or_fail(job, failure, attempt, remaining, delay)

    async def _retry_or_fail(self, job: Job, failure: CallFailed, attempt: int, remaining: int,
                             delay: float | None = None) -> bool:
        """After a back-off, True to ask again; or the rest of the job fails with the reason."""
        stats = self.stats
        if failure.retryable and attempt < self.settings.max_retries and self.should_stop() is None:
            stats.retries += 1
            self.on_progress(stats)
            await asyncio.sleep(self._delay(failure, attempt) if delay is None else delay)
            return True
        stats.failed += remaining
        suffix = f" (after {attempt} retries)" if attempt else ""
        self._fail(job.key, self.provider.redact(one_line(str(failure), MAX_ERROR)) + suffix)
        self.on_progress(stats)
        return False

    def _count_timeout(self) -> None:
        """Time-outs in a row, with no answer between: a server that stopped answering. The
        session stops asking after ``max_timeouts`` of them, whatever the deadline."""
        self._timeouts_in_a_row += 1
        if self._timeouts_in_a_row >= self.settings.max_timeouts:
            timeout = getattr(self.provider, "timeout", None)
            each = f" ({timeout:g} s each, --optbench-timeout)" if isinstance(timeout, (int, float)) else ""
            self._stop(f"the server stopped answering: {self._timeouts_in_a_row} requests in a row timed out{each}; "
                       "every answer received before is stored, and a rerun asks only for the rest")

    def _count_failure(self, rate_limited: bool, message: str) -> None:
        """Failures in a row, with no answer between, mean a server that is down or hung."""
        if rate_limited:
            return  # 429s come in runs and say the server is alive
        self._failed_in_a_row += 1
        if self._failed_in_a_row >= self.settings.max_dead_requests:
            self._stop(f"{self._failed_in_a_row} requests in a row failed (the last: {message})")

    def _not_asked(self, key: str, remaining: int, reason: str) -> None:
        self.stats.failed += remaining
        self.failures.setdefault(key, NOT_ASKED + reason)
        self.on_progress(self.stats)

    def _fail(self, key: str, message: str) -> None:
        """Remember a request that failed for good, here and for the other workers of this run."""
        self.failures[key] = message
        self._announce(key, message)

    def _delay(self, failure: CallFailed, attempt: int) -> float:
        """Retry-After when the server gave one, else capped exponential back-off with jitter."""
        if failure.retry_after is not None:
            return min(failure.retry_after, self.settings.backoff_cap * 2)
        return random.uniform(0, min(self.settings.backoff_cap, self.settings.backoff_base * 2 ** attempt))

    def record(self, spec: PromptSpec) -> PromptRecord:
        """The answers of one prompt, from the store; eliciting what is still missing."""
        key = self.key(spec)
        stored = self.stored(key)
        if len(stored) < spec.samples and key not in self.failures and not self.settings.offline:
            if not self.owns(key):
                stored = self._wait_for_peer(key, spec.samples)
            if len(stored) < spec.samples and key not in self.failures:
                if (reason := self.should_stop()) is not None:
                    self.failures.setdefault(key, NOT_ASKED + reason)
                else:
                    self._runner().run(self._run(self.plan([spec], only_own=False)))
                stored = self.stored(key)
        return PromptRecord(spec.role, spec.user, [self._answer(key, stored.get(i), spec)
                                                   for i in range(spec.samples)])

    def _wait_for_peer(self, key: str, samples: int) -> dict[int, StoredAnswer]:
        """ASKER asks for this prompt, perhaps not yet: wait, for as long as a whole prefetch
        takes, until its answers are stored, it gave up on them (never ask again then), it
        has asked for every prompt (what is still missing, it could not store: asked here),
        or the store has heard nothing for peer_stall seconds (it died: asked here)."""
        run = self.settings.run_id
        stored = self.stored(key)
        try:
            seen, last_change = None, time.monotonic()
            while len(stored) < samples:
                if self.should_stop() is not None:
                    break
                if (version := self.store.version()) != seen:
                    seen, last_change = version, time.monotonic()
                    # Read before the prompt's own state: what ASKER stored before it said
                    # it was done is then seen below. A stop it announced is taken at once:
                    # after its last word (done), nothing here may ask what it was refused.
                    if (reason := self.store.failure(STOP_KEY, run)) is not None:
                        self.stop_reason = self.stop_reason or reason
                        break
                    done = self.store.failure(DONE_KEY, run) is not None
                    if (message := self.store.failure(key, run)) is not None:
                        self.failures[key] = message
                        break
                    stored = self.stored(key)
                    if done:
                        break
                elif time.monotonic() - last_change > self.settings.peer_stall:
                    break  # nobody is storing anything: the asker died; ask ourselves
                else:
                    # Polled often: an answer is seen within PEER_POLL of its arrival (the
                    # last round's answers are on the session's critical path); each poll is
                    # one PRAGMA unless something was stored.
                    time.sleep(PEER_POLL)
        except StoreError as exc:  # the store cannot tell us: ask ourselves
            self._store_failed(exc)
        return stored

    def _answer(self, key: str, stored: StoredAnswer | None, spec: PromptSpec) -> Answer:
        if stored is None:
            if self.settings.offline:
                return Answer(raw=None, error="not in the response store (--optbench-offline)")
            return Answer(raw=None, error=self.failures.get(key, "no answer was received"))
        positions = probes = None
        if stored.logprobs:
            try:
                positions, probes = distribution.from_stored(json.loads(stored.logprobs))
            except (ValueError, RecursionError):  # a store edited by hand
                positions = None
        return read_answer(stored.text, stored.mode or spec.mode, spec.user, cut_off(stored.finish_reason),
                           positions=positions, probes=probes, yes_no=spec.yes_no, asked=spec.mode,
                           cached=stored.run_id != self.settings.run_id,
                           input_tokens=stored.input_tokens, output_tokens=stored.output_tokens,
                           served_model=stored.served_model, system_fingerprint=stored.system_fingerprint)


def _checked(result: Any, name: str) -> ApiResult:
    """What a provider returned, as the engine needs it (a third-party provider's too): texts
    that are text, token counts that are whole numbers >= 0 (else 0)."""
    if not isinstance(result, ApiResult):
        raise CallFailed(f"{name}: the provider returned {type(result).__name__}, not an ApiResult", retryable=False)
    odd = next((t for t in result.texts if not isinstance(t, str)), "") if isinstance(result.texts, list) else None
    if not isinstance(odd, str):
        raise CallFailed(f"{name}: the provider returned an answer that is {type(odd).__name__}, not text",
                         retryable=False)
    for field_name in ("input_tokens", "output_tokens"):
        value = getattr(result, field_name)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            setattr(result, field_name, 0)
    return result


class _Stopped(Exception):
    """The session stopped while a request was waiting for its answer."""


class _StopSignal:
    """Set once the session stops asking; the requests in flight wait on it. ``set`` may be
    called from any thread (the deadline and the peers are also checked outside the loop)."""

    def __init__(self, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.loop = loop
        self.event = asyncio.Event()

    def set(self) -> None:
        if self.loop is None or self.loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self.loop:
            self.event.set()
        else:
            self.loop.call_soon_threadsafe(self.event.set)


def _runs(indices: Sequence[int]) -> list[tuple[int, int]]:
    """[0, 1, 2, 5, 6] -> [(0, 3), (5, 2)]: consecutive missing samples form one job."""
    out: list[tuple[int, int]] = []
    for i in indices:
        if out and out[-1][0] + out[-1][1] == i:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((i, 1))
    return out
