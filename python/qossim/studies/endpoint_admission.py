"""Endpoint (probing) admission control vs Measured Sum (``qossim reproduce endpoint-admission``).

Hosts decide admission themselves: before sending, a flow probes the path at its token
rate and is admitted only if the fraction of its probes lost (or marked) is at most ε.
Routers only give admission-controlled (AC) traffic a rate-limited strict-priority class,
modelled as a 10 Mb/s, 20 ms link with a 200-packet buffer. Four designs — probes in-band
(one FIFO) or out-of-band (one priority below data, pushed out by data), congestion
signalled by loss (dropping) or by a virtual queue at 90 % of the rate (marking) — are
compared with each other and with Measured Sum, a router-based MBAC, on *loss–load
curves*: utilization against data loss probability as ε (or υ) varies.

Experiments (``--only E1 E8 …``):

``E1``      EXP1 flows every 3.5 s, slow-start probing: the four designs and MBAC.
``E2``      in-band dropping, slow start with 5 s against 25 s ("long") probing.
``E3``–``E6`` high load (a flow every second): for one design each (in-band dropping,
            in-band marking, out-of-band dropping, out-of-band marking) the three probing
            algorithms, with MBAC.
``E7``      robustness: EXP2 (a), EXP3 (b), POO1 (c), a mix of EXP1, EXP2, EXP4 and POO1
            (e), EXP1 on a 1 Mb/s link (f): loss–load curves and the loss at a fixed ε
            (0.01 in-band, 0.05 out-of-band); (d) replays a synthetic long-range-dependent
            video trace (200-byte packets, token bucket 800 kb/s, 200 kb) every 8 s.
``E8``      E1's load in two populations, ε = 0 and ε = 0.05 (in-band) or 0.20
            (out-of-band): blocking of each.
``E9``      E7's mix: blocking of small (256 kb/s) against large (1024 kb/s) flows.
``E10``     multi-hop: four routers, a long class over three congested links and one
            cross class per link (ε = 0): loss and blocking of long and short flows with
            the product approximation 1 − Π(1 − blocking of each short class).
``E11``     coexistence with 20 TCP Reno connections in a legacy drop-tail router (AC
            calls from 50 s, or TCP from 50 s): aggregate TCP throughput in 10-s intervals.
``E12``     the thrashing model without packets: a continuous-time Markov chain over
            (admitted, probing) solved numerically, against a simulation of the same
            chain; useful utilization and data loss against the mean probe time.

Each table cell is the mean over seeds with its 95 % Student-t interval. The in-band
dropping tables also give the rule-of-thumb floor δ = 1 − 2^(−P/(r·T)), with r·T/P the
number of probes the algorithm really sends (496 for 5-s slow start from 256 kb/s).
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qossim.studies import Table
from qossim.studies.frame import (
    CONFIDENCE,
    Context,
    Experiment,
    Profiles,
    Runs,
    Study,
    add_figure,
    ci_of,
    new_figure,
    write_files,
)

TITLE = "Endpoint admission control vs Measured Sum MBAC"

#: The AC share: rate (b/s), propagation delay and buffer (packets).
LINK_BPS = 10e6
LINK_DELAY = "20ms"
BUFFER = 200
#: Data and probe packet size, bytes.
PACKET = 125
#: Mean holding time, s.
HOLDING_S = 300.0
#: Source types: burst (token) rate kb/s, mean on ms, mean off ms, on/off law.
SOURCES: dict[str, tuple[float, float, float, str]] = {
    "EXP1": (256, 500, 500, "exp"),
    "EXP2": (1024, 125, 875, "exp"),
    "EXP3": (512, 500, 500, "exp"),
    "EXP4": (256, 5000, 5000, "exp"),
    "POO1": (256, 500, 500, "pareto:1.2"),
}
DESIGNS = ("in_band_dropping", "in_band_marking", "out_of_band_dropping", "out_of_band_marking")
#: Where a mean loss of 0 is drawn on the loss axes (log scale), and on E12's, whose
#: chain losses go below it.
LOSS_FLOOR = 1e-7
CHAIN_LOSS_FLOOR = 1e-9

DESIGN_LABELS = {
    "in_band_dropping": "in-band dropping",
    "in_band_marking": "in-band marking",
    "out_of_band_dropping": "out-of-band dropping",
    "out_of_band_marking": "out-of-band marking",
    "mbac": "Measured Sum",
}
#: ε sweeps of the in-band and out-of-band designs; υ sweep of Measured Sum.
EPS_IN = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05)
EPS_OUT = (0.0, 0.05, 0.10, 0.15, 0.20)
UPSILON = (0.80, 0.85, 0.90, 0.95, 1.00)
ALGORITHMS = ("simple", "early_reject", "slow_start")


@dataclass(frozen=True)
class Plan:
    """How much to simulate."""

    duration_s: float
    warmup_s: float
    seeds: tuple[int, ...]
    eps_in: tuple[float, ...] = EPS_IN
    eps_out: tuple[float, ...] = EPS_OUT
    upsilon: tuple[float, ...] = UPSILON
    #: E12: mean probe times (s) and the simulated time of its cross-check.
    probe_means: tuple[float, ...] = (10, 50, 100, 150, 200, 250, 300, 400, 600, 1000)
    e12_sim_s: float = 500_000.0
    #: E11: thresholds and simulated time (no warm-up: the series is the result).
    e11_eps: tuple[float, ...] = (0.0, 0.01, 0.05, 0.10)
    e11_s: float = 600.0
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: Where the synthetic video trace is written ("": the system's temporary folder).
    trace_dir: str = ""


FULL = Plan(duration_s=14_000, warmup_s=2_000, seeds=tuple(range(1, 8)))
QUICK = Plan(
    duration_s=2_500,
    warmup_s=1_000,
    seeds=(1, 2),
    eps_in=(0.0, 0.02, 0.05),
    eps_out=(0.0, 0.10, 0.20),
    upsilon=(0.85, 0.95),
    probe_means=(10, 100, 200, 300, 600),
    e12_sim_s=200_000.0,
    e11_eps=(0.0, 0.05),
    e11_s=400.0,
)
#: For the test suite (``QOSSIM_ENDPOINT_PROFILE=tiny``): the plumbing, not the numbers.
TINY = Plan(
    duration_s=200,
    warmup_s=50,
    seeds=(1, 2),
    eps_in=(0.0, 0.05),
    eps_out=(0.0, 0.2),
    upsilon=(0.9,),
    probe_means=(10, 200),
    e12_sim_s=20_000.0,
    e11_eps=(0.05,),
    e11_s=120.0,
)

#: Engine seconds per simulated second of one E1-like run (measured; for the estimate
#: printed before a full run starts).
COST_PER_SIM_S = 0.0012


# ============================================================================
# Scenarios
# ============================================================================


@dataclass(frozen=True)
class Population:
    """Flows of one source type arriving every ``tau`` seconds on average."""

    name: str
    source: str
    tau: float
    eps: float | None = None


#: The video source: 200-byte packets, token rate 800 kb/s (its probe rate).
VIDEO_PACKET = 200
VIDEO_TOKEN_BPS = 800e3


def video_file(directory: str = "") -> str:
    """Return the synthetic video trace's path, writing it first if it is not there."""
    import tempfile

    from qossim.studies import video_trace

    spec = video_trace.VideoSpec()
    name = f"video-synthetic-h{spec.hurst:g}-s{spec.seed}.trace"
    path = Path(directory or tempfile.gettempdir()) / name
    if not path.exists():
        video_trace.write(path, spec)
    return str(path.resolve())


