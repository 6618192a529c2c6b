"""ATM ABR point-to-multipoint flow control with ERICA (``qossim reproduce abr-multipoint``).

ABR sources send at an allowed cell rate set by explicit-rate feedback: every 32nd
cell is a forward resource-management (RM) cell, destinations turn it around, and
every switch on the way back lowers its explicit rate (ER) to what ERICA computes for
the port. A point-to-multipoint (P2MP) connection is a tree; where it branches, the
switch replicates cells and *consolidates* the branches' feedback in one of four ways
(turnaround, flag, all branches, pass-through). The study asks whether ERICA stays
efficient and max-min fair in such trees, how noisy the consolidated feedback is, and
how sources respond to distant bottlenecks.

Experiments: one per configuration (``--only 8 15`` runs configurations 8 and 15).
Each draws its figure (the four plots over time: ACR of every source, ABR queue at every
switch port, utilization of every forward port, cells received by every destination; and
the topology) and adds its row to the summary table. A configuration with a P2MP
connection also runs under the four consolidation variants and adds its rows to the
consolidation-noise tables; configuration 8 adds its (ICR, RIF) settings and its unicast
comparisons.

Every configuration is data (:data:`CONFIGS`): switches in a chain or fork, trunk
lengths, hosts and connections. The scenario files under
``studies/abr-multipoint/configs/`` are generated from it (:func:`write_scenario_files`)
and kept identical by a test. The model has no randomness, so each point is one run.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from qossim import _toml
from qossim.studies import StudyOutput, Table
from qossim.studies.frame import Context, Experiment, Profiles, Runs, Study, add_figure, write_files

TITLE = "ATM ABR point-to-multipoint flow control with ERICA"

#: Link rate of every link.
LINE_MBPS = 155.52
#: Propagation delay per km, microseconds.
US_PER_KM = 5.0
#: The consolidation variants, baseline first.
VARIANTS = ("turnaround", "flag", "all_branches", "pass_through")
#: (ICR Mb/s, RIF) settings of configuration 8.
ICR_RIF = ((12.0, 1 / 32), (12.0, 1.0), (150.0, 1 / 32), (150.0, 1.0))
#: VBR on/off periods, ms (LAN, WAN).
VBR_PERIOD_MS = {"lan": 3.0, "wan": 20.0}


@dataclass(frozen=True)
class Vc:
    """One connection: its source host's switch, its destinations' switches, its type."""

    name: str
    at: str
    to: tuple[str, ...]
    kind: str = "infinite"
    #: On only between these fractions of the run (None: always).
    window: tuple[float, float] | None = None
    #: VBR: start of the first on period, ms.
    offset_ms: float = 0.0


@dataclass(frozen=True)
class Config:
    """One configuration: a chain (or fork) of switches, trunk lengths, connections."""

    id: str
    title: str
    network: str
    duration_ms: float
    switches: tuple[str, ...]
    #: Trunk links (from, to) in order, from the source side: "link 1", "link 2", ...
    trunks: tuple[tuple[str, str], ...]
    vcs: tuple[Vc, ...]
    #: Length of every link not in ``lengths``, km.
    km: float = 1.0
    #: Lengths of trunk links by number (1-based), km.
    lengths: Mapping[int, float] = field(default_factory=dict)
    #: Source parameter overrides (``icr`` in Mb/s, ``rif``).
    params: Mapping[str, float] = field(default_factory=dict)
    #: Why the run is longer than its network's default (empty: it is not).
    long_run: str = ""

    @property
    def p2mp(self) -> bool:
        """True if some connection has more than one destination."""
        return any(len(v.to) > 1 for v in self.vcs)


def _chain(n: int) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
    sw = tuple(f"SW{i}" for i in range(1, n + 1))
    return sw, tuple((sw[i], sw[i + 1]) for i in range(n - 1))


def _configs() -> list[Config]:
    c: list[Config] = []
    sw1 = ("SW1",)
    sw2, t2 = _chain(2)
    sw3, t3 = _chain(3)
    sw4, t4 = _chain(4)
    c.append(
        Config(
            "1",
            "one P2MP source, two destinations, one switch (LAN)",
            "lan",
            30,
            sw1,
            (),
            (Vc("S1", "SW1", ("SW1", "SW1")),),
        )
    )
    two = (Vc("S1", "SW1", ("SW2", "SW2")), Vc("S2", "SW1", ("SW2", "SW2")))
    c.append(Config("2", "two P2MP sources sharing one trunk (LAN)", "lan", 30, sw2, t2, two))
    c.append(
        Config(
            "2b",
            "as 2 in a WAN, S2 on in the middle third",
            "wan",
            200,
            sw2,
            t2,
            (two[0], Vc("S2", "SW1", ("SW2", "SW2"), window=(1 / 3, 2 / 3))),
            km=1000,
        )
    )
    lot = Vc("S1", "SW1", ("SW2", "SW3", "SW4"))
    c.append(
        Config(
            "3",
            "parking lot, one P2MP source, three destinations (LAN)",
            "lan",
            30,
            sw4,
            t4,
            (lot,),
        )
    )
    c.append(Config("3b", "parking lot in a WAN", "wan", 200, sw4, t4, (lot,), km=1000))
    uni = Vc("U", "SW1", ("SW3",))
    c.append(
        Config("4", "as 3 plus a unicast VC on links 1-2 (LAN)", "lan", 30, sw4, t4, (lot, uni))
    )
    c.append(
        Config(
            "4b",
            "as 4, the unicast VC on in the middle third",
            "lan",
            30,
            sw4,
            t4,
            (lot, Vc("U", "SW1", ("SW3",), window=(1 / 3, 2 / 3))),
        )
    )
    c.append(
        Config(
            "5",
            "as 4, link 1 at 5000 km, the others 50 km",
            "wan",
            400,
            sw4,
            t4,
            (lot, uni),
            km=50,
            lengths={1: 5000},
            long_run="some WAN runs last 400 ms to reach steady state; the 42 000 cells "
            "the study counts for S1 are more than its half of what link 1 carries in 200 ms",
        )
    )
    c.append(
        Config(
            "6",
            "as 4, link 2 at 5000 km, the others 50 km",
            "wan",
            200,
            sw4,
            t4,
            (lot, uni),
            km=50,
            lengths={2: 5000},
        )
    )
    c.append(
        Config(
            "7",
            "as 4 with the unicast VC VBR (LAN)",
            "lan",
            30,
            sw4,
            t4,
            (lot, Vc("V", "SW1", ("SW3",), kind="vbr")),
        )
    )
    vbr8 = (
        Vc("V1", "SW1", ("SW3",), kind="vbr", offset_ms=2),
        Vc("V2", "SW3", ("SW4",), kind="vbr", offset_ms=22),
    )
    c.append(
        Config(
            "8",
            "WAN (1000 km), two alternating VBR VCs",
            "wan",
            200,
            sw4,
            t4,
            (lot, *vbr8),
            km=1000,
        )
    )
    for icr, rif in ICR_RIF[:3]:
        c.append(
            Config(
                f"8-icr{icr:g}-rif{_rif(rif)}",
                f"as 8 with ICR {icr:g} Mb/s, RIF {_rif_text(rif)}",
                "wan",
                200,
                sw4,
                t4,
                (lot, *vbr8),
                km=1000,
                params={"icr": icr, "rif": rif},
            )
        )
    c.append(
        Config(
            "8u3",
            "as 8 with three unicast sources, one per destination",
            "wan",
            200,
            sw4,
            t4,
            (
                Vc("U1", "SW1", ("SW2",)),
                Vc("U2", "SW1", ("SW3",)),
                Vc("U3", "SW1", ("SW4",)),
                *vbr8,
            ),
            km=1000,
        )
    )
    c.append(
        Config(
            "8u1",
            "as 8 with one unicast source to the farthest destination",
            "wan",
            200,
            sw4,
            t4,
            (Vc("U3", "SW1", ("SW4",)), *vbr8),
            km=1000,
        )
    )
    c.append(
        Config(
            "9",
            "as 8, link 1 at 5000 km, the others 50 km",
            "wan",
            200,
            sw4,
            t4,
            (lot, *vbr8),
            km=50,
            lengths={1: 5000},
        )
    )
    c.append(
        Config(
            "10",
            "as 8, link 2 at 5000 km, the others 50 km",
            "wan",
            200,
            sw4,
            t4,
            (lot, *vbr8),
            km=50,
            lengths={2: 5000},
        )
    )
    pair = (
        Vc("B", "SW1", ("SW1", "SW2", "SW3"), kind="bursty"),
        Vc("I", "SW1", ("SW1", "SW2", "SW3")),
    )
    c.append(
        Config(
            "11",
            "WAN parking lot: a bursty and an infinite P2MP source, six destinations",
            "wan",
            200,
            sw3,
            t3,
            pair,
            km=1000,
        )
    )
    vbr12 = Vc("V", "SW2", ("SW3",), kind="vbr")
    c.append(
        Config("12", "as 11 plus a VBR VC on link 2", "wan", 200, sw3, t3, (*pair, vbr12), km=1000)
    )
    c.append(
        Config(
            "13",
            "as 12, link 1 at 5000 km, the others 50 km",
            "wan",
            200,
            sw3,
            t3,
            (*pair, vbr12),
            km=50,
            lengths={1: 5000},
        )
    )
    c.append(
        Config(
            "14",
            "as 12, link 2 at 5000 km, the others 50 km",
            "wan",
            200,
            sw3,
            t3,
            (*pair, vbr12),
            km=50,
            lengths={2: 5000},
        )
    )
    c.append(
        Config(
            "15",
            "chain: P2MP to SW2-SW4, a unicast VC on the last link only; "
            "links 50 km, SW2-SW3 500 km, SW3-SW4 5000 km",
            "wan",
            200,
            sw4,
            t4,
            (Vc("S1", "SW1", ("SW4", "SW3", "SW2")), Vc("U", "SW3", ("SW4",))),
            km=50,
            lengths={2: 500, 3: 5000},
        )
    )
    c.append(
        Config(
            "16",
            "fork: two P2MP sources at the middle switches, each to the other "
            "three switches (1000 km)",
            "wan",
            200,
            sw4,
            t4,
            (Vc("A", "SW2", ("SW1", "SW3", "SW4")), Vc("B", "SW3", ("SW1", "SW2", "SW4"))),
            km=1000,
        )
    )
    return c


def _rif(rif: float) -> str:
    return "1" if rif == 1 else f"1_{round(1 / rif)}"


def _rif_text(rif: float) -> str:
    return "1" if rif == 1 else f"1/{round(1 / rif)}"


#: Every configuration, in the study's order.
CONFIGS: tuple[Config, ...] = tuple(_configs())


def config(config_id: str) -> Config:
    """Return the configuration called ``config_id``."""
    for c in CONFIGS:
        if c.id == config_id:
            return c
    raise KeyError(config_id)


@dataclass(frozen=True)
class Plan:
    """How much to simulate: a scale on every configuration's duration and which run."""

    scale: float
    #: Configuration ids of the ``configurations`` experiment (None: all).
    configs: tuple[str, ...] | None = None


