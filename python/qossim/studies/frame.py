"""The shared frame of the studies: what every study needs, written once.

A study module *declares* its experiments over this frame and writes only what is its
own: its scenarios and the metrics of each experiment. The frame provides

* **profiles** (:class:`Profiles`): the full profile, a quick one that shortens it, and
  any other named ones; :meth:`Profiles.pick` chooses one for a reproduce call;
* **grids and overrides** (:func:`set_path`, :func:`apply_overrides`,
  :func:`expand_grid`): the one place where dotted overrides are applied to a scenario
  dict, and the cartesian product of a parameter grid;
* **runs with caching** (:func:`run_table`, :class:`Runs`): every point is run for
  every seed through :func:`qossim.studies.run_points`, which stores runs under
  ``out_dir/runs/`` and never runs a stored one again;
* **statistics** (:func:`ci_of`): the mean over runs with its Student-t interval, from
  :mod:`qossim.stats` (per-run batch means are those the engine reports);
* **tables, curves and figures** (:class:`qossim.studies.Table`, :func:`ci_point`,
  :func:`add_ci_figure`, :func:`new_figure`, :func:`add_figure`), saved into the report;
* **declarations** (:class:`Experiment`, :class:`Study`): a study lists its
  experiments, its profiles and its notes; :meth:`Study.reproduce` runs the selected
  experiments in the declared order and collects their output.
"""

from __future__ import annotations

import copy
import itertools
import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from qossim import _toml, plots
from qossim.stats import CI, mean_ci
from qossim.studies import StudyOutput, run_point_records, run_points

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "CONFIDENCE",
    "Context",
    "Experiment",
    "Profiles",
    "Runs",
    "Study",
    "add_ci_figure",
    "add_figure",
    "apply_overrides",
    "ci_of",
    "ci_point",
    "log_ticks_at",
    "mark_published",
    "published_cells",
    "expand_grid",
    "new_figure",
    "point_key",
    "run_table",
    "same",
    "set_path",
    "write_files",
]

#: Confidence level of every interval a study reports.
CONFIDENCE = 0.95

P = TypeVar("P")


# ----------------------------------------------------------------------------
# profiles
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Profiles(Generic[P]):
    """The profiles of a study: ``full``, ``quick`` and any other named plans.

    ``env`` names an environment variable that, when set, selects a profile by name
    whatever ``--quick`` says (tests use it to pick a profile shorter than quick).
    """

    full: P
    quick: P
    others: Mapping[str, P] = field(default_factory=dict)
    env: str | None = None

    def named(self) -> dict[str, P]:
        """Return every profile by name."""
        return {"full": self.full, "quick": self.quick, **self.others}

    def name_of(self, plan: P, quick: bool = False) -> str:
        """Return the name of ``plan`` among the profiles (``full``, ``quick``, ...).

        A plan that is none of them (a test's own) is named by ``quick``.
        """
        for name, p in self.named().items():
            if p is plan:
                return name
        return "quick" if quick else "full"

    def pick(self, quick: bool) -> P:
        """Return the profile of a reproduce call."""
        name = os.environ.get(self.env, "").strip().lower() if self.env else ""
        if name:
            profiles = self.named()
            if name not in profiles:
                raise ValueError(f"{self.env}={name!r}: use one of {', '.join(profiles)}")
            return profiles[name]
        return self.quick if quick else self.full


# ----------------------------------------------------------------------------
# grids and overrides
# ----------------------------------------------------------------------------


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set a dotted key in a nested dict (creating tables on the way).

    As in the engine's overrides, an integer segment indexes an array
    (``traffic.0.flows``).
    """
    keys = path.split(".")
    node: Any = data
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
    if isinstance(node, list):
        node[int(keys[-1])] = copy.deepcopy(value)
    else:
        node[keys[-1]] = copy.deepcopy(value)


def apply_overrides(scenario: dict[str, Any], overrides: Iterable[tuple[str, Any]]) -> None:
    """Apply ``(dotted path, value)`` overrides to a scenario dict, in order."""
    for path, value in overrides:
        set_path(scenario, path, value)


def expand_grid(
    grid: Sequence[tuple[str, Sequence[Any]]],
) -> list[list[tuple[str, Any]]]:
    """Every point of a grid of ``(path, values)`` as a list of overrides.

    The points are the cartesian product of the values, the last path varying fastest.
    """
    paths = [path for path, _ in grid]
    return [
        list(zip(paths, combo, strict=True))
        for combo in itertools.product(*(values for _, values in grid))
    ]


def write_files(files: Mapping[str, str], directory: str | os.PathLike[str]) -> list[Path]:
    """Write ``files`` (name relative to ``directory`` -> text) and return their paths.

    Studies keep their scenario files generated from their own declarations with it
    (and a test compares the committed files with what the study generates).
    """
    paths = []
    for name, text in files.items():
        path = Path(directory) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


# ----------------------------------------------------------------------------
# runs
# ----------------------------------------------------------------------------


def run_table(
    points: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | str]],
    seeds: Sequence[int],
    out_dir: str | os.PathLike[str],
    *,
    progress: bool,
    name: str,
) -> pd.DataFrame:
    """Run (or reuse) the points for every seed and return their table without ``attrs``.

    The gathered table lists its metric names in ``attrs``; pandas copies ``attrs``
    into every row view, which makes reading thousands of rows slow.
    """
    df = run_points(points, seeds, out_dir, progress=progress, name=name)
    df.attrs = {}
    return df


def point_key(scenario: Mapping[str, Any], seed: int) -> str:
    """Return the cache key of a point's run with ``seed`` (as ``run_points`` makes it)."""
    from qossim import _engine
    from qossim.params import run_key

    return run_key(_toml.dumps(scenario), (), seed, _engine.core_version())


