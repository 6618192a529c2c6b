"""RPR ring fairness with TCP and UDP (``qossim reproduce rpr-fairness``).

A ring of six stations; ten greedy TCP Reno connections from each of stations
0–3 to station 5 and a UDP CBR flow of rate R from station 4 to station 5 all
cross the span S4→S5: five sending stations, station 4's demand being its UDP
flow. The study asks whether the fairness protocol shares that
span equally among the stations in the long term, how throughput, client
buffers and TCP round-trip times behave in the short term (1-ms series), and
how the conservative mode compares with the aggressive one.

Experiments:

``long_term``
    Aggressive mode, dual queue, every R: long-term throughput per station, of
    the UDP flow and per TCP connection; Jain's index over stations.
``series``
    Aggressive mode, dual queue, one R: per station the longest idle stretch,
    the peak 1-ms throughput, the CV of 10-ms throughput and the RTT mean and
    99th percentile; the 1-ms time series and their plots, with a zoom on
    station 0's longest idle stretch (or its busiest swing).
``compare``
    Aggressive/dual, conservative/single and conservative/dual at every R:
    fairness index, per-station throughput, coefficient of variation of 10-ms
    throughput, maximum client buffer, RTT mean and 99th percentile.
``unbalanced``
    Every configuration at R = 50 Mb/s with 0.1-ms and 2-ms spans: shares,
    span use, oscillation period, fairness round trip, RTTs.
``loop_delay``
    The ``series`` point with spans of 0.1 to 2 ms: how station 0's idle
    stretches and spikes grow with the fairness loop's delay.

Everything the study varies is data at the top of this module (designs, R
values, plans); each table and figure is one function.
"""

from __future__ import annotations

import math
import operator
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qossim import plots
from qossim.campaign import records
from qossim.studies import StudyOutput, Table, run_points
from qossim.studies.frame import Profiles

TITLE = "RPR ring fairness with TCP and UDP"
EXPERIMENTS = ["long_term", "series", "compare", "unbalanced", "loop_delay"]

#: Stations on the ring; stations 0..SENDERS-1 send to the last one.
STATIONS = 6
SENDERS = 5
#: Stations 0..TCP_STATIONS-1 carry the TCP connections; the last sender (S4) carries
#: the UDP flow only (``scenario(..., head_tcp=True)`` gives it ten TCPs as well).
TCP_STATIONS = SENDERS - 1
#: Span rate (bits per second) and propagation delay.
LINE_BPS = 622e6
SPAN_DELAY = "0.1ms"
#: TCP connections per sending station, their window (segments) and segment size.
CONNECTIONS = 10
TCP_WINDOW = 64
PACKET_BYTES = 1500
#: The UDP flow's rates, Mb/s.
UDP_RATES_MBPS = (1, 50, 100, 200, 400)
#: (mode, design) of the compared configurations; the first is the studied one.
DESIGNS = (("aggressive", "dual"), ("conservative", "single"), ("conservative", "dual"))
#: The ``unbalanced`` experiment: the head (S4) sends only this much UDP, below its fair
#: share, while stations 0–3 stay greedy; spans of these propagation delays.
UNBALANCED_UDP_MBPS = 50
UNBALANCED_DELAYS = ("0.1ms", "2ms")
#: The ``loop_delay`` experiment: the ``series`` point (aggressive/dual, R = 1 Mb/s)
#: with spans of these propagation delays.
LOOP_DELAYS = ("0.1ms", "0.5ms", "1ms", "2ms")
#: An idle stretch this long or longer (ms) is counted by the ``loop_delay`` table.
LONG_IDLE_MS = 10

#: The connection whose congestion window and RTT are traced.
TRACED = "tcp0"
#: A 1-ms bin counts as idle below this fraction of the fair share.
IDLE_FRACTION = 0.05
#: Width of the zoomed plots of the ``series`` experiment, in 1-ms samples.
ZOOM_MS = 100


@dataclass(frozen=True)
class Plan:
    """How much to simulate."""

    seeds: tuple[int, ...]
    udp_rates_mbps: tuple[float, ...]
    duration_s: float
    warmup_s: float
    #: R of the ``series`` experiment.
    series_rate_mbps: float


