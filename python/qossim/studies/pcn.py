"""PCN study: admission control and flow termination with Pre-Congestion Notification.

Experiments (one table each, in the layout of the study's own tables):

``A1``–``A9``
    Admission control: over-admission of the admitted PCN rate over the
    configured-admissible-rate ``Ra`` (and SD/``Ra`` of the 50-ms samples)
    against bottleneck aggregation, arrival process, virtual-queue
    thresholds, ramp/step marking, RTT spread, CLE weight and threshold,
    ingress aggregation, per-bottleneck in a parking lot, and the beat-down of
    the long aggregate over time (A9).
``T1``–``T5``
    Flow termination after a failure: terminated fraction against the
    optimum (and the beat-down expectation in parking lots) for RTT
    differences, ingress aggregation, packet randomization, multiple
    bottlenecks and BATCH arrivals.

Every run is a scenario of the engine's scenario language (``[pcn]`` with the
``pcn_single``, ``pcn_rtt`` and ``pcn_parking_lot`` topologies), built here as
a dict from a few base scenarios plus overrides. The same definitions are
written as campaign files under ``studies/pcn/`` by :func:`write_campaigns`
(``python -m qossim.studies.pcn write-campaigns studies/pcn``), so
``qossim sweep studies/pcn/a1-voice.toml`` runs one experiment's grid.

The environment variable ``QOSSIM_PCN_PROFILE=tiny`` selects an even smaller
profile than ``--quick`` (for tests): a few points of very short runs.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from qossim import _toml, plots
from qossim.stats import CI
from qossim.studies import StudyOutput, Table, frame
from qossim.studies.frame import (
    CONFIDENCE,
    Experiment,
    Profiles,
    add_ci_figure,
    add_figure,
    apply_overrides,
    ci_of,
    ci_point,
    expand_grid,
    log_ticks_at,
)

TITLE = "PCN admission control and flow termination"

#: Link speeds of the study, by the names used in its tables.
LINKS = {
    "1 Mb/s": "1Mbps",
    "T1": "T1",
    "10 Mb/s": "10Mbps",
    "T3": "T3",
    "100 Mb/s": "100Mbps",
    "OC3": "OC3",
    "OC12": "OC12",
    "1 Gb/s": "1Gbps",
    "OC48": "OC48",
}

#: Traffic types and the overrides of ``[pcn.traffic]`` that select them. VTR is the
#: built-in synthetic MPEG-like trace (the original video traces are not available).
TRAFFIC: dict[str, dict[str, Any]] = {
    "CBR": {"pcn.traffic.model": "CBR"},
    "VBR": {"pcn.traffic.model": "VBR"},
    "MIX": {"pcn.traffic.model": "MIX"},
    "SVD": {"pcn.traffic.model": "SVD"},
    "VTR": {"pcn.traffic.model": "trace", "pcn.traffic.trace": "synthetic-mpeg"},
}
#: How VTR is named in tables and figures.
VTR_LABEL = "VTR (synthetic-mpeg)"

#: The link each traffic type runs on in A6–A8 and the termination experiments.
TYPE_LINK = {"CBR": "OC3", "VBR": "OC3", "MIX": "OC3", "VTR": "1 Gb/s", "SVD": "OC48"}

#: The 15 (w, CLE-threshold) settings of A6 and A8.
A6_W = (0.1, 0.3, 0.5, 0.7, 0.9)
A6_CLE = (0.05, 0.15, 0.25)
#: Virtual-queue thresholds of A3, (min, max, limit) in ms.
A3_THRESHOLDS = ((5, 15, 20), (1, 5, 10), (5, 15, 45))
#: A5: access delays from 1 ms to these (equal RTTs of 22 ms, or spread over 22–220 ms
#: with the 10-ms bottleneck).
A5_TO = ("1ms", "100ms")
A5_LABELS = {"1ms–1ms": "equal 22 ms", "1ms–100ms": "spread 22–220 ms"}
#: Randomization f of T3 (0 = none).
T3_F = (0.0, 0.0001, 0.001, 0.005, 0.01, 0.1)
#: Mean holding time, s.
HOLDING_S = 60.0
#: The study's failure instant; the load at failure is the one this instant gives.
SPEC_T_FAIL_S = 200.0
#: Egress nodes behind the bottleneck in T2, T3 and T5: every ingress has one aggregate to
#: each, so a run of N ingresses has 3N aggregates. The study's flows-per-ingress column
#: follows load / (3 x ingresses) (about 9 flows at 70 ingresses, 1 at 600 for CBR), so
#: its aggregates are a third of an ingress's flows; see studies/pcn/README.md
#: ("Against the published results"). T1 keeps one egress (its table is per ingress).
T_EGRESSES = 3
#: Load offered in the termination experiments, as a fraction of each bottleneck, in
#: steady state (the load at failure is this times 1 - exp(-t_fail / holding)).
TERM_OFFERED = 0.75


@dataclass(frozen=True)
class Plan:
    """How much to simulate."""

    name: str
    seeds: tuple[int, ...]
    #: A1–A5 (overloads 2x–5x): run length and warm-up, s.
    adm_duration_s: float
    adm_warmup_s: float
    overloads: tuple[float, ...]
    #: A6–A8 (5x): run length and warm-up, s.
    hi_duration_s: float
    hi_warmup_s: float
    a6_w: tuple[float, ...]
    a6_cle: tuple[float, ...]
    a6_types: tuple[str, ...]
    a6_rtt_ingresses: int
    plt_n: int
    a5_ingresses: int
    a7_counts: Mapping[str, tuple[int, ...]]
    a9_duration_s: float
    a9_plts: tuple[int, ...]
    a9_w: tuple[float, ...]
    a1_links: tuple[str, ...]
    a2_links: tuple[str, ...]
    #: Termination: failure instant of T1 and of T2–T5, time simulated after it, s.
    t1_fail_s: float
    t_fail_s: float
    t_after_s: float
    t2_counts: Mapping[str, tuple[int, ...]]
    t3_counts: Mapping[str, tuple[int, ...]]
    t3_f: tuple[float, ...]
    t4_plts: tuple[int, ...]
    t4_sets: tuple[tuple[str, str], ...]
    shortened: tuple[str, ...] = field(default=())


FULL = Plan(
    name="full",
    seeds=(1, 2, 3),
    adm_duration_s=150.0,
    adm_warmup_s=60.0,
    overloads=(2.0, 3.0, 4.0, 5.0),
    hi_duration_s=40.0,
    hi_warmup_s=20.0,
    a6_w=A6_W,
    a6_cle=A6_CLE,
    a6_types=("CBR", "VBR", "MIX", "VTR", "SVD"),
    a6_rtt_ingresses=100,
    plt_n=5,
    a5_ingresses=10,
    a7_counts={
        "CBR": (2, 10, 70, 300, 600, 1000),
        "VBR": (2, 10, 70, 300, 600, 1800),
        "MIX": (2, 10, 70, 300, 600, 1000),
        "VTR": (2, 10, 70, 140, 300, 600),
        "SVD": (2, 10, 35, 70, 140, 300),
    },
    a9_duration_s=80.0,
    a9_plts=(2, 3, 5),
    a9_w=(0.1, 0.5, 0.9),
    a1_links=("T3", "100 Mb/s", "OC3"),
    a2_links=("1 Mb/s", "T1", "10 Mb/s", "T3", "100 Mb/s", "OC3"),
    t1_fail_s=200.0,
    t_fail_s=25.0,
    t_after_s=3.0,
    t2_counts={"CBR": (2, 70, 600), "VBR": (2, 70, 1800), "SVD": (2, 70, 140)},
    t3_counts={
        "CBR": (2, 70, 600),
        "VBR": (2, 70, 1800),
        "MIX": (2, 70, 600),
        "VTR": (2, 70, 140),
        "SVD": (2, 70, 140),
    },
    t3_f=T3_F,
    t4_plts=(2, 3, 5),
    t4_sets=(
        ("2:1", "CBR"),
        ("2:1", "VBR"),
        ("2:1", "VTR"),
        ("2:1", "SVD"),
        ("1:1", "CBR"),
        ("1:1", "VTR"),
    ),
)

QUICK = replace(
    FULL,
    name="quick",
    seeds=(1,),
    adm_duration_s=60.0,
    adm_warmup_s=40.0,
    overloads=(3.0, 5.0),
    hi_duration_s=30.0,
    hi_warmup_s=15.0,
    a6_w=(0.1, 0.9),
    a6_cle=(0.05,),
    a6_rtt_ingresses=20,
    plt_n=3,
    a5_ingresses=5,
    a7_counts={"CBR": (2, 70), "VBR": (2, 70), "MIX": (2, 70), "VTR": (2, 70), "SVD": (2, 35)},
    a9_duration_s=40.0,
    a9_plts=(2, 3),
    a9_w=(0.1, 0.9),
    a1_links=("T3", "OC3"),
    a2_links=("1 Mb/s", "T1", "10 Mb/s", "T3", "OC3"),
    t1_fail_s=20.0,
    t_fail_s=10.0,
    t_after_s=3.0,
    t2_counts={"CBR": (2, 70), "VBR": (2, 70), "SVD": (2, 35)},
    t3_counts={"CBR": (2, 70), "VBR": (2, 70), "MIX": (2,), "VTR": (2,), "SVD": (2,)},
    t3_f=(0.0, 0.001, 0.1),
    t4_plts=(2, 3),
    t4_sets=(("2:1", "CBR"), ("2:1", "SVD"), ("1:1", "CBR")),
)

#: A profile for tests: single points of very short runs.
TINY = replace(
    QUICK,
    name="tiny",
    adm_duration_s=40.0,
    adm_warmup_s=30.0,
    overloads=(5.0,),
    hi_duration_s=30.0,
    hi_warmup_s=20.0,
    a6_w=(0.3,),
    a6_cle=(0.05,),
    a6_types=("CBR",),
    a6_rtt_ingresses=4,
    plt_n=2,
    a5_ingresses=3,
    a7_counts={"CBR": (2,), "VBR": (2,), "MIX": (2,), "VTR": (2,), "SVD": (2,)},
    a9_duration_s=20.0,
    a9_plts=(2,),
    a9_w=(0.5,),
    a1_links=("T3",),
    a2_links=("T1", "T3"),
    t1_fail_s=8.0,
    t_fail_s=6.0,
    t_after_s=2.0,
    t2_counts={"CBR": (2,), "VBR": (2,), "SVD": (2,)},
    t3_counts={"CBR": (2,), "VBR": (2,), "MIX": (2,), "VTR": (2,), "SVD": (2,)},
    t3_f=(0.0, 0.01),
    t4_plts=(2,),
    t4_sets=(("2:1", "CBR"),),
)

#: The profiles; ``QOSSIM_PCN_PROFILE`` (e.g. ``tiny``) overrides ``--quick``.
PROFILES = Profiles(full=FULL, quick=QUICK, others={"tiny": TINY}, env="QOSSIM_PCN_PROFILE")


def plan_for(quick: bool) -> Plan:
    """Return the plan of a reproduce call (``QOSSIM_PCN_PROFILE`` overrides ``--quick``)."""
    return PROFILES.pick(quick)


# ============================================================================
# Scenarios: base scenarios, overrides, groups of points
# ============================================================================


def _secs(x: float) -> str:
    return f"{x:g}s"


def base_scenario(kind: str) -> dict[str, Any]:
    """Return a base scenario.

    ``single``, ``rtt`` and ``plt`` run admission control, ``term-rtt`` and
    ``term-plt`` flow termination. Every key an experiment overrides is present,
    so the TOML text of a point does not depend on which experiment made it.
    """
    run = {"duration": "150s", "warmup": "60s", "seed": 1}
    if kind in ("single",):
        topology: dict[str, Any] = {"kind": "pcn_single", "rate": "OC3", "delay": "1ms"}
    elif kind in ("rtt", "term-rtt"):
        topology = {
            "kind": "pcn_rtt",
            "rate": "OC3",
            "ingresses": 10,
            "access_delays": {"from": "1ms", "to": "100ms"},
            "bottleneck_delay": "10ms",
        }
    elif kind in ("plt", "term-plt"):
        topology = {"kind": "pcn_parking_lot", "rate": "OC3", "bottlenecks": 5}
    else:
        raise ValueError(f"unknown base scenario {kind!r}")
    traffic: dict[str, Any] = {
        "model": "CBR",
        "arrivals": "poisson",
        "holding": f"exp:{HOLDING_S:g}s",
        "jitter": 0.0,
    }
    if kind.endswith("plt"):
        traffic["split"] = "1:1"
    if kind.startswith("term"):
        run = {"duration": "28s", "warmup": "0s", "seed": 1}
        if kind == "term-rtt":
            topology["access_delays"] = {"from": "1ms", "to": "1ms"}
            topology["bottleneck_delay"] = "1ms"
            topology["egresses"] = 1
        traffic["offered"] = TERM_OFFERED
        pcn: dict[str, Any] = {
            # Ingresses act on every SAR report, including one measured before their
            # last termination, and round the rate to terminate up to whole flows: see
            # studies/pcn/README.md ("Stale reports and rounding") for the T1 and T2
            # measurements behind both.
            "termination": {
                "rt": 0.5,
                "t_fail": "25s",
                "rounding": "up",
                "ignore_stale_reports": False,
            },
            "per_iea": False,
            "iea_series": False,
            "traffic": traffic,
        }
    else:
        traffic["overload"] = 5
        pcn = {
            "ra": 0.5,
            "marking": "ramp",
            "thresholds": {"min": "5ms", "max": "15ms", "limit": "20ms"},
            "cle": {"mode": "interval", "w": 0.3, "threshold": 0.05},
            "per_iea": False,
            "iea_series": False,
            "traffic": traffic,
        }
    return {"run": run, "topology": topology, "pcn": pcn}


BASES = ("single", "rtt", "plt", "term-rtt", "term-plt")


@dataclass(frozen=True)
class Group:
    """A base scenario, fixed overrides and a grid of overrides: one campaign.

    ``fixed`` maps dotted paths to values; ``grid`` holds ``(path, values)`` pairs
    expanded as a cartesian product, the last varying fastest.
    """

    name: str
    base: str
    fixed: Mapping[str, Any]
    grid: tuple[tuple[str, tuple[Any, ...]], ...] = ()

    def points(self) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Every grid point as ``(params, scenario dict)``."""
        out = []
        for point in expand_grid(self.grid):
            scenario = base_scenario(self.base)
            apply_overrides(scenario, [*self.fixed.items(), *point])
            out.append((params_of(scenario), scenario))
        return out


