"""DiffServ Assured Service with RIO: do long-lived TCP connections get their target rate.

Experiments (described in full, with the modelling choices, in
``studies/assured-service/README.md``):

``S1``
    RTT influence on Dumbbell-50: 10, 25 and 40 Assured Service (AS) connections
    with a 1 Mb/s token-bucket profile, the rest best effort (BE), plus all-BE and
    all-AS; per-connection goodput against RTT with an exponential trend per class,
    and the RIO average and instantaneous queue over time.
``S2``
    S1's setups with the time-sliding-window (TSW) profiler instead of the token
    bucket; the overlap between the AS and BE goodput distributions.
``S3``
    Different targets (2, 1, 0.5, 0.2, 0.1 Mb/s) for 20 AS connections next to 20 BE
    ones, all with a 100 ms RTT, on a 20 Mb/s bottleneck.
``S4``
    A non-responsive CBR/UDP source among 19 TCP connections: sweep its rate; then
    make it AS-capable (targets 4 and 8 Mb/s) and split its drops into IN early, IN
    overflow and OUT.
``S5``
    25 AS + 25 BE on Dumbbell-50: the distribution of per-connection goodput of each
    class against its ideal (target plus an equal share of the excess).
``S6``
    The merging topology ending in a T1: per-connection goodput, IN drops (overflow
    and early) and the percentage of IN packets demoted by the policers.

Scenarios are dicts in the engine's scenario language, built by the ``*_scenario``
functions below; :func:`campaign_files` writes the same scenarios as the campaign
files under ``studies/assured-service/`` so ``qossim sweep`` can run them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from qossim import _toml, plots
from qossim.campaign import records
from qossim.stats import CI
from qossim.studies import StudyOutput, Table
from qossim.studies.frame import (
    CONFIDENCE,
    Context,
    Experiment,
    Profiles,
    Study,
    add_ci_figure,
    add_figure,
    ci_of,
    mark_published,
    new_figure,
    published_cells,
    run_table,
)

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

TITLE = "DiffServ Assured Service with RIO and TCP Reno"

#: The name the study is registered under (its published data is filed by it).
STUDY_NAME = "assured-service"

# ----------------------------------------------------------------------------
# Model constants (the study's values, and the choices it leaves open)
# ----------------------------------------------------------------------------

#: TCP segment size on the wire on the dumbbells (bytes), and its TCP/IP header.
PACKET_BYTES = 576
HEADER_BYTES = 40
#: Segment size on the merging topology (bytes).
MERGING_PACKET_BYTES = 1500
#: Hosts of Dumbbell-50.
DUMBBELL_HOSTS = 50
#: Access links of the dumbbells (each way).
ACCESS_RATE = "10Mbps"
#: Propagation delay of the dumbbell bottleneck: the RTT is put on the access links.
BOTTLENECK_DELAY_MS = 1.0
#: Per-connection RTTs of Dumbbell-50 are drawn once, uniformly in [50, 150] ms, from
#: this seed (Python's ``random.Random``), and used by every setup and run.
RTT_SEED = 2
RTT_RANGE_MS = (50.0, 150.0)
#: TCP connections start uniformly in [0, 1 s].
START_SPREAD = "1s"
#: Host profiler depth (bytes) and the aggregate policer's depth at r0 (bytes).
PROFILE_DEPTH = "20KB"
POLICER_DEPTH = "25KB"
#: AS target of S1, S2, S4 and S5 (Mb/s).
TARGET_MBPS = 1.0
#: Advertised window of every TCP connection (segments). The study does not state it;
#: 20 segments would cap a 100-ms connection near 0.9 Mb/s, below what its 2 Mb/s-target
#: connections got, while an unlimited window lets high-target connections overshoot
#: their profile and lose OUT packets. 64 segments is the common alternative.
TCP_WINDOW = 64
#: The physical queue of a RIO router holds max_th / MAX_TH_FRACTION packets (the
#: study's rule max_th = 0.8 x queue size); S6 states its queue (24 packets).
MAX_TH_FRACTION = 0.8
#: TSW window and out-of-profile rule (the study's min(1, (avg - target)/target)).
TSW_WIN = "1s"
TSW_RULE = "over_target"

DUMBBELL_RIO = "420/840/0.05 500/840/0.02"
DUMBBELL_MBPS = 50.0
S1_SETUPS = (10, 25, 40)

S3_MBPS = 20.0
S3_RIO = "347/694/0.05 390/694/0.02"
S3_TARGETS_MBPS = (2.0, 1.0, 0.5, 0.2, 0.1)
S3_PER_TARGET = 4
S3_BE = 20
S3_RTT_MS = 100.0
S3_TRACED = (0, 18)

S4_MBPS = 20.0
S4_RIO = "173/347/0.05 195/347/0.02"
S4_AS = 10
S4_TCP_BE = 9
S4_RTT_MS = 100.0
S4_CBR_TARGETS = (4.0, 8.0)
#: The CBR host's access links are fast enough for any swept rate.
S4_CBR_ACCESS = "100Mbps"

MERGING_HOSTS = 8
MERGING_TARGET_KBPS = 100.0
MERGING_RIO = "4/18/0.05 5/18/0.02"
MERGING_QUEUE = "24p"
MERGING_BOTTLENECK_KBPS = 1544.0
#: Profilers 4 packets deep, policers 6 packets deep (1500-byte packets).
MERGING_PROFILE_DEPTH = f"{4 * MERGING_PACKET_BYTES}B"
MERGING_POLICER_DEPTH = f"{6 * MERGING_PACKET_BYTES}B"
#: Policers of the merging topology: link -> contract (kb/s).
MERGING_POLICERS = {
    "r0-r4": 200.0,
    "r1-r4": 200.0,
    "r2-r5": 200.0,
    "r3-r5": 200.0,
    "r4-r6": 400.0,
    "r5-r6": 400.0,
    "r6-r7": 800.0,
}

#: Sampling of the RIO queue series and of S3's per-connection rate series.
QUEUE_INTERVAL = "100ms"
RATE_INTERVAL = "1s"


def goodput_factor(packet_bytes: int = PACKET_BYTES) -> float:
    """Return payload / packet: the goodput of a connection per bit/s on the wire."""
    return (packet_bytes - HEADER_BYTES) / packet_bytes


@dataclass(frozen=True)
class Plan:
    """How much to simulate: seeds, run length and the points of S4's sweep."""

    seeds5: tuple[int, ...]
    seeds10: tuple[int, ...]
    duration_s: float
    warmup_s: float
    s4_rates: tuple[float, ...]
    s4_as_rates: tuple[float, ...]