FULL = Plan(
    seeds=(1,),
    udp_rates_mbps=UDP_RATES_MBPS,
    duration_s=10.0,
    warmup_s=1.0,
    series_rate_mbps=1,
)
#: For the test suite (``QOSSIM_RPR_PROFILE=tiny``): the plumbing, not the numbers.
TINY = Plan(
    seeds=(1,),
    udp_rates_mbps=(1,),
    duration_s=0.3,
    warmup_s=0.1,
    series_rate_mbps=1,
)
QUICK = Plan(
    seeds=(1,),
    udp_rates_mbps=(1, 100, 400),
    duration_s=2.0,
    warmup_s=0.5,
    series_rate_mbps=1,
)
#: The profiles by name (the plan of a call is chosen in :func:`reproduce`).
PROFILES = Profiles(full=FULL, quick=QUICK, others={"tiny": TINY})


# ============================================================================
# Scenario
# ============================================================================


def scenario(
    mode: str, design: str, udp_mbps: float, plan: Plan, head_tcp: bool = False
) -> dict[str, Any]:
    """Return the default scenario: 10 TCP per station 0–3 to station 5, UDP R on S4→S5.

    With ``head_tcp`` station 4 also has ten TCP connections (in the same client buffer
    as the UDP flow).
    """
    last = f"S{STATIONS - 1}"
    interval_us = PACKET_BYTES * 8 / (udp_mbps * 1e6) * 1e6
    traffic: list[dict[str, Any]] = [
        {
            "name": "udp",
            "from": f"S{SENDERS - 1}",
            "to": last,
            "model": "cbr",
            "size": f"{PACKET_BYTES}B",
            "interval": f"{interval_us:.9g}us",
        }
    ]
    for i in range(SENDERS if head_tcp else TCP_STATIONS):
        traffic.append(
            {
                "name": f"tcp{i}",
                "from": f"S{i}",
                "to": last,
                "model": "tcp",
                "flows": CONNECTIONS,
                "packet_size": f"{PACKET_BYTES}B",
                "wnd": TCP_WINDOW,
                "start_spread": "10ms",
            }
        )
    return {
        "run": {"duration": f"{plan.duration_s:g}s", "warmup": f"{plan.warmup_s:g}s"},
        "topology": {
            "kind": "rpr_ring",
            "stations": STATIONS,
            "rate": f"{LINE_BPS:.0f}bps",
            "delay": SPAN_DELAY,
        },
        "rpr": {"mode": mode, "design": design, "watch": [TRACED, "udp"], "trace_tcp": TRACED},
        "traffic": traffic,
    }


def design_label(mode: str, design: str) -> str:
    """``aggressive/dual`` etc."""
    return f"{mode}/{design}"


@dataclass
class Runs:
    """The gathered runs and where their series are."""

    rows: list[dict[str, Any]]
    out_dir: Path

    def row(self, mode: str, design: str, rate: float) -> dict[str, Any] | None:
        """Return the run of one configuration (first seed)."""
        for r in self.rows:
            if r["mode"] == mode and r["design"] == design and float(r["udp_mbps"]) == rate:
                return r
        return None

    def series(self, row: Mapping[str, Any], name: str) -> Any:
        """Return a time series of one run."""
        from qossim.results import Result

        return Result.load(self.out_dir / "runs" / str(row["run_key"])).timeseries(name)


# Every experiment names its points by mode, design, R and span delay: a run shared by
# two experiments (the same scenario) is stored once, under whichever names it was
# first run with, so all of them must be there.


def run_all(
    designs: Sequence[tuple[str, str]],
    rates: Sequence[float],
    plan: Plan,
    out_dir: Path,
    progress: bool,
) -> Runs:
    """Run every (design, R) point."""
    points = [
        ({"mode": m, "design": d, "udp_mbps": r, "span_delay": SPAN_DELAY}, scenario(m, d, r, plan))
        for m, d in designs
        for r in rates
    ]
    df = run_points(points, plan.seeds, out_dir, progress=progress, name="rpr-fairness")
    return Runs(rows=records(df), out_dir=out_dir)


