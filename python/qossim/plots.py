"""Figures for runs and studies, drawn with matplotlib's Agg renderer.

Every function returns a :class:`matplotlib.figure.Figure` built without
pyplot (no global state, no GUI backend) and labels both axes with a unit:
units are required keyword arguments, or have defaults that name the unit.
Save figures with :func:`save`.
"""

from __future__ import annotations

import contextlib
import io
import math
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qossim.results import atomic_write_bytes

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "axis_label",
    "deferred_saves",
    "histogram",
    "loss_load",
    "mean_ci",
    "render_pickled",
    "save",
    "scatter_trend",
    "stacked",
    "timeseries",
    "unit_from_name",
]

_SIZE = (7.0, 4.2)

_SUFFIX_UNITS = {
    "ps": "ps",
    "ns": "ns",
    "us": "µs",
    "ms": "ms",
    "s": "s",
    "bps": "b/s",
    "kbps": "kb/s",
    "mbps": "Mb/s",
    "gbps": "Gb/s",
    "bits": "bit",
    "bytes": "B",
    "b": "B",
    "pkts": "packets",
    "packets": "packets",
    "cells": "cells",
    "frames": "frames",
    "flows": "flows",
    "calls": "calls",
    "ratio": "fraction",
    "fraction": "fraction",
    "prob": "probability",
    "pct": "%",
    "percent": "%",
    "erlang": "Erlang",
    "hz": "1/s",
    "per_s": "1/s",
}


def axis_label(label: str, unit: str) -> str:
    """Return ``"label (unit)"``; an empty unit is refused."""
    if not unit or not str(unit).strip():
        raise ValueError(f"axis {label!r} needs a unit (use 'fraction', 'count', ...)")
    return f"{label} ({unit})"


def unit_from_name(name: str, default: str = "value") -> str:
    """Guess a column's unit from its name suffix (``delay_ms`` gives ``ms``).

    Column names in qossim results end with their unit (``_s``, ``_mbps``,
    ``_pkts``, ``_ratio``, ...); unknown suffixes give ``default``. Reports take
    units from the engine's declarations first (:mod:`qossim.declared`).
    """
    lowered = name.lower()
    if lowered.endswith("per_s"):
        return "1/s"
    suffix = lowered.rsplit("_", 1)[-1] if "_" in lowered else lowered
    return _SUFFIX_UNITS.get(suffix, default)


def _new_figure(size: tuple[float, float] = _SIZE) -> tuple[Figure, Axes]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    ax.grid(True, alpha=0.3)
    return fig, ax


def _finish(
    fig: Figure, ax: Axes, title: str | None, legend: bool, legend_title: str | None = None
) -> Figure:
    if title:
        ax.set_title(title)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="small", title=legend_title)
    return fig


def timeseries(
    df: pd.DataFrame,
    x: str,
    ys: str | Sequence[str],
    *,
    y_label: str,
    y_unit: str,
    x_label: str = "time",
    x_unit: str = "s",
    title: str | None = None,
    labels: Mapping[str, str] | None = None,
    step: bool = False,
) -> Figure:
    """Plot one or more columns of ``df`` against column ``x``.

    ``labels`` renames columns in the legend; ``step`` draws step lines (for
    sampled counters and queue sizes).
    """
    columns = [ys] if isinstance(ys, str) else list(ys)
    fig, ax = _new_figure()
    for column in columns:
        label = (labels or {}).get(column, column)
        if step:
            ax.step(df[x], df[column], where="post", label=label)
        else:
            ax.plot(df[x], df[column], label=label)
    ax.set_xlabel(axis_label(x_label, x_unit))
    ax.set_ylabel(axis_label(y_label, y_unit))
    return _finish(fig, ax, title, legend=len(columns) > 1)


def loss_load(
    df: pd.DataFrame,
    load: str,
    loss: str,
    *,
    load_unit: str,
    group: str | None = None,
    ci: tuple[str, str] | None = None,
    load_label: str = "offered load",
    loss_label: str = "loss ratio",
    loss_unit: str = "fraction",
    logy: bool = False,
    reference: tuple[Sequence[float], Sequence[float], str] | None = None,
    title: str | None = None,
    label: str = "measured",
) -> Figure:
    """Plot loss (or blocking) against offered load, one line per ``group``.

    ``ci`` names the columns of the interval bounds, drawn as error bars;
    ``reference`` is ``(loads, losses, label)`` of a theoretical curve;
    ``label`` names the data in the legend when there is no ``group``.
    """
    fig, ax = _new_figure()
    for name, part in _groups(df, group, label):
        part = part.sort_values(load)
        yerr = _yerr(part, loss, ci)
        # Measured points beside a theory curve stand alone: a chord between two of
        # them would read as a measured curve.
        ax.errorbar(
            part[load],
            part[loss],
            yerr=yerr,
            marker="o",
            capsize=3,
            label=name,
            linestyle="none" if reference is not None else "-",
        )
    if reference is not None:
        xs, ys, ref_label = reference
        ax.plot(list(xs), list(ys), "k--", label=ref_label)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(axis_label(load_label, load_unit))
    ax.set_ylabel(axis_label(loss_label, loss_unit))
    return _finish(fig, ax, title, legend=True, legend_title=group)