FULL = Plan(
    seeds5=(1, 2, 3, 4, 5),
    seeds10=tuple(range(1, 11)),
    duration_s=300.0,
    warmup_s=50.0,
    s4_rates=tuple(float(r) for r in range(0, 21, 2)),
    s4_as_rates=tuple(float(r) for r in range(2, 21, 2)),
)
QUICK = Plan(
    seeds5=(1, 2, 3),
    seeds10=(1, 2, 3),
    duration_s=100.0,
    warmup_s=20.0,
    s4_rates=(0.0, 4.0, 8.0, 12.0, 16.0, 20.0),
    s4_as_rates=(4.0, 8.0, 12.0, 16.0, 20.0),
)


# ============================================================================
# Arithmetic of the ideal rates
# ============================================================================


def excess_share(capacity: float, targets: Sequence[float]) -> float:
    """Return the equal share of the excess: (capacity - sum of targets) / connections.

    ``targets`` has one entry per connection (0 for best effort); the share may be
    negative when the targets oversubscribe the capacity.
    """
    if not targets:
        raise ValueError("need at least one connection")
    return (capacity - sum(targets)) / len(targets)


def ideal_rates(capacity: float, targets: Sequence[float]) -> list[float]:
    """Return each connection's ideal rate: its target plus the equal share of the excess."""
    share = excess_share(capacity, targets)
    return [t + share for t in targets]


def s3_targets() -> list[float]:
    """Return S3's per-connection targets (Mb/s): 4 hosts per AS target, then 20 BE."""
    out = [t for t in S3_TARGETS_MBPS for _ in range(S3_PER_TARGET)]
    return out + [0.0] * S3_BE


# ============================================================================
# Scenario definitions
# ============================================================================


def draw_rtts_ms(n: int = DUMBBELL_HOSTS, seed: int = RTT_SEED) -> list[float]:
    """Return ``n`` RTTs drawn uniformly in [50, 150] ms (rounded to 0.1 ms)."""
    rng = random.Random(seed)
    low, high = RTT_RANGE_MS
    return [round(rng.uniform(low, high), 1) for _ in range(n)]


def access_delay_ms(rtt_ms: float) -> float:
    """Return the access-link delay giving a propagation RTT of ``rtt_ms``.

    A packet crosses its source access link, the bottleneck and its sink access link,
    each way: RTT = 4 x access + 2 x bottleneck delay.
    """
    return (rtt_ms - 2 * BOTTLENECK_DELAY_MS) / 4


def conn(i: int) -> str:
    """Return the traffic-entry name of connection ``i``."""
    return f"c{i:02d}"


def _mbps(x: float) -> str:
    return f"{x:.6g}Mbps"


def _kbps(x: float) -> str:
    return f"{x:.6g}kbps"


def token_bucket(rate: str, depth: str = PROFILE_DEPTH) -> dict[str, Any]:
    """Return a token-bucket host profile."""
    return {"kind": "token_bucket", "rate": rate, "depth": depth}


def tsw(target: str) -> dict[str, Any]:
    """Return a TSW host profile (the study's window and rule)."""
    return {"kind": "tsw", "target": target, "win": TSW_WIN, "rule": TSW_RULE}


def _run(plan: Plan) -> dict[str, str]:
    return {"duration": f"{plan.duration_s:g}s", "warmup": f"{plan.warmup_s:g}s"}


def _tcp(i: int, src: str, dst: str, size: int, profile: Mapping[str, Any] | None) -> dict:
    entry: dict[str, Any] = {
        "name": conn(i),
        "from": src,
        "to": dst,
        "model": "tcp",
        "packet_size": f"{size}B",
        "start_spread": START_SPREAD,
        "wnd": TCP_WINDOW,
    }
    if profile is not None:
        entry["profile"] = dict(profile)
    return entry


def physical_queue(rio: str) -> str:
    """Return the physical queue limit of a RIO router with parameters ``rio``.

    The larger max_th over MAX_TH_FRACTION, rounded up (694 -> 868 packets).
    """
    max_th = max(float(part.split("/")[1]) for part in rio.split())
    return f"{math.ceil(max_th / MAX_TH_FRACTION - 1e-9)}p"


def _queue_metrics(link: str) -> list[dict[str, Any]]:
    return [
        {"kind": "queue_average", "link": link, "which": "total", "interval": QUEUE_INTERVAL},
        {"kind": "queue_average", "link": link, "which": "in", "interval": QUEUE_INTERVAL},
        {"kind": "queue_length", "link": link, "interval": QUEUE_INTERVAL},
    ]