def unbalanced_scenario(mode: str, design: str, delay: str, plan: Plan) -> dict[str, Any]:
    """Return the default ring at R = 50 Mb/s with spans of propagation ``delay``."""
    sc = scenario(mode, design, UNBALANCED_UDP_MBPS, plan)
    sc["topology"]["delay"] = delay
    return sc


def run_loop_delay(plan: Plan, out_dir: Path, progress: bool) -> list[dict[str, Any]]:
    """Run the ``series`` point (aggressive/dual) at every span delay of ``loop_delay``."""
    mode, design = DESIGNS[0]
    points = []
    for delay in LOOP_DELAYS:
        sc = scenario(mode, design, plan.series_rate_mbps, plan)
        sc["topology"]["delay"] = delay
        point = {
            "mode": mode,
            "design": design,
            "udp_mbps": plan.series_rate_mbps,
            "span_delay": delay,
        }
        points.append((point, sc))
    df = run_points(points, plan.seeds, out_dir, progress=progress, name="rpr-loop-delay")
    return records(df)


def idle_stretches(values: Sequence[float], threshold: float, at_least: int) -> int:
    """Return how many maximal runs of values below ``threshold`` last ``at_least`` or more."""
    count, run = 0, 0
    for v in [*values, threshold]:
        if v < threshold:
            run += 1
        else:
            count += run >= at_least
            run = 0
    return count


def table_loop_delay(runs: Runs, rows: Sequence[Mapping[str, Any]], plan: Plan) -> Table:
    """Tabulate station 0's idle stretches and spikes against the span delay."""
    mode, design = DESIGNS[0]
    fair = LINE_BPS / SENDERS
    t = Table(
        "loop_delay",
        f"{design_label(mode, design)}, R = {plan.series_rate_mbps:g} Mb/s, spans of "
        f"growing propagation delay: station 0's 1-ms add throughput (idle: below "
        f"{IDLE_FRACTION * fair / 1e6:.2f} Mb/s)",
        row_label="span delay",
    )
    measured = plan.duration_s - plan.warmup_s
    for delay in LOOP_DELAYS:
        row = _unbalanced_row(rows, mode, design, delay)
        if row is None:
            continue
        _, v = station_add_series(runs, row, 0, plan.warmup_s)
        idle, _ = longest_run_below(v, IDLE_FRACTION * fair)
        t.add(delay, "S0 longest idle (ms)", idle)
        t.add(
            delay,
            f"S0 idle >= {LONG_IDLE_MS} ms per s",
            idle_stretches(v, IDLE_FRACTION * fair, LONG_IDLE_MS) / measured,
        )
        t.add(delay, "S0 peak 1-ms (Mb/s)", max(v) / 1e6 if v else None)
        t.add(delay, "S0 cv 10-ms", cv_of_bins(v, 10))
        shares = [mbps(row, f"rpr.station.{i}.throughput_bps") for i in range(SENDERS)]
        for i in range(TCP_STATIONS):
            t.add(delay, f"S{i} Mb/s", shares[i])
        t.add(delay, "span use %", 100 * sum(shares) / (LINE_BPS / 1e6))
        for key, col in (("rtt_mean_s", "S0 RTT mean ms"), ("rtt_p99_s", "S0 RTT p99 ms")):
            x = row.get(f"rpr.station.0.{key}")
            t.add(delay, col, None if x is None else 1e3 * float(x))
    return t


def run_unbalanced(plan: Plan, out_dir: Path, progress: bool) -> list[dict[str, Any]]:
    """Run every configuration at every span delay of the ``unbalanced`` experiment."""
    points = [
        (
            {"mode": m, "design": d, "udp_mbps": UNBALANCED_UDP_MBPS, "span_delay": delay},
            unbalanced_scenario(m, d, delay, plan),
        )
        for m, d in DESIGNS
        for delay in UNBALANCED_DELAYS
    ]
    df = run_points(points, plan.seeds, out_dir, progress=progress, name="rpr-unbalanced")
    return records(df)


# ============================================================================
# Metrics
# ============================================================================


def mbps(row: Mapping[str, Any], key: str) -> float:
    """Return a summary value in Mb/s."""
    v = row.get(key)
    return float("nan") if v is None else float(v) / 1e6