FULL = Plan(scale=1.0)
QUICK = Plan(scale=0.5)
#: For the test suite (``QOSSIM_ABR_PROFILE=tiny``): the plumbing, not the numbers.
TINY = Plan(scale=0.05, configs=("1", "4", "8", "11", "16"))


# ============================================================================
# Scenarios
# ============================================================================


def _delay(km: float) -> str:
    return f"{km * US_PER_KM:g}us"


def hosts(c: Config) -> tuple[list[tuple[str, str]], dict[str, str], dict[str, list[str]]]:
    """Return the hosts (name, switch), each VC's source host and destination hosts.

    A connection's source host is ``H<vc>``; its destinations are numbered ``D<vc>.<k>``
    in the order given (``D1`` is the first).
    """
    out: list[tuple[str, str]] = []
    src: dict[str, str] = {}
    dst: dict[str, list[str]] = {}
    for v in c.vcs:
        src[v.name] = f"H{v.name}"
        out.append((src[v.name], v.at))
        dst[v.name] = []
        for k, s in enumerate(v.to, start=1):
            h = f"D{v.name}_{k}"
            out.append((h, s))
            dst[v.name].append(h)
    return out, src, dst


def scenario(c: Config, plan: Plan = FULL) -> dict[str, Any]:
    """Return the scenario of configuration ``c`` (duration scaled by the plan)."""
    duration = c.duration_ms * plan.scale
    host_list, src, dst = hosts(c)
    links: list[dict[str, Any]] = []
    for k, (a, b) in enumerate(c.trunks, start=1):
        links.append({"from": a, "to": b, "delay": _delay(c.lengths.get(k, c.km))})
    for h, s in host_list:
        links.append({"from": h, "to": s})
    period = VBR_PERIOD_MS[c.network]
    vcs: list[dict[str, Any]] = []
    for v in c.vcs:
        e: dict[str, Any] = {"name": v.name, "source": src[v.name], "destinations": dst[v.name]}
        if v.kind != "infinite":
            e["type"] = v.kind
        if v.window is not None:
            e["start"] = f"{v.window[0] * duration:.6g}ms"
            e["stop"] = f"{v.window[1] * duration:.6g}ms"
        if v.kind == "vbr":
            e["on"] = f"{period:g}ms"
            e["off"] = f"{period:g}ms"
            if v.offset_ms:
                e["offset"] = f"{v.offset_ms:g}ms"
        vcs.append(e)
    abr: dict[str, Any] = {
        "network": c.network,
        "sample": "0.1ms" if c.network == "lan" else "1ms",
    }
    if "icr" in c.params:
        abr["icr"] = f"{c.params['icr']:g}Mbps"
    if "rif" in c.params:
        abr["rif"] = c.params["rif"]
    abr["vc"] = vcs
    return {
        "run": {"duration": f"{duration:.6g}ms", "warmup": f"{duration / 10:.6g}ms"},
        "topology": {
            "kind": "graph",
            "nodes": [*c.switches, *(h for h, _ in host_list)],
            "rate": f"{LINE_MBPS:g}Mbps",
            "delay": _delay(c.km),
            "link": links,
        },
        "abr": abr,
    }