#: The parameters every point is labelled with (columns of the gathered table).
PARAMS = (
    "topology",
    "link",
    "traffic",
    "arrivals",
    "k",
    "mode",
    "w",
    "cle",
    "marking",
    "thresholds",
    "access",
    "ingresses",
    "egresses",
    "plt",
    "split",
    "f",
)


def params_of(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """Return the parameters of a scenario, read from the scenario itself.

    A run shared by several experiments then carries the same labels whichever
    experiment asked for it first.
    """
    topo = scenario["topology"]
    pcn = scenario["pcn"]
    traffic = pcn["traffic"]
    links = {v: k for k, v in LINKS.items()}
    kind = topo["kind"]
    if kind == "pcn_single":
        label = "single link"
    elif kind == "pcn_rtt":
        label = f"RTT-{topo['ingresses']}"
    else:
        label = f"PLT-{topo['bottlenecks']}"
    model = traffic["model"]
    out: dict[str, Any] = dict.fromkeys(PARAMS)
    out.update(
        topology=label,
        link=links.get(topo["rate"], topo["rate"]),
        traffic=VTR_LABEL if model == "trace" else model,
        arrivals=traffic["arrivals"],
        f=traffic["jitter"],
    )
    if kind == "pcn_rtt":
        d = topo["access_delays"]
        out["access"] = f"{d['from']}–{d['to']}" if isinstance(d, Mapping) else "/".join(d)
        out["ingresses"] = topo["ingresses"]
        out["egresses"] = topo.get("egresses", 1)
    if kind == "pcn_parking_lot":
        out["plt"] = topo["bottlenecks"]
        out["split"] = traffic.get("split")
    if "ra" in pcn:
        th = pcn["thresholds"]
        out.update(
            k=traffic["overload"],
            mode=pcn["cle"]["mode"],
            w=pcn["cle"]["w"],
            cle=pcn["cle"]["threshold"],
            marking=pcn["marking"],
            thresholds="({}, {}, {})".format(
                *(th[x].removesuffix("ms") for x in ("min", "max", "limit"))
            ),
        )
    return out


def _run(duration: float, warmup: float) -> dict[str, Any]:
    return {"run.duration": _secs(duration), "run.warmup": _secs(warmup)}


def _link(name: str) -> dict[str, Any]:
    return {"topology.rate": LINKS[name]}


PER_PACKET = {"mode": "per_packet", "w": 0.01, "threshold": 0.5}


def _term(plan: Plan, t_fail: float) -> dict[str, Any]:
    # Offered load chosen so that the expected load at failure is the study's (offered
    # 0.75 of the link, failure at 200 s): with Poisson arrivals and exponential
    # holding, the active flows at t_fail are Poisson with mean
    # lambda x holding x (1 - exp(-t_fail/holding)), so a shorter wait with a higher
    # arrival rate gives the same distribution of flows at failure.
    offered = TERM_OFFERED * (1 - math.exp(-SPEC_T_FAIL_S / HOLDING_S))
    offered /= 1 - math.exp(-t_fail / HOLDING_S)
    return {
        "run.duration": _secs(t_fail + plan.t_after_s),
        "run.warmup": "0s",
        "pcn.termination.t_fail": _secs(t_fail),
        "pcn.traffic.offered": round(offered, 6),
    }


def groups(exp: str, plan: Plan) -> list[Group]:
    """Return the groups of points of one experiment."""
    adm = _run(plan.adm_duration_s, plan.adm_warmup_s)
    hi = _run(plan.hi_duration_s, plan.hi_warmup_s)
    k = ("pcn.traffic.overload", plan.overloads)
    arrivals = ("pcn.traffic.arrivals", ("poisson", "batch"))
    voice = ("pcn.traffic.model", ("CBR", "VBR"))
    if exp in ("A1", "A2"):
        links = plan.a1_links if exp == "A1" else plan.a2_links
        rate = ("topology.rate", tuple(LINKS[x] for x in links))
        out = [
            Group(
                f"{exp.lower()}-voice",
                "single",
                {**adm, "pcn.cle": PER_PACKET},
                (rate, voice, arrivals, k),
            )
        ]
        if exp == "A1":
            out.append(
                Group(
                    "a1-svd",
                    "single",
                    {**adm, "pcn.cle": PER_PACKET, **TRAFFIC["SVD"]},
                    (("topology.rate", (LINKS["1 Gb/s"], LINKS["OC12"])), k),
                )
            )
        return out
    if exp == "A3":
        th = tuple(
            {"min": f"{a}ms", "max": f"{b}ms", "limit": f"{c}ms"} for a, b, c in A3_THRESHOLDS
        )
        return [
            Group(
                "a3",
                "single",
                {**adm, **TRAFFIC["SVD"]},
                (
                    ("topology.rate", (LINKS["1 Gb/s"], LINKS["OC12"])),
                    ("pcn.thresholds", th),
                    k,
                ),
            )
        ]
    if exp == "A4":
        marking = ("pcn.marking", ("ramp", "step"))
        return [
            Group("a4-voice", "single", {**adm, **_link("OC3")}, (voice, marking, k)),
            Group(
                "a4-svd",
                "single",
                {**adm, **_link("1 Gb/s"), **TRAFFIC["SVD"]},
                (marking, k),
            ),
        ]
    if exp == "A5":
        access = ("topology.access_delays", tuple({"from": "1ms", "to": t} for t in A5_TO))
        ing = {"topology.ingresses": plan.a5_ingresses}
        return [
            Group("a5-voice", "rtt", {**adm, **ing, **_link("OC3")}, (voice, access, k)),
            Group(
                "a5-svd",
                "rtt",
                {**adm, **ing, **_link("1 Gb/s"), **TRAFFIC["SVD"]},
                (access, k),
            ),
        ]
    if exp in ("A6", "A8"):
        settings = (("pcn.cle.w", plan.a6_w), ("pcn.cle.threshold", plan.a6_cle))
        topologies = [
            ("single", {}),
            ("rtt", {"topology.ingresses": plan.a6_rtt_ingresses}),
            ("plt", {"topology.bottlenecks": plan.plt_n}),
        ]
        if exp == "A8":
            topologies = topologies[2:]
        out = []
        for base, extra in topologies:
            voice_types = tuple(t for t in ("CBR", "VBR", "MIX") if t in plan.a6_types)
            if voice_types:
                out.append(
                    Group(
                        f"a6-{base}-voice",
                        base,
                        {**hi, **extra, **_link("OC3")},
                        (("pcn.traffic.model", voice_types), *settings),
                    )
                )
            for kind in ("VTR", "SVD"):
                if kind in plan.a6_types:
                    out.append(
                        Group(
                            f"a6-{base}-{kind.lower()}",
                            base,
                            {**hi, **extra, **_link(TYPE_LINK[kind]), **TRAFFIC[kind]},
                            settings,
                        )
                    )
        return out
    if exp == "A7":
        return [
            Group(
                f"a7-{kind.lower()}",
                "rtt",
                {**hi, **_link(TYPE_LINK[kind]), **TRAFFIC[kind]},
                (("topology.ingresses", counts),),
            )
            for kind, counts in plan.a7_counts.items()
        ]
    if exp == "A9":
        return [
            Group(
                "a9",
                "plt",
                {
                    **_run(plan.a9_duration_s, 0.0),
                    **_link("OC3"),
                    **TRAFFIC["CBR"],
                    "pcn.per_iea": True,
                    "pcn.iea_series": True,
                },
                (("topology.bottlenecks", plan.a9_plts), ("pcn.cle.w", plan.a9_w)),
            )
        ]
    if exp == "T1":
        return [
            Group(
                "t1",
                "term-rtt",
                {
                    **_term(plan, plan.t1_fail_s),
                    **_link("OC3"),
                    **TRAFFIC["CBR"],
                    "topology.ingresses": 2,
                    "topology.access_delays": ["1ms", "50ms"],
                    "pcn.traffic.weights": [2, 1],
                    "pcn.per_iea": True,
                    "pcn.iea_series": True,
                },
            )
        ]
    if exp in ("T2", "T5"):
        out = []
        for kind, counts in plan.t2_counts.items():
            grid: tuple = (("topology.ingresses", counts),)
            if exp == "T5":
                grid = (arrivals, *grid)
            out.append(
                Group(
                    f"{exp.lower()}-{kind.lower()}",
                    "term-rtt",
                    {
                        **_term(plan, plan.t_fail_s),
                        **_link(TYPE_LINK[kind]),
                        **TRAFFIC[kind],
                        "topology.egresses": T_EGRESSES,
                    },
                    grid,
                )
            )
        return out
    if exp == "T3":
        return [
            Group(
                f"t3-{kind.lower()}",
                "term-rtt",
                {
                    **_term(plan, plan.t_fail_s),
                    **_link(TYPE_LINK[kind]),
                    **TRAFFIC[kind],
                    "topology.egresses": T_EGRESSES,
                },
                (("topology.ingresses", counts), ("pcn.traffic.jitter", plan.t3_f)),
            )
            for kind, counts in plan.t3_counts.items()
        ]
    if exp == "T4":
        return [
            Group(
                f"t4-{kind.lower()}-{split.replace(':', 'to')}",
                "term-plt",
                {
                    **_term(plan, plan.t_fail_s),
                    **_link(TYPE_LINK[kind]),
                    **TRAFFIC[kind],
                    "pcn.traffic.split": split,
                    "pcn.per_iea": True,
                },
                (("topology.bottlenecks", plan.t4_plts),),
            )
            for split, kind in plan.t4_sets
        ]
    raise ValueError(f"unknown experiment {exp!r}")


# ============================================================================
# Campaign files
# ============================================================================


def campaign_text(group: Group, plan: Plan = FULL) -> str:
    """Return the campaign file of a group (scenario path relative to ``studies/pcn``)."""
    lines = [
        "# Generated by `python -m qossim.studies.pcn write-campaigns studies/pcn` from the",
        f"# {plan.name} profile of python/qossim/studies/pcn.py; edit that file, not this one.",
        "[campaign]",
        f'name = "pcn-{group.name}"',
        f'scenario = "scenarios/{group.base}.toml"',
        f"seeds = {list(plan.seeds)}",
        "",
        "[set]",
    ]
    lines += [f'"{path}" = {_toml_value(v)}' for path, v in group.fixed.items()]
    lines += ["", "[grid]"]
    lines += [
        f'"{path}" = [{", ".join(_toml_value(v) for v in values)}]' for path, values in group.grid
    ]
    return "\n".join(lines) + "\n"


def _toml_value(value: Any) -> str:
    """Render a value as an inline TOML literal."""
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return _toml.dumps({"v": value}).split("=", 1)[1].strip()


def all_groups(plan: Plan) -> list[Group]:
    """Every group of every experiment, each once."""
    seen: dict[str, Group] = {}
    for exp in EXPERIMENTS:
        if exp == "A8":
            continue  # A8 reads A6's parking-lot runs
        for g in groups(exp, plan):
            seen.setdefault(g.name, g)
    return list(seen.values())


def write_campaigns(directory: str | os.PathLike[str], plan: Plan = FULL) -> list[Path]:
    """Write the base scenarios and one campaign file per group of ``plan``."""
    root = Path(directory)
    (root / "scenarios").mkdir(parents=True, exist_ok=True)
    written = []
    for base in BASES:
        path = root / "scenarios" / f"{base}.toml"
        header = (
            f"# Base scenario {base!r} of the PCN study; the campaign files override parts of it.\n"
            "# Generated by `python -m qossim.studies.pcn write-campaigns studies/pcn`.\n"
        )
        path.write_text(header + _toml.dumps(base_scenario(base)), encoding="utf-8")
        written.append(path)
    for g in all_groups(plan):
        path = root / f"{g.name}.toml"
        path.write_text(campaign_text(g, plan), encoding="utf-8")
        written.append(path)
    return written


# ============================================================================
# Running and reading
# ============================================================================


class Runs(frame.Runs):
    """Stored runs of the study, selected by the experiments' groups."""

    def subset(self, gs: Sequence[Group], seeds: Sequence[int]) -> Runs:
        """Return the runs of the points of ``gs`` for ``seeds``."""
        return self.of_points([p for g in gs for p in g.points()], seeds)


#: The cache key of a point's run (as :func:`qossim.studies.run_points` makes it).
point_key = frame.point_key


def run_all(plan: Plan, experiments: Sequence[str], out_dir: Path, progress: bool) -> Runs:
    """Run every point of the experiments for every seed of the plan (cached).

    All runs go to one pool, the most expensive first, so the cores stay busy
    across experiments; the experiments then read the stored runs.
    """
    points: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for exp in experiments:
        for g in groups(exp, plan):
            for params, scenario in g.points():
                points.setdefault(_toml.dumps(scenario), (params, scenario))
    ordered = sorted(points.values(), key=lambda p: -cost(p[1]))
    return Runs.run(ordered, plan.seeds, out_dir, progress=progress, name="pcn")


def bottleneck(topology: str) -> str:
    """Return the bottleneck link of a single-bottleneck topology."""
    return "A-B" if topology == "single" else "D-F"


def plt_links(n: int) -> list[str]:
    """Return the bottleneck links of PLT-n in chain order."""
    return [f"R{b - 1}-R{b}" for b in range(1, n + 1)]


def _key(link: str, what: str) -> str:
    return f"pcn.bottleneck.{link}.{what}"


def _worst(runs: Runs, on: str, plan: Plan, **params: Any) -> tuple[CI, CI, float]:
    """Return the worst case over the overloads.

    That is (over-admission CI, SD/Ra CI, k) at the overload whose mean
    over-admission is highest.
    """
    best: tuple[CI, CI, float] | None = None
    for k in plan.overloads:
        over = ci_of(runs.values(_key(on, "over_admission_pct"), k=k, **params))
        sd = ci_of(runs.values(_key(on, "sd_over_ra"), k=k, **params))
        if over.n and (best is None or over.mean > best[0].mean):
            best = (over, sd, k)
    if best is None:
        nan = ci_of([])
        return nan, nan, math.nan
    return best


# ============================================================================
# Admission experiments
# ============================================================================

OVER = "worst-case over-admission (%)"
SD = "SD/Ra"


def exp_a1(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """A1: bottleneck aggregation on a single link."""
    runs = runs_all.subset(groups("A1", plan), plan.seeds)
    table = Table(
        "A1",
        "A1 bottleneck aggregation: single link, Ra = ½ link, per-packet CLE (w 0.01, "
        "threshold 0.5), worst case over overloads " + _ks(plan),
        row_label="#",
    )
    rows = [
        (link, t, a) for link in plan.a1_links for t in ("CBR", "VBR") for a in ("poisson", "batch")
    ]
    rows += [(link, "SVD", "poisson") for link in ("1 Gb/s", "OC12")]
    for i, (link, t, a) in enumerate(rows, 1):
        over, sd, k = _worst(runs, "A-B", plan, link=link, traffic=t, arrivals=a)
        row = str(i)
        table.add(row, "link", link, runs=0)
        table.add(row, "traffic", t, runs=0)
        table.add(row, "arrivals", a.capitalize() if a == "poisson" else "BATCH", runs=0)
        table.add_ci(row, OVER, over)
        table.add_ci(row, SD, sd)
        table.add(row, "at k", k, runs=0)
    output.tables.append(table)
    _overload_figure(runs, plan, out_dir, output)


def _ks(plan: Plan) -> str:
    return "{" + ", ".join(f"{k:g}x" for k in plan.overloads) + "}"


def _overload_figure(runs: Runs, plan: Plan, out_dir: Path, output: StudyOutput) -> None:
    points = [
        ci_point(
            "k",
            k,
            ci_of(
                runs.values(
                    _key("A-B", "over_admission_pct"), link=link, traffic=t, arrivals="poisson", k=k
                )
            ),
            series=f"{t} on {link}",
        )
        for link in plan.a1_links
        for t in ("CBR", "VBR")
        for k in plan.overloads
    ]
    _over_admission_figure(
        output,
        out_dir,
        ("a1_overload", "A1: over-admission against demand overload"),
        points,
        ("k", "demand overload k", "× Ra"),
        group="series",
        title="A1: over-admission against overload (Poisson arrivals)",
    )


def _over_admission_figure(
    output: StudyOutput,
    out_dir: Path,
    name: tuple[str, str],
    points: Sequence[Mapping[str, Any]],
    x: tuple[str, str, str],
    **plot: Any,
) -> None:
    """Curves of over-admission (%) against ``x`` = (column, label, unit)."""
    column, label, unit = x
    add_ci_figure(
        output,
        out_dir,
        *name,
        points,
        column,
        x_label=label,
        x_unit=unit,
        y_label="over-admission",
        y_unit="%",
        **plot,
    )


def exp_a2(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """A2: Poisson against BATCH arrivals over link speeds."""
    runs = runs_all.subset(groups("A2", plan), plan.seeds)
    table = Table(
        "A2",
        "A2 arrival sensitivity: single link, per-packet CLE, worst case over " + _ks(plan),
        row_label="#",
    )
    i = 0
    for t in ("CBR", "VBR"):
        for link in plan.a2_links:
            i += 1
            row = str(i)
            table.add(row, "traffic", t, runs=0)
            table.add(row, "link", link, runs=0)
            for a, label in (("poisson", "Poisson"), ("batch", "BATCH")):
                over, sd, _ = _worst(runs, "A-B", plan, link=link, traffic=t, arrivals=a)
                table.add_ci(row, f"{label} over-admission (%)", over)
                table.add_ci(row, f"{label} SD/Ra", sd)
    output.tables.append(table)


def exp_a3(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """A3: virtual-queue thresholds, SVD."""
    runs = runs_all.subset(groups("A3", plan), plan.seeds)
    table = Table(
        "A3",
        "A3 VQ thresholds (min, max, limit in ms at Ra): SVD, single link, interval CLE "
        "(w 0.3, threshold 0.05), worst case over " + _ks(plan),
        row_label="#",
    )
    i = 0
    for link in ("1 Gb/s", "OC12"):
        for a, b, c in A3_THRESHOLDS:
            i += 1
            row = str(i)
            label = f"({a}, {b}, {c})"
            over, sd, k = _worst(runs, "A-B", plan, link=link, thresholds=label)
            table.add(row, "link", link, runs=0)
            table.add(row, "thresholds (ms)", label, runs=0)
            table.add_ci(row, OVER, over)
            table.add_ci(row, SD, sd)
            table.add(row, "at k", k, runs=0)
    output.tables.append(table)


def exp_a4(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """A4: ramp against step marking."""
    runs = runs_all.subset(groups("A4", plan), plan.seeds)
    table = Table(
        "A4",
        "A4 ramp vs step marking: single link, interval CLE (w 0.3, threshold 0.05), "
        "worst case over " + _ks(plan),
        row_label="traffic",
    )
    for t, link in (("CBR", "OC3"), ("VBR", "OC3"), ("SVD", "1 Gb/s")):
        row = f"{t} on {link}"
        for marking in ("ramp", "step"):
            params: dict[str, Any] = {"traffic": t, "marking": marking, "link": link}
            over, sd, _ = _worst(runs, "A-B", plan, **params)
            table.add_ci(row, f"{marking} over-admission (%)", over)
            table.add_ci(row, f"{marking} SD/Ra", sd)
    output.tables.append(table)


def exp_a5(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """A5: equal RTTs against RTTs spread over 22–220 ms."""
    runs = runs_all.subset(groups("A5", plan), plan.seeds)
    table = Table(
        "A5",
        f"A5 RTT spread: RTT topology, {plan.a5_ingresses} ingresses, bottleneck delay 10 ms, "
        "interval CLE (w 0.3, threshold 0.05), worst case over " + _ks(plan),
        row_label="traffic",
    )
    for t, link in (("CBR", "OC3"), ("VBR", "OC3"), ("SVD", "1 Gb/s")):
        row = f"{t} on {link}"
        for access, rtt in A5_LABELS.items():
            over, sd, _ = _worst(runs, "D-F", plan, traffic=t, access=access, link=link)
            table.add_ci(row, f"{rtt}: over-admission (%)", over)
            table.add_ci(row, f"{rtt}: SD/Ra", sd)
    output.tables.append(table)


def _type_label(kind: str) -> str:
    return VTR_LABEL if kind == "VTR" else kind


def _setting_values(
    runs: Runs, plan: Plan, topo: str, kind: str, links: list[str]
) -> dict[int, list[float]]:
    """Per seed, the over-admission of each (w, CLE) setting (the worst bottleneck)."""
    per_seed: dict[int, list[float]] = {}
    for w in plan.a6_w:
        for c in plan.a6_cle:
            for r in runs.select(topology=topo, traffic=_type_label(kind), w=w, cle=c):
                vals = [r.get(_key(link, "over_admission_pct")) for link in links]
                vals = [float(v) for v in vals if v is not None]
                if vals:
                    per_seed.setdefault(int(r["seed"]), []).append(max(vals))
    return per_seed


def _stat(values: Sequence[float], what: str) -> float:
    n = len(values)
    if what == "min":
        return min(values)
    if what == "max":
        return max(values)
    mean = sum(values) / n
    if what == "mean":
        return mean
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else math.nan


def exp_a6(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """A6: CLE weight and threshold over topologies and traffic types."""
    runs = runs_all.subset(groups("A6", plan), plan.seeds)
    n_set = len(plan.a6_w) * len(plan.a6_cle)
    table = Table(
        "A6",
        f"A6 EWMA weight × CLE threshold ({n_set} settings, w ∈ {_tuple(plan.a6_w)}, CLE ∈ "
        f"{_tuple(plan.a6_cle)}), 5x overload: over-admission (%) over the settings "
        "(PLT: worst bottleneck of each run); per seed, then mean over seeds",
        row_label="#",
    )
    topologies = ("single link", f"RTT-{plan.a6_rtt_ingresses}", f"PLT-{plan.plt_n}")
    i = 0
    for kind in plan.a6_types:
        for topo in topologies:
            links = (
                plt_links(plan.plt_n)
                if topo.startswith("PLT")
                else ["A-B" if topo == "single link" else "D-F"]
            )
            per_seed = _setting_values(runs, plan, topo, kind, links)
            i += 1
            row = str(i)
            table.add(row, "type", f"{_type_label(kind)} on {TYPE_LINK[kind]}", runs=0)
            table.add(row, "topology", topo, runs=0)
            nruns = sum(len(v) for v in per_seed.values())
            for what in ("min", "max", "mean", "SD"):
                stats = [_stat(v, what.lower()) for v in per_seed.values() if v]
                c = ci_of(stats)
                table.add(row, what, c.mean, c.low, c.high, runs=nruns)
    output.tables.append(table)


def _tuple(xs: Sequence[float]) -> str:
    return "{" + ", ".join(f"{x:g}" for x in xs) + "}"


def exp_a7(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """A7: ingress aggregation on the RTT topology."""
    runs = runs_all.subset(groups("A7", plan), plan.seeds)
    table = Table(
        "A7",
        "A7 ingress aggregation: RTT topology (access 1–100 ms, bottleneck 10 ms), "
        "interval CLE w 0.3, threshold 0.05, 5x overload",
        row_label="#",
    )
    curve = []
    i = 0
    for kind, counts in plan.a7_counts.items():
        for n in counts:
            i += 1
            row = str(i)
            params = {"traffic": _type_label(kind), "ingresses": n}
            over = ci_of(runs.values(_key("D-F", "over_admission_pct"), **params))
            sd = ci_of(runs.values(_key("D-F", "sd_over_ra"), **params))
            table.add(row, "type", f"{_type_label(kind)} on {TYPE_LINK[kind]}", runs=0)
            table.add(row, "ingresses", n, runs=0)
            table.add_ci(row, "over-admission (%)", over)
            table.add_ci(row, SD, sd)
            curve.append(ci_point("n", n, over, type=kind))
    output.tables.append(table)
    _over_admission_figure(
        output,
        out_dir,
        ("a7_ingresses", "A7: over-admission against the number of ingresses"),
        curve,
        ("n", "ingresses", "count"),
        logx=True,
        group="type",
        title="A7: over-admission against ingress aggregation",
    )


def exp_a8(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """A8: per-bottleneck over-admission in PLT-5 (A6's runs)."""
    runs = runs_all.subset(groups("A8", plan), plan.seeds)
    topo = f"PLT-{plan.plt_n}"
    table = Table(
        "A8",
        f"A8 {topo}: over-admission (%) per bottleneck, mean over the "
        f"{len(plan.a6_w) * len(plan.a6_cle)} (w, CLE) settings, 5x overload",
        row_label="type",
    )
    for kind in plan.a6_types:
        row = f"{_type_label(kind)} on {TYPE_LINK[kind]}"
        for b, link in enumerate(plt_links(plan.plt_n), 1):
            per_seed: dict[int, list[float]] = {}
            for w in plan.a6_w:
                for c in plan.a6_cle:
                    for r in runs.select(topology=topo, traffic=_type_label(kind), w=w, cle=c):
                        v = r.get(_key(link, "over_admission_pct"))
                        if v is not None:
                            per_seed.setdefault(int(r["seed"]), []).append(float(v))
            stats = [sum(v) / len(v) for v in per_seed.values() if v]
            cell = ci_of(stats)
            table.add(
                row,
                f"bottleneck {b}",
                cell.mean,
                cell.low,
                cell.high,
                runs=sum(len(v) for v in per_seed.values()),
            )
    output.tables.append(table)


def _window_ratio(runs: Runs, row: Mapping[str, Any], n: int, t_end: float, width: float) -> float:
    """Mean short-haul over long-haul throughput in (t_end - width, t_end]."""
    names = ["IL-EL"] + [f"I{b}-E{b}" for b in range(1, n + 1)]
    means = []
    for name in names:
        df = runs.series(row, f"pcn.{name}.throughput")
        part = df[(df["t"] > t_end - width + 1e-9) & (df["t"] <= t_end + 1e-9)]
        means.append(float(part["value"].mean()) if len(part) else math.nan)
    long, short = means[0], sum(means[1:]) / n
    return short / long if long > 0 else math.nan


def exp_a9(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """A9: beat-down of the long aggregate over time in parking lots."""
    import pandas as pd

    runs = runs_all.subset(groups("A9", plan), plan.seeds)
    times = [t for t in range(10, int(plan.a9_duration_s) + 1, 10)]
    table = Table(
        "A9",
        "A9 beat-down in time: PLT-N, CBR on OC3, 5x overload, interval CLE (threshold 0.05): "
        "short-haul / long-haul aggregate bandwidth (mean short aggregate over the long "
        "one, each averaged over the 10 s before t)",
        row_label="PLT, w",
    )
    curves = []
    for n in plan.a9_plts:
        for w in plan.a9_w:
            rows = runs.select(plt=n, w=w)
            row = f"PLT-{n}, w {w:g}"
            for t in times:
                c = ci_of([_window_ratio(runs, r, n, float(t), 10.0) for r in rows])
                table.add_ci(row, f"t = {t} s", c)
            for r in rows[:1] if rows else []:
                for t in range(1, int(plan.a9_duration_s) + 1):
                    curves.append(
                        {
                            "t": t,
                            "series": f"PLT-{n}, w {w:g}",
                            "ratio": _window_ratio(runs, r, n, float(t), 1.0),
                        }
                    )
    output.tables.append(table)
    if curves:
        df = pd.DataFrame(curves).pivot(index="t", columns="series", values="ratio").reset_index()
        cols = [c for c in df.columns if c != "t"]
        fig = plots.timeseries(
            df,
            "t",
            cols,
            y_label="short-haul / long-haul bandwidth",
            y_unit="ratio",
            title="A9: beat-down of the long aggregate (1-s averages, first seed)",
        )
        add_figure(
            output,
            out_dir,
            "a9_ratio",
            "A9: short/long aggregate bandwidth ratio over time",
            fig,
        )


# ============================================================================
# Termination experiments
# ============================================================================


#: Over-termination columns: in points of the load at failure, (actual − optimal) × 100,
#: as the study's termination tables print it, and relative to the optimal beside it.
OVER_PTS = "over-termination (pts)"
OVER_REL = "over-termination (% of optimal)"


def _term_cells(
    table: Table, row: str, runs: Runs, prefix: str, params: Mapping[str, Any], over: str = "pct"
) -> None:
    actual = ci_of(runs.values(prefix + "actual", **params))
    table.add_ci(row, "actual", actual)
    if over == "pct":
        table.add_ci(row, OVER_PTS, ci_of(runs.values(prefix + "a_minus_o_pts", **params)))
        table.add_ci(
            row,
            OVER_REL,
            ci_of(runs.values(prefix + "over_termination_pct", **params)),
        )


def exp_t1(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """T1: two ingresses with different RTTs."""
    runs = runs_all.subset(groups("T1", plan), plan.seeds)
    table = Table(
        "T1",
        f"T1 RTT difference: 2 ingresses, CBR on OC3, load split 2:1, Rt = 50% of the link, "
        f"failure at {plan.t1_fail_s:g} s",
        row_label="ingress",
    )
    for name, delay in (("I1-F", 1), ("I2-F", 50)):
        p = f"pcn.iea.{name}."
        table.add_ci(name, "load (flows)", ci_of(runs.values(p + "load_flows")))
        table.add(name, "access delay (ms)", delay, runs=0)
        table.add_ci(name, "RTT (ms)", ci_of([v * 1e3 for v in runs.values(p + "rtt_s")]))
        table.add_ci(name, "optimal", ci_of(runs.values(p + "optimal")))
        _term_cells(table, name, runs, p, {})
    p = _key("D-F", "")
    table.add_ci("bottleneck", "load (flows)", ci_of(runs.values(p + "load_flows")))
    table.add_ci("bottleneck", "optimal", ci_of(runs.values(p + "optimal")))
    _term_cells(table, "bottleneck", runs, p, {})
    output.tables.append(table)
    rows = runs.select()
    if rows:
        _t1_figure(runs, rows[0], plan, out_dir, output)


def _t1_figure(
    runs: Runs, row: Mapping[str, Any], plan: Plan, out_dir: Path, output: StudyOutput
) -> None:
    import numpy as np
    import pandas as pd

    t0, t1 = plan.t1_fail_s - 0.5, plan.t1_fail_s + 1.0
    grid = np.arange(t0, t1, 0.002)
    data = {"t": grid}
    events = []
    for name in ("I1-F", "I2-F"):
        df = runs.series(row, f"pcn.{name}.active")
        idx = np.searchsorted(df["t"].to_numpy(), grid, side="right") - 1
        values = df["value"].to_numpy()
        data[name] = np.where(idx >= 0, values[np.clip(idx, 0, None)], 0.0)
        try:
            term = runs.series(row, f"pcn.{name}.terminated")
        except KeyError:
            term = None
        if term is not None:
            for t, v in zip(term["t"], term["value"], strict=True):
                if t0 <= t <= t1:
                    events.append((float(t), f"{name}: −{int(v)} flows"))
    events.append((plan.t1_fail_s, "failure"))
    fig = plots.stacked(
        pd.DataFrame(data),
        "t",
        ["I1-F", "I2-F"],
        y_label="active flows per ingress",
        y_unit="flows",
        events=events,
        labels={"I1-F": "I1 (access 1 ms)", "I2-F": "I2 (access 50 ms)"},
        title="T1: per-ingress load around the failure, termination instants",
    )
    path = plots.save(fig, out_dir / "figures" / "t1_load.png")
    output.figures.append(
        ("T1: per-ingress load around t_fail with the termination instants", path)
    )


def exp_t2(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """T2: ingress aggregation."""
    runs = runs_all.subset(groups("T2", plan), plan.seeds)
    table = Table(
        "T2",
        "T2 ingress aggregation: RTT topology, all access delays 1 ms, "
        f"{T_EGRESSES} egresses (an aggregate from every ingress to every egress), "
        "Rt = 50% of the link, Poisson arrivals",
        row_label="#",
    )
    i = 0
    p = _key("D-F", "")
    for kind, counts in plan.t2_counts.items():
        for n in counts:
            i += 1
            row = str(i)
            params = {"traffic": _type_label(kind), "ingresses": n}
            load = runs.values(p + "load_flows", **params)
            table.add(row, "model", f"{_type_label(kind)} on {TYPE_LINK[kind]}", runs=0)
            table.add_ci(row, "load (flows)", ci_of(load))
            table.add(row, "ingresses", n, runs=0)
            table.add_ci(row, "flows per ingress", ci_of([x / n for x in load]))
            table.add(row, "aggregates", n * T_EGRESSES, runs=0)
            table.add_ci(row, "flows per aggregate", ci_of([x / (n * T_EGRESSES) for x in load]))
            table.add_ci(
                row, "threshold (flows)", ci_of(runs.values(p + "threshold_flows", **params))
            )
            _term_cells(table, row, runs, p, params)
    output.tables.append(table)


def exp_t3(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """T3: packet randomization."""
    import pandas as pd

    runs = runs_all.subset(groups("T3", plan), plan.seeds)
    table = Table(
        "T3",
        "T3 randomization: over-termination in points of the load at failure (and in % of "
        "the optimal) against f (each packet delayed by U(0, f × inter-packet time)), RTT "
        f"topology, access 1 ms, {T_EGRESSES} egresses",
        row_label="#",
    )
    p = _key("D-F", "")
    i = 0
    curve = []
    for kind, counts in plan.t3_counts.items():
        for n in counts:
            i += 1
            row = str(i)
            table.add(row, "type", f"{_type_label(kind)} on {TYPE_LINK[kind]}", runs=0)
            table.add(row, "ingresses", n, runs=0)
            for f in plan.t3_f:
                params = {"traffic": _type_label(kind), "ingresses": n, "f": f}
                c = ci_of(runs.values(p + "a_minus_o_pts", **params))
                label = "none" if f == 0 else f"f {f:g}"
                table.add_ci(row, f"{label} (pts)", c)
                table.add_ci(
                    row, f"{label} (%)", ci_of(runs.values(p + "over_termination_pct", **params))
                )
                curve.append(
                    {
                        "series": f"{kind}, {n} ingresses",
                        "f": f,
                        "mean": c.mean,
                        "low": c.low,
                        "high": c.high,
                    }
                )
    output.tables.append(table)
    if curve:
        fig = plots.mean_ci(
            pd.DataFrame(curve),
            "f",
            "mean",
            ci=("low", "high"),
            group="series",
            x_label="randomization f",
            x_unit="× inter-packet time",
            y_label="over-termination",
            y_unit="points of the load",
            title="T3: over-termination against packet randomization",
        )
        log_ticks_at(fig.axes[0], [p["f"] for p in curve])
        path = plots.save(fig, out_dir / "figures" / "t3_randomization.png")
        output.figures.append(("T3: over-termination against randomization f", path))


def exp_t4(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """T4: multiple bottlenecks (beat-down of the long aggregate)."""
    runs = runs_all.subset(groups("T4", plan), plan.seeds)
    table = Table(
        "T4",
        "T4 multiple bottlenecks: PLT-N, each bottleneck loaded to ¾ of the link at failure, "
        "Rt = ½; fractions of the load at failure terminated; A−O and A−E in points",
        row_label="#",
    )
    i = 0
    for split, kind in plan.t4_sets:
        for n in plan.t4_plts:
            entities = [("long IEA", "pcn.iea.IL-EL.")]
            entities += [(f"short IEA {b}", f"pcn.iea.I{b}-E{b}.") for b in range(1, n + 1)]
            entities += [
                (f"bottleneck {b}", _key(link, "")) for b, link in enumerate(plt_links(n), 1)
            ]
            params = {"traffic": _type_label(kind), "split": split, "plt": n}
            for label, prefix in entities:
                i += 1
                row = str(i)
                table.add(row, "topology", f"PLT-{n}", runs=0)
                table.add(row, "long:short", split, runs=0)
                table.add(row, "traffic", f"{_type_label(kind)} on {TYPE_LINK[kind]}", runs=0)
                table.add(row, "IEA / bottleneck", label, runs=0)
                for col, key in (
                    ("optimal", "optimal"),
                    ("expected", "expected"),
                    ("actual", "actual"),
                    ("A−O", "a_minus_o_pts"),
                    ("A−E", "a_minus_e_pts"),
                ):
                    table.add_ci(row, col, ci_of(runs.values(prefix + key, **params)))
    output.tables.append(table)


def exp_t5(plan: Plan, runs_all: Runs, out_dir: Path, output: StudyOutput) -> None:
    """T5: BATCH against Poisson arrivals for T2's setups."""
    runs = runs_all.subset(groups("T5", plan), plan.seeds)
    table = Table(
        "T5",
        f"T5 BATCH vs Poisson arrivals (T2's setups, {T_EGRESSES} egresses): terminated "
        "fraction and over-termination (points of the load at failure, and % of the optimal)",
        row_label="#",
    )
    p = _key("D-F", "")
    i = 0
    for kind, counts in plan.t2_counts.items():
        for n in counts:
            i += 1
            row = str(i)
            table.add(row, "model", f"{_type_label(kind)} on {TYPE_LINK[kind]}", runs=0)
            table.add(row, "ingresses", n, runs=0)
            for a, label in (("poisson", "Poisson"), ("batch", "BATCH")):
                params = {"traffic": _type_label(kind), "ingresses": n, "arrivals": a}
                table.add_ci(
                    row, f"{label} load (flows)", ci_of(runs.values(p + "load_flows", **params))
                )
                table.add_ci(row, f"{label} actual", ci_of(runs.values(p + "actual", **params)))
                table.add_ci(
                    row,
                    f"{label} {OVER_PTS}",
                    ci_of(runs.values(p + "a_minus_o_pts", **params)),
                )
                table.add_ci(
                    row,
                    f"{label} {OVER_REL}",
                    ci_of(runs.values(p + "over_termination_pct", **params)),
                )
    output.tables.append(table)


# ============================================================================
# reproduce
# ============================================================================

_PACKET_BITS = {"CBR": 1280, "VBR": 1280, "MIX": 1000, "SVD": 12000, "trace": 12000}


def cost(scenario: Mapping[str, Any]) -> float:
    """Estimate a run's cost roughly (to start the longest runs first)."""
    topo = scenario["topology"]
    pcn = scenario["pcn"]
    rates = {v: k for k, v in LINKS.items()}
    bps = _LINK_BPS[rates.get(topo["rate"], "OC3")]
    kind = topo["kind"]
    hops = 2.0 if kind == "pcn_single" else 3.0
    if kind == "pcn_parking_lot":
        hops = (5 * topo["bottlenecks"] + 3) / 2
    load = 0.5 if "ra" in pcn else TERM_OFFERED
    seconds = float(scenario["run"]["duration"].removesuffix("s"))
    return bps * load * hops * seconds / _PACKET_BITS.get(pcn["traffic"]["model"], 1280)


_LINK_BPS = {
    "1 Mb/s": 1e6,
    "T1": 1.544e6,
    "10 Mb/s": 1e7,
    "T3": 44.736e6,
    "100 Mb/s": 1e8,
    "OC3": 155.52e6,
    "OC12": 622.08e6,
    "1 Gb/s": 1e9,
    "OC48": 2488.32e6,
}


def notes(plan: Plan, quick: bool = False) -> list[str]:
    """Describe what was run (and what a profile other than full shortens)."""
    at_failure = TERM_OFFERED * (1 - math.exp(-SPEC_T_FAIL_S / HOLDING_S))
    out = [
        f"Profile {plan.name!r}: seeds {list(plan.seeds)}; a cell is the mean over its runs "
        f"with a {CONFIDENCE:.0%} Student-t interval (± half-width) when there is more than "
        "one run; the runs column counts the runs behind each cell.",
        f"Admission A1–A5: overloads {_ks(plan)}, {plan.adm_duration_s:g} s per run, the "
        f"first {plan.adm_warmup_s:g} s discarded; worst case = the overload with the highest "
        "mean over-admission (its SD/Ra beside it).",
        f"Admission A6–A8 (5x): {plan.hi_duration_s:g} s per run, the first "
        f"{plan.hi_warmup_s:g} s discarded; RTT-{plan.a6_rtt_ingresses} has access delays "
        f"spread over 1–100 ms and a 10-ms bottleneck; PLT-{plan.plt_n} has 1-ms links and "
        f"equal long and short demand. A9: {plan.a9_duration_s:g} s from an empty network.",
        "Over-admission % = (mean of the 50-ms PCN throughput samples after warm-up − Ra) "
        "/ Ra × 100 with Ra = ½ link; holding times exponential, mean 60 s; the call rate λ "
        "satisfies k × Ra = λ × mean flow rate × 60 s.",
        f"Termination: T2, T3 and T5 have {T_EGRESSES} egresses behind the bottleneck and an "
        "aggregate from every ingress to every egress; T1 one egress. "
        f"T1 fails at {plan.t1_fail_s:g} s, T2–T5 at {plan.t_fail_s:g} s; each "
        f"run ends {plan.t_after_s:g} s later. The call rate makes the expected load at "
        f"failure the study's ({at_failure:.4f} of the link: offered 0.75, failure at "
        f"{SPEC_T_FAIL_S:g} s); with Poisson calls and exponential holding the flows active "
        "at failure then have the same distribution whatever the wait. Fractions are of "
        "the load at failure (in mean rate); optimal = 1 − Rt/load; over-termination is "
        "printed in points of the load at failure, (actual − optimal) × 100, as the study's "
        "tables print it, and beside it in % of the optimal, (actual − optimal) / optimal "
        "× 100.",
        f"VTR is {VTR_LABEL}: the built-in deterministic synthetic MPEG-like trace "
        "(25 frames/s, GOP IBBPBBPBBPBB, mean 769 kb/s), not a recorded video trace.",
    ]
    if plan.name != "full":
        out.append(
            f"--{plan.name}: {len(plan.seeds)} seed(s) instead of {len(FULL.seeds)}; "
            f"overloads {_ks(plan)} instead of {_ks(FULL)}; runs of {plan.adm_duration_s:g} s "
            f"/ {plan.hi_duration_s:g} s instead of {FULL.adm_duration_s:g} s / "
            f"{FULL.hi_duration_s:g} s; {len(plan.a6_w) * len(plan.a6_cle)} (w, CLE) "
            f"settings instead of 15; RTT-{plan.a6_rtt_ingresses} and PLT-{plan.plt_n} "
            f"instead of RTT-{FULL.a6_rtt_ingresses} and PLT-{FULL.plt_n}; fewer links and "
            f"ingress counts; failure at {plan.t1_fail_s:g} s / {plan.t_fail_s:g} s instead "
            f"of {FULL.t1_fail_s:g} s / {FULL.t_fail_s:g} s; f ∈ {_tuple(plan.t3_f)}."
        )
    return out


def _call(function: Any, c: frame.Context) -> None:
    function(c.plan, c.shared, c.out_dir, c.output)


STUDY = frame.Study(
    profiles=PROFILES,
    experiments=tuple(
        Experiment.of(f, _call)
        for f in (exp_a1, exp_a2, exp_a3, exp_a4, exp_a5, exp_a6, exp_a7, exp_a8, exp_a9)
        + (exp_t1, exp_t2, exp_t3, exp_t4, exp_t5)
    ),
    notes=notes,
    # All runs of the selected experiments go to one pool (see run_all).
    prepare=lambda plan, ids, out_dir, progress: run_all(plan, ids, out_dir, progress),
)
EXPERIMENTS = STUDY.ids
reproduce = STUDY.reproduce


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m qossim.studies.pcn write-campaigns DIR``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] != "write-campaigns":
        print("usage: python -m qossim.studies.pcn write-campaigns DIR", file=sys.stderr)
        return 2
    for path in write_campaigns(args[1]):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
