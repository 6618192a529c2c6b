"""Prints the hostile suite's counts at the end of a session that ran it."""

from __future__ import annotations

from typing import Any


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Print "tried / clean / crash / hang / silent accept / data lost / wrong"."""
    from .test_hostile import OUTCOMES, TALLY

    if not TALLY:
        return
    counts = {o: sum(1 for v in TALLY.values() if v == o) for o in OUTCOMES}
    line = f"hostile cases: {len(TALLY)} tried / " + " / ".join(
        f"{counts[o]} {o}" for o in OUTCOMES
    )
    terminalreporter.write_line(line)
    for name, outcome in TALLY.items():
        if outcome != "clean":
            terminalreporter.write_line(f"  {outcome}: {name}")