def scenario_files() -> dict[str, str]:
    """Return every configuration's scenario file (name -> TOML text), full length.

    Configurations 11-14 also come under ERICA+ (``c11-erica-plus.toml`` ...).
    """
    out = {}
    for c in CONFIGS:
        head = (
            f"# Configuration {c.id}: {c.title}.\n# Generated by qossim.studies.abr_multipoint.\n"
        )
        out[f"configs/c{c.id}.toml"] = head + _toml.dumps(scenario(c))
    for cid in ERICA_PLUS_CONFIGS:
        c = config(cid)
        sc = scenario(c)
        sc["abr"]["algorithm"] = "erica_plus"
        head = (
            f"# Configuration {c.id} under ERICA+ (not in the study): {c.title}.\n"
            "# Generated by qossim.studies.abr_multipoint.\n"
        )
        out[f"configs/c{c.id}-erica-plus.toml"] = head + _toml.dumps(sc)
    return out


def write_scenario_files(
    directory: str | os.PathLike[str] = "studies/abr-multipoint",
) -> list[Path]:
    """Write :func:`scenario_files` under ``directory`` and return their paths."""
    return write_files(scenario_files(), directory)


# ============================================================================
# Runs
# ============================================================================


def points(config_id: str, plan: Plan) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Return the runs of one configuration's experiment as ``(params, scenario)`` pairs.

    Every consolidation variant for a configuration with a P2MP connection, the
    turnaround alone otherwise; configuration 8 adds its (ICR, RIF) settings and its
    unicast comparisons.
    """
    c = config(config_id)
    todo = [(c, v) for v in (VARIANTS if c.p2mp else VARIANTS[:1])]
    if config_id == "8":
        todo += [(k, VARIANTS[0]) for k in CONFIGS if k.id.startswith("8-icr")]
        todo += [(config("8u3"), VARIANTS[0]), (config("8u1"), VARIANTS[0])]
    out = []
    for k, v in todo:
        sc = scenario(k, plan)
        sc["abr"]["consolidation"] = v
        out.append(({"config": k.id, "variant": v}, sc))
    return out


def erica_plus_points(plan: Plan) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Return the ERICA+ experiment's runs: configurations 11-14 under ERICA and ERICA+.

    Each under turnaround and all-branches consolidation, for
    :data:`ERICA_PLUS_LENGTH` times the configuration's duration, so that the standing
    queue the queue term acts on shows beside the first overloads.
    """
    longer = Plan(scale=plan.scale * ERICA_PLUS_LENGTH, configs=plan.configs)
    out = []
    for cid in ERICA_PLUS_CONFIGS:
        for algo in ("erica", "erica_plus"):
            for v in ERICA_PLUS_VARIANTS:
                sc = scenario(config(cid), longer)
                sc["abr"]["consolidation"] = v
                sc["abr"]["algorithm"] = algo
                out.append(({"config": cid, "variant": v, "algorithm": algo}, sc))
    return out


