"""qossim: a fast discrete-event simulator for network traffic management and QoS.

The Python front end runs scenarios on the compiled engine and handles what
surrounds a run: results on disk, campaigns over parameter grids and seeds
on local processes, Dask or Ray, statistics, plots, reports and the
``qossim`` command.

Quick start::

    import qossim

    result = qossim.run("scenarios/reference.toml", seed=1, set={"traffic.0.flows": 500})
    result.summary
    result.timeseries(result.series_names[0])
    result.save("runs/reference-s1")
"""

from __future__ import annotations

from importlib import metadata as _metadata

from qossim.api import run, run_text, validate, validate_text
from qossim.campaign import Campaign, gather, run_campaign, summarize
from qossim.errors import (
    CampaignError,
    CampaignInterrupted,
    CampaignRunError,
    EngineError,
    EngineUnavailableError,
    QossimError,
    ResultError,
    RunError,
    ScenarioError,
    StudyError,
)
from qossim.results import Result

try:
    __version__ = _metadata.version("qossim")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+source"

__all__ = [
    "Campaign",
    "CampaignError",
    "CampaignInterrupted",
    "CampaignRunError",
    "EngineError",
    "EngineUnavailableError",
    "QossimError",
    "Result",
    "ResultError",
    "RunError",
    "ScenarioError",
    "StudyError",
    "__version__",
    "engine_version",
    "gather",
    "load",
    "run",
    "run_campaign",
    "run_text",
    "summarize",
    "validate",
    "validate_text",
]


def load(directory: str) -> Result:
    """Open a run directory; same as :meth:`Result.load`."""
    return Result.load(directory)


def engine_version() -> str:
    """Return the version of the compiled engine (raises if it is not built)."""
    from qossim import _engine

    return _engine.core_version()