def _model(source: str, plan: Plan) -> dict[str, Any]:
    if source == "VIDEO":
        return {"model": "trace", "trace": video_file(plan.trace_dir), "size": f"{VIDEO_PACKET}B"}
    return _onoff(source)


def _token_rate(source: str) -> float:
    return VIDEO_TOKEN_BPS if source == "VIDEO" else SOURCES[source][0] * 1e3


def _onoff(source: str) -> dict[str, Any]:
    rate_kbps, on_ms, off_ms, law = SOURCES[source]
    interval_ms = PACKET * 8 / rate_kbps
    if law == "exp":
        on, off = f"exp:{on_ms:g}ms", f"exp:{off_ms:g}ms"
    else:
        on, off = f"{law}:{on_ms:g}ms", f"{law}:{off_ms:g}ms"
    return {
        "model": "onoff",
        "size": f"{PACKET}B",
        "interval": f"{interval_ms:.9g}ms",
        "on": on,
        "off": off,
    }


def scenario(
    design: str,
    populations: Sequence[Population],
    plan: Plan,
    *,
    algorithm: str = "slow_start",
    eps: float = 0.0,
    probe_time_s: float = 5.0,
    upsilon: float = 0.9,
    link_bps: float = LINK_BPS,
) -> dict[str, Any]:
    """Return the single-bottleneck scenario of one design (``mbac`` for Measured Sum)."""
    out_of_band = design.startswith("out_of_band")
    queue: dict[str, Any] = (
        {"kind": "priority", "classes": 2, "limit": f"{BUFFER}p", "push_out": True}
        if out_of_band
        else {"kind": "droptail", "limit": f"{BUFFER}p"}
    )
    traffic = []
    for p in populations:
        # Flows enter at the router: the AC class is the queue of its output port.
        t = {"name": p.name, "from": "r", "to": "dst", **_model(p.source, plan)}
        t["class"] = 1 if out_of_band else 0
        t["per_flow"] = False
        t["calls"] = {"rate": f"{1 / p.tau:.9g}/s", "holding": f"exp:{HOLDING_S:g}s"}
        traffic.append(t)
    endpoint: dict[str, Any] = {}
    if design == "mbac":
        endpoint["mbac"] = [
            {"traffic": p.name, "link": "r-dst", "target": upsilon} for p in populations
        ]
        for e, p in zip(endpoint["mbac"], populations, strict=True):
            if p.source == "VIDEO":
                e["rate"] = f"{VIDEO_TOKEN_BPS / 1e3:g}kbps"
    else:
        endpoint["probe"] = [
            {
                "traffic": p.name,
                "algorithm": algorithm,
                "epsilon": eps if p.eps is None else p.eps,
                "probe_time": f"{probe_time_s:g}s",
                "class": 0,
            }
            for p in populations
        ]
        for e, p in zip(endpoint["probe"], populations, strict=True):
            if p.source == "VIDEO":
                e["rate"] = f"{VIDEO_TOKEN_BPS / 1e3:g}kbps"
        if design.endswith("marking"):
            endpoint["virtual_queue"] = [_virtual_queue("r-dst", out_of_band)]
    return {
        "run": {
            "duration": f"{plan.duration_s:g}s",
            "warmup": f"{plan.warmup_s:g}s",
            "link_metrics": ["r-dst"],
        },
        "topology": {
            "kind": "graph",
            "nodes": ["r", "dst"],
            "rate": f"{link_bps / 1e6:g}Mbps",
            "delay": LINK_DELAY,
            "link": [{"from": "r", "to": "dst", "queue": queue}],
        },
        "traffic": traffic,
        "endpoint": endpoint,
    }


def _virtual_queue(link: str, out_of_band: bool) -> dict[str, Any]:
    """Return the marking designs' virtual queue at ``link`` (90 % of the rate, real buffer).

    Out-of-band, it keeps one counter per priority level (data above probes, served
    first), as the real queue does; in-band there is one level.
    """
    vq: dict[str, Any] = {"link": link, "fraction": 0.9}
    if out_of_band:
        vq["per_class"] = True
    return vq


def _sweep_path(sc: Mapping[str, Any]) -> str:
    """Return the dotted key of a curve's threshold (ε of a probe, υ of Measured Sum)."""
    if "mbac" in sc["endpoint"]:
        return "endpoint.mbac.0.target"
    return "endpoint.probe.0.epsilon"