def mean_ci(
    df: pd.DataFrame,
    x: str,
    y: str,
    *,
    x_label: str,
    x_unit: str,
    y_label: str,
    y_unit: str,
    ci: tuple[str, str] | None = None,
    group: str | None = None,
    reference: tuple[Sequence[float], Sequence[float], str] | None = None,
    title: str | None = None,
    label: str = "measured",
) -> Figure:
    """Plot means with confidence-interval error bars against a parameter.

    ``ci`` names the lower and upper bound columns; ``reference`` adds a
    dashed curve ``(xs, ys, label)``, e.g. a theoretical value; ``label``
    names the data in the legend when there is no ``group``.
    """
    fig, ax = _new_figure()
    for name, part in _groups(df, group, label):
        part = part.sort_values(x)
        ax.errorbar(
            part[x],
            part[y],
            yerr=_yerr(part, y, ci),
            marker="o",
            capsize=3,
            label=name,
            linestyle="none" if reference is not None else "-",
        )
    if reference is not None:
        xs, ys, ref_label = reference
        ax.plot(list(xs), list(ys), "k--", label=ref_label)
    ax.set_xlabel(axis_label(x_label, x_unit))
    ax.set_ylabel(axis_label(y_label, y_unit))
    return _finish(fig, ax, title, legend=True, legend_title=group)


def stacked(
    df: pd.DataFrame,
    x: str,
    ys: Sequence[str],
    *,
    y_label: str,
    y_unit: str,
    x_label: str = "time",
    x_unit: str = "s",
    events: Iterable[tuple[float, str]] | None = None,
    labels: Mapping[str, str] | None = None,
    title: str | None = None,
) -> Figure:
    """Stacked areas of several loads over time, with optional event lines.

    ``events`` is a sequence of ``(x, label)``: each draws a labelled
    vertical line (a flow starting, a link failing, ...).
    """
    fig, ax = _new_figure()
    names = [(labels or {}).get(c, c) for c in ys]
    ax.stackplot(df[x], *[df[c] for c in ys], labels=names, alpha=0.85)
    for position, text in events or []:
        ax.axvline(position, color="black", linestyle=":", linewidth=1)
        ax.annotate(
            text,
            xy=(position, 1.0),
            xycoords=("data", "axes fraction"),
            xytext=(3, -3),
            textcoords="offset points",
            rotation=90,
            va="top",
            fontsize="small",
        )
    ax.set_xlabel(axis_label(x_label, x_unit))
    ax.set_ylabel(axis_label(y_label, y_unit))
    if len(df):
        ax.set_xlim(float(df[x].min()), float(df[x].max()))
    return _finish(fig, ax, title, legend=True)


def _fit(xs: Sequence[float], ys: Sequence[float], trend: str) -> tuple[float, float] | None:
    import numpy as np

    x = np.asarray(xs, dtype=float)
    y = np.asarray(ys, dtype=float)
    keep = np.isfinite(x) & np.isfinite(y)
    if trend == "exp":
        keep &= y > 0
    x, y = x[keep], y[keep]
    if len(x) < 2 or np.ptp(x) == 0:
        return None
    if trend == "linear":
        slope, intercept = np.polyfit(x, y, 1)
        return float(slope), float(intercept)
    rate, log_scale = np.polyfit(x, np.log(y), 1)
    return float(math.exp(log_scale)), float(rate)


def scatter_trend(
    x: Sequence[float],
    y: Sequence[float],
    groups: Sequence[Any] | None = None,
    trend: str = "exp",
    *,
    x_label: str,
    x_unit: str,
    y_label: str,
    y_unit: str,
    title: str | None = None,
) -> Figure:
    """Scatter ``y`` against ``x`` with a fitted trend line per group.

    ``trend="linear"`` fits ``y = a x + b`` by least squares;
    ``trend="exp"`` fits ``y = a exp(b x)`` by least squares on ``log y``
    (points with ``y <= 0`` are left out of the fit). The fitted parameters
    appear in the legend.
    """
    import numpy as np

    if trend not in ("exp", "linear"):
        raise ValueError(f"trend must be 'exp' or 'linear', got {trend!r}")
    xs = np.asarray(list(x), dtype=float)
    ys = np.asarray(list(y), dtype=float)
    if len(xs) != len(ys):
        raise ValueError("x and y must have the same length")
    keys = list(groups) if groups is not None else [None] * len(xs)
    if len(keys) != len(xs):
        raise ValueError("groups must have one entry per point")
    fig, ax = _new_figure()
    order: list[Any] = []
    for key in keys:
        if key not in order:
            order.append(key)
    for key in order:
        mask = np.array([k == key for k in keys])
        gx, gy = xs[mask], ys[mask]
        name = "" if key is None else str(key)
        points = ax.scatter(gx, gy, s=18, label=name or None)
        fitted = _fit(gx, gy, trend)
        if fitted is None:
            continue
        line_x = np.linspace(float(gx.min()), float(gx.max()), 100)
        if trend == "linear":
            slope, intercept = fitted
            line_y = slope * line_x + intercept
            text = f"{slope:.3g}·x + {intercept:.3g}"
        else:
            scale, rate = fitted
            line_y = scale * np.exp(rate * line_x)
            text = f"{scale:.3g}·exp({rate:.3g}·x)"
        fit_label = f"{name}: {text}" if name else f"fit: {text}"
        ax.plot(line_x, line_y, color=points.get_facecolor()[0], label=fit_label)
    ax.set_xlabel(axis_label(x_label, x_unit))
    ax.set_ylabel(axis_label(y_label, y_unit))
    return _finish(fig, ax, title, legend=True)