def cv_10ms(runs: Runs, row: Mapping[str, Any], station: int, warmup_s: float) -> float:
    """Coefficient of variation of a station's 10-ms add throughput after the warm-up."""
    _, v = station_add_series(runs, row, station, warmup_s)
    return cv_of_bins(v, 10)


def jain(x: Sequence[float]) -> float:
    """Return Jain's fairness index (Σx)² / (n·Σx²) of ``x`` (1 when all are equal)."""
    s2 = sum(v * v for v in x)
    return 1.0 if not x or s2 == 0 else sum(x) ** 2 / (len(x) * s2)


def station_add_series(
    runs: Runs, row: Mapping[str, Any], station: int, warmup_s: float
) -> tuple[list[float], list[float]]:
    """Return a station's 1-ms add throughput (times, bit/s) after the warm-up."""
    s = runs.series(row, f"rpr.S{station}.add_bps")
    pairs = [(float(t), float(x)) for t, x in zip(s["t"], s["value"], strict=True) if t > warmup_s]
    return [t for t, _ in pairs], [x for _, x in pairs]


def cv_of_bins(values: Sequence[float], per_bin: int = 10) -> float:
    """Return the CV (sample std / mean) of ``values`` averaged in bins of ``per_bin``."""
    bins = [
        sum(values[i : i + per_bin]) / per_bin for i in range(0, len(values) - per_bin + 1, per_bin)
    ]
    if len(bins) < 2:
        return float("nan")
    mean = sum(bins) / len(bins)
    var = sum((b - mean) ** 2 for b in bins) / (len(bins) - 1)
    return math.sqrt(var) / mean if mean > 0 else float("nan")


def longest_run_below(values: Sequence[float], threshold: float) -> tuple[int, int]:
    """Return (length, start index) of the longest run of values strictly below ``threshold``.

    The first such run wins a tie; (0, -1) when no value is below.
    """
    best, best_at, run, at = 0, -1, 0, 0
    for i, v in enumerate(values):
        if v < threshold:
            if run == 0:
                at = i
            run += 1
            if run > best:
                best, best_at = run, at
        else:
            run = 0
    return best, best_at


def busiest_swing(values: Sequence[float], width: int) -> int:
    """Return the start index of the ``width``-sample window with the largest max − min.

    The earliest such window wins a tie; 0 for a series shorter than ``width``.
    """
    best, best_at = -1.0, 0
    for i in range(0, max(len(values) - width + 1, 1)):
        part = values[i : i + width]
        if not part:
            break
        swing = max(part) - min(part)
        if swing > best:
            best, best_at = swing, i
    return best_at