def scenario_files(plan: Plan = FULL) -> dict[str, str]:
    """Return the campaign and scenario files of every experiment (name -> TOML text).

    One campaign per curve (or per fixed point): ``qossim sweep
    studies/endpoint-admission/<file>.toml`` runs it with the study's seeds and grid;
    the study itself builds the same scenarios in memory. E7's video case is left out
    (its scenario names the synthetic trace the study writes when it runs) and E12
    simulates no packets.
    """
    from qossim import _toml
    from qossim.studies.frame import apply_overrides

    files: dict[str, str] = {}
    for exp in EXPERIMENTS:
        groups: dict[str, list[Point]] = {}
        for params, sc in points(exp, plan):
            if any(t.get("model") == "trace" for t in sc["traffic"]):
                continue
            parts = [exp.lower(), str(params.get("case", "")), str(params["design"])]
            if params["design"] != "mbac":
                parts += [str(params["algorithm"]), f"{params['probe_s']:g}s"]
            parts.append(str(params.get("order", "")))
            key = "-".join(x.replace("_", "") for x in parts if x)
            groups.setdefault(key, []).append((params, sc))
        for key, pts in groups.items():
            base = pts[0][1]
            path = _sweep_path(base)
            xs = [float(p["x"]) for p, _ in pts]

            def same_but(
                x: float, sc: Mapping[str, Any], base: Any = base, path: str = path
            ) -> bool:
                probe = copy_of(base)
                apply_overrides(probe, [(path, x)])
                return probe == sc

            if all(same_but(x, sc) for x, (_, sc) in zip(xs, pts, strict=True)):
                curves = [(key, base, xs)]
            else:
                # Several populations with their own thresholds: one campaign a point.
                curves = [(f"{key}-x{x:g}", sc, [x]) for x, (_, sc) in zip(xs, pts, strict=True)]
            for name, sc, values in curves:
                head = f"# {exp}: {name}; generated by qossim.studies.endpoint_admission.\n"
                files[f"scenarios/{name}.toml"] = head + _toml.dumps(sc)
                lines = [
                    f"# {exp}: {name}; {len(plan.seeds)} seeds per point.",
                    "[campaign]",
                    f'name = "endpoint-admission-{name}"',
                    f'scenario = "scenarios/{name}.toml"',
                    f"seeds = {len(plan.seeds)}",
                ]
                if len(values) > 1:
                    lines += ["", "[grid]", f'"{path}" = {_toml._inline(values)}']
                files[f"{name}.toml"] = "\n".join(lines) + "\n"
    return files


def copy_of(sc: Mapping[str, Any]) -> dict[str, Any]:
    """Return a deep copy of a scenario dict."""
    import copy

    return copy.deepcopy(dict(sc))


def write_scenario_files(
    directory: str | os.PathLike[str] = "studies/endpoint-admission",
) -> list[Path]:
    """Write :func:`scenario_files` under ``directory`` and return their paths."""
    return write_files(scenario_files(), directory)


def loss_floor(packet_bits: float, rate_bps: float, probe_s: float) -> float:
    """Return the rule-of-thumb floor of in-band dropping's loss, δ = 1 − 2^(−P/(r·T)).

    r·T/P is the number of probes a constant-rate probe sends; δ is the loss rate at
    which such a probe sees no loss half the time. For slow start use
    :func:`probe_floor`, which counts the probes the levels actually send.
    """
    return 1.0 - 2.0 ** (-packet_bits / (rate_bps * probe_s))


def probes_sent(algorithm: str, rate_bps: float, probe_s: float, packet_bits: float) -> int:
    """Return the probes one whole probe sends (each level: one per P/r_k, rounded up).

    Simple and early reject send r·T/P; slow start spends T/5 at each of r/16, r/8,
    r/4, r/2 and r, so 256 kb/s, 5 s and 1000-bit probes give 16 + 32 + 64 + 128 + 256
    = 496, not 1280.
    """
    divisors = (16, 8, 4, 2, 1) if algorithm == "slow_start" else (1,)
    level_s = probe_s / len(divisors)
    # A tolerance for rates whose count per level is whole (the engine rounds the gap
    # up to a picosecond, which never adds a probe there).
    return sum(math.ceil(level_s * rate_bps / d / packet_bits - 1e-9) for d in divisors)


def probe_floor(algorithm: str, rate_bps: float, probe_s: float, packet_bits: float) -> float:
    """Return δ = 1 − 2^(−1/N) for the N probes the algorithm sends (:func:`probes_sent`).

    It is :func:`loss_floor` with r·T/P replaced by the probe count: the loss rate at
    which all N probes get through with probability one half, (1 − δ)^N = 1/2.
    """
    return 1.0 - 2.0 ** (-1.0 / probes_sent(algorithm, rate_bps, probe_s, packet_bits))


# ============================================================================
# Points of each experiment
# ============================================================================

E1_POP = (Population("ac", "EXP1", 3.5),)
HIGH_POP = (Population("ac", "EXP1", 1.0),)
#: E3–E6: the design each studies.
HIGH_LOAD = {
    "E3": "in_band_dropping",
    "E4": "in_band_marking",
    "E5": "out_of_band_dropping",
    "E6": "out_of_band_marking",
}


def _eps(design: str, plan: Plan) -> tuple[float, ...]:
    return plan.eps_in if design.startswith("in_band") else plan.eps_out


Point = tuple[dict[str, Any], dict[str, Any]]


def _curve_points(
    exp: str,
    pops: Sequence[Population],
    plan: Plan,
    designs: Sequence[str],
    algorithms: Sequence[str] = ("slow_start",),
    probe_times: Sequence[float] = (5.0,),
    mbac: bool = True,
    case: str | None = None,
    link_bps: float = LINK_BPS,
    eps: Mapping[str, Sequence[float]] | None = None,
    upsilon: Sequence[float] | None = None,
) -> list[Point]:
    out: list[Point] = []
    extra: dict[str, Any] = {} if case is None else {"case": case, "capacity": link_bps}
    for d in designs:
        for alg in algorithms:
            for pt in probe_times:
                for e in (eps or {}).get(d, _eps(d, plan)):
                    params = {"exp": exp, "design": d, "algorithm": alg, "probe_s": pt, "x": e}
                    sc = scenario(
                        d, pops, plan, algorithm=alg, eps=e, probe_time_s=pt, link_bps=link_bps
                    )
                    out.append(({**params, **extra}, sc))
    if mbac:
        for u in plan.upsilon if upsilon is None else upsilon:
            params = {"exp": exp, "design": "mbac", "algorithm": "mbac", "probe_s": 0.0, "x": u}
            sc = scenario("mbac", pops, plan, upsilon=u, link_bps=link_bps)
            out.append(({**params, **extra}, sc))
    return out