def same(a: Any, b: Any) -> bool:
    """Tell whether a stored parameter equals a wanted one (floats compared closely)."""
    if isinstance(a, float) and isinstance(b, (int, float)):
        return math.isclose(a, float(b))
    return a == b


@dataclass
class Runs:
    """Stored runs: their rows (parameters, seed, summary) and where they are."""

    df: Any
    out_dir: Path
    rows: list[dict[str, Any]] = field(default_factory=list)
    _series: dict[tuple[str, str], Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.df is not None:
            # Plain records in one pass (pandas' own to_dict copies the frame's attrs
            # for every row).
            columns = [str(c) for c in self.df.columns]
            values = self.df.astype(object).where(self.df.notna(), None).to_numpy().tolist()
            self.rows = [dict(zip(columns, v, strict=True)) for v in values]

    @classmethod
    def run(
        cls,
        points: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | str]],
        seeds: Sequence[int],
        out_dir: str | os.PathLike[str],
        *,
        progress: bool,
        name: str,
    ) -> Runs:
        """Run (or reuse) the points for every seed and return their runs."""
        rows = run_point_records(points, seeds, out_dir, progress=progress, name=name)
        return cls(None, Path(out_dir), rows=rows)  # type: ignore[arg-type]

    def of_points(
        self, points: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]], seeds: Sequence[int]
    ) -> Runs:
        """Return the runs of ``points`` (``(params, scenario)`` pairs) for ``seeds``."""
        keys = {point_key(scenario, seed) for _, scenario in points for seed in seeds}
        out = type(self)(None, self.out_dir)
        out.rows = [r for r in self.rows if r["run_key"] in keys]
        out._series = self._series
        return out

    def select(self, **params: Any) -> list[dict[str, Any]]:
        """Rows whose parameters equal the given ones."""
        return [r for r in self.rows if all(same(r.get(k), v) for k, v in params.items())]

    def values(self, key: str, **params: Any) -> list[float]:
        """One summary value of every matching run (missing values left out)."""
        out = []
        for r in self.select(**params):
            v = r.get(key)
            if v is not None and not (isinstance(v, float) and math.isnan(v)):
                out.append(float(v))
        return out

    def series(self, row: Mapping[str, Any], name: str) -> Any:
        """Return a time series of one run (read once)."""
        from qossim.results import Result

        key = (str(row["run_key"]), name)
        if key not in self._series:
            result = Result.load(self.out_dir / "runs" / key[0])
            self._series[key] = result.timeseries(name)
        return self._series[key]


# ----------------------------------------------------------------------------
# statistics, curves and figures
# ----------------------------------------------------------------------------


def ci_of(values: Iterable[float | None], confidence: float = CONFIDENCE) -> CI:
    """Mean over runs with its Student-t interval (missing and non-finite values left out)."""
    return mean_ci(
        (v for v in values if v is not None and math.isfinite(v)),
        confidence,
    )


def ci_point(x_name: str, x: Any, ci: CI, **labels: Any) -> dict[str, Any]:
    """One point of a curve with its interval: ``{x_name: x, mean, low, high, **labels}``."""
    return {**labels, x_name: x, "mean": ci.mean, "low": ci.low, "high": ci.high}


