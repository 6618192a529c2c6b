"""Plots: labelled axes with units, PNG output, trend fits."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from matplotlib.figure import Figure

from qossim import plots


@pytest.fixture
def frame():
    """A small time series."""
    return pd.DataFrame(
        {"t_s": [0.0, 1.0, 2.0, 3.0], "a_mbps": [1.0, 2.0, 3.0, 2.0], "b_mbps": [2.0, 1, 1, 3]}
    )


def _labels(fig):
    ax = fig.axes[0]
    return ax.get_xlabel(), ax.get_ylabel()


def test_timeseries(frame):
    """Axes carry label and unit."""
    fig = plots.timeseries(frame, "t_s", ["a_mbps", "b_mbps"], y_label="rate", y_unit="Mbit/s")
    assert isinstance(fig, Figure)
    assert _labels(fig) == ("time (s)", "rate (Mbit/s)")


def test_units_are_required(frame):
    """An empty unit is refused."""
    with pytest.raises(ValueError, match="needs a unit"):
        plots.timeseries(frame, "t_s", "a_mbps", y_label="rate", y_unit="")
    with pytest.raises(TypeError):
        plots.timeseries(frame, "t_s", "a_mbps", y_label="rate")  # type: ignore[call-arg]


def test_stacked_with_events(frame):
    """Stacked loads with labelled event lines."""
    fig = plots.stacked(
        frame,
        "t_s",
        ["a_mbps", "b_mbps"],
        y_label="load",
        y_unit="Mbit/s",
        events=[(1.5, "flow 3 starts")],
    )
    assert _labels(fig) == ("time (s)", "load (Mbit/s)")
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "flow 3 starts" in texts


def test_loss_load_and_mean_ci():
    """Loss against load, with interval columns and a reference curve."""
    df = pd.DataFrame(
        {"load": [0.5, 0.9], "loss": [0.01, 0.1], "lo": [0.005, 0.08], "hi": [0.02, 0.12]}
    )
    fig = plots.loss_load(
        df,
        "load",
        "loss",
        load_unit="Erlang",
        ci=("lo", "hi"),
        logy=True,
        reference=([0.5, 0.9], [0.01, 0.1], "theory"),
    )
    assert _labels(fig) == ("offered load (Erlang)", "loss ratio (fraction)")
    fig = plots.mean_ci(
        df,
        "load",
        "loss",
        x_label="load",
        x_unit="fraction",
        y_label="loss",
        y_unit="fraction",
        ci=("lo", "hi"),
    )
    assert _labels(fig) == ("load (fraction)", "loss (fraction)")


def test_scatter_trend_fits():
    """Exponential and linear fits recover known parameters."""
    xs = [0.0, 1.0, 2.0, 3.0, 4.0]
    ys = [2.0 * math.exp(0.5 * x) for x in xs]
    assert plots._fit(xs, ys, "exp") == pytest.approx((2.0, 0.5))
    assert plots._fit(xs, [3 * x + 1 for x in xs], "linear") == pytest.approx((3.0, 1.0))
    fig = plots.scatter_trend(
        xs + xs,
        ys + [3 * x + 1 for x in xs],
        groups=["e"] * 5 + ["l"] * 5,
        trend="exp",
        x_label="flows",
        x_unit="count",
        y_label="delay",
        y_unit="ms",
    )
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert any(text.startswith("e: 2·exp(0.5·x)") for text in legend)
    with pytest.raises(ValueError):
        plots.scatter_trend(xs, ys, trend="cubic", x_label="a", x_unit="s", y_label="b", y_unit="s")


def test_histogram_and_save(tmp_path):
    """Histograms label count or density per unit; save writes a PNG."""
    fig = plots.histogram([1.0, 2.0, 2.5, float("nan")], label="delay", unit="ms")
    assert _labels(fig) == ("delay (ms)", "count (samples)")
    dens = plots.histogram([1.0, 2.0], label="delay", unit="ms", density=True)
    assert _labels(dens)[1] == "density (1/ms)"
    path = plots.save(fig, tmp_path / "sub" / "h.png")
    assert path.read_bytes().startswith(b"\x89PNG")
    assert b"matplotlib.org" not in path.read_bytes()


@pytest.mark.parametrize(
    ("name", "unit"),
    [
        ("t_s", "s"),
        ("delay_ms", "ms"),
        ("rate_mbps", "Mb/s"),
        ("backlog_pkts", "packets"),
        ("loss_ratio", "fraction"),
        ("arrivals_per_s", "1/s"),
        ("weird", "value"),
    ],
)
def test_unit_from_name(name, unit):
    """Units are read from column-name suffixes."""
    assert plots.unit_from_name(name) == unit


def test_measured_points_beside_a_reference_are_not_joined():
    """A chord between two measured points beside a theory curve read as a curve."""
    import pandas as pd

    from qossim import plots

    df = pd.DataFrame(
        {"rho": [0.5, 0.8], "mean": [2.0, 5.0], "low": [1.9, 4.8], "high": [2.1, 5.2]}
    )
    ref = ([0.4, 0.6, 0.9], [1.6, 2.5, 10.0], "theory")
    kw = {"x_label": "load", "x_unit": "fraction", "y_label": "delay", "y_unit": "ms"}
    alone = plots.mean_ci(df, "rho", "mean", ci=("low", "high"), reference=ref, **kw)
    joined = plots.mean_ci(df, "rho", "mean", ci=("low", "high"), **kw)
    assert alone.axes[0].lines[0].get_linestyle() == "None"
    assert joined.axes[0].lines[0].get_linestyle() == "-"


def _figure_with_text() -> Figure:
    return plots.timeseries(
        pd.DataFrame({"t": [0.0, 1.0, 2.0], "value": [1.0, 3.0, 2.0]}),
        "t",
        "value",
        y_label="queue",
        y_unit="packets",
        title="deferred",
    )


def test_a_deferred_save_draws_the_same_bytes_in_another_process(tmp_path):
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    plots.save(_figure_with_text(), tmp_path / "here.png")
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        with plots.deferred_saves(pool.submit):
            path = plots.save(_figure_with_text(), tmp_path / "there.png")
        # The block waited for the drawing.
        assert path.exists()
    assert path.read_bytes() == (tmp_path / "here.png").read_bytes()


def test_a_deferred_save_that_cannot_be_handed_over_is_drawn_here(tmp_path):
    from concurrent.futures import Future

    plots.save(_figure_with_text(), tmp_path / "here.png")
    # No pool: the submit function declines, and the figure is drawn at once.
    with plots.deferred_saves(lambda *_: None):
        path = plots.save(_figure_with_text(), tmp_path / "declined.png")
        assert path.exists()
    # A pool that drops the drawing (cancelled): drawn here when the block ends.
    cancelled: Future = Future()
    cancelled.cancel()
    with plots.deferred_saves(lambda *_: cancelled):
        lost = plots.save(_figure_with_text(), tmp_path / "lost.png")
        assert not lost.exists()
    for p in (path, lost):
        assert p.read_bytes() == (tmp_path / "here.png").read_bytes()