#: E7's robustness scenarios: (label, populations, link rate). (d) replays the synthetic
#: video trace of :mod:`qossim.studies.video_trace`.
MIX = (
    Population("exp1", "EXP1", 14.0),
    Population("exp2", "EXP2", 14.0),
    Population("exp4", "EXP4", 14.0),
    Population("poo1", "POO1", 14.0),
)
E7_CASES: dict[str, tuple[str, tuple[Population, ...], float]] = {
    "a": ("EXP2 every 3.5 s", (Population("ac", "EXP2", 3.5),), LINK_BPS),
    "b": ("EXP3 every 7 s", (Population("ac", "EXP3", 7.0),), LINK_BPS),
    "c": ("POO1 every 3.5 s", (Population("ac", "POO1", 3.5),), LINK_BPS),
    "d": ("synthetic video trace every 8 s", (Population("ac", "VIDEO", 8.0),), LINK_BPS),
    "e": ("mix of EXP1, EXP2, EXP4, POO1 every 3.5 s", MIX, LINK_BPS),
    "f": ("EXP1 every 35 s on a 1 Mb/s link", (Population("ac", "EXP1", 35.0),), 1e6),
}
#: The fixed thresholds of E7's bar chart and of E9.
FIXED_EPS = {"in_band": 0.01, "out_of_band": 0.05}


def _fixed(design: str) -> float:
    return FIXED_EPS["in_band" if design.startswith("in_band") else "out_of_band"]


def _e7_points(plan: Plan) -> list[Point]:
    out: list[Point] = []
    for case, (_, pops, rate) in E7_CASES.items():
        eps = {d: sorted({*_eps(d, plan), _fixed(d)}) for d in DESIGNS}
        out += _curve_points("E7", pops, plan, DESIGNS, case=case, link_bps=rate, eps=eps)
    return out


def _e9_points(plan: Plan) -> list[Point]:
    eps = {d: [_fixed(d)] for d in DESIGNS}
    return _curve_points("E9", MIX, plan, DESIGNS, case="e", eps=eps, upsilon=(0.9,))


#: E10: the backbone's routers and its three congested links.
ROUTERS = ("R1", "R2", "R3", "R4")


#: E10: the row names of each design (as the study's multi-hop tables name them).
E10_ROWS = {
    "in_band_dropping": "in-band dropping",
    "in_band_marking": "in-band marking",
    "out_of_band_dropping": "out-of-band dropping",
    "out_of_band_marking": "out-of-band marking",
    "mbac": "MBAC",
}
#: E10: Measured Sum's utilization target, the υ of E9's Measured Sum row (the study
#: states none for its multi-hop tables).
E10_UPSILON = 0.9
#: E10: mean gap between call arrivals of each class, s. Each backbone link is offered
#: E1's total load (a flow every 3.5 s), split evenly between the long class and the
#: link's cross class: a flow of each every 7 s.
E10_TAU = {"long": 7.0, "cross1": 7.0, "cross2": 7.0, "cross3": 7.0}


def _backbone() -> list[tuple[str, str]]:
    return list(zip(ROUTERS, ROUTERS[1:], strict=False))


def multihop_scenario(design: str, plan: Plan) -> dict[str, Any]:
    """E10: a long class over the three backbone links and one cross class per link.

    ``design`` is one of :data:`DESIGNS` or ``mbac``: Measured Sum at every backbone
    link, a flow admitted iff every link of its path has room for it.
    """
    out_of_band = design.startswith("out_of_band")
    queue: dict[str, Any] = (
        {"kind": "priority", "classes": 2, "limit": f"{BUFFER}p", "push_out": True}
        if out_of_band
        else {"kind": "droptail", "limit": f"{BUFFER}p"}
    )
    hosts = ["Ls", "Ld", "C1s", "C1d", "C2s", "C2d", "C3s", "C3d"]
    links: list[dict[str, Any]] = []
    for a, b in _backbone():
        links.append(
            {
                "from": a,
                "to": b,
                "rate": f"{LINK_BPS / 1e6:g}Mbps",
                "delay": LINK_DELAY,
                "queue": queue,
            }
        )
    attach = {
        "Ls": "R1",
        "Ld": "R4",
        "C1s": "R1",
        "C1d": "R2",
        "C2s": "R2",
        "C2d": "R3",
        "C3s": "R3",
        "C3d": "R4",
    }
    links += [{"from": h, "to": r} for h, r in attach.items()]
    classes = {
        "long": ("Ls", "Ld"),
        "cross1": ("C1s", "C1d"),
        "cross2": ("C2s", "C2d"),
        "cross3": ("C3s", "C3d"),
    }
    traffic = []
    for name, (a, b) in classes.items():
        t = {
            "name": name,
            "from": a,
            "to": b,
            **_onoff("EXP1"),
            "class": 1 if out_of_band else 0,
            "per_flow": False,
            "calls": {"rate": f"{1 / E10_TAU[name]:.9g}/s", "holding": f"exp:{HOLDING_S:g}s"},
        }
        traffic.append(t)
    paths = {
        "long": [f"{a}-{b}" for a, b in _backbone()],
        **{f"cross{i + 1}": [f"{a}-{b}"] for i, (a, b) in enumerate(_backbone())},
    }
    endpoint: dict[str, Any]
    if design == "mbac":
        endpoint = {
            "mbac": [
                {"traffic": n, "link": link, "target": E10_UPSILON}
                for n in classes
                for link in paths[n]
            ]
        }
    else:
        endpoint = {
            "probe": [
                {
                    "traffic": n,
                    "algorithm": "slow_start",
                    "epsilon": 0.0,
                    "probe_time": "5s",
                    "class": 0,
                }
                for n in classes
            ]
        }
    if design.endswith("marking"):
        endpoint["virtual_queue"] = [
            _virtual_queue(f"{a}-{b}", out_of_band) for a, b in _backbone()
        ]
    return {
        "run": {
            "duration": f"{plan.duration_s:g}s",
            "warmup": f"{plan.warmup_s:g}s",
            "link_metrics": [f"{a}-{b}" for a, b in zip(ROUTERS, ROUTERS[1:], strict=False)],
        },
        "topology": {
            "kind": "graph",
            "nodes": [*ROUTERS, *hosts],
            "rate": "1Gbps",
            "delay": "0.1ms",
            "link": links,
        },
        "traffic": traffic,
        "endpoint": endpoint,
    }


#: E11: TCP Reno connections sharing the legacy drop-tail router, and when each starts.
TCP_FLOWS = 20
LATE_S = 50.0
#: E11's table averages the TCP throughput after this time (both classes present).
SETTLED_S = 100.0


