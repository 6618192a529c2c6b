"""Exceptions raised by the qossim front end.

Every error that a user can cause (a bad scenario, an unreadable file, an
unknown study) derives from :class:`QossimError` and carries one message line
per problem in :attr:`QossimError.lines`, so the command line can print them
one per line without a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable

#: The most characters of a name that a message echoes.
SHOWN_CHARS = 80


def shown(text: object, limit: int = SHOWN_CHARS) -> str:
    r"""Return ``text`` as a message may echo it: printable, and cut to ``limit``.

    Control, bidirectional-override and other non-printing characters are escaped
    (``\x1b``), and text longer than ``limit`` characters is cut with "…".
    """
    text = str(text)
    cut = len(text) > limit
    out = []
    for ch in text[:limit]:
        out.append(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii"))
    return "".join(out) + ("…" if cut else "")


class QossimError(Exception):
    """Base class of user-facing errors; ``lines`` holds one line per problem."""

    def __init__(self, lines: str | Iterable[str]) -> None:
        if isinstance(lines, str):
            lines = lines.splitlines() or [lines]
        self.lines: list[str] = [str(line) for line in lines]
        super().__init__("\n".join(self.lines))


class ScenarioError(QossimError, ValueError):
    """A scenario (file, dict or text) or its overrides are invalid.

    ``diagnostics`` holds the engine's lines, each ``FILE:LINE: key.path: reason``.
    """

    @property
    def diagnostics(self) -> list[str]:
        """The diagnostics, one per problem."""
        return list(self.lines)


class EngineUnavailableError(QossimError, RuntimeError):
    """The compiled engine ``qossim._core`` cannot be imported."""


class EngineError(QossimError, RuntimeError):
    """The engine failed inside a run: an internal error, reported with the scenario's name."""


class RunError(QossimError, ValueError):
    """A valid scenario cannot run as given (too large for the memory, no route, ...)."""


class CampaignError(QossimError, ValueError):
    """A campaign file or campaign definition is invalid."""


class CampaignRunError(QossimError, RuntimeError):
    """Some runs of a campaign failed; the others are stored and kept."""


class CampaignInterrupted(QossimError, RuntimeError):
    """A signal (Ctrl-C, SIGTERM) stopped a campaign; the runs stored so far are kept.

    ``signum`` is the signal's number (the command line exits with 128 + it).
    """

    def __init__(self, lines: str | Iterable[str], signum: int) -> None:
        super().__init__(lines)
        self.signum = signum


class BackendUnavailableError(QossimError, RuntimeError):
    """An execution backend (dask, ray) is not installed or not reachable."""


class ResultError(QossimError, ValueError):
    """A directory is not a complete qossim result."""


class StudyError(QossimError, ValueError):
    """A study is unknown, or was asked for experiments it does not have."""
