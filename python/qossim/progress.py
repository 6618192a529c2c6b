"""Progress bars (tqdm) for single runs and campaigns.

Bars appear only on a terminal: tqdm hides them when the output is not a
TTY, and callers pass ``enabled=False`` for ``--quiet``.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, Self

ProgressArg = bool | Callable[[float], None] | None

_STEPS = 1000


@contextlib.contextmanager
def run_progress(progress: ProgressArg, desc: str) -> Iterator[Callable[[float], None] | None]:
    """Yield the callback to give the engine for one run.

    ``progress`` may be ``None``/``False`` (no callback), a callable (passed
    through) or ``True`` (a tqdm bar with ETA, shown on a terminal only and
    only when the run lasts longer than a second).
    """
    if not progress:
        yield None
        return
    if callable(progress):
        yield progress
        return
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        yield None
        return
    bars: list[Any] = []
    lock = threading.Lock()

    def update(fraction: float) -> None:
        # A display problem must never stop a run.
        with contextlib.suppress(Exception), lock:
            if not bars:
                # Made at the run's first report, after the world is built: the bar's
                # clock and ETA cover the run alone, and a build bar has gone by then.
                bars.append(
                    tqdm(
                        total=_STEPS,
                        desc=desc,
                        unit="‰",
                        delay=1.0,
                        disable=None,
                        leave=False,
                        file=sys.stderr,
                        bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]",
                    )
                )
            bar = bars[0]
            target = min(_STEPS, max(0, int(float(fraction) * _STEPS)))
            if target > bar.n:
                bar.update(target - bar.n)

    try:
        yield update
    finally:
        for bar in bars:
            bar.close()


@contextlib.contextmanager
def build_progress(progress: ProgressArg, desc: str) -> Iterator[Callable[[int, int], None] | None]:
    """Yield the callback to give the engine for building one run's world.

    With ``progress=True`` it draws a bar of flows built (on a terminal, and only when
    building lasts longer than a second: the engine reports only for scenarios of many
    flows); otherwise it yields ``None``.
    """
    if progress is not True:
        yield None
        return
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        yield None
        return
    bar = tqdm(
        total=0,
        desc=f"{desc} (building)",
        unit=" flows",
        unit_scale=True,
        delay=1.0,
        disable=None,
        leave=False,
        file=sys.stderr,
    )
    lock = threading.Lock()

    def update(done: int, total: int) -> None:
        # A display problem must never stop a build.
        with contextlib.suppress(Exception), lock:
            bar.total = int(total)
            if int(done) > bar.n:
                bar.update(int(done) - bar.n)
            if done >= total:
                bar.close()

    try:
        yield update
    finally:
        bar.close()


class CampaignBar:
    """A progress bar over the runs of a campaign (no-op when disabled)."""

    def __init__(self, total: int, done: int, desc: str, enabled: bool) -> None:
        self._bar: Any = None
        if enabled and total > 0:
            try:
                from tqdm import tqdm
            except ImportError:  # pragma: no cover - tqdm is a dependency
                return
            self._bar = tqdm(
                total=total,
                initial=done,
                desc=desc,
                unit="run",
                disable=None,
                file=sys.stderr,
                dynamic_ncols=True,
            )

    def advance(self, failed: bool = False) -> None:
        """Count one finished run."""
        if self._bar is not None:
            self._bar.update(1)
            if failed:
                self._bar.set_postfix_str("some runs failed", refresh=False)

    def close(self) -> None:
        """Remove the bar from the terminal."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Self:
        """Use the bar as a context manager."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the bar."""
        self.close()