def tcp_scenario(eps: float, order: str, plan: Plan) -> dict[str, Any]:
    """E11: 20 TCP Reno and in-band probing AC flows in one drop-tail FIFO.

    ``order`` is ``tcp_first`` (TCP at 0, AC calls from 50 s) or ``ac_first``.
    """
    sc = scenario("in_band_dropping", E1_POP, plan, eps=eps)
    sc["run"] = {"duration": f"{plan.e11_s:g}s", "link_metrics": ["r-dst"]}
    tcp_start, ac_start = (0.0, LATE_S) if order == "tcp_first" else (LATE_S, 0.0)
    sc["traffic"][0]["start"] = f"{ac_start:g}s"
    sc["traffic"].append(
        {
            "name": "tcp",
            "from": "r",
            "to": "dst",
            "model": "tcp",
            "flows": TCP_FLOWS,
            "packet_size": "1000B",
            "start": f"{tcp_start:g}s",
            "start_spread": "1s",
        }
    )
    sc["metric"] = [
        {"name": "tcp_bps", "kind": "group_throughput", "traffic": "tcp", "interval": "10s"},
        {"name": "ac_bps", "kind": "group_throughput", "traffic": "ac", "interval": "10s"},
    ]
    return sc


def _e11_points(plan: Plan) -> list[Point]:
    return [
        (
            {
                "exp": "E11",
                "design": "in_band_dropping",
                "algorithm": "slow_start",
                "probe_s": 5.0,
                "x": e,
                "order": order,
            },
            tcp_scenario(e, order, plan),
        )
        for order in ("tcp_first", "ac_first")
        for e in plan.e11_eps
    ]


def _e10_points(plan: Plan) -> list[Point]:
    out: list[Point] = [
        (
            {"exp": "E10", "design": d, "algorithm": "slow_start", "probe_s": 5.0, "x": 0.0},
            multihop_scenario(d, plan),
        )
        for d in DESIGNS
    ]
    params = {"exp": "E10", "design": "mbac", "algorithm": "mbac", "probe_s": 0.0}
    out.append(({**params, "x": E10_UPSILON}, multihop_scenario("mbac", plan)))
    return out


def _e8_points(plan: Plan) -> list[Point]:
    out: list[Point] = []
    for d in DESIGNS:
        lax = 0.05 if d.startswith("in_band") else 0.20
        pops = (Population("strict", "EXP1", 7.0, 0.0), Population("lax", "EXP1", 7.0, lax))
        out.append(
            (
                {"exp": "E8", "design": d, "algorithm": "slow_start", "probe_s": 5.0, "x": lax},
                scenario(d, pops, plan),
            )
        )
    return out


def points(exp: str, plan: Plan) -> list[Point]:
    """Return the simulated points of experiment ``exp`` (none for E12)."""
    if exp == "E1":
        return _curve_points("E1", E1_POP, plan, DESIGNS)
    if exp == "E2":
        return _curve_points(
            "E2", E1_POP, plan, ("in_band_dropping",), probe_times=(5.0, 25.0), mbac=False
        )
    if exp in HIGH_LOAD:
        return _curve_points(exp, HIGH_POP, plan, (HIGH_LOAD[exp],), algorithms=ALGORITHMS)
    if exp == "E8":
        return _e8_points(plan)
    if exp == "E7":
        return _e7_points(plan)
    if exp == "E9":
        return _e9_points(plan)
    if exp == "E10":
        return _e10_points(plan)
    if exp == "E11":
        return _e11_points(plan)
    return []


# ============================================================================
# Runs and metrics
# ============================================================================


@dataclass
class Shared:
    """The runs of every selected experiment, made in one batch.

    A scenario that two experiments share (Measured Sum at high load in E3–E6, E7's mix
    at its fixed thresholds in E9) is run once; ``keys`` lists the run keys of each
    experiment's points, so each finds it.
    """

    runs: Runs
    keys: dict[str, set[str]] = field(default_factory=dict)


def estimate_cpu_s(plan: Plan, ids: Sequence[str]) -> float:
    """Engine CPU seconds the selected experiments need (from the measured cost)."""
    n = sum(len(points(e, plan)) for e in ids)
    return n * len(plan.seeds) * plan.duration_s * COST_PER_SIM_S


def prepare(plan: Plan, ids: list[str], out_dir: Path, progress: bool) -> Shared:
    """Run (or reuse) every simulated point of the selected experiments at once."""
    import dataclasses

    from qossim.studies.frame import point_key

    plan = dataclasses.replace(plan, trace_dir=str(Path(out_dir) / "traces"))
    per_exp = {e: points(e, plan) for e in ids}
    keys = {
        e: {point_key(sc, seed) for _, sc in pts for seed in plan.seeds}
        for e, pts in per_exp.items()
    }
    pts = []
    seen: set[str] = set()
    for e in ids:
        for params, sc in per_exp[e]:
            k = point_key(sc, plan.seeds[0])
            if k not in seen:
                seen.add(k)
                pts.append((params, sc))
    if progress and pts:
        cpu = len(pts) * len(plan.seeds) * plan.duration_s * COST_PER_SIM_S
        print(
            f"endpoint-admission: {len(pts)} points x {len(plan.seeds)} seeds, "
            f"{plan.duration_s:g} s each: about {cpu / 3600:.1f} CPU hours "
            f"({cpu / 3600 / max(os.cpu_count() or 1, 1):.2f} h on {os.cpu_count()} cores)",
            file=sys.stderr,
        )
    runs = Runs.run(pts, plan.seeds, out_dir, progress=progress, name="endpoint-admission")
    return Shared(runs, keys)


def _rows(shared: Shared, exp: str, **params: Any) -> list[dict[str, Any]]:
    """Return the runs of experiment ``exp`` whose other parameters equal ``params``."""
    mine = shared.keys.get(exp, set())
    return [r for r in shared.runs.select(**params) if r["run_key"] in mine]


def utilization(row: Mapping[str, Any]) -> float | None:
    """AC data bits delivered over the AC share's capacity, probes excluded."""
    v = row.get("endpoint.data_bps")
    return None if v is None else float(v) / float(row.get("capacity") or LINK_BPS)


def blocking(row: Mapping[str, Any], names: Sequence[str] | None = None) -> float | None:
    """Blocked over offered calls of the named populations (all when None)."""
    offered = blocked = 0.0
    for key, value in row.items():
        if not key.startswith("endpoint.") or value is None:
            continue
        parts = key.split(".")
        if len(parts) != 3 or (names is not None and parts[1] not in names):
            continue
        if parts[2] == "offered_calls":
            offered += float(value)
        elif parts[2] == "blocked_calls":
            blocked += float(value)
    return blocked / offered if offered else None


