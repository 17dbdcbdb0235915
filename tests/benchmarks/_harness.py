"""Side-by-side timing: the SDK and its baseline run alternately in one process.

Alternating rounds (SDK then baseline, then baseline then SDK, ...) exposes both to the same
machine state, so their ratio is meaningful even on a busy machine where absolute times are
not. Each round times ``number`` calls; the report is the median of the per-round ratios, with
the spread (first and third quartiles) of those ratios.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

from attrs import frozen

__all__ = ["Comparison", "compare", "compare_async"]


@frozen
class Comparison:
    """The outcome of timing one case against one baseline."""

    case: str
    baseline: str
    sdk_seconds: float
    baseline_seconds: float
    ratios: tuple[float, ...]
    target: float | None

    @property
    def ratio(self) -> float:
        """The median of the per-round ratios SDK / baseline."""
        return statistics.median(self.ratios)

    @property
    def spread(self) -> tuple[float, float]:
        """The first and third quartiles of the per-round ratios."""
        if len(self.ratios) < 2:
            return self.ratio, self.ratio
        quartiles = statistics.quantiles(self.ratios, n=4)
        return quartiles[0], quartiles[2]

    @property
    def verdict(self) -> str:
        """``ok``: the median is within the target; ``noise``: the median is above it, but
        the first quartile is not (a miss smaller than the run-to-run spread); ``MISSED``:
        even the first quartile is above it. Empty when there is no target."""
        if self.target is None:
            return ""
        if self.ratio <= self.target:
            return "ok"
        return "noise" if self.spread[0] <= self.target else "MISSED"

    @property
    def passed(self) -> bool:
        """Whether the target is met, or missed by less than the spread between rounds.

        On a shared 2-core machine the median of one short run moves by a few percent from
        run to run; only a miss beyond that spread says the SDK got slower.
        """
        return self.verdict != "MISSED"

    def row(self) -> str:
        """One line of the report table."""
        low, high = self.spread
        target = "" if self.target is None else f"<= {self.target:.2f}"
        verdict = self.verdict
        return (
            f"{self.case:<44} {self.baseline:<16} {_time(self.sdk_seconds):>10} "
            f"{_time(self.baseline_seconds):>10} {self.ratio:6.3f}x [{low:.3f}-{high:.3f}] "
            f"{target:>8} {verdict}"
        )


HEADER = (
    f"{'case':<44} {'baseline':<16} {'sdk':>10} {'baseline':>10} {'ratio':>7} "
    f"{'[q1-q3]':<13} {'target':>8}"
)


def _time(seconds: float) -> str:
    if seconds >= 0.1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-4:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds * 1e6:.1f} us"


def _summarise(
    case: str, baseline: str, pairs: list[tuple[float, float]], target: float | None
) -> Comparison:
    return Comparison(
        case=case,
        baseline=baseline,
        sdk_seconds=statistics.median(sdk for sdk, _ in pairs),
        baseline_seconds=statistics.median(base for _, base in pairs),
        ratios=tuple(sdk / base for sdk, base in pairs),
        target=target,
    )


def compare(
    case: str,
    sdk: Callable[[], object],
    baselines: dict[str, tuple[Callable[[], object], float | None]],
    *,
    rounds: int,
    number: int,
) -> list[Comparison]:
    """Time ``sdk`` against each baseline, alternating, and compare.

    Args:
        case: the case's name in the report.
        sdk: one call of the SDK doing the work.
        baselines: name -> (one call of the baseline doing the same work, target ratio).
        rounds: how many alternating rounds.
        number: calls per round.

    Returns:
        One comparison per baseline.
    """
    contenders = [sdk, *(function for function, _ in baselines.values())]
    samples: list[list[float]] = [[] for _ in contenders]
    for round_number in range(rounds):
        order = list(range(len(contenders)))
        if round_number % 2:
            order.reverse()
        for index in order:
            function = contenders[index]
            started = time.perf_counter()
            for _ in range(number):
                function()
            samples[index].append((time.perf_counter() - started) / number)
    return [
        _summarise(case, name, list(zip(samples[0], samples[i + 1], strict=True)), target)
        for i, (name, (_, target)) in enumerate(baselines.items())
    ]


def compare_async(
    case: str,
    sdk: Callable[[], Awaitable[object]],
    baselines: dict[str, tuple[Callable[[], Awaitable[object]], float | None]],
    *,
    rounds: int,
    number: int,
    loop: asyncio.AbstractEventLoop,
) -> list[Comparison]:
    """Like ``compare``, for coroutine functions, all run on ``loop``."""

    def blocking(function: Callable[[], Awaitable[object]]) -> Callable[[], object]:
        async def many() -> None:
            for _ in range(number):
                await function()

        return lambda: loop.run_until_complete(many())

    results = compare(
        case,
        blocking(sdk),
        {name: (blocking(function), target) for name, (function, target) in baselines.items()},
        rounds=rounds,
        number=1,
    )
    return [
        Comparison(
            case=r.case,
            baseline=r.baseline,
            sdk_seconds=r.sdk_seconds / number,
            baseline_seconds=r.baseline_seconds / number,
            ratios=r.ratios,
            target=r.target,
        )
        for r in results
    ]