@dataclass
class Shared:
    """The runs of every selected experiment, made in one batch."""

    runs: Runs
    rows: dict[tuple[str, str], dict[str, Any]]


def prepare(plan: Plan, ids: list[str], out_dir: Path, progress: bool) -> Shared:
    """Run (or reuse) the points of every selected configuration at once."""
    pts = [p for cid in ids if cid in _ids(plan) for p in points(cid, plan)]
    if ERICA_PLUS in ids and plan.configs is None:
        pts += erica_plus_points(plan)
    runs = Runs.run(pts, (1,), out_dir, progress=progress, name="abr-multipoint")
    rows = {(str(r["config"]), str(r["variant"]) + _algorithm_suffix(r)): r for r in runs.rows}
    return Shared(runs, rows)


def _algorithm_suffix(row: Mapping[str, Any]) -> str:
    """Return the row key's suffix naming the run's switch algorithm, if it has one."""
    a = row.get("algorithm")
    return "" if a is None or a != a else f"+{a}"


def _num(row: Mapping[str, Any], key: str) -> float | None:
    v = row.get(key)
    return None if v is None else float(v)


def _destinations(c: Config) -> list[tuple[str, str, str]]:
    """(vc, destination host, label) of every destination."""
    _, _, dst = hosts(c)
    out = []
    for v in c.vcs:
        for k, h in enumerate(dst[v.name], start=1):
            label = f"{v.name}->D{k}" if len(dst[v.name]) > 1 else f"{v.name}->D"
            out.append((v.name, h, label))
    return out