def _loss(row: Mapping[str, Any]) -> float | None:
    v = row.get("endpoint.data_loss")
    return None if v is None else float(v)


def _label(design: str, algorithm: str = "", probe_s: float = 5.0) -> str:
    base = DESIGN_LABELS[design]
    if design == "mbac":
        return base
    extra = []
    if algorithm and algorithm != "slow_start":
        extra.append(algorithm.replace("_", " "))
    elif algorithm == "slow_start":
        extra.append("slow start")
    if probe_s != 5.0:
        extra.append(f"{probe_s:g} s probing")
    return base + (f", {', '.join(extra)}" if extra else "")


def curve_table_and_figure(
    c: Context,
    exp: str,
    title: str,
    groups: Sequence[tuple[str, str, float]],
    case: str | None = None,
    probe_rate_bps: float = SOURCES["EXP1"][0] * 1e3,
    packet_bits: float = PACKET * 8,
) -> None:
    """Tabulate and plot the loss–load curves of ``exp`` (of its ``case``, if any).

    One curve per (design, algorithm, probe time) in ``groups``.
    """
    shared: Shared = c.shared
    sel: dict[str, Any] = {} if case is None else {"case": case}
    tag = exp.lower() + (case or "")
    name = exp + (f"({case})" if case else "")
    t = Table(f"{tag}_curves", f"{name}: {title}", row_label="curve, ε (or υ)")
    fig, (ax,) = new_figure(size=(7.5, 4.8))
    floor_min = None
    for design, alg, probe_s in groups:
        picked = _rows(shared, exp=exp, design=design, algorithm=alg, probe_s=probe_s, **sel)
        xs = sorted({float(r["x"]) for r in picked})
        us, ls = [], []
        label = _label(design, alg, probe_s)
        for x in xs:
            rows = [r for r in picked if float(r["x"]) == x]
            u = ci_of(utilization(r) for r in rows)
            loss = ci_of(_loss(r) for r in rows)
            b = ci_of(blocking(r) for r in rows)
            key = "υ" if design == "mbac" else "ε"
            row = f"{label}, {key} = {x:g}"
            t.add_ci(row, "utilization", u)
            t.add_ci(row, "data loss", loss)
            t.add_ci(row, "blocking", b)
            if design == "in_band_dropping":
                floor = probe_floor(alg, probe_rate_bps, probe_s, packet_bits)
                t.add(row, "floor δ", floor, runs=0)
                if floor_min is None or loss.mean < floor_min[0]:
                    floor_min = (loss.mean, probe_s, alg, floor)
            us.append(u.mean)
            ls.append(max(loss.mean, LOSS_FLOOR))
        if us:
            style = "--" if design == "mbac" else "-"
            ax.plot(us, ls, style, marker="o", ms=3, label=label)
    ax.set_yscale("log")
    ax.set_xlabel("utilization (fraction of the AC share)")
    ax.set_ylabel("data loss probability (log)")
    ax.set_title(f"{name}: loss–load curves ({len(c.plan.seeds)} seeds per point)", fontsize=10)
    ax.legend(fontsize=7)
    c.output.tables.append(t)
    add_figure(c.output, c.out_dir, f"{tag}_loss_load", f"{name}: {title}", fig)
    if floor_min is not None:
        loss_min, probe_s, alg, floor = floor_min
        n = probes_sent(alg, probe_rate_bps, probe_s, packet_bits)
        c.output.notes.append(
            f"{name}: smallest measured loss of in-band dropping {loss_min:.2e} against the "
            f"rule-of-thumb floor δ = 1 − 2^(−1/N) = {floor:.2e} for the N = {n} probes of "
            f"{_label('in_band_dropping', alg, probe_s).split(', ', 1)[1]} "
            f"({probe_s:g} s from {probe_rate_bps / 1e3:g} kb/s, {packet_bits:g}-bit packets)."
        )


# ============================================================================
# Experiments
# ============================================================================


def run_e1(c: Context) -> None:
    """E1: basic scenario, EXP1 every 3.5 s, slow start, four designs and MBAC."""
    groups = [(d, "slow_start", 5.0) for d in DESIGNS] + [("mbac", "mbac", 0.0)]
    curve_table_and_figure(c, "E1", "EXP1 flows every 3.5 s, slow-start probing", groups)


def run_e2(c: Context) -> None:
    """E2: long probing, in-band dropping, 5 s against 25 s slow start."""
    groups = [("in_band_dropping", "slow_start", 5.0), ("in_band_dropping", "slow_start", 25.0)]
    curve_table_and_figure(c, "E2", "in-band dropping: 5 s against 25 s slow-start probing", groups)


def _high(exp: str) -> Any:
    def run(c: Context) -> None:
        d = HIGH_LOAD[exp]
        groups = [(d, a, 5.0) for a in ALGORITHMS] + [("mbac", "mbac", 0.0)]
        curve_table_and_figure(
            c,
            exp,
            f"high load (EXP1 every 1 s): {DESIGN_LABELS[d]}, three probing algorithms",
            groups,
        )

    return run


def run_e8(c: Context) -> None:
    """E8: heterogeneous thresholds, blocking of each population per design."""
    shared: Shared = c.shared
    t = Table(
        "e8_blocking",
        "E1's load in two populations: ε = 0 against a lax ε",
        row_label="design (lax ε)",
    )
    for d in DESIGNS:
        rows = _rows(shared, exp="E8", design=d)
        if not rows:
            continue
        lax = float(rows[0]["x"])
        label = f"{DESIGN_LABELS[d]} ({lax:g})"
        t.add_ci(
            label,
            "blocking ε = 0",
            ci_of(float(r.get("endpoint.strict.blocking") or 0) for r in rows),
        )
        t.add_ci(
            label, "blocking lax ε", ci_of(float(r.get("endpoint.lax.blocking") or 0) for r in rows)
        )
        t.add_ci(label, "utilization", ci_of(utilization(r) for r in rows))
        t.add_ci(label, "data loss", ci_of(_loss(r) for r in rows))
    c.output.tables.append(t)