def histogram(
    values: Sequence[float],
    *,
    label: str,
    unit: str,
    bins: int | Sequence[float] = 30,
    density: bool = False,
    title: str | None = None,
) -> Figure:
    """Histogram of ``values``; the y axis is a count or a density per unit."""
    import numpy as np

    data = np.asarray(list(values), dtype=float)
    data = data[np.isfinite(data)]
    fig, ax = _new_figure()
    ax.hist(data, bins=bins, density=density, edgecolor="white")
    ax.set_xlabel(axis_label(label, unit))
    if density:
        ax.set_ylabel(axis_label("density", f"1/{unit}"))
    else:
        ax.set_ylabel(axis_label("count", "samples"))
    return _finish(fig, ax, title, legend=False)


def save(fig: Figure, path: str | os.PathLike[str], *, dpi: int = 110, close: bool = True) -> Path:
    """Write ``fig`` as a PNG file (atomically) and return its path.

    Inside :func:`deferred_saves` the drawing may instead be handed to another process
    (the figure travels pickled): the file then exists once the block ends, with the same
    bytes as a drawing here would give.
    """
    target = Path(path)
    if _DEFERRED and _DEFERRED[-1].defer(fig, target, dpi):
        if close:
            fig.clear()
        return target
    target = atomic_write_bytes(path, _png(fig, dpi))
    if close:
        fig.clear()
    return target


def _png(fig: Figure, dpi: int) -> bytes:
    """Return the PNG bytes of ``fig`` at ``dpi``, drawn by Agg."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):
        FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, metadata={"Software": None})
    return buffer.getvalue()


def render_pickled(blob: bytes, path: str, dpi: int) -> str:
    """Draw a pickled figure into ``path`` (the other process's half of a deferred save)."""
    import pickle

    fig = pickle.loads(blob)
    atomic_write_bytes(path, _png(fig, dpi))
    return path


class _Deferral:
    """The saves handed to other processes inside one :func:`deferred_saves` block."""

    def __init__(self, submit: Any) -> None:
        self.submit = submit
        self.pending: list[tuple[Any, bytes, Path, int]] = []

    def defer(self, fig: Figure, path: Path, dpi: int) -> bool:
        """Hand ``fig`` to ``submit``; False (draw it here) when that is not possible."""
        import pickle

        try:
            blob = pickle.dumps(fig, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:  # an artist that does not pickle: draw here
            return False
        future = self.submit(render_pickled, blob, str(path), dpi)
        if future is None:
            return False
        self.pending.append((future, blob, path, dpi))
        return True

    def finish(self) -> None:
        """Wait for every handed-over drawing; draw here any the other side lost."""
        import pickle
        from concurrent.futures import CancelledError
        from concurrent.futures.process import BrokenProcessPool

        pending, self.pending = self.pending, []
        for future, blob, path, dpi in pending:
            try:
                future.result()
            except (CancelledError, BrokenProcessPool):
                # The pool was replaced or lost a worker: draw it here.
                atomic_write_bytes(path, _png(pickle.loads(blob), dpi))


_DEFERRED: list[_Deferral] = []


@contextlib.contextmanager
def deferred_saves(submit: Any) -> Iterator[None]:
    """Let :func:`save` hand drawings to ``submit`` inside the block; wait at its end.

    ``submit(fn, *args)`` returns a future, or None to have the drawing done here. A
    study reproduction passes the kept pool of local workers, so that its figures are
    drawn while its next runs go on; the files are complete when the block ends.
    """
    deferral = _Deferral(submit)
    _DEFERRED.append(deferral)
    try:
        yield
    finally:
        _DEFERRED.remove(deferral)
    deferral.finish()


def _groups(
    df: pd.DataFrame, group: str | None, single: str | None = None
) -> list[tuple[str | None, pd.DataFrame]]:
    if group is None:
        return [(single, df)]
    # The legend shows the values under the group's name as its title (not "group=value").
    return [(str(key), part) for key, part in df.groupby(group, sort=True)]


def _yerr(part: pd.DataFrame, column: str, ci: tuple[str, str] | None) -> Any:
    if ci is None:
        return None
    import numpy as np

    low = (part[column] - part[ci[0]]).to_numpy(dtype=float)
    high = (part[ci[1]] - part[column]).to_numpy(dtype=float)
    return np.nan_to_num(np.vstack([low, high]), nan=0.0)