def summary_row(t: Table, c: Config, row: Mapping[str, Any], label: str) -> None:
    """Add one configuration's summary cells to ``t``."""
    t.add(label, "max queue (cells)", _num(row, "abr.max_queue_cells"))
    t.add(label, "steady max queue (cells)", _num(row, "abr.steady_max_queue_cells"))
    u = _num(row, "abr.bottleneck_utilization")
    t.add(label, "bottleneck", row.get("abr.bottleneck"))
    t.add(label, "bottleneck util %", None if u is None else 100 * u)
    cells = [_num(row, f"abr.vc.{v}.dest.{h}.cells") for v, h, _ in _destinations(c)]
    got = [x for x in cells if x is not None]
    t.add(label, "cells received", " / ".join(f"{x:.0f}" for x in got) if got else None)
    acrs = []
    for v in c.vcs:
        x = _num(row, f"abr.vc.{v.name}.acr_mean_mbps")
        if v.kind != "vbr" and x is not None:
            acrs.append(f"{v.name} {x:.1f}")
    t.add(label, "mean ACR (Mb/s)", ", ".join(acrs) if acrs else None)


def branch_counts(row: Mapping[str, Any], vc: str) -> tuple[float, float]:
    """BRMs the branch points of ``vc`` returned, and those returned blind (summed)."""
    returned = blind = 0.0
    for key, value in row.items():
        if key.startswith("abr.branch.") and value is not None:
            if key.endswith(f".{vc}.returned"):
                returned += float(value)
            elif key.endswith(f".{vc}.returned_blind"):
                blind += float(value)
    return returned, blind


# ============================================================================
# Figures
# ============================================================================


def _topology(ax: Any, c: Config) -> None:
    """Draw the configuration: switches on a line, sources above, destinations below."""
    xs = {s: float(i) for i, s in enumerate(c.switches)}
    ax.set_axis_off()
    for k, (a, b) in enumerate(c.trunks, start=1):
        ax.plot([xs[a], xs[b]], [0, 0], color="black", lw=2)
        ax.text(
            (xs[a] + xs[b]) / 2, 0.08, f"{c.lengths.get(k, c.km):g} km", ha="center", fontsize=7
        )
    host_list, src, _ = hosts(c)
    sources = set(src.values())
    count: dict[tuple[str, bool], int] = {}
    for h, s in host_list:
        up = h in sources
        k = count.get((s, up), 0)
        count[(s, up)] = k + 1
        x = xs[s] + (k - 0.5) * 0.28
        y = 0.7 + 0.25 * (k % 2) if up else -0.7 - 0.25 * (k % 2)
        ax.plot([xs[s], x], [0, y], color="gray", lw=0.8)
        ax.text(
            x,
            y,
            h.replace("_", "."),
            ha="center",
            va="center",
            fontsize=7,
            bbox={"boxstyle": "round", "fc": "lightyellow" if up else "lightcyan", "lw": 0.5},
        )
    for s, x in xs.items():
        ax.text(
            x,
            0,
            s,
            ha="center",
            va="center",
            fontsize=8,
            bbox={"boxstyle": "square", "fc": "lightgray"},
        )
    ax.set_xlim(-0.8, max(xs.values()) + 0.8)
    ax.set_ylim(-1.2, 1.2)
    ax.set_title("topology (sources above, destinations below)", fontsize=9)


