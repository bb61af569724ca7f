"""Reference Holm (1979) and Benjamini-Hochberg (1995) adjustments, written from the papers'
step-down and step-up definitions, against which the package's own are checked."""

from __future__ import annotations


def reference_holm(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out, running = [0.0] * m, 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def reference_bh(p: list[float]) -> list[float]:
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i], reverse=True)
    out, running = [0.0] * m, 1.0
    for rank, i in enumerate(order):
        running = min(running, p[i] * m / (m - rank))
        out[i] = running
    return out