def dumbbell_scenario(
    plan: Plan,
    *,
    rtts_ms: Sequence[float],
    profiles: Sequence[Mapping[str, Any] | None],
    bottleneck_mbps: float,
    rio: str,
    policer_mbps: float,
    cbr: Mapping[str, Any] | None = None,
    metrics: Iterable[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """Return a dumbbell scenario: TCP connection i from s_i to d_i with ``profiles[i]``.

    ``cbr``, if given, replaces the TCP connection of the last host by a CBR/UDP
    traffic entry (its dict, without ``from`` and ``to``); that host's access links are
    then ``S4_CBR_ACCESS``. The aggregate policer (``policer_mbps`` > 0) sits on the
    bottleneck port at r0.
    """
    n = len(rtts_ms)
    if len(profiles) != n:
        raise ValueError("need one profile (or None) per host")
    links: dict[str, Any] = {
        "r0-r1": {
            "queue": {
                "kind": "rio",
                "params": rio,
                "limit": physical_queue(rio),
                "mean_pkt_size": f"{PACKET_BYTES}B",
            },
        }
    }
    if policer_mbps > 0:
        links["r0-r1"]["meters"] = [
            {"kind": "policer", "rate": _mbps(policer_mbps), "depth": POLICER_DEPTH}
        ]
    traffic = [
        _tcp(i, f"s{i}", f"d{i}", PACKET_BYTES, profiles[i])
        for i in range(n)
        if not (cbr is not None and i == n - 1)
    ]
    if cbr is not None:
        traffic.append({**cbr, "from": f"s{n - 1}", "to": f"d{n - 1}"})
        links[f"s{n - 1}-r0"] = {"rate": S4_CBR_ACCESS}
        links[f"r1-d{n - 1}"] = {"rate": S4_CBR_ACCESS}
    return {
        "run": _run(plan),
        "topology": {
            "kind": "dumbbell",
            "hosts": n,
            "access_rate": ACCESS_RATE,
            "access_delays": [f"{access_delay_ms(r):.4g}ms" for r in rtts_ms],
            "bottleneck_rate": _mbps(bottleneck_mbps),
            "bottleneck_delay": f"{BOTTLENECK_DELAY_MS:g}ms",
        },
        "links": links,
        "traffic": traffic,
        "metric": [*_queue_metrics("r0-r1"), *(dict(m) for m in metrics)],
    }


def s1_scenario(plan: Plan, n_as: int, meter: str = "token_bucket") -> dict[str, Any]:
    """Return Dumbbell-50 with hosts 0..n_as-1 AS at 1 Mb/s (``meter``: token_bucket or tsw)."""
    if meter not in ("token_bucket", "tsw"):
        raise ValueError(f"meter must be token_bucket or tsw, got {meter!r}")
    make = token_bucket if meter == "token_bucket" else tsw
    profiles = [make(_mbps(TARGET_MBPS)) if i < n_as else None for i in range(DUMBBELL_HOSTS)]
    return dumbbell_scenario(
        plan,
        rtts_ms=draw_rtts_ms(),
        profiles=profiles,
        bottleneck_mbps=DUMBBELL_MBPS,
        rio=DUMBBELL_RIO,
        policer_mbps=n_as * TARGET_MBPS,
    )


def s3_scenario(plan: Plan) -> dict[str, Any]:
    """Return S3: 20 AS connections with graded targets and 20 BE, all RTT 100 ms."""
    targets = s3_targets()
    profiles = [token_bucket(_mbps(t)) if t > 0 else None for t in targets]
    return dumbbell_scenario(
        plan,
        rtts_ms=[S3_RTT_MS] * len(targets),
        profiles=profiles,
        bottleneck_mbps=S3_MBPS,
        rio=S3_RIO,
        policer_mbps=sum(targets),
        metrics=[
            {"kind": "group_throughput", "traffic": conn(i), "interval": RATE_INTERVAL}
            for i in S3_TRACED
        ],
    )


def cbr_interval_us(rate_mbps: float, size: int = PACKET_BYTES) -> float:
    """Return the packet spacing (microseconds) of a CBR source of ``rate_mbps``."""
    return size * 8 / rate_mbps


def cbr_interval(rate_mbps: float, size: int = PACKET_BYTES) -> str:
    """Return the packet spacing of a CBR source of ``rate_mbps`` as a scenario time."""
    return f"{cbr_interval_us(rate_mbps, size):.6f}".rstrip("0").rstrip(".") + "us"


def s4_scenario(plan: Plan, cbr_mbps: float, target_mbps: float | None = None) -> dict[str, Any]:
    """Return S4: 10 AS + 9 BE TCP connections and a CBR source of ``cbr_mbps``.

    With ``target_mbps`` the CBR source is AS-capable (a token-bucket profile at that
    target) and the policer's contract grows by it. A rate of 0 means no CBR flow.
    """
    hosts = S4_AS + S4_TCP_BE + 1
    profiles: list[Mapping[str, Any] | None] = [
        token_bucket(_mbps(TARGET_MBPS)) if i < S4_AS else None for i in range(hosts)
    ]
    cbr: dict[str, Any] = {
        "name": "cbr",
        "model": "cbr",
        "size": f"{PACKET_BYTES}B",
        "interval": cbr_interval(max(cbr_mbps, 1.0)),
        "flows": 1 if cbr_mbps > 0 else 0,
    }
    policer = S4_AS * TARGET_MBPS
    if target_mbps is not None:
        cbr["profile"] = token_bucket(_mbps(target_mbps))
        policer += target_mbps
    return dumbbell_scenario(
        plan,
        rtts_ms=[S4_RTT_MS] * hosts,
        profiles=profiles,
        bottleneck_mbps=S4_MBPS,
        rio=S4_RIO,
        policer_mbps=policer,
        cbr=cbr,
    )


def s6_scenario(plan: Plan) -> dict[str, Any]:
    """Return S6: the merging topology, 8 AS connections at 100 kb/s, policers on the way."""
    links: dict[str, Any] = {
        link: {"meters": [{"kind": "policer", "rate": _kbps(kbps), "depth": MERGING_POLICER_DEPTH}]}
        for link, kbps in MERGING_POLICERS.items()
    }
    links["r6-r7"]["queue"] = {
        "kind": "rio",
        "params": MERGING_RIO,
        "limit": MERGING_QUEUE,
        "mean_pkt_size": f"{MERGING_PACKET_BYTES}B",
    }
    profile = token_bucket(_kbps(MERGING_TARGET_KBPS), MERGING_PROFILE_DEPTH)
    return {
        "run": _run(plan),
        "topology": {"kind": "merging"},
        "links": links,
        "traffic": [
            _tcp(i, f"h{i}", f"h{i + MERGING_HOSTS}", MERGING_PACKET_BYTES, profile)
            for i in range(MERGING_HOSTS)
        ],
        "metric": _queue_metrics("r6-r7"),
    }


# ----------------------------------------------------------------------------
# Reading a run
# ----------------------------------------------------------------------------


def goodput_bps(row: Mapping[str, Any], name: str, index: int = 0) -> float:
    """Return the goodput (bit/s after warm-up) of connection ``index`` of entry ``name``."""
    return float(row[f"agent.tcp.{name}.{index}.rx.goodput_bps"])


def conn_value(row: Mapping[str, Any], name: str, key: str, index: int = 0) -> float:
    """Return a per-connection summary value (``drops_in_early``, ``in_demoted_pct``...)."""
    value = row.get(f"agent.tcp.{name}.{index}.{key}")
    return math.nan if value is None else float(value)


def group_value(row: Mapping[str, Any], name: str, key: str) -> float:
    """Return a per-traffic-entry summary value (0 when absent)."""
    value = row.get(f"group.{name}.{key}")
    return 0.0 if value is None else float(value)


# ============================================================================
# Statistics
# ============================================================================


def p_as_below_be(as_rates: Sequence[float], be_rates: Sequence[float]) -> float:
    """Return P(X_AS < X_BE) for a random AS and a random BE connection (ties count 1/2).

    0 means the classes are fully separated (every AS connection above every BE one),
    0.5 that the class makes no difference.
    """
    if not as_rates or not be_rates:
        return math.nan
    below = 0.0
    for a in as_rates:
        for b in be_rates:
            below += 1.0 if a < b else 0.5 if a == b else 0.0
    return below / (len(as_rates) * len(be_rates))


def overlap_area(a: Sequence[float], b: Sequence[float], bins: int = 20) -> float:
    """Return the overlapping area of the two normalised histograms (0 to 1).

    Both histograms use the same ``bins`` equal bins spanning the pooled range; the
    result is the sum over bins of min(share of a, share of b).
    """
    if not a or not b:
        return math.nan
    low, high = min(min(a), min(b)), max(max(a), max(b))
    if high <= low:
        return 1.0
    width = (high - low) / bins

    def shares(xs: Sequence[float]) -> list[float]:
        counts = [0] * bins
        for x in xs:
            counts[min(bins - 1, int((x - low) / width))] += 1
        return [c / len(xs) for c in counts]

    return sum(min(p, q) for p, q in zip(shares(a), shares(b), strict=True))


def exp_fit(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float] | None:
    """Fit y = a exp(b x) by least squares on log y; return (a, b), None if impossible."""
    pts = [(x, math.log(y)) for x, y in zip(xs, ys, strict=True) if y > 0]
    if len(pts) < 2:
        return None
    mx = sum(x for x, _ in pts) / len(pts)
    my = sum(y for _, y in pts) / len(pts)
    sxx = sum((x - mx) ** 2 for x, _ in pts)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in pts) / sxx
    return math.exp(my - b * mx), b


# ============================================================================
# Figures
# ============================================================================


def _histograms(
    ax: Axes,
    groups: Sequence[tuple[str, Sequence[float]]],
    ideals: Sequence[tuple[str, float]] = (),
    bins: int = 25,
    unit: str = "Mbit/s",
) -> None:
    pooled = [x for _, xs in groups for x in xs] + [v for _, v in ideals]
    if not pooled:
        return
    low, high = min(pooled), max(pooled)
    edges = [low + (high - low) * k / bins for k in range(bins + 1)] if high > low else bins
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red"]
    for k, (label, xs) in enumerate(groups):
        ax.hist(xs, bins=edges, alpha=0.55, label=label, color=colors[k % 4], edgecolor="white")
    for k, (label, value) in enumerate(ideals):
        ax.axvline(value, color=colors[k % 4], linestyle="--", linewidth=1.5, label=label)
    ax.set_xlabel(plots.axis_label("per-connection goodput", unit))
    ax.set_ylabel(plots.axis_label("connections", "count"))
    ax.legend(fontsize="small")


# ============================================================================
# Experiments
# ============================================================================


@dataclass
class _Run:
    """Per-connection goodputs (Mb/s) of one dumbbell run, by class."""

    seed: int
    rtt_ms: list[float]
    rate: list[float]
    is_as: list[bool]

    def of(self, as_class: bool) -> list[float]:
        return [r for r, a in zip(self.rate, self.is_as, strict=True) if a == as_class]

    def rtts(self, as_class: bool) -> list[float]:
        return [t for t, a in zip(self.rtt_ms, self.is_as, strict=True) if a == as_class]


def _dumbbell_runs(df: pd.DataFrame, n_as: int) -> list[_Run]:
    rtts = draw_rtts_ms()
    runs = []
    for row in records(df):
        rates = [goodput_bps(row, conn(i)) / 1e6 for i in range(DUMBBELL_HOSTS)]
        is_as = [i < n_as for i in range(DUMBBELL_HOSTS)]
        runs.append(_Run(int(row["seed"]), rtts, rates, is_as))
    return runs


def _setup_label(n_as: int) -> str:
    if n_as == 0:
        return "all BE (50)"
    if n_as == DUMBBELL_HOSTS:
        return "all AS (50)"
    return f"{n_as} AS + {DUMBBELL_HOSTS - n_as} BE"


def _s1_setups() -> list[int]:
    return [*S1_SETUPS, 0, DUMBBELL_HOSTS]


def _dumbbell_ideals(n_as: int) -> tuple[float, float]:
    """Return the ideal goodputs (Mb/s) of an AS and a BE connection of a Dumbbell-50 setup."""
    targets = [TARGET_MBPS] * n_as + [0.0] * (DUMBBELL_HOSTS - n_as)
    share = excess_share(DUMBBELL_MBPS, targets)
    f = goodput_factor()
    return (TARGET_MBPS + share) * f, share * f


def _run_dumbbell(
    plan: Plan, meters: Sequence[str], setups: Sequence[int], out_dir: Path, progress: bool
) -> tuple[dict[tuple[str, int], list[_Run]], pd.DataFrame]:
    """Run Dumbbell-50 setups for each meter; return runs by (meter, setup) and the table."""
    points = [
        ({"setup": n, "meter": m}, s1_scenario(plan, n, m))
        for m in meters
        for n in setups
        if not (n == 0 and m != meters[0])
    ]
    df = run_table(points, plan.seeds5, out_dir, progress=progress, name="assured-service/d50")
    runs = {}
    for m in meters:
        for n in setups:
            meter = meters[0] if n == 0 else m
            runs[(m, n)] = _dumbbell_runs(df[(df["setup"] == n) & (df["meter"] == meter)], n)
    return runs, df


def _meets_target(rates: Sequence[float]) -> float:
    need = TARGET_MBPS * goodput_factor()
    return 100.0 * sum(r >= need for r in rates) / len(rates) if rates else math.nan


def _rtt_ratio(run: _Run, as_class: bool) -> float:
    fit = exp_fit(run.rtts(as_class), run.of(as_class))
    if fit is None:
        return math.nan
    return math.exp(-fit[1] * (RTT_RANGE_MS[1] - RTT_RANGE_MS[0]))


def _class_table(
    table: Table, label: str, n_as: int, runs: Sequence[_Run], *, extra: bool = True
) -> None:
    ideal_as, ideal_be = _dumbbell_ideals(n_as)
    if n_as > 0:
        table.add_ci(label, "AS goodput (Mb/s)", ci_of(_mean(r.of(True)) for r in runs))
    if n_as < DUMBBELL_HOSTS:
        table.add_ci(label, "BE goodput (Mb/s)", ci_of(_mean(r.of(False)) for r in runs))
    if n_as > 0:
        table.add(label, "AS ideal (Mb/s)", ideal_as, runs=0)
    if n_as < DUMBBELL_HOSTS:
        table.add(label, "BE ideal (Mb/s)", ideal_be, runs=0)
    if n_as > 0:
        table.add_ci(label, "AS ≥ target (%)", ci_of(_meets_target(r.of(True)) for r in runs))
    if extra:
        if n_as > 1:
            table.add_ci(label, "AS 50 ms/150 ms", ci_of(_rtt_ratio(r, True) for r in runs))
        if n_as < DUMBBELL_HOSTS - 1:
            table.add_ci(label, "BE 50 ms/150 ms", ci_of(_rtt_ratio(r, False) for r in runs))


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else math.nan


def _scatter(
    runs: Sequence[_Run], title: str, classes: Sequence[tuple[str, bool]] | None = None
) -> Figure:
    xs: list[float] = []
    ys: list[float] = []
    groups: list[str] = []
    for run in runs:
        for t, r, a in zip(run.rtt_ms, run.rate, run.is_as, strict=True):
            xs.append(t)
            ys.append(r)
            groups.append("AS" if a else "BE")
    return _goodput_vs_rtt(xs, ys, groups, title)


def _goodput_vs_rtt(
    xs: Sequence[float], ys: Sequence[float], groups: Sequence[str], title: str
) -> Figure:
    """Goodput against RTT, one exponential trend per group."""
    return plots.scatter_trend(
        xs,
        ys,
        groups,
        "exp",
        x_label="RTT (propagation)",
        x_unit="ms",
        y_label="goodput",
        y_unit="Mbit/s",
        title=title,
    )


#: Length of the window of the queue figures (s), from the end of the warm-up.
QUEUE_WINDOW_S = 20.0


def _queue_figure(
    out_dir: Path, df: pd.DataFrame, plan: Plan, title: str, link: str, show_in: bool
) -> Figure:
    from qossim.results import Result

    row = df.sort_values("seed").iloc[0]
    res = Result.load(out_dir / "runs" / str(row["run_key"]))
    start = plan.warmup_s
    end = min(plan.duration_s, start + QUEUE_WINDOW_S)

    def window(name: str) -> pd.DataFrame:
        s = res.timeseries(name)
        return s[(s["t"] >= start) & (s["t"] <= end)]

    fig, (ax,) = new_figure()
    inst = window(f"{link}.queue")
    avg = window(f"{link}.queue_avg")
    ax.plot(inst["t"], inst["value"], linewidth=0.7, alpha=0.6, label="instantaneous")
    ax.plot(avg["t"], avg["value"], linewidth=1.5, label="RIO average (total)")
    if show_in:
        avg_in = window(f"{link}.queue_avg_in")
        ax.plot(avg_in["t"], avg_in["value"], linewidth=1.5, label="RIO average (IN)")
    ax.set_xlabel(plots.axis_label("time", "s"))
    ax.set_ylabel(plots.axis_label("queue", "packets"))
    ax.set_title(f"{title} (seed {int(row['seed'])}, sampled every {QUEUE_INTERVAL})")
    ax.legend(fontsize="small")
    return fig


def _s1(plan: Plan, out_dir: Path, progress: bool, output: StudyOutput) -> None:
    """S1: RTT influence with token-bucket profiles."""
    setups = _s1_setups()
    by_key, df = _run_dumbbell(plan, ["token_bucket"], setups, out_dir, progress)
    results = {n: by_key[("token_bucket", n)] for n in setups}
    table = Table(
        "s1_rtt",
        "S1 RTT influence (token bucket): mean per-connection goodput per class, "
        "and the trend's rate ratio between RTT 50 ms and 150 ms",
        row_label="setup",
    )
    for n in setups:
        _class_table(table, _setup_label(n), n, results[n])
    output.tables.append(table)
    for n in S1_SETUPS:
        fig = _scatter(results[n], f"S1: {_setup_label(n)}, token bucket")
        add_figure(
            output, out_dir, f"s1_scatter_{n}as", f"S1: goodput vs RTT, {_setup_label(n)}", fig
        )
    # All-BE vs all-AS on one plot.
    xs, ys, groups = [], [], []
    for n, label in ((0, "all best effort"), (DUMBBELL_HOSTS, "all AS (1 Mb/s)")):
        for run in results[n]:
            xs += run.rtt_ms
            ys += run.rate
            groups += [label] * len(run.rate)
    fig = _goodput_vs_rtt(xs, ys, groups, "S1: all best effort vs all AS")
    add_figure(output, out_dir, "s1_all_be_vs_all_as", "S1: all best effort vs all AS", fig)
    for n, name in ((0, "all_be"), (DUMBBELL_HOSTS, "all_as")):
        part = df[df["setup"] == n]
        label = f"S1 RIO queue, {_setup_label(n)}"
        fig = _queue_figure(out_dir, part, plan, label, "r0-r1", n > 0)
        add_figure(
            output, out_dir, f"s1_queue_{name}", f"S1: RIO queue over time, {_setup_label(n)}", fig
        )


def _s2(plan: Plan, out_dir: Path, progress: bool, output: StudyOutput) -> None:
    """S2: token bucket against TSW profilers."""
    setups = [*S1_SETUPS, DUMBBELL_HOSTS]
    runs, _ = _run_dumbbell(plan, ["token_bucket", "tsw"], setups, out_dir, progress)
    by_meter = {
        label: {n: runs[(m, n)] for n in setups}
        for label, m in (("token bucket", "token_bucket"), ("TSW", "tsw"))
    }
    table = Table(
        "s2_meters",
        "S2 meter comparison: per-class goodput, P(AS < BE) and the overlap area of the "
        "AS and BE goodput histograms",
        row_label="setup, profiler",
    )
    for n in setups:
        for meter, results in by_meter.items():
            label = f"{_setup_label(n)}, {meter}"
            runs = results[n]
            _class_table(table, label, n, runs, extra=False)
            if 0 < n < DUMBBELL_HOSTS:
                table.add_ci(
                    label, "P(AS < BE)", ci_of(p_as_below_be(r.of(True), r.of(False)) for r in runs)
                )
                pooled_as = [x for r in runs for x in r.of(True)]
                pooled_be = [x for r in runs for x in r.of(False)]
                table.add(label, "overlap area", overlap_area(pooled_as, pooled_be), runs=len(runs))
    output.tables.append(table)
    for n in S1_SETUPS:
        fig = _scatter(by_meter["TSW"][n], f"S2: {_setup_label(n)}, TSW")
        add_figure(
            output, out_dir, f"s2_scatter_{n}as", f"S2: goodput vs RTT, {_setup_label(n)}, TSW", fig
        )
        fig, axes = new_figure(2, (10.0, 4.0))
        for ax, (meter, results) in zip(axes, by_meter.items(), strict=True):
            runs = results[n]
            _histograms(
                ax,
                [
                    ("AS", [x for r in runs for x in r.of(True)]),
                    ("BE", [x for r in runs for x in r.of(False)]),
                ],
            )
            ax.set_title(f"{meter} ({len(runs)} runs)")
        fig.suptitle(f"S2: AS and BE goodput distributions, {_setup_label(n)}")
        add_figure(
            output,
            out_dir,
            f"s2_overlap_{n}as",
            f"S2: AS/BE distributions, token bucket vs TSW, {_setup_label(n)}",
            fig,
        )


def _s3(plan: Plan, out_dir: Path, progress: bool, output: StudyOutput) -> None:
    """S3: different target rates."""
    targets = s3_targets()
    share = excess_share(S3_MBPS, targets)
    f = goodput_factor()
    df = run_table(
        [({"experiment": "S3"}, s3_scenario(plan))],
        plan.seeds10,
        out_dir,
        progress=progress,
        name="assured-service/S3",
    )
    rows = records(df)
    table = Table(
        "s3_targets",
        f"S3 target rates: per-connection goodput; excess share = ({S3_MBPS:g} − "
        f"{sum(targets):g}) / {len(targets)} = {share:.3g} Mb/s",
        row_label="id",
    )
    measured = []
    for i, t in enumerate(targets):
        ci = ci_of(goodput_bps(r, conn(i)) / 1e6 for r in rows)
        measured.append(ci)
        label = str(i)
        table.add_ci(label, "measured (Mb/s)", ci)
        table.add(label, "target (Mb/s)", t, runs=0)
        table.add(label, "target + share (Mb/s)", t + share, runs=0)
        table.add(label, "ideal goodput (Mb/s)", (t + share) * f, runs=0)
    output.tables.append(table)
    fig, (ax,) = new_figure()
    be = [i for i, t in enumerate(targets) if t == 0]
    asx = [i for i, t in enumerate(targets) if t > 0]
    for idx, label, marker in ((asx, "AS connections", "o"), (be, "BE connections", "s")):
        ax.errorbar(
            [targets[i] for i in idx],
            [measured[i].mean for i in idx],
            yerr=[[_half(measured[i]) for i in idx], [_half(measured[i]) for i in idx]],
            fmt=marker,
            capsize=3,
            label=label,
        )
    xs = [0.0, max(targets)]
    ax.plot(xs, [x + share for x in xs], "k--", label="ideal: target + share")
    ax.plot(xs, [(x + share) * f for x in xs], "k:", label="ideal goodput")
    ax.plot(xs, xs, color="gray", linewidth=0.8, label="target")
    published = [c for c in published_cells(STUDY_NAME, "Table 1") if int(c.row) < len(targets)]
    mark_published(ax, [targets[int(c.row)] for c in published], [c.value for c in published])
    ax.set_xlabel(plots.axis_label("target", "Mbit/s"))
    ax.set_ylabel(plots.axis_label("measured goodput", "Mbit/s"))
    ax.set_title(f"S3: measured vs target ({len(rows)} runs)")
    ax.legend(fontsize="small")
    add_figure(output, out_dir, "s3_measured_vs_target", "S3: measured goodput vs target", fig)
    from qossim.results import Result

    first = df.sort_values("seed").iloc[0]
    res = Result.load(out_dir / "runs" / str(first["run_key"]))
    fig, (ax,) = new_figure()
    for i in S3_TRACED:
        s = res.timeseries(f"{conn(i)}.throughput")
        ax.plot(s["t"], s["value"] / 1e6, label=f"host {i} (target {targets[i]:g} Mb/s)")
    ax.axvline(plan.warmup_s, color="gray", linestyle=":", label="end of warm-up")
    ax.set_xlabel(plots.axis_label("time", "s"))
    ax.set_ylabel(plots.axis_label(f"delivered rate per {RATE_INTERVAL}", "Mbit/s"))
    ax.set_title(f"S3: rate over time (seed {int(first['seed'])})")
    ax.legend(fontsize="small")
    add_figure(output, out_dir, "s3_rate_over_time", "S3: rate over time, hosts 0 and 18", fig)


def _half(ci: CI) -> float:
    return 0.0 if not math.isfinite(ci.half_width) else ci.half_width


def _s4_rows(row: Mapping[str, Any], cbr_mbps: float) -> dict[str, float]:
    """Read S4's quantities from one run: class means, CBR rate and its drop split."""
    as_rates = [goodput_bps(row, conn(i)) / 1e6 for i in range(S4_AS)]
    be_rates = [goodput_bps(row, conn(i)) / 1e6 for i in range(S4_AS, S4_AS + S4_TCP_BE)]
    out = {"as": _mean(as_rates), "be": _mean(be_rates)}
    if cbr_mbps > 0:
        sent = group_value(row, "cbr", "sent_pkts_measured")
        split = {
            k: group_value(row, "cbr", f"drops_{k}") for k in ("in_early", "in_overflow", "out")
        }
        out["cbr"] = float(row["group.cbr.throughput_bps"]) / 1e6
        out["drop"] = 100.0 * sum(split.values()) / sent if sent else math.nan
        for k, v in split.items():
            out[k] = 100.0 * v / sent if sent else math.nan
    return out


def _s4(plan: Plan, out_dir: Path, progress: bool, output: StudyOutput) -> None:
    """S4: a non-responsive CBR source."""
    cases: list[tuple[float | None, Sequence[float]]] = [(None, plan.s4_rates)]
    cases += [(t, plan.s4_as_rates) for t in S4_CBR_TARGETS]
    points = [
        ({"cbr_target": -1.0 if t is None else t, "cbr_mbps": r}, s4_scenario(plan, r, t))
        for t, rates in cases
        for r in rates
    ]
    df = run_table(points, plan.seeds5, out_dir, progress=progress, name="assured-service/S4")
    curves: list[dict[str, Any]] = []
    for target, rates in cases:
        key = -1.0 if target is None else target
        if target is None:
            table = Table(
                "s4_cbr",
                "S4 non-responsive source: mean goodput of the 10 AS and 9 BE TCP "
                "connections, delivered CBR rate and CBR drop rate",
                row_label="CBR rate (Mb/s)",
            )
        else:
            table = Table(
                f"s4_cbr_as{target:g}",
                f"S4 AS-capable CBR source (target {target:g} Mb/s): class goodputs and "
                "CBR drops split by cause (% of CBR packets sent)",
                row_label="CBR rate (Mb/s)",
            )
        for rate in rates:
            part = df[(df["cbr_target"] == key) & (df["cbr_mbps"] == rate)]
            vals = [_s4_rows(r, rate) for r in records(part)]
            label = f"{rate:g}"
            cols = [("as", "AS TCP (Mb/s)"), ("be", "BE TCP (Mb/s)")]
            if rate > 0:
                cols.append(("cbr", "CBR delivered (Mb/s)"))
                if target is None:
                    cols.append(("drop", "CBR drops (%)"))
                else:
                    cols += [
                        ("in_early", "IN early (%)"),
                        ("in_overflow", "IN overflow (%)"),
                        ("out", "OUT (%)"),
                    ]
            for k, col in cols:
                ci = ci_of(v[k] for v in vals)
                table.add_ci(label, col, ci)
                curves.append(
                    {
                        "target": key,
                        "rate": rate,
                        "what": k,
                        "mean": ci.mean,
                        "low": ci.mean - _half(ci),
                        "high": ci.mean + _half(ci),
                    }
                )
        output.tables.append(table)

    def series(target: float, names: Mapping[str, str]) -> list[dict[str, Any]]:
        return [
            {**c, "series": names[c["what"]]}
            for c in curves
            if c["target"] == target and c["what"] in names
        ]

    # One TCP connection's rate (about 1 Mb/s) and the CBR aggregate (4-14 Mb/s) on one
    # axis flattened the first: each gets its own figure.
    add_ci_figure(
        output,
        out_dir,
        "s4_rates",
        "S4: per-connection TCP rate vs CBR rate",
        series(-1.0, {"as": "AS TCP (mean)", "be": "BE TCP (mean)"}),
        "rate",
        group="series",
        x_label="CBR rate",
        x_unit="Mbit/s",
        y_label="per-connection rate",
        y_unit="Mbit/s",
        title=f"S4: TCP rate per connection vs CBR rate ({len(plan.seeds5)} runs per point)",
    )
    add_ci_figure(
        output,
        out_dir,
        "s4_cbr_delivered",
        "S4: CBR delivered vs CBR rate",
        series(-1.0, {"cbr": "CBR delivered"}),
        "rate",
        group="series",
        x_label="CBR rate",
        x_unit="Mbit/s",
        y_label="CBR delivered (aggregate)",
        y_unit="Mbit/s",
        title=f"S4: CBR aggregate delivered vs sent ({len(plan.seeds5)} runs per point)",
    )
    drops = {"in_early": "IN early", "in_overflow": "IN overflow", "out": "OUT"}
    for target in S4_CBR_TARGETS:
        add_ci_figure(
            output,
            out_dir,
            f"s4_drops_as{target:g}",
            f"S4: CBR drop rate by cause, target {target:g} Mb/s",
            series(target, drops),
            "rate",
            group="series",
            x_label="CBR rate",
            x_unit="Mbit/s",
            y_label="CBR packets dropped",
            y_unit="% of sent",
            title=f"S4: AS-capable CBR, target {target:g} Mb/s ({len(plan.seeds5)} runs/point)",
        )


def _s5(plan: Plan, out_dir: Path, progress: bool, output: StudyOutput) -> None:
    """S5: AS against best effort on the excess."""
    n = 25
    runs = _run_dumbbell(plan, ["token_bucket"], [n], out_dir, progress)[0][("token_bucket", n)]
    ideal_as, ideal_be = _dumbbell_ideals(n)
    table = Table(
        "s5_excess",
        "S5 AS vs best effort on the excess (25 AS + 25 BE): per-connection goodput",
        row_label="class",
    )
    for label, as_class, ideal in (("AS", True, ideal_as), ("BE", False, ideal_be)):
        pooled = sorted(x for r in runs for x in r.of(as_class))
        table.add_ci(label, "mean (Mb/s)", ci_of(_mean(r.of(as_class)) for r in runs))
        table.add(label, "ideal (Mb/s)", ideal, runs=0)
        for q in (0.1, 0.5, 0.9):
            table.add(label, f"p{int(q * 100)} (Mb/s)", _quantile(pooled, q), runs=len(runs))
        table.add_ci(
            label,
            "within ±20% of ideal (%)",
            ci_of(
                100 * _mean([abs(x - ideal) <= 0.2 * ideal for x in r.of(as_class)]) for r in runs
            ),
        )
    output.tables.append(table)
    fig, (ax,) = new_figure()
    _histograms(
        ax,
        [
            ("AS", [x for r in runs for x in r.of(True)]),
            ("BE", [x for r in runs for x in r.of(False)]),
        ],
        [(f"AS ideal {ideal_as:.3g}", ideal_as), (f"BE ideal {ideal_be:.3g}", ideal_be)],
    )
    ax.set_title(f"S5: per-connection goodput, 25 AS + 25 BE ({len(runs)} runs)")
    add_figure(output, out_dir, "s5_histograms", "S5: goodput histograms per class", fig)


def _quantile(sorted_xs: Sequence[float], q: float) -> float:
    if not sorted_xs:
        return math.nan
    pos = q * (len(sorted_xs) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def _s6(plan: Plan, out_dir: Path, progress: bool, output: StudyOutput) -> None:
    """S6: merging topology with policers."""
    df = run_table(
        [({"experiment": "S6"}, s6_scenario(plan))],
        plan.seeds10,
        out_dir,
        progress=progress,
        name="assured-service/S6",
    )
    rows = records(df)
    targets = [MERGING_TARGET_KBPS] * MERGING_HOSTS
    ideal = ideal_rates(MERGING_BOTTLENECK_KBPS, targets)[0] * goodput_factor(MERGING_PACKET_BYTES)
    measured_s = plan.duration_s - plan.warmup_s
    table = Table(
        "s6_merging",
        f"S6 merging: per-connection goodput (ideal {ideal:.0f} kb/s), IN packets dropped "
        f"(counts over the {measured_s:g} s after warm-up) and IN packets demoted by policers",
        row_label="connection",
    )
    rates = []
    for i in range(MERGING_HOSTS):
        label = f"h{i}→h{i + MERGING_HOSTS}"
        ci = ci_of(goodput_bps(r, conn(i)) / 1e3 for r in rows)
        rates.append(ci)
        table.add_ci(label, "rate (kb/s)", ci)
        table.add_ci(
            label,
            "IN overflow drops",
            ci_of(conn_value(r, conn(i), "drops_in_overflow") for r in rows),
        )
        table.add_ci(
            label, "IN early drops", ci_of(conn_value(r, conn(i), "drops_in_early") for r in rows)
        )
        table.add_ci(
            label, "% IN demoted", ci_of(conn_value(r, conn(i), "in_demoted_pct") for r in rows)
        )
    output.tables.append(table)
    fig, (ax,) = new_figure()
    xs = list(range(MERGING_HOSTS))
    ax.bar(xs, [c.mean for c in rates], yerr=[_half(c) for c in rates], capsize=3)
    ax.axhline(ideal, color="black", linestyle="--", label=f"ideal goodput {ideal:.0f} kb/s")
    ax.axhline(
        MERGING_TARGET_KBPS * goodput_factor(MERGING_PACKET_BYTES),
        color="gray",
        linestyle=":",
        label="target (as goodput)",
    )
    ax.set_xticks(xs, [f"h{i}" for i in xs])
    ax.set_xlabel(plots.axis_label("sender", "host"))
    ax.set_ylabel(plots.axis_label("goodput", "kbit/s"))
    ax.set_title(f"S6: merging topology ({len(rows)} runs)")
    ax.legend(fontsize="small")
    add_figure(output, out_dir, "s6_rates", "S6: per-connection goodput, merging topology", fig)


def notes(plan: Plan, quick: bool) -> list[str]:
    """Return the notes printed under the tables."""
    out = [
        f"Each run simulates {plan.duration_s:g} s; everything measured excludes the first "
        f"{plan.warmup_s:g} s (warm-up). Cells give the mean over runs with a "
        f"{CONFIDENCE:.0%} Student-t interval (±: half-width); the runs column says how many "
        "runs stand behind each row (S1, S2, S4, S5: "
        f"{len(plan.seeds5)} seeds; S3, S6: {len(plan.seeds10)} seeds).",
        "Rates are goodput: in-order TCP payload delivered after the warm-up. Targets and "
        "profiles count whole packets on the wire, so a connection that gets exactly its "
        f"wire rate r has goodput r x {PACKET_BYTES - HEADER_BYTES}/{PACKET_BYTES} = "
        f"{goodput_factor():.4f} r ({MERGING_PACKET_BYTES - HEADER_BYTES}/"
        f"{MERGING_PACKET_BYTES} on the merging topology); 'ideal' columns are in goodput, "
        "'target' and 'target + share' columns in wire rate.",
        f"Dumbbell-50 RTTs (propagation) are drawn once from U[{RTT_RANGE_MS[0]:g}, "
        f"{RTT_RANGE_MS[1]:g}] ms (seed {RTT_SEED}); host i keeps its RTT in every setup and "
        "run, hosts 0..k-1 are the AS ones. Runs differ in connection start times "
        f"(U[0, {START_SPREAD}]) and the random drops of RIO and marks of TSW.",
        "'AS 50 ms/150 ms' (and BE) is the ratio of the exponential trend a·exp(b·RTT), "
        "fitted per run and class, at RTT 50 ms to its value at 150 ms: exp(−b·100 ms).",
        "P(AS < BE) is the probability that a random AS connection gets less than a random "
        "BE one (ties 1/2) within a run: 0 = separated classes, 0.5 = no difference. The "
        "overlap area is the sum over 20 common bins of the smaller of the two normalised "
        "histograms (pooled over runs): 0 = disjoint, 1 = identical.",
    ]
    if quick:
        out.append(
            f"--quick: {len(QUICK.seeds5)} runs instead of {len(FULL.seeds5)} and "
            f"{len(QUICK.seeds10)} instead of {len(FULL.seeds10)}; {QUICK.duration_s:g} s "
            f"simulated instead of {FULL.duration_s:g} s (warm-up {QUICK.warmup_s:g} s instead "
            f"of {FULL.warmup_s:g} s); S4 sweeps {len(QUICK.s4_rates)} CBR rates instead of "
            f"{len(FULL.s4_rates)} ({len(QUICK.s4_as_rates)} instead of "
            f"{len(FULL.s4_as_rates)} for the AS-capable source)."
        )
    return out


def _call(function: Callable[[Plan, Path, bool, StudyOutput], None], c: Context) -> None:
    function(c.plan, c.out_dir, c.progress, c.output)


STUDY = Study(
    profiles=Profiles(full=FULL, quick=QUICK),
    experiments=tuple(Experiment.of(f, _call) for f in (_s1, _s2, _s3, _s4, _s5, _s6)),
    notes=notes,
)
EXPERIMENTS = STUDY.ids


def run_experiments(
    plan: Plan, only: Sequence[str] | None, out_dir: Path, progress: bool, quick: bool = False
) -> StudyOutput:
    """Run the selected experiments with ``plan`` and return their tables and figures."""
    return STUDY.run(plan, only, out_dir, progress, quick)


reproduce = STUDY.reproduce


# ============================================================================
# Campaign files
# ============================================================================


def campaign_files(plan: Plan = FULL) -> dict[str, str]:
    """Return the campaign and scenario files of the full study: {relative path: text}.

    ``qossim sweep studies/assured-service/<file>.toml`` runs one of them; the study
    itself builds the same scenarios in memory.
    """
    files: dict[str, str] = {}

    def scenario(name: str, comment: str, body: Mapping[str, Any]) -> str:
        path = f"scenarios/{name}.toml"
        files[path] = (
            f"# {comment}\n# Written by qossim.studies.assured_service.campaign_files().\n\n"
        )
        files[path] += _toml.dumps(body)
        return path

    def campaign(
        name: str,
        comment: str,
        scen: str,
        seeds: int,
        grid: Mapping[str, list[Any]] | None = None,
        fixed: Mapping[str, Any] | None = None,
    ) -> None:
        lines = [f"# {c}" for c in comment.splitlines()]
        lines += [
            "[campaign]",
            f'name = "assured-service-{name}"',
            f'scenario = "{scen}"',
            f"seeds = {seeds}",
        ]
        for table, entries in (("set", fixed), ("grid", grid)):
            if entries:
                lines += ["", f"[{table}]"]
                lines += [f'"{k}" = {_toml._inline(v)}' for k, v in entries.items()]
        files[f"{name}.toml"] = "\n".join(lines) + "\n"

    n5, n10 = len(plan.seeds5), len(plan.seeds10)
    for meter, tag in (("token_bucket", "tb"), ("tsw", "tsw")):
        for n in [*S1_SETUPS, DUMBBELL_HOSTS] + ([0] if meter == "token_bucket" else []):
            exp = (
                "S1/S5" if (meter == "token_bucket" and n == 25) else "S1" if tag == "tb" else "S2"
            )
            label = _setup_label(n)
            name = "s1-be" if n == 0 else f"{'s1' if tag == 'tb' else 's2'}-{tag}-{n}as"
            desc = f"{exp}: Dumbbell-50, {label}" + (
                f", {meter.replace('_', ' ')} profiles" if n else ""
            )
            scen = scenario(name, desc, s1_scenario(plan, n, meter))
            campaign(name, f"{desc}; {n5} runs.", scen, n5)
    scen = scenario(
        "s3", "S3: 20 AS (graded targets) + 20 BE, RTT 100 ms, 20 Mb/s", s3_scenario(plan)
    )
    campaign("s3", f"S3: target rates; {n10} runs.", scen, n10)
    rates = [r for r in plan.s4_rates if r > 0]
    grid = {"traffic.19.interval": [cbr_interval(r) for r in rates]}
    rate_note = "CBR rates (Mb/s) " + ", ".join(f"{r:g}" for r in rates) + " as packet intervals"
    scen = scenario(
        "s4", "S4: 10 AS + 9 BE TCP + one best-effort CBR source", s4_scenario(plan, 2.0)
    )
    campaign("s4", f"S4: CBR rate sweep; {rate_note}; {n5} runs per point.", scen, n5, grid)
    campaign(
        "s4-nocbr",
        f"S4: the sweep's 0 Mb/s point (no CBR flow); {n5} runs.",
        scen,
        n5,
        fixed={"traffic.19.flows": 0},
    )
    for target in S4_CBR_TARGETS:
        name = f"s4-as{target:g}"
        scen = scenario(
            name,
            f"S4: 10 AS + 9 BE TCP + one AS-capable CBR source, target {target:g} Mb/s",
            s4_scenario(plan, 2.0, target),
        )
        rates = list(plan.s4_as_rates)
        grid = {"traffic.19.interval": [cbr_interval(r) for r in rates]}
        note = "CBR rates (Mb/s) " + ", ".join(f"{r:g}" for r in rates) + " as packet intervals"
        campaign(
            name,
            f"S4: AS-capable CBR, target {target:g} Mb/s; {note}; {n5} runs per point.",
            scen,
            n5,
            grid,
        )
    scen = scenario("s6", "S6: merging topology, 8 AS connections at 100 kb/s", s6_scenario(plan))
    campaign("s6", f"S6: merging; {n10} runs.", scen, n10)
    return files


def write_campaign_files(directory: str | Path, plan: Plan = FULL) -> list[Path]:
    """Write :func:`campaign_files` under ``directory``; return the paths written."""
    written = []
    for rel, text in campaign_files(plan).items():
        path = Path(directory) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def quick_plan(**changes: Any) -> Plan:
    """Return the quick plan with some fields changed (for tests and experiments)."""
    return replace(QUICK, **changes)


if __name__ == "__main__":  # pragma: no cover
    import sys

    for p in write_campaign_files(sys.argv[1] if len(sys.argv) > 1 else "studies/assured-service"):
        print(p)