def figure_config(
    runs: Runs,
    c: Config,
    row: Mapping[str, Any],
    out_dir: Path,
    output: StudyOutput,
    suffix: str = "",
) -> None:
    """Save the four plots over time and the topology of one configuration's run."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(13, 7.5), layout="constrained")
    FigureCanvasAgg(fig)
    axes = [fig.add_subplot(2, 3, k) for k in range(1, 6)]

    def draw(ax: Any, names: Mapping[str, str], title: str, unit: str) -> None:
        for label, name in names.items():
            try:
                s = runs.series(row, name)
            except (KeyError, FileNotFoundError, ValueError):
                continue
            ax.plot(s["t"] * 1e3, s["value"], lw=0.9, label=label)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel(unit)
        ax.grid(True, alpha=0.3)
        if names:
            ax.legend(fontsize=6, ncol=2)

    abr = [v for v in c.vcs if v.kind != "vbr"]
    draw(axes[0], {v.name: f"abr.acr.{v.name}" for v in abr}, "(a) ACR of each source", "Mb/s")
    ports = []
    for a, b in c.trunks:
        ports += [f"{a}-{b}"]
    host_list, _, dst = hosts(c)
    ports += [f"{s}-{h}" for h, s in host_list if h.startswith("D")]
    draw(
        axes[1], {p: f"abr.queue.{p}" for p in ports}, "(b) ABR queue at each switch port", "cells"
    )
    draw(axes[2], {p: f"abr.util.{p}" for p in ports}, "(c) utilization of each link", "%")
    draw(
        axes[3],
        {lab: f"abr.cells.{v}.{h}" for v, h, lab in _destinations(c)},
        "(d) cells received by each destination",
        "cells",
    )
    _topology(axes[4], c)
    fig.suptitle(f"configuration {c.id}{suffix}: {c.title}", fontsize=10)
    name = f"config_{c.id}" + (suffix.replace(" ", "_").replace(",", "") if suffix else "")
    add_figure(output, out_dir, name, f"configuration {c.id}{suffix}: {c.title}", fig)


# ============================================================================
# Experiments
# ============================================================================


#: The experiments: one per configuration (the ICR/RIF and unicast variants of 8 are
#: part of 8's).
EXPERIMENT_IDS = tuple(c.id for c in CONFIGS if "-icr" not in c.id and not c.id.startswith("8u"))


def _ids(plan: Plan) -> tuple[str, ...]:
    return EXPERIMENT_IDS if plan.configs is None else plan.configs


def _table(c: Context, table_id: str, title: str, row_label: str) -> Table:
    """Return the output's table ``table_id``, adding it on first use."""
    for t in c.output.tables:
        if t.id == table_id:
            return t
    t = Table(table_id, title, row_label=row_label)
    c.output.tables.append(t)
    return t


def run_config(config_id: str, c: Context) -> None:
    """Tabulate and draw one configuration from the prepared runs."""
    if config_id not in _ids(c.plan):
        return
    shared: Shared = c.shared
    k = config(config_id)
    summary = _table(
        c, "summary", "every configuration (turnaround consolidation)", "configuration"
    )
    row = shared.rows.get((k.id, VARIANTS[0]))
    if row is None:
        return
    summary_row(summary, k, row, k.id)
    figure_config(shared.runs, k, row, c.out_dir, c.output)
    if k.p2mp:
        consolidation_rows(c, k, shared)
    if config_id == "8":
        icr_rif_rows(c, shared)
        unicast_rows(c, shared)