def new_figure(ncols: int = 1, size: tuple[float, float] = (7.0, 4.2)) -> tuple[Figure, list[Axes]]:
    """Return an empty figure of ``ncols`` gridded panels side by side."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(1, ncols, k + 1) for k in range(ncols)]
    for ax in axes:
        ax.grid(True, alpha=0.3)
    return fig, axes


def add_figure(output: StudyOutput, out_dir: Path, name: str, title: str, fig: Figure) -> Path:
    """Save ``fig`` as ``out_dir/figures/<name>.png`` and list it in the report."""
    path = plots.save(fig, Path(out_dir) / "figures" / f"{name}.png")
    output.figures.append((title, path))
    return path


def published_cells(study: str, number: str, column: str | None = None) -> list[Any]:
    """Return the published cells of a study's table ``number`` (``"Table 1"``).

    ``column`` keeps one published column. The cells come from the study's declared
    published data (:mod:`qossim.studies.published`); none when it has no such table.
    """
    from qossim.studies import published

    for table in published.load(study):
        if table.number == number:
            return [
                c
                for c in table.cells
                if c.value is not None and (column is None or c.column == column)
            ]
    return []


def mark_published(ax: Axes, xs: Sequence[float], ys: Sequence[float], **style: Any) -> None:
    """Mark published points on a figure: black crosses labelled "published"."""
    if not xs:
        return
    kw: dict[str, Any] = {"marker": "x", "color": "black", "s": 45, "zorder": 5}
    kw.update(label="published", **style)
    ax.scatter(list(xs), list(ys), **kw)


def add_ci_figure(
    output: StudyOutput,
    out_dir: Path,
    name: str,
    caption: str,
    points: Sequence[Mapping[str, Any]],
    x: str,
    *,
    logx: bool = False,
    **plot: Any,
) -> Path | None:
    """Plot curves of :func:`ci_point` points (mean and interval against ``x``) and save.

    ``plot`` goes to :func:`qossim.plots.mean_ci` (labels, units, ``group``,
    ``reference``, title); ``logx`` makes the x axis logarithmic. Nothing is drawn
    when there are no points.
    """
    if not points:
        return None
    import pandas as pd

    fig = plots.mean_ci(pd.DataFrame(list(points)), x, "mean", ci=("low", "high"), **plot)
    if logx:
        log_ticks_at(fig.axes[0], [float(p[x]) for p in points])
    return add_figure(output, out_dir, name, caption, fig)


def log_ticks_at(ax: Axes, values: Sequence[float]) -> None:
    """Make the x axis logarithmic, labelled at the values plotted (a few at most).

    The default labels of a log axis at 2, 10, 70, 300, 600, 1000 overlap (minor labels
    of 200, 300, ... and major ones); labelling the plotted values, and nothing else,
    reads at once. A value of 0 makes the axis symmetric-logarithmic, linear up to the
    smallest positive value, so that it is drawn instead of dropped.
    """
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    xs = sorted({v for v in values if math.isfinite(v)})
    positive = [v for v in xs if v > 0]
    if not positive:
        return
    if xs[0] <= 0:
        ax.set_xscale("symlog", linthresh=positive[0])
    else:
        ax.set_xscale("log")
    if len(xs) <= 12:
        ax.xaxis.set_major_locator(FixedLocator(xs))
        ax.xaxis.set_major_formatter(FixedFormatter([f"{v:g}" for v in xs]))
        ax.xaxis.set_minor_locator(NullLocator())


# ----------------------------------------------------------------------------
# declarations
# ----------------------------------------------------------------------------


@dataclass
class Context:
    """What an experiment gets: the plan, where to write, and the output to fill.

    ``shared`` holds what the study's ``prepare`` step returned (e.g. runs pooled
    across the selected experiments), or None.
    """

    plan: Any
    quick: bool
    out_dir: Path
    progress: bool
    output: StudyOutput
    shared: Any = None


@dataclass(frozen=True)
class Experiment:
    """One experiment of a study: its id (for ``--only``), title and what it runs."""

    id: str
    title: str
    run: Callable[[Context], None]

    @classmethod
    def of(
        cls,
        function: Callable[..., None],
        call: Callable[[Callable[..., None], Context], None],
    ) -> Experiment:
        """Declare an experiment from a function whose docstring starts ``ID: title``.

        ``call(function, context)`` runs it (passing what the study's functions take).
        """
        head = (function.__doc__ or "").strip().split("\n", 1)[0]
        exp_id, sep, title = head.partition(": ")
        if not sep or not exp_id or any(ch.isspace() for ch in exp_id):
            raise ValueError(
                f"{function.__qualname__}: the docstring must start 'ID: title', got {head!r}"
            )
        return cls(exp_id, title.rstrip("."), lambda context: call(function, context))


@dataclass(frozen=True)
class Study:
    """A study declared over the frame.

    ``notes(plan, quick)`` returns the notes printed under the tables; ``prepare(plan,
    ids, out_dir, progress)``, when given, runs before the experiments (with the ids
    selected) and its result reaches each one as ``Context.shared``.
    """

    profiles: Profiles[Any]
    experiments: tuple[Experiment, ...]
    notes: Callable[[Any, bool], list[str]]
    prepare: Callable[[Any, list[str], Path, bool], Any] | None = None

    @property
    def ids(self) -> list[str]:
        """The experiment ids in declared order."""
        return [e.id for e in self.experiments]

    def run(
        self,
        plan: Any,
        only: Sequence[str] | None,
        out_dir: Path,
        progress: bool,
        quick: bool = False,
    ) -> StudyOutput:
        """Run the selected experiments (all when ``only`` is empty) with ``plan``."""
        selected = [e for e in self.experiments if not only or e.id in only]
        output = StudyOutput(
            notes=list(self.notes(plan, quick)), profile=self.profiles.name_of(plan, quick)
        )
        out = Path(out_dir)
        shared = (
            self.prepare(plan, [e.id for e in selected], out, progress) if self.prepare else None
        )
        context = Context(plan, quick, out, progress, output, shared)
        for experiment in selected:
            experiment.run(context)
        return output

    def reproduce(
        self, quick: bool, only: list[str] | None, out_dir: Path, progress: bool
    ) -> StudyOutput:
        """Run the selected experiments in the profile of the call (``qossim reproduce``)."""
        return self.run(self.profiles.pick(quick), only, out_dir, progress, quick)
