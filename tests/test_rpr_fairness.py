"""The RPR fairness study through the real engine: a tiny reproduce of every
experiment (tables, JSON records, every figure, the report) and the study's own
arithmetic (10-ms coefficient of variation, oscillation period).

The tiny profile (``QOSSIM_RPR_PROFILE=tiny``) runs one very short run per
configuration, so the numbers are not the study's; the layout and plumbing are.
"""

from __future__ import annotations

import math
import os
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from qossim.studies import rpr_fairness as rpr
from reproducing import json_records, reproduce

pytestmark = pytest.mark.skipif(
    os.environ.get("QOSSIM_FAKE_ENGINE") == "1", reason="needs the real engine"
)

FIGURES = [
    "add",
    "s0_aggregate",
    "s0_connections",
    "udp",
    "stq",
    "fair_rate",
    "client",
    "cwnd",
    "rtt",
]


def _reproduce(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return reproduce(tmp_path, "rpr-fairness", "QOSSIM_RPR_PROFILE", *args)


def test_tiny_reproduce_writes_every_table_and_figure(tmp_path):
    out = tmp_path / "rpr"
    proc = _reproduce(tmp_path, "--format", "json", "--out", str(out))
    records = json_records(proc)
    assert {r["table"] for r in records} == {
        "fidelity",
        "long_term",
        "per_connection",
        "compare",
        "series",
        "unbalanced",
        "loop_delay",
    }
    cells = {(r["table"], r["row"], r["column"]): r["value"] for r in records}
    # The comparison holds the three configurations at the tiny plan's R.
    (rate,) = rpr.TINY.udp_rates_mbps
    for mode, design in rpr.DESIGNS:
        row = f"{mode}/{design} R={rate:g}"
        for col in ("Jain", "S0 Mb/s", "CV 10ms S0", "max client (pkts)", "RTT p99 ms"):
            assert cells[("compare", row, col)] is not None, (row, col)
        jain = cells[("compare", row, "Jain")]
        assert 0.2 <= jain <= 1.0
    # Station throughputs cannot exceed the span they share.
    total = sum(cells[("long_term", f"{rate:g}", f"S{i}")] for i in range(rpr.SENDERS))
    assert total <= rpr.LINE_BPS / 1e6 * 1.001
    # The series table: one row per sending station, every column filled (the RTT ones
    # where the station has TCP), the idle stretch within the measured time.
    measured_ms = 1e3 * (rpr.TINY.duration_s - rpr.TINY.warmup_s)
    for i in range(rpr.SENDERS):
        idle = cells[("series", f"S{i}", "longest idle (ms)")]
        assert 0 <= idle <= measured_ms
        assert cells[("series", f"S{i}", "peak 1-ms (Mb/s)")] <= rpr.LINE_BPS / 1e6 * 1.001
        assert cells[("series", f"S{i}", "cv 10-ms")] is not None
        mean = cells[("series", f"S{i}", "rtt mean (ms)")]
        p99 = cells[("series", f"S{i}", "rtt p99 (ms)")]
        assert (mean is None) == (p99 is None)
    # 40 connections, each with a number.
    conns = [r for r in records if r["table"] == "per_connection"]
    assert len(conns) == rpr.TCP_STATIONS * rpr.CONNECTIONS
    for name in FIGURES:
        for suffix in ("", "_zoom"):
            png = out / "figures" / f"{name}{suffix}.png"
            assert png.stat().st_size > 1000, png
    for mode, design in rpr.DESIGNS:
        png = out / "figures" / f"unbalanced_{mode}_{design}.png"
        assert png.stat().st_size > 1000, png
    assert (out / "index.html").exists()


def test_only_series_runs_one_point(tmp_path):
    out = tmp_path / "rpr"
    proc = _reproduce(tmp_path, "--only", "series", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "advertised fair rate has mean" in proc.stdout
    assert len(list((out / "runs").iterdir())) == 1


def test_oscillation_period_of_a_sine():
    for period in (7, 25, 60):
        values = [math.sin(2 * math.pi * k / period) for k in range(1000)]
        assert rpr.oscillation_period_ms(values) == period
    assert rpr.oscillation_period_ms([1.0] * 100) is None


def test_cv_of_10ms_bins_is_computed_on_bins(tmp_path):
    # 1-ms samples alternating 0 and 2 average to exactly 1 in every 10-ms bin: CV 0.
    class Fake(rpr.Runs):
        def series(self, row, name):
            return row["series"]

    t = [0.001 * (k + 1) for k in range(200)]
    flat = pd.DataFrame({"t": t, "value": [0.0 if k % 2 else 2.0 for k in range(200)]})
    runs = Fake(rows=[], out_dir=tmp_path)
    assert rpr.cv_10ms(runs, {"series": flat}, 0, 0.0) == 0.0
    bins = [1.0 if (k // 10) % 2 == 0 else 3.0 for k in range(200)]
    step = pd.DataFrame({"t": t, "value": bins})
    # 20 bins, mean 2, sample standard deviation sqrt(20/19): CV = sqrt(20/19)/2.
    assert rpr.cv_10ms(runs, {"series": step}, 0, 0.0) == pytest.approx(math.sqrt(20 / 19) / 2)


def test_longest_idle_run_and_its_start():
    # Runs below 5: [3, 1] at 1..2 (2 long), [0, 0, 4] at 5..7 (3 long), [2] at 9.
    values = [9.0, 3.0, 1.0, 8.0, 5.0, 0.0, 0.0, 4.0, 7.0, 2.0]
    assert rpr.longest_run_below(values, 5.0) == (3, 5)
    # Strictly below: a value equal to the threshold ends a run.
    assert rpr.longest_run_below([4.0, 5.0, 4.0], 5.0) == (1, 0)
    assert rpr.longest_run_below([6.0, 7.0], 5.0) == (0, -1)
    assert rpr.longest_run_below([], 5.0) == (0, -1)
    # A tie goes to the first run.
    assert rpr.longest_run_below([1.0, 1.0, 9.0, 1.0, 1.0], 5.0) == (2, 0)


def test_idle_stretches_count_maximal_runs_of_at_least_the_length():
    v = [0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 9.0, 0.0, 0.0, 0.0, 0.0]
    # Runs of 2, 3 and 4 (the last one ends the series).
    assert rpr.idle_stretches(v, 5.0, 2) == 3
    assert rpr.idle_stretches(v, 5.0, 3) == 2
    assert rpr.idle_stretches(v, 5.0, 4) == 1
    assert rpr.idle_stretches(v, 5.0, 5) == 0


def test_cv_of_bins_on_a_known_series():
    # Bins of 10 alternating between means 1 and 3: 4 bins, mean 2, sample variance 4/3.
    values = [1.0] * 10 + [3.0] * 10 + [1.0] * 10 + [3.0] * 10 + [5.0] * 9
    assert rpr.cv_of_bins(values, 10) == pytest.approx(math.sqrt(4 / 3) / 2)
    assert math.isnan(rpr.cv_of_bins([1.0] * 15, 10))


def test_zoom_window_centres_on_the_idle_stretch_or_the_busiest_swing():
    t = [0.001 * (k + 1) for k in range(300)]
    # Flat at 100 with an idle stretch of 20 samples from index 150 and a shorter one at 40.
    v = [100.0] * 300
    for k in range(150, 170):
        v[k] = 0.0
    for k in range(40, 45):
        v[k] = 1.0
    start, end, what = rpr.zoom_window(t, v, 5.0, 40)
    # A quarter of the window (10 samples) before the stretch: samples 140..179.
    assert start == pytest.approx(t[140] - 0.001) and end == pytest.approx(t[179])
    assert "20 ms" in what
    # No idle sample: the earliest 40-sample window with the largest max - min. Flat
    # at 100 except a dip to 50 at index 200 and a spike to 300 at 250, which no window
    # of 40 holds both of: windows starting at 211..250 hold the spike (swing 200), the
    # largest, and the first of them starts at 211.
    w = [100.0] * 300
    w[200] = 50.0
    w[250] = 300.0
    start, end, what = rpr.zoom_window(t, w, 5.0, 40)
    assert start == pytest.approx(t[211] - 0.001) and end == pytest.approx(t[250])
    assert "busiest swing" in what


def test_head_below_its_share_oscillates_and_wastes_the_span(tmp_path):
    """The head sends 50 Mb/s only: in the aggressive mode it advertises that rate,
    upstream stations throttle to it, the span empties and the cycle repeats. The cycle
    is longer with longer spans (a slower control loop), the head still gets its 50 Mb/s,
    every greedy station gets more than the head, and with 2-ms spans the span is left
    partly unused."""
    plan = rpr.Plan(seeds=(1,), udp_rates_mbps=(), duration_s=0.8, warmup_s=0.2, series_rate_mbps=0)
    rows = rpr.run_unbalanced(plan, tmp_path, progress=False)
    runs = rpr.Runs(rows=rows, out_dir=tmp_path)
    table = rpr.table_unbalanced(runs, rows, plan)
    cell = {(r["row"], r["column"]): r["value"] for r in table.records}
    short, long = "aggressive/dual 0.1ms", "aggressive/dual 2ms"
    assert cell[(short, "period ms")] is not None and cell[(long, "period ms")] is not None
    assert cell[(long, "period ms")] > 2 * cell[(short, "period ms")]
    # The measured fairness round trip is one trip round the six-span ring plus at most
    # one 100-us aging interval of holding per station (not the first estimate).
    assert 0.6 <= cell[(short, "fairness RTT ms")] <= 0.6 + 0.6 + 0.01
    assert 12.0 <= cell[(long, "fairness RTT ms")] <= 12.0 + 0.6 + 0.01
    assert cell[(long, "span use %")] < 95
    for label in (short, long):
        head = cell[(label, "S4 Mb/s")]
        assert abs(head - rpr.UNBALANCED_UDP_MBPS) < 0.02 * rpr.UNBALANCED_UDP_MBPS
        assert min(cell[(label, f"S{i} Mb/s")] for i in range(4)) > head
        assert cell[(label, "span use %")] <= 100.1


def test_head_adding_1mbps_stalls_every_tcp_station_for_a_fairness_loop(tmp_path):
    """At R = 1 Mb/s the head S4 forwards at line rate and adds almost nothing: it is
    congested on its transmit rate (its STQ stays under the low threshold), advertises
    its ~1-Mb/s add rate, and every TCP station stalls. A station can hear "full rate"
    again only after the head's congestion has ended and the message has come back up
    the ring, so station 0 stalls for at least one message trip from S4 to S0: four
    spans, 8 ms with 2-ms spans (7 whole 1-ms bins at least)."""
    plan = rpr.Plan(seeds=(1,), udp_rates_mbps=(), duration_s=0.7, warmup_s=0.2, series_rate_mbps=1)
    rows = rpr.run_loop_delay(plan, tmp_path, progress=False)
    runs = rpr.Runs(rows=rows, out_dir=tmp_path)
    fair = rpr.LINE_BPS / rpr.SENDERS
    by_delay = {r["span_delay"]: r for r in rows}
    short = by_delay["0.1ms"]
    assert short["agent.rpr.S4.congested_fraction"] > 0.05
    for i in range(rpr.TCP_STATIONS):
        _, v = rpr.station_add_series(runs, short, i, plan.warmup_s)
        assert rpr.longest_run_below(v, rpr.IDLE_FRACTION * fair)[0] >= 1, i
    _, v = rpr.station_add_series(runs, by_delay["2ms"], 0, plan.warmup_s)
    assert rpr.longest_run_below(v, rpr.IDLE_FRACTION * fair)[0] >= 7