def consolidation_rows(c: Context, k: Config, shared: Shared) -> None:
    """Add one P2MP configuration's rows to the noise, blind and variants tables."""
    noise = _table(
        c,
        "noise",
        "consolidation noise: ER returned to each P2MP source after the "
        "first tenth of the run (standard deviation and max - min, Mb/s)",
        "configuration, source",
    )
    blinds = _table(
        c,
        "blind",
        "% of the BRMs returned by branch points with no branch feedback since the previous one",
        "configuration, source",
    )
    perf = _table(
        c, "variants", "queues and utilization per consolidation variant", "configuration"
    )
    for var in VARIANTS:
        row = shared.rows.get((k.id, var))
        if row is None:
            continue
        for v in k.vcs:
            if len(v.to) < 2:
                continue
            label = f"{k.id} {v.name}"
            sd = _num(row, f"abr.vc.{v.name}.er_sd_mbps")
            lo = _num(row, f"abr.vc.{v.name}.er_min_mbps")
            hi = _num(row, f"abr.vc.{v.name}.er_max_mbps")
            noise.add(label, f"{var} sd", sd)
            noise.add(label, f"{var} range", None if lo is None or hi is None else hi - lo)
            returned, blind = branch_counts(row, v.name)
            if var != "pass_through":
                blinds.add(label, var, 100 * blind / returned if returned else None)
        perf.add(k.id, f"{var} max queue", _num(row, "abr.max_queue_cells"))
        u = _num(row, "abr.bottleneck_utilization")
        perf.add(k.id, f"{var} util %", None if u is None else 100 * u)


def icr_rif_rows(c: Context, shared: Shared) -> None:
    """Tabulate configuration 8 by (ICR, RIF)."""
    t = _table(
        c,
        "icr_rif",
        "configuration 8 (WAN) by initial cell rate and rate increase factor",
        "ICR, RIF",
    )
    for k in CONFIGS:
        if k.id != "8" and not k.id.startswith("8-icr"):
            continue
        row = shared.rows.get((k.id, VARIANTS[0]))
        if row is None:
            continue
        icr = k.params.get("icr", 150.0)
        rif = k.params.get("rif", 1.0)
        summary_row(t, k, row, f"ICR {icr:g}, RIF {_rif_text(rif)}")
        if k.id != "8":
            figure_config(shared.runs, k, row, c.out_dir, c.output)


def unicast_rows(c: Context, shared: Shared) -> None:
    """Tabulate configuration 8 against its unicast comparisons."""
    t = _table(
        c, "unicast", "configuration 8: one P2MP source against unicast sources", "configuration"
    )
    for k in (config("8"), config("8u3"), config("8u1")):
        row = shared.rows.get((k.id, VARIANTS[0]))
        if row is None:
            continue
        summary_row(t, k, row, f"{k.id}: {k.title}")
        if k.id != "8":
            figure_config(shared.runs, k, row, c.out_dir, c.output)


#: The configurations the study reports as problematic for bursty traffic, rerun under
#: ERICA+ by the ``erica_plus`` experiment.
ERICA_PLUS_CONFIGS = ("11", "12", "13", "14")
#: The consolidation variants the ERICA+ experiment compares under.
ERICA_PLUS_VARIANTS = ("turnaround", "all_branches")
#: How many times its configuration's duration an ERICA+ experiment run lasts.
ERICA_PLUS_LENGTH = 3.0
#: The id of the ERICA+ experiment.
ERICA_PLUS = "erica_plus"


def erica_plus_rows(c: Context) -> None:
    """Tabulate configurations 11-14 under ERICA and ERICA+ side by side, with a figure."""
    if c.plan.configs is not None:
        return
    shared: Shared = c.shared
    t = _table(
        c,
        ERICA_PLUS,
        f"configurations 11-14 run {ERICA_PLUS_LENGTH:g} times as long under ERICA and "
        "ERICA+ (queue term, target delay 500 us), turnaround and all-branches consolidation",
        "configuration, switch, consolidation",
    )
    pairs = []
    for cid in ERICA_PLUS_CONFIGS:
        k = config(cid)
        for v in ERICA_PLUS_VARIANTS:
            got = []
            for algo, name in (("erica", "ERICA"), ("erica_plus", "ERICA+")):
                row = shared.rows.get((cid, f"{v}+{algo}"))
                if row is None:
                    continue
                label = f"{cid} {name} {v.replace('_', '-')}"
                t.add(label, "max queue (cells)", _num(row, "abr.max_queue_cells"))
                t.add(label, "steady max queue (cells)", _num(row, "abr.steady_max_queue_cells"))
                t.add(label, "steady mean queue (cells)", _steady_mean_queue(shared.runs, row))
                u = _num(row, "abr.bottleneck_utilization")
                t.add(label, "bottleneck", row.get("abr.bottleneck"))
                t.add(label, "bottleneck util %", None if u is None else 100 * u)
                got.append(row)
            if v == VARIANTS[0] and len(got) == 2:
                pairs.append((k, got[0], got[1]))
    if pairs:
        figure_erica_plus(shared.runs, pairs, c.out_dir, c.output)


