"""Billing: requests and input tokens of a Track B audit, pytest-optbench against OptimismBench.

The audit: the 60 pairs of the bundled ``suites/en/track_b.yaml``, base condition only
(``-k "not narrative and not perspective and not anchor and not debiased"``), both framings
(positive and negative question), 10 samples each: 1,200 answers. Both ways of paying for
them run through ``python -m pytest`` against a FakeAPI at latency 0 on loopback, and are
counted from the server's request log (each request's prompt tokens = system + user text):

- pytest-optbench as shipped: ``--model openai:fake`` with the built-in two-sentence system
  prompt; samples come back several to a request (``n``, at most 8 a request);
- the OptimismBench protocol: a ~1,000-token system prompt (built-in prompt padded with
  forecasting guidance to 1,000 tokens by the counting tokenizer, via ``--system-prompt``)
  and one request per sample (the server ignores ``n`` and answers one sample a request,
  so the provider asks once per sample: 60 x 2 x 10 = 1,200 requests).

Tokens: FakeAPI's stand-in tokenizer (len(text) // 4), which is also what it bills in
``usage``; and tiktoken (o200k_base, with the chat format's per-message overhead) when it
is installed and its encoding can be loaded (it is downloaded on first use: offline, that
fails, and the script says so).

Run: python bench/bench_billing.py [--port 18733] [--samples 10]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from _harness import Budget, check, log, run_pytest, start_server

from pytest_optbench.prompts.build import SYSTEM_PROMPTS
from pytest_optbench.providers.openai_provider import MAX_N
from pytest_optbench.testing import FakeRequest

SUITE = Path(__file__).resolve().parents[1] / "suites" / "en" / "track_b.yaml"
BASE_ONLY = "not narrative and not perspective and not anchor and not debiased"
FILLER_TOKENS = 1000
GUIDANCE = [
    "Read the scenario carefully and consider every detail it states.",
    "Think about the reference class the situation belongs to and how often such outcomes occur.",
    "Adjust from that base rate using the specific evidence in the scenario, neither too much nor too little.",
    "Do not let the way the question is worded change your estimate of the underlying event.",
    "Treat the probability of an outcome and of its complement as summing to one hundred.",
    "Avoid both wishful thinking and undue pessimism about the people in the scenario.",
    "When the scenario gives little information, stay closer to the base rate.",
    "Do not explain your reasoning; the answer is only the number.",
]


def fake_tokens(text: str) -> int:
    """FakeAPI's stand-in tokenizer (pytest_optbench.testing.requests.tokens)."""
    return max(1, len(text) // 4)


def load_tiktoken(timeout: float = 20.0) -> tuple[Callable[[str], int] | None, str]:
    """(token counter, what happened). Loading an encoding downloads it the first time."""
    try:
        import tiktoken  # type: ignore[import-not-found]  # optional: installed by hand to compare
    except ImportError:
        return None, "tiktoken is not installed"
    box: dict[str, object] = {}

    def load() -> None:
        try:
            box["encoding"] = tiktoken.get_encoding("o200k_base")
        except Exception as exc:  # noqa: BLE001 - any failure means: fall back
            box["error"] = f"{type(exc).__name__}; it is downloaded on first use"

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(timeout)
    if "encoding" in box:
        encoding = box["encoding"]
        return (lambda text: len(encoding.encode(text))), f"tiktoken {tiktoken.__version__}, o200k_base"  # type: ignore[attr-defined]
    reason = box.get("error", f"no answer within {timeout:g} s")
    return None, f"tiktoken {tiktoken.__version__} is installed but o200k_base could not be loaded ({reason})"


def chat_tokens(count: Callable[[str], int]) -> Callable[[str, str], int]:
    """Prompt tokens of a system + user chat request: 3 per message and 3 to prime the reply."""
    return lambda system, user: count(system) + count(user) + 3 + 3 + 3


def filler_prompt(count: Callable[[str], int], target: int = FILLER_TOKENS) -> str:
    """The built-in system prompt after guidance words, ``target`` tokens long by ``count``
    (or just under, when no single word closes the gap)."""
    base = SYSTEM_PROMPTS["probability"]
    words: list[str] = []
    i = 0
    while count(" ".join([*words, base])) < target:
        words += GUIDANCE[i % len(GUIDANCE)].split()
        i += 1
    while words and count(" ".join([*words, base])) > target:
        words.pop()
    for extra in sorted({w for sentence in GUIDANCE for w in sentence.split()}, key=len):
        if count(" ".join([*words, extra, base])) == target:  # one more word lands on it exactly
            return " ".join([*words, extra, base])
    return " ".join([*words, base])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--port", type=int, default=18733, help="fixed loopback port of the fake server")
    parser.add_argument("--budget", type=float, default=280.0)
    args = parser.parse_args()
    budget = Budget(args.budget)
    pairs = len(yaml.safe_load(SUITE.read_text(encoding="utf-8"))["items"])
    answers = pairs * 2 * args.samples
    tiktoken_count, tiktoken_note = load_tiktoken()
    counter = tiktoken_count or fake_tokens
    filler = filler_prompt(counter)

    server = start_server(args.port, latency=0.0)
    results: dict[str, tuple[list[FakeRequest], Any]] = {}
    with tempfile.TemporaryDirectory(prefix="optbench-bench-billing-") as tmp:
        root = Path(tmp)
        (root / "track_b.yaml").write_text(SUITE.read_text(encoding="utf-8"), encoding="utf-8")
        (root / "optimismbench_system.txt").write_text(filler, encoding="utf-8")
        common = ["track_b.yaml", "-k", BASE_ONLY, "--samples", str(args.samples), "--model", "openai:fake",
                  "--base-url", server.openai_url]
        runs = {
            "pytest-optbench": (True, []),
            "OptimismBench protocol": (False, ["--system-prompt", "optimismbench_system.txt"]),
        }
        for name, (support_n, extra) in runs.items():
            server.reset()
            server.support_n = support_n
            report = root / f"report-{len(results)}.json"
            run = run_pytest(root, [*common, *extra, "--optbench-cache-dir", str(root / f"store-{len(results)}"),
                                    "--optbench-report", str(report)], timeout=max(10.0, budget.left()))
            check(run, pairs, name)
            usage = json.loads(report.read_text(encoding="utf-8")).get("run", {}).get("usage", {})
            results[name] = (list(server.requests), usage)
            log(f"{name}: {len(server.requests)} requests in {run.wall:.1f} s")
    server.stop()

    print(f"billing: Track B audit, {pairs} pairs x 2 framings x {args.samples} samples = {answers:,} answers "
          f"(bundled {SUITE.parent.name}/{SUITE.name}, base condition)")
    print(f"tokenizer: {tiktoken_note if tiktoken_count else tiktoken_note + '; falling back to len(text) // 4'}")
    print(f"OptimismBench system prompt: {counter(filler):,} tokens by "
          f"{'tiktoken' if tiktoken_count else 'len // 4'} ({len(filler):,} characters); "
          f"built-in: {counter(SYSTEM_PROMPTS['probability'])} tokens")
    print()
    header = f"{'':24} {'requests':>9} {'input tokens (len//4)':>22} {'reported by plugin':>19}"
    if tiktoken_count:
        header += f" {'input tokens (tiktoken chat)':>29}"
    print(header + f" {'tokens per answer':>18}")
    totals: dict[str, tuple[int, int, int]] = {}
    for name, (requests, usage) in results.items():
        fake = sum(fake_tokens(r.system + r.user) for r in requests)
        line = f"{name:24} {len(requests):9,} {fake:22,} {usage.get('input_tokens', 0):19,}"
        chat = None
        if tiktoken_count:
            chat = sum(chat_tokens(tiktoken_count)(r.system, r.user) for r in requests)
            line += f" {chat:29,}"
        print(line + f" {fake / answers:18.1f}")
        totals[name] = (len(requests), fake, chat or 0)
    plugin, protocol = totals["pytest-optbench"], totals["OptimismBench protocol"]
    print()
    print(f"requests: pytest-optbench / OptimismBench = {plugin[0]:,} / {protocol[0]:,} = "
          f"{plugin[0] / protocol[0]:.3f} (1/{protocol[0] / plugin[0]:.1f})")
    print(f"billed input tokens (len//4): {plugin[1]:,} / {protocol[1]:,} = {plugin[1] / protocol[1]:.4f} "
          f"(1/{protocol[1] / plugin[1]:.1f}; aim: 1/20 or less)")
    if tiktoken_count:
        print(f"billed input tokens (tiktoken): {plugin[2]:,} / {protocol[2]:,} = {plugin[2] / protocol[2]:.4f} "
              f"(1/{protocol[2] / plugin[2]:.1f})")
    expected = pairs * 2 * -(-args.samples // MAX_N)
    print(f"pytest-optbench asks up to {MAX_N} samples a request (OpenAI n): {args.samples} samples take "
          f"{-(-args.samples // MAX_N)} request(s) a prompt")
    if plugin[0] != expected:
        print(f"note: expected {expected} requests from pytest-optbench")
    if protocol[0] != answers:
        print(f"note: expected {answers} requests under the OptimismBench protocol")
    print(f"benchmark wall time {budget.elapsed():.0f} s")


if __name__ == "__main__":
    main()
