"""Statistics of many runs: a rate with its Wilson interval, percentiles as NumPy computes them by default.

Pure functions of their arguments, exact to six decimals (every result is rounded there, so the JSON of a sweep
is the same on every machine)."""

from __future__ import annotations

import math
from typing import Iterable

Z95 = 1.959963984540054
"""The normal quantile of a two-sided 95 % interval."""


def wilson(k: int, n: int, z: float = Z95) -> dict[str, float]:
    """The rate k/n with its Wilson score interval (95 % by default)."""
    if n == 0:
        return {"rate": 0.0, "low": 0.0, "high": 1.0}
    p = k / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return {"rate": round(p, 6), "low": round(max(0.0, centre - half), 6), "high": round(min(1.0, centre + half), 6)}


def percentile(values: Iterable[float], q: float) -> float:
    """The q-th percentile (0–100) by linear interpolation between closest ranks, as NumPy's default."""
    ordered = sorted(values)
    if not ordered:
        return 0.0
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return round(ordered[low] + (ordered[high] - ordered[low]) * (position - low), 6)