def _steady_mean_queue(runs: Runs, row: Mapping[str, Any]) -> float | None:
    """Return the bottleneck's mean ABR queue over the second half of the run (cells)."""
    port = row.get("abr.bottleneck")
    if not isinstance(port, str):
        return None
    try:
        s = runs.series(row, f"abr.queue.{port}")
    except (KeyError, FileNotFoundError, ValueError):
        return None
    t = s["t"].to_numpy()
    if len(t) == 0:
        return None
    late = t >= t[-1] / 2
    return float(s["value"].to_numpy()[late].mean())


def figure_erica_plus(
    runs: Runs,
    pairs: list[tuple[Config, Mapping[str, Any], Mapping[str, Any]]],
    out_dir: Path,
    output: StudyOutput,
) -> None:
    """Draw the bottleneck's ABR queue over time under ERICA and ERICA+, per configuration."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(12, 6.5), layout="constrained")
    FigureCanvasAgg(fig)
    for n, (k, a, b) in enumerate(pairs, start=1):
        ax = fig.add_subplot(2, 2, n)
        for label, row in (("ERICA", a), ("ERICA+", b)):
            port = row.get("abr.bottleneck")
            if not isinstance(port, str):
                continue
            try:
                s = runs.series(row, f"abr.queue.{port}")
            except (KeyError, FileNotFoundError, ValueError):
                continue
            ax.plot(s["t"] * 1e3, s["value"], lw=0.9, label=f"{label} ({port})")
        ax.set_title(f"configuration {k.id}: {k.title}", fontsize=8)
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("ABR queue at the bottleneck (cells)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("bursty configurations: ERICA against ERICA+", fontsize=10)
    add_figure(
        output,
        out_dir,
        "erica_plus",
        "configurations 11-14: the bottleneck's ABR queue under ERICA and ERICA+",
        fig,
    )


def notes(plan: Plan, quick: bool) -> list[str]:
    """Return the notes printed under the tables."""
    out = [
        "Links 155.52 Mb/s, 53-byte cells, 5 us/km; LAN runs last 30 ms, WAN runs 200 ms, "
        + "".join(
            f"configuration {k.id} {k.duration_ms:g} ms ({k.long_run}), "
            for k in CONFIGS
            if k.long_run
        )
        + "ERICA: N = 50 cells and U = 0.95 in a LAN, "
        "N = 100 and U = 0.90 in a WAN, intervals of at most 1 ms, delta = 0.1. Sources: "
        "ICR 150 Mb/s, RIF 1, PCR = link rate, MCR 0, Nrm 32, Trm 100 ms, ADTF 0.5 s.",
        "Averages (ACR, utilization, ER spread) leave out the first tenth of each run; cells "
        "received count the whole run. Max queue: the largest ABR queue at any switch port "
        "after the first tenth of the run; steady max queue: the same over the second "
        "half. The bottleneck is the forward link with the highest utilization. The model "
        "has no randomness: every point is one run.",
        "Destinations are numbered per connection in the order of the configuration "
        "(D1 first); the figures name them SOURCE->Dk.",
    ]
    if quick:
        out.append(f"--quick: every run simulates {QUICK.scale:g} x its stated duration.")
    if plan is TINY:
        out.append("tiny profile: 5 % of every duration, five configurations.")
    return out


def _experiment(config_id: str) -> Experiment:
    c = config(config_id)
    return Experiment(
        config_id,
        f"configuration {config_id}: {c.title}",
        lambda context: run_config(config_id, context),
    )


STUDY = Study(
    profiles=Profiles(full=FULL, quick=QUICK, others={"tiny": TINY}, env="QOSSIM_ABR_PROFILE"),
    experiments=(
        *(_experiment(cid) for cid in EXPERIMENT_IDS),
        Experiment(
            ERICA_PLUS,
            "configurations 11-14 under ERICA+ beside ERICA (not in the study)",
            erica_plus_rows,
        ),
    ),
    notes=notes,
    prepare=prepare,
)
EXPERIMENTS = STUDY.ids
reproduce = STUDY.reproduce


if __name__ == "__main__":  # pragma: no cover - maintenance entry point
    for p in write_scenario_files(sys.argv[1] if len(sys.argv) > 1 else "studies/abr-multipoint"):
        print(p)