def run_e12(c: Context) -> None:
    """E12: thrashing without packets, the (admitted, probing) chain against its simulation."""
    from qossim.studies import endpoint_fluid as fluid

    plan: Plan = c.plan
    t = Table(
        "e12_thrashing",
        "fluid model (flows every 3.5 s, 30 s holding, 128 kb/s on "
        "10 Mb/s, ε = 0): Markov chain and its simulation",
        row_label="probing, mean probe s",
    )
    fig, axes = new_figure(ncols=2, size=(11, 4.2))
    for band in ("in_band", "out_of_band"):
        util_chain, loss_chain, xs = [], [], []
        for tp in plan.probe_means:
            m = fluid.Model(probe_mean_s=float(tp), out_of_band=band == "out_of_band")
            exact = m.solve()
            sims = [m.simulate(plan.e12_sim_s, seed=s) for s in plan.seeds]
            row = f"{band.replace('_', '-')}, {tp:g}"
            t.add(row, "useful utilization (chain)", exact.useful_utilization, runs=0)
            t.add_ci(row, "useful utilization (sim)", ci_of(s.useful_utilization for s in sims))
            t.add(row, "data loss (chain)", exact.data_loss, runs=0)
            t.add_ci(row, "data loss (sim)", ci_of(s.data_loss for s in sims))
            t.add(row, "mean probing (chain)", exact.mean_probing, runs=0)
            xs.append(tp)
            util_chain.append(exact.useful_utilization)
            loss_chain.append(exact.data_loss)
        label = band.replace("_", "-")
        axes[0].plot(xs, util_chain, marker="o", label=label)
        shown = [(x, v) for x, v in zip(xs, loss_chain, strict=True) if v > 0]
        line = axes[1].plot([x for x, _ in shown], [v for _, v in shown], marker="o", label=label)
        zeros = [x for x, v in zip(xs, loss_chain, strict=True) if v <= 0]
        if zeros:
            axes[1].plot(
                zeros, [CHAIN_LOSS_FLOOR] * len(zeros), "o", mfc="none", color=line[0].get_color()
            )
    for ax, ylab in zip(axes, ("useful utilization", "data loss fraction"), strict=True):
        ax.set_xscale("log")
        ax.set_xlabel("mean probe time (s)")
        ax.set_ylabel(ylab)
        ax.legend(fontsize=8)
    axes[1].set_yscale("log")
    c.output.tables.append(t)
    add_figure(
        c.output,
        c.out_dir,
        "e12_thrashing",
        "E12: useful utilization and data loss against the mean probe time (Markov chain)",
        fig,
    )


def run_e7(c: Context) -> None:
    """E7: robustness, loss–load curves per source scenario and loss at a fixed ε."""
    shared: Shared = c.shared
    groups = [(d, "slow_start", 5.0) for d in DESIGNS] + [("mbac", "mbac", 0.0)]
    bars = Table(
        "e7_fixed",
        "E7: data loss at ε = 0.01 (in-band) and 0.05 (out-of-band), per scenario and design",
        row_label="scenario",
    )
    for case, (label, pops, _) in E7_CASES.items():
        rate = min(_token_rate(p.source) for p in pops)
        bits = 8 * (VIDEO_PACKET if any(p.source == "VIDEO" for p in pops) else PACKET)
        curve_table_and_figure(
            c, "E7", label, groups, case=case, probe_rate_bps=rate, packet_bits=bits
        )
        for d in DESIGNS:
            rows = _rows(shared, exp="E7", case=case, design=d, x=_fixed(d))
            bars.add_ci(f"({case}) {label}", DESIGN_LABELS[d], ci_of(_loss(r) for r in rows))
    c.output.tables.append(bars)
    # Points, not bars: a bar on a log axis has no base, so its length says nothing.
    # A mean loss of 0 is a hollow marker at LOSS_FLOOR, as in the loss-load curves.
    fig, (ax,) = new_figure(size=(9, 4.5))
    cases = list(E7_CASES)
    width = 0.8 / len(DESIGNS)
    for k, d in enumerate(DESIGNS):
        vals, zeros = [], []
        for i, case in enumerate(cases):
            cell = bars.cell(f"({case}) {E7_CASES[case][0]}", DESIGN_LABELS[d])
            v = cell.get("value") if cell else None
            if v is None:
                continue
            x = i + k * width
            if float(v) > 0:
                vals.append((x, float(v)))
            else:
                zeros.append(x)
        line = ax.plot([x for x, _ in vals], [v for _, v in vals], "o", label=DESIGN_LABELS[d])
        if zeros:
            color = line[0].get_color()
            ax.plot(zeros, [LOSS_FLOOR] * len(zeros), "o", mfc="none", color=color)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(cases))], [f"({x})" for x in cases])
    ax.set_yscale("log")
    ax.set_xlabel("scenario")
    ax.set_ylabel("data loss probability (log)")
    ax.set_title(f"hollow markers: no data packet lost (drawn at {LOSS_FLOOR:g})", fontsize=8)
    ax.legend(fontsize=7)
    add_figure(c.output, c.out_dir, "e7_fixed_eps", "E7: loss at a fixed ε per scenario", fig)


def run_e9(c: Context) -> None:
    """E9: heterogeneous traffic, blocking of small against large flows."""
    shared: Shared = c.shared
    small = [p.name for p in MIX if SOURCES[p.source][0] == 256]
    large = [p.name for p in MIX if SOURCES[p.source][0] == 1024]
    t = Table(
        "e9_blocking",
        "E7's mix: blocking of small (256 kb/s) and large (1024 kb/s) flows",
        row_label="design",
    )
    for d in (*DESIGNS, "mbac"):
        rows = _rows(shared, exp="E9", design=d)
        if not rows:
            continue
        x = float(rows[0]["x"])
        label = f"{DESIGN_LABELS[d]} ({'υ' if d == 'mbac' else 'ε'} = {x:g})"
        t.add_ci(label, "blocking small", ci_of(blocking(r, small) for r in rows))
        t.add_ci(label, "blocking large", ci_of(blocking(r, large) for r in rows))
        t.add_ci(label, "utilization", ci_of(utilization(r) for r in rows))
        t.add_ci(label, "data loss", ci_of(_loss(r) for r in rows))
    c.output.tables.append(t)