def zoom_window(
    times: Sequence[float], values: Sequence[float], threshold: float, width: int
) -> tuple[float, float, str]:
    """Return (start, end, what) of a zoom of ``width`` samples of a 1-ms series.

    Around the longest idle stretch (values below ``threshold``), with a quarter of the
    window before it; without any idle sample, on the window of the busiest swing.
    """
    if not times:
        return 0.0, 0.0, "empty"
    length, at = longest_run_below(values, threshold)
    if length > 0:
        first = max(at - width // 4, 0)
        what = f"longest idle stretch ({length} ms)"
    else:
        first = busiest_swing(values, width)
        what = "busiest swing (no idle stretch)"
    last = min(first + width, len(times)) - 1
    step = times[1] - times[0] if len(times) > 1 else 1e-3
    return times[first] - step, times[last], what


def oscillation_period_ms(values: Sequence[float]) -> int | None:
    """Return the lag (in samples) of the first autocorrelation peak of ``values``."""
    n = len(values)
    if n < 20:
        return None
    mean = sum(values) / n
    x = [v - mean for v in values]
    den = sum(v * v for v in x)
    if den == 0:
        return None
    # The same products summed in the same order as a loop over i, at C speed.
    ac = [sum(map(operator.mul, x[: n - k], x[k:])) / den for k in range(min(n // 2, 400))]
    for k in range(2, len(ac) - 1):
        if ac[k] > 0.2 and ac[k] >= ac[k - 1] and ac[k] >= ac[k + 1]:
            return k
    return None


# ============================================================================
# Tables
# ============================================================================


def table_long_term(runs: Runs, plan: Plan) -> list[Table]:
    """Per-station, UDP and per-connection long-term throughput (aggressive/dual)."""
    mode, design = DESIGNS[0]
    stations = Table(
        "long_term",
        f"long-term throughput per station, Mb/s ({design_label(mode, design)}); "
        f"fair share {LINE_BPS / SENDERS / 1e6:.1f}",
        row_label="R (Mb/s)",
    )
    conns = Table(
        "per_connection",
        f"long-term throughput per TCP connection, Mb/s ({design_label(mode, design)})",
        row_label="R, station",
    )
    for rate in plan.udp_rates_mbps:
        row = runs.row(mode, design, rate)
        if row is None:
            continue
        label = f"{rate:g}"
        for i in range(SENDERS):
            stations.add(label, f"S{i}", mbps(row, f"rpr.station.{i}.throughput_bps"))
        stations.add(label, "UDP", mbps(row, "group.udp.throughput_bps"))
        stations.add(label, "Jain", row.get("rpr.jain_index"))
        stations.add(
            label,
            "Jain S0-S3",
            jain([mbps(row, f"rpr.station.{i}.throughput_bps") for i in range(TCP_STATIONS)]),
        )
        for i in range(TCP_STATIONS):
            for k in range(CONNECTIONS):
                conns.add(
                    f"R={label} S{i}", f"c{k}", mbps(row, f"rpr.flow.tcp{i}.{k}.throughput_bps")
                )
    return [stations, conns]


def table_compare(runs: Runs, plan: Plan) -> Table:
    """Tabulate the three configurations side by side at every R."""
    t = Table(
        "compare",
        "aggressive/dual vs conservative/single vs conservative/dual",
        row_label="configuration, R (Mb/s)",
    )
    for mode, design in DESIGNS:
        for rate in plan.udp_rates_mbps:
            row = runs.row(mode, design, rate)
            if row is None:
                continue
            label = f"{design_label(mode, design)} R={rate:g}"
            t.add(label, "Jain", row.get("rpr.jain_index"))
            for i in range(SENDERS):
                t.add(label, f"S{i} Mb/s", mbps(row, f"rpr.station.{i}.throughput_bps"))
            cvs = [cv_10ms(runs, row, i, plan.warmup_s) for i in range(SENDERS)]
            t.add(label, "CV 10ms S0", cvs[0])
            t.add(label, "CV 10ms mean", sum(cvs) / len(cvs))
            clients = [row.get(f"rpr.station.{i}.client_max_pkts") or 0 for i in range(SENDERS)]
            t.add(label, "max client (pkts)", max(clients))
            t.add(label, "max client S0-S3", max(clients[:TCP_STATIONS]))
            for key, col in (
                ("rpr.tcp.rtt_mean_s", "RTT mean ms"),
                ("rpr.tcp.rtt_p99_s", "RTT p99 ms"),
            ):
                v = row.get(key)
                t.add(label, col, None if v is None else 1e3 * float(v))
    return t


def table_series(runs: Runs, plan: Plan) -> Table | None:
    """Per station, the short-term behaviour of the ``series`` run.

    Longest idle stretch (consecutive 1-ms bins of add throughput below
    :data:`IDLE_FRACTION` of the fair share), peak 1-ms add throughput, CV of 10-ms
    throughput, and the mean and 99th percentile of the RTT of the station's TCP
    acknowledgements, all after the warm-up.
    """
    mode, design = DESIGNS[0]
    rate = plan.series_rate_mbps
    row = runs.row(mode, design, rate)
    if row is None:
        return None
    fair = LINE_BPS / SENDERS
    t = Table(
        "series",
        f"short-term behaviour per station ({design_label(mode, design)}, R = {rate:g} Mb/s); "
        f"idle: 1-ms add throughput below {100 * IDLE_FRACTION:g} % of the fair share "
        f"({IDLE_FRACTION * fair / 1e6:.2f} Mb/s)",
        row_label="station",
    )
    for i in range(SENDERS):
        label = f"S{i}"
        _, v = station_add_series(runs, row, i, plan.warmup_s)
        idle, _ = longest_run_below(v, IDLE_FRACTION * fair)
        t.add(label, "longest idle (ms)", idle)
        t.add(label, "peak 1-ms (Mb/s)", max(v) / 1e6 if v else None)
        t.add(label, "cv 10-ms", cv_of_bins(v, 10))
        for key, col in (("rtt_mean_s", "rtt mean (ms)"), ("rtt_p99_s", "rtt p99 (ms)")):
            x = row.get(f"rpr.station.{i}.{key}")
            t.add(label, col, None if x is None else 1e3 * float(x))
    return t


def _unbalanced_row(
    rows: Sequence[Mapping[str, Any]], mode: str, design: str, delay: str
) -> Mapping[str, Any] | None:
    """Return the ``unbalanced`` run of one configuration and span delay, if any."""
    for r in rows:
        if r["mode"] == mode and r["design"] == design and r["span_delay"] == delay:
            return r
    return None


def table_unbalanced(runs: Runs, rows: Sequence[Mapping[str, Any]], plan: Plan) -> Table:
    """Tabulate the head below its share: shares, span use, oscillation, RTTs."""
    ideal = (LINE_BPS / 1e6 - UNBALANCED_UDP_MBPS) / (SENDERS - 1)
    t = Table(
        "unbalanced",
        f"head S{SENDERS - 1} sends {UNBALANCED_UDP_MBPS} Mb/s of UDP only, stations 0–3 "
        f"greedy TCP (max-min share {ideal:.1f} Mb/s each)",
        row_label="configuration, span delay",
    )
    for mode, design in DESIGNS:
        for delay in UNBALANCED_DELAYS:
            row = _unbalanced_row(rows, mode, design, delay)
            if row is None:
                continue
            label = f"{design_label(mode, design)} {delay}"
            shares = [mbps(row, f"rpr.station.{i}.throughput_bps") for i in range(SENDERS)]
            for i, v in enumerate(shares):
                t.add(label, f"S{i} Mb/s", v)
            t.add(label, "span use %", 100 * sum(shares) / (LINE_BPS / 1e6))
            t.add(label, "CV 10ms S0", cv_10ms(runs, row, 0, plan.warmup_s))
            s0 = runs.series(row, "rpr.S0.add_bps")
            period = oscillation_period_ms(
                [float(v) for tt, v in zip(s0["t"], s0["value"], strict=True) if tt > plan.warmup_s]
            )
            t.add(label, "period ms", period)
            frtt = row.get(f"agent.rpr.S{SENDERS - 1}.frtt_s")
            t.add(label, "fairness RTT ms", None if frtt is None else 1e3 * float(frtt))
            for key, col in (
                ("rpr.tcp.rtt_mean_s", "RTT mean ms"),
                ("rpr.tcp.rtt_p99_s", "RTT p99 ms"),
            ):
                v = row.get(key)
                t.add(label, col, None if v is None else 1e3 * float(v))
    return t


def figure_unbalanced(
    runs: Runs, rows: Sequence[Mapping[str, Any]], plan: Plan, out_dir: Path, output: StudyOutput
) -> None:
    """Station 0's 1-ms add rate and the head's advertised rate, 100 ms after the warm-up."""
    import pandas as pd

    for mode, design in DESIGNS:
        frames = []
        for delay in UNBALANCED_DELAYS:
            row = _unbalanced_row(rows, mode, design, delay)
            if row is None:
                continue
            df = _frame(
                runs,
                row,
                {
                    f"S0 add, {delay} spans": "rpr.S0.add_bps",
                    f"S4 advertised, {delay} spans": f"rpr.S{SENDERS - 1}.fair_rate_bps",
                },
                1e-6,
            )
            frames.append(df.set_index("t"))
        if not frames:
            continue
        df = pd.concat(frames, axis=1).reset_index()
        part = df[(df["t"] > plan.warmup_s) & (df["t"] <= plan.warmup_s + 0.1)]
        label = design_label(mode, design)
        fig = plots.timeseries(
            part,
            "t",
            [c for c in part.columns if c != "t"],
            y_label="rate",
            y_unit="Mb/s",
            title=f"head below its share ({label}): station 0 and the head's advertised rate",
        )
        path = plots.save(fig, out_dir / "figures" / f"unbalanced_{mode}_{design}.png")
        output.figures.append(
            (f"unbalanced: station 0's 1-ms add rate and the advertised rate ({label})", path)
        )


# ============================================================================
# Figures
# ============================================================================


def _frame(runs: Runs, row: Mapping[str, Any], names: Mapping[str, str], scale: float = 1.0) -> Any:
    import pandas as pd

    cols: dict[str, Any] = {}
    for label, name in names.items():
        s = runs.series(row, name)
        cols["t"] = s["t"].to_numpy()
        cols[label] = s["value"].to_numpy() * scale
    return pd.DataFrame(cols)


def small_multiples(df: Any, columns: Sequence[str], y_label: str, title: str) -> Any:
    """One small panel per column against ``t``, sharing both axes (two columns of panels).

    Ten overlapping lines in one panel hide each other; panels side by side show each
    connection's idle stretches and spikes.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = (len(columns) + 1) // 2
    fig = Figure(figsize=(10.0, 1.3 * rows + 0.8), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 2, sharex=True, sharey=True, squeeze=False).ravel()
    for ax, column in zip(axes, columns, strict=False):
        ax.plot(df["t"], df[column], linewidth=0.7)
        ax.set_title(column, fontsize=8, loc="left")
        ax.grid(True, alpha=0.3)
    for ax in axes[len(columns) :]:
        ax.set_visible(False)
    for ax in axes[-2:]:
        ax.set_xlabel(plots.axis_label("time", "s"))
    fig.supylabel(y_label, fontsize=9)
    fig.suptitle(title, fontsize=10)
    return fig


def figures_series(runs: Runs, plan: Plan, out_dir: Path, output: StudyOutput) -> None:
    """Plot the 1-ms series of the studied configuration, full length and zoomed."""
    mode, design = DESIGNS[0]
    rate = plan.series_rate_mbps
    row = runs.row(mode, design, rate)
    if row is None:
        return
    fig_dir = out_dir / "figures"
    tag = f"{design_label(mode, design)}, R = {rate:g} Mb/s"
    conns = {f"c{k}": f"rpr.flow.{TRACED}.{k}.bps" for k in range(CONNECTIONS)}
    df_conn = _frame(runs, row, conns, 1e-6)
    df_conn["S0 aggregate"] = df_conn[list(conns)].sum(axis=1)
    stq = _frame(runs, row, {f"S{i}": f"rpr.S{i}.stq_bytes" for i in range(STATIONS)}, 1e-3)
    fair = _frame(runs, row, {f"S{i}": f"rpr.S{i}.fair_rate_bps" for i in range(STATIONS)}, 1e-6)
    client = _frame(runs, row, {f"S{i}": f"rpr.S{i}.client_pkts" for i in range(STATIONS)})
    udp = _frame(runs, row, {"UDP": "rpr.flow.udp.0.bps"}, 1e-6)
    cwnd = _frame(runs, row, {"cwnd": "rpr.tcp.cwnd"})
    rtt = runs.series(row, "rpr.tcp.rtt_s")
    period = oscillation_period_ms(
        [v for t, v in zip(fair["t"], fair[f"S{SENDERS - 1}"], strict=True) if t > plan.warmup_s]
    )
    s0_t, s0_v = station_add_series(runs, row, 0, plan.warmup_s)
    start, end, what = zoom_window(s0_t, s0_v, IDLE_FRACTION * LINE_BPS / SENDERS, ZOOM_MS)
    head = [v for t, v in zip(fair["t"], fair[f"S{SENDERS - 1}"], strict=True) if t > plan.warmup_s]
    mean = sum(head) / len(head) if head else float("nan")
    std = math.sqrt(sum((v - mean) ** 2 for v in head) / len(head)) if head else float("nan")
    output.notes.append(
        f"series ({tag}): the head's (S{SENDERS - 1}) advertised fair rate has mean "
        f"{mean:.1f} Mb/s and standard deviation {std:.2f} Mb/s; its first autocorrelation "
        + (f"peak is at {period} ms" if period else "peak was not found")
        + f"; zoom {start:.3f}–{end:.3f} s, on station 0's {what}"
    )

    def draw(df: Any, cols: Sequence[str], name: str, title: str, y: str, unit: str) -> None:
        for zoom in (False, True):
            part = df[(df["t"] > start) & (df["t"] <= end)] if zoom else df
            fig = plots.timeseries(
                part,
                "t",
                list(cols),
                y_label=y,
                y_unit=unit,
                title=title + (" (zoom)" if zoom else ""),
            )
            suffix = "_zoom" if zoom else ""
            path = plots.save(fig, fig_dir / f"{name}{suffix}.png")
            output.figures.append(
                (f"{title}{' — zoom on station 0: ' + what if zoom else ''} ({tag})", path)
            )

    adds = _frame(runs, row, {f"S{i}": f"rpr.S{i}.add_bps" for i in range(SENDERS)}, 1e-6)
    draw(
        adds,
        [f"S{i}" for i in range(SENDERS)],
        "add",
        "1-ms add throughput of every sending station",
        "throughput",
        "Mb/s",
    )
    draw(
        df_conn,
        ["S0 aggregate"],
        "s0_aggregate",
        "station 0: TCP aggregate throughput",
        "throughput",
        "Mb/s",
    )
    for zoom in (False, True):
        part = df_conn[(df_conn["t"] > start) & (df_conn["t"] <= end)] if zoom else df_conn
        title = f"station 0: its {CONNECTIONS} connections, one panel each"
        fig = small_multiples(part, list(conns), "throughput (Mb/s)", title)
        suffix = "_zoom" if zoom else ""
        path = plots.save(fig, fig_dir / f"s0_connections{suffix}.png")
        output.figures.append(
            (f"{title}{' — zoom on station 0: ' + what if zoom else ''} ({tag})", path)
        )
    draw(udp, ["UDP"], "udp", "UDP flow throughput", "throughput", "Mb/s")
    draw(
        stq, [f"S{i}" for i in range(STATIONS)], "stq", "STQ depth at every station", "depth", "KB"
    )
    draw(
        fair,
        [f"S{i}" for i in range(STATIONS)],
        "fair_rate",
        "advertised fair rate",
        "rate",
        "Mb/s",
    )
    draw(
        client,
        [f"S{i}" for i in range(STATIONS)],
        "client",
        "client buffer depth",
        "depth",
        "packets",
    )
    draw(cwnd, ["cwnd"], "cwnd", f"congestion window of {TRACED}.0", "cwnd", "segments")
    rtt_df = rtt.rename(columns={"value": "RTT"})
    rtt_df["RTT"] = rtt_df["RTT"] * 1e3
    draw(rtt_df, ["RTT"], "rtt", f"RTT of {TRACED}.0 (per acknowledgement)", "RTT", "ms")


# ============================================================================
# reproduce
# ============================================================================


def reproduce(
    quick: bool = False,
    only: Sequence[str] | None = None,
    out_dir: Path | None = None,
    progress: bool = True,
) -> StudyOutput:
    """Run the selected experiments; return their tables, figures and notes."""
    plan = TINY if os.environ.get("QOSSIM_RPR_PROFILE") == "tiny" else QUICK if quick else FULL
    target = Path(out_dir) if out_dir is not None else Path("reports") / "rpr-fairness"
    selected = set(only or EXPERIMENTS)
    designs = DESIGNS if "compare" in selected else DESIGNS[:1]
    rates: Sequence[float] = plan.udp_rates_mbps
    if selected == {"series"}:
        rates = (plan.series_rate_mbps,)
    output = StudyOutput(profile=PROFILES.name_of(plan, quick))
    if "unbalanced" in selected:
        rows = run_unbalanced(plan, target, progress)
        runs_u = Runs(rows=rows, out_dir=target)
        output.tables.append(table_unbalanced(runs_u, rows, plan))
        figure_unbalanced(runs_u, rows, plan, target, output)
    if "loop_delay" in selected:
        rows_d = run_loop_delay(plan, target, progress)
        output.tables.append(table_loop_delay(Runs(rows=rows_d, out_dir=target), rows_d, plan))
    if not selected & {"long_term", "compare", "series"}:
        return output
    runs = run_all(designs, rates, plan, target, progress)
    if "long_term" in selected:
        output.tables.extend(table_long_term(runs, plan))
    if "compare" in selected:
        output.tables.append(table_compare(runs, plan))
    if "series" in selected:
        series = table_series(runs, plan)
        if series is not None:
            output.tables.append(series)
        figures_series(runs, plan, target, output)
    return output