def run_e10(c: Context) -> None:
    """E10: multi-hop, loss and blocking of long and short flows, product approximation.

    One row per design and one for Measured Sum (``MBAC``); columns ``short_loss``,
    ``long_loss``, ``long_block``, ``cross<i>_block`` and ``product``, the product
    approximation 1 − Π(1 − blocking of each cross class).
    """
    shared: Shared = c.shared
    t = Table(
        "e10_multihop",
        "four routers, three congested links, ε = 0 (Measured Sum: υ = "
        f"{E10_UPSILON:g}): loss and blocking of long and short flows",
        row_label="design",
    )
    cross = ["cross1", "cross2", "cross3"]

    def loss_of(r: Mapping[str, Any], names: Sequence[str]) -> float | None:
        sent = sum(float(r.get(f"endpoint.{n}.data_sent") or 0) for n in names)
        lost = sum(float(r.get(f"endpoint.{n}.data_lost") or 0) for n in names)
        return lost / sent if sent else None

    for d, label in E10_ROWS.items():
        rows = _rows(shared, exp="E10", design=d)
        if not rows:
            continue
        t.add_ci(label, "short_loss", ci_of(loss_of(r, cross) for r in rows))
        t.add_ci(label, "long_loss", ci_of(loss_of(r, ["long"]) for r in rows))
        t.add_ci(label, "long_block", ci_of(blocking(r, ["long"]) for r in rows))
        for n in cross:
            t.add_ci(label, f"{n}_block", ci_of(blocking(r, [n]) for r in rows))
        t.add_ci(label, "product", ci_of(product_approximation(r, cross) for r in rows))
    c.output.tables.append(t)


def product_approximation(row: Mapping[str, Any], names: Sequence[str]) -> float | None:
    """1 − Π(1 − b_i) over the blocking b_i of the named classes (None if one is missing)."""
    out = 1.0
    for n in names:
        b = blocking(row, [n])
        if b is None:
            return None
        out *= 1.0 - b
    return 1.0 - out


def run_e11(c: Context) -> None:
    """E11: coexistence with TCP, aggregate TCP throughput over 10-s intervals."""
    shared: Shared = c.shared
    plan: Plan = c.plan
    t = Table(
        "e11_tcp",
        f"{TCP_FLOWS} TCP Reno connections and in-band probing flows in one drop-tail router",
        row_label="order, ε",
    )
    fig, axes = new_figure(ncols=2, size=(11, 4.2))
    for ax, order in zip(axes, ("tcp_first", "ac_first"), strict=True):
        for e in plan.e11_eps:
            rows = _rows(shared, exp="E11", order=order, x=e)
            if not rows:
                continue
            label = f"{order.replace('_', ' ')}, ε = {e:g}"

            def settled(r: Mapping[str, Any]) -> float | None:
                ser = shared.runs.series(r, "tcp_bps")
                vals = [v for tt, v in zip(ser["t"], ser["value"], strict=True) if tt > SETTLED_S]
                return sum(vals) / len(vals) / 1e6 if vals else None

            t.add_ci(label, f"TCP Mb/s after {SETTLED_S:g} s", ci_of(settled(r) for r in rows))
            t.add_ci(label, "AC blocking", ci_of(blocking(r, ["ac"]) for r in rows))
            # The 10-s series of the first seed.
            ser = shared.runs.series(rows[0], "tcp_bps")
            ax.plot(ser["t"], ser["value"] / 1e6, marker=".", label=f"ε = {e:g}")
        first = "TCP at 0 s, AC from 50 s" if order == "tcp_first" else "AC at 0 s, TCP from 50 s"
        ax.set_title(first, fontsize=9)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("aggregate TCP throughput (Mb/s)")
        ax.legend(fontsize=7)
    # One scale from 0 for both orders (autoscaling drew 9.2-10 beside 0-10).
    top = max(ax.get_ylim()[1] for ax in axes)
    for ax in axes:
        ax.set_ylim(0.0, top)
    c.output.tables.append(t)
    add_figure(c.output, c.out_dir, "e11_tcp", "E11: aggregate TCP throughput, 10-s intervals", fig)


def notes(plan: Plan, quick: bool) -> list[str]:
    """Return the notes printed under the tables."""
    out = [
        f"Each run simulates {plan.duration_s:g} s and discards the first {plan.warmup_s:g} s; "
        f"every cell is the mean over {len(plan.seeds)} seeds with a {CONFIDENCE:.0%} Student-t "
        "interval (±: half-width). Utilization counts AC data delivered (probes excluded) over "
        "10 Mb/s; data loss counts data packets dropped by the router over data packets sent.",
        f"Loss axes are logarithmic; a mean loss of 0 is drawn at {LOSS_FLOOR:g} (E12's "
        f"chain, whose losses go lower, at {CHAIN_LOSS_FLOOR:g}, as a hollow marker).",
    ]
    if quick:
        out.append(
            f"--quick: {QUICK.duration_s:g} s runs (warm-up {QUICK.warmup_s:g} s) instead of "
            f"{FULL.duration_s:g} s ({FULL.warmup_s:g} s), {len(QUICK.seeds)} seeds instead of "
            f"{len(FULL.seeds)}, ε in {list(QUICK.eps_in)} (in-band) and {list(QUICK.eps_out)} "
            f"(out-of-band), υ in {list(QUICK.upsilon)}; E12 simulates {QUICK.e12_sim_s:g} s."
        )
    if plan is TINY:
        out.append("tiny profile: 200-s runs, for the test suite only.")
    return out


EXPERIMENT_FUNCTIONS: dict[str, tuple[str, Any]] = {
    "E1": ("basic: EXP1 every 3.5 s, four designs and MBAC", run_e1),
    "E2": ("long probing: in-band dropping, 5 s against 25 s", run_e2),
    **{
        e: (f"high load: {DESIGN_LABELS[d]}, three algorithms", _high(e))
        for e, d in HIGH_LOAD.items()
    },
    "E7": ("robustness: five source scenarios, loss at a fixed ε", run_e7),
    "E8": ("heterogeneous thresholds: blocking per population", run_e8),
    "E9": ("heterogeneous traffic: blocking of small and large flows", run_e9),
    "E10": ("multi-hop: long against short flows", run_e10),
    "E11": ("coexistence with TCP in a drop-tail router", run_e11),
    "E12": ("thrashing: Markov chain against its simulation", run_e12),
}

STUDY = Study(
    profiles=Profiles(full=FULL, quick=QUICK, others={"tiny": TINY}, env="QOSSIM_ENDPOINT_PROFILE"),
    experiments=tuple(Experiment(e, title, fn) for e, (title, fn) in EXPERIMENT_FUNCTIONS.items()),
    notes=notes,
    prepare=prepare,
)
EXPERIMENTS = STUDY.ids
reproduce = STUDY.reproduce


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    for p in write_scenario_files(
        sys.argv[1] if len(sys.argv) > 1 else "studies/endpoint-admission"
    ):
        print(p)
