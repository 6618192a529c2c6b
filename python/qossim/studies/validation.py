"""Validation study: small queueing systems against textbook results.

Experiments:

``mm1``
    M/M/1 queue (Poisson arrivals, exponential service): mean time in
    system against ``1/(mu - lam)`` and mean number in system against
    ``rho/(1 - rho)``. Packet sizes are geometric in whole bytes (mean
    :data:`PACKET_BYTES`), so the theory column holds the exact
    Pollaczek–Khinchine values for those sizes, ``rho / (2 PACKET_BYTES)``
    (0.015% to 0.045%) below the exponential's.
``md1``
    M/D/1 queue (Poisson arrivals, constant service): mean waiting time
    against Pollaczek–Khinchine, ``rho / (2 mu (1 - rho))``.
``erlang_b``
    Loss system with ``c`` circuits and Poisson calls: blocking probability
    against Erlang B.

Every row of a table (every load) runs seeds of its own (:func:`row_seeds`), so
the rows are independent tests: with a correct engine each row leaves theory
outside its 95% interval with probability 5%, about one row in twenty.

Scenarios are built as dicts by :func:`scenario_mm1`, :func:`scenario_md1`
and :func:`scenario_erlang_loss`; their bodies, and the reading of the
measured quantities from a run's summary, are kept apart in the section
"Scenario definitions" below.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from qossim import plots, theory
from qossim.stats import CI
from qossim.studies import Table
from qossim.studies.frame import (
    CONFIDENCE,
    Context,
    Experiment,
    Profiles,
    Runs,
    Study,
    add_ci_figure,
    add_figure,
    ci_of,
    ci_point,
)

TITLE = "Validation against queueing theory"

#: Service rate of the single-server queues (customers per second).
MU = 1000.0
#: Mean call holding time of the loss system (seconds).
HOLDING_S = 1.0
#: Circuits of the loss system.
CIRCUITS = 10


@dataclass(frozen=True)
class Plan:
    """How much to simulate: seeds, load points and simulated time."""

    seeds: tuple[int, ...]
    loads: tuple[float, ...]
    offered_erlang: tuple[float, ...]
    duration_s: float
    warmup_s: float
    loss_duration_s: float
    loss_warmup_s: float


FULL = Plan(
    seeds=tuple(range(1, 11)),
    loads=(0.3, 0.5, 0.7, 0.8, 0.9),
    offered_erlang=(4.0, 6.0, 8.0, 10.0, 12.0),
    duration_s=2000.0,
    warmup_s=200.0,
    loss_duration_s=20000.0,
    loss_warmup_s=1000.0,
)
QUICK = Plan(
    seeds=(1, 2, 3),
    loads=(0.5, 0.8),
    offered_erlang=(6.0, 10.0),
    duration_s=100.0,
    warmup_s=10.0,
    loss_duration_s=2000.0,
    loss_warmup_s=100.0,
)


# ============================================================================
# Scenario definitions
#
# The three *_body functions return the scenario dict of one point in the
# engine's scenario language, and the measured_* functions read the
# quantities compared with theory from one run's row of the gathered table
# (the run's summary, nested tables flattened to dotted names). They are the
# only part of this module that depends on the scenario schema.
# ============================================================================


#: Mean packet size of the single-server queues (bytes). "Exponential" sizes are
#: geometric in whole bytes with this mean, so the simulated queue is M/G/1 with
#: E[S] = 1/mu and E[S^2] = (2 - 1/PACKET_BYTES) / mu^2, 0.05% below the exponential's
#: 2 / mu^2. Its exact mean time in system and mean number in system (Pollaczek-Khinchine:
#: geometric_mm1_sojourn, geometric_mm1_number) lie rho / (2 PACKET_BYTES) = rho x 0.05%
#: below 1/(mu - lam) and rho/(1 - rho): 0.015% to 0.045% at the loads run here, a tenth
#: or less of the intervals' half-widths (0.2% to 1% with 10 seeds). The study compares
#: with the exact values all the same, so no known difference is left between the queue
#: simulated and the theory it is compared with.
PACKET_BYTES = 1000


def _queue_body(
    lam: float, mu: float, duration_s: float, warmup_s: float, size_dist: str
) -> dict[str, Any]:
    rate_bps = mu * PACKET_BYTES * 8
    return {
        "run": {"duration": f"{duration_s:g}s", "warmup": f"{warmup_s:g}s"},
        "topology": {
            "kind": "single_link",
            "rate": f"{rate_bps:.0f}bps",
            "delay": "0s",
            "queue": {"kind": "droptail", "limit": "1000000p"},
        },
        "traffic": [
            {
                "name": "arrivals",
                "from": "a",
                "to": "b",
                "model": "poisson",
                "rate": f"{lam:.12g}/s",
                "size": f"{PACKET_BYTES}B",
                "size_dist": size_dist,
                "flows": 1,
            }
        ],
    }


def mm1_body(lam: float, mu: float, duration_s: float, warmup_s: float) -> dict[str, Any]:
    """Scenario dict of an M/M/1 queue: arrival rate ``lam``, service rate ``mu`` (1/s)."""
    return _queue_body(lam, mu, duration_s, warmup_s, "exponential")


def md1_body(lam: float, mu: float, duration_s: float, warmup_s: float) -> dict[str, Any]:
    """Scenario dict of an M/D/1 queue: arrival rate ``lam``, service time ``1/mu``."""
    return _queue_body(lam, mu, duration_s, warmup_s, "fixed")


def erlang_loss_body(
    arrival_rate: float,
    holding_s: float,
    circuits: int,
    duration_s: float,
    warmup_s: float,
) -> dict[str, Any]:
    """Scenario dict of a loss system: Poisson calls, mean holding time, circuits."""
    return {
        "run": {"duration": f"{duration_s:g}s", "warmup": f"{warmup_s:g}s"},
        "topology": {"kind": "single_link", "rate": "1Gbps"},
        "traffic": [
            {
                "name": "calls",
                "from": "a",
                "to": "b",
                # The packets of a call do not matter here: one tiny packet per 1000 s.
                "model": "cbr",
                "size": "100B",
                "interval": "1000s",
                "calls": {
                    "arrivals": "poisson",
                    "rate": f"{arrival_rate:.12g}/s",
                    "holding": f"exp:{holding_s:g}s",
                    "max_active": circuits,
                },
            }
        ],
    }


def service_moments_geometric(mu: float) -> tuple[float, float]:
    """Mean and second moment (s, s^2) of the service time of the simulated M/M/1 queue.

    Sizes are geometric on {1, 2, ...} bytes with mean ``m = PACKET_BYTES``, whose second
    moment is ``m (2m - 1)`` bytes^2; the link serves ``mu`` packets of mean size per
    second, so one byte takes ``1 / (mu m)`` seconds.
    """
    m = float(PACKET_BYTES)
    per_byte = 1.0 / (mu * m)
    return m * per_byte, m * (2.0 * m - 1.0) * per_byte * per_byte


def geometric_mm1_sojourn(lam: float, mu: float) -> float:
    """Exact mean time in system of the simulated M/M/1 queue (geometric sizes), seconds.

    Pollaczek-Khinchine with :func:`service_moments_geometric`; it is
    ``1 / (mu - lam) x (1 - rho / (2 PACKET_BYTES))``.
    """
    return theory.mg1_sojourn(lam, *service_moments_geometric(mu))


def geometric_mm1_number(lam: float, mu: float) -> float:
    """Exact mean number in system of the simulated M/M/1 queue (Little's law)."""
    return theory.mg1_number(lam, *service_moments_geometric(mu))


def measured_queue(row: Mapping[str, Any]) -> dict[str, float]:
    """Read ``sojourn_s``, ``wait_s`` and ``number`` (mean in system) from a run.

    The sojourn is the mean creation-to-delivery delay (the link has no propagation
    delay); the wait subtracts the mean service time ``1/MU``; the number in system is
    the time-averaged number waiting plus the fraction of time the server is busy.
    """
    sojourn = float(row["group.arrivals.delay_mean_s"])
    return {
        "sojourn_s": sojourn,
        "wait_s": sojourn - 1.0 / MU,
        "number": float(row["link.a-b.queue_mean_pkts"]) + float(row["link.a-b.utilization"]),
    }


def measured_blocking(row: Mapping[str, Any]) -> float:
    """Read the call blocking probability of a loss-system run."""
    return float(row["agent.traffic.calls.blocking"])


# ============================================================================
# End of scenario definitions
# ============================================================================


def scenario_mm1(lam: float, mu: float, *, duration_s: float, warmup_s: float) -> dict[str, Any]:
    """Return the scenario dict of an M/M/1 queue (checks stability first)."""
    theory.utilisation(lam, mu)
    _check_times(duration_s, warmup_s)
    return mm1_body(lam, mu, duration_s, warmup_s)


def scenario_md1(lam: float, mu: float, *, duration_s: float, warmup_s: float) -> dict[str, Any]:
    """Return the scenario dict of an M/D/1 queue (checks stability first)."""
    theory.utilisation(lam, mu)
    _check_times(duration_s, warmup_s)
    return md1_body(lam, mu, duration_s, warmup_s)


def scenario_erlang_loss(
    offered_erlang: float,
    circuits: int,
    *,
    holding_s: float = HOLDING_S,
    duration_s: float,
    warmup_s: float,
) -> dict[str, Any]:
    """Return the scenario dict of a loss system offered ``offered_erlang`` Erlangs."""
    if offered_erlang <= 0 or circuits < 1 or holding_s <= 0:
        raise ValueError("offered load, circuits and holding time must be positive")
    _check_times(duration_s, warmup_s)
    return erlang_loss_body(offered_erlang / holding_s, holding_s, circuits, duration_s, warmup_s)


def _check_times(duration_s: float, warmup_s: float) -> None:
    if not 0 <= warmup_s < duration_s:
        raise ValueError(f"need 0 <= warm-up < duration, got {warmup_s} and {duration_s}")


# ----------------------------------------------------------------------------
# comparison with theory
# ----------------------------------------------------------------------------


def _compare(
    table: Table,
    row: str,
    theory_value: float,
    samples: Sequence[float],
) -> CI:
    """Fill theory, measured, relative error and agreement cells of one row."""
    ci = ci_of(samples, CONFIDENCE)
    table.add(row, "theory", theory_value, runs=0)
    table.add_ci(row, "measured", ci)

    def rel(v: float) -> float:
        return (v - theory_value) / theory_value if theory_value else float("nan")

    table.add(row, "rel. error", rel(ci.mean), rel(ci.low), rel(ci.high), ci.n)
    if ci.n > 1:
        inside = "yes" if ci.low <= theory_value <= ci.high else "no"
        table.add(row, "theory in CI", inside, runs=0)
    return ci


#: Row ``i`` of a table runs the seeds ``s + i x ROW_SEED_STRIDE`` for the plan's seeds ``s``.
ROW_SEED_STRIDE = 1000


def row_seeds(seeds: Sequence[int], row: int) -> tuple[int, ...]:
    """Return the seeds of row ``row`` of a table: the plan's seeds moved ``row`` strides.

    Every row of a table (every load) gets seeds of its own, so its runs are independent
    of the other rows' runs. With one set of seeds for all loads, a seed's random numbers
    would drive every load alike (the same uniforms, the arrival times only rescaled),
    and one set of seeds that happens to offer a little less load than nominal would pull
    every row the same way: an excursion of one sample would read as a bias of the model.
    Independent rows make each row's "theory in CI" an independent 95% test.
    """
    if any(not 0 < s < ROW_SEED_STRIDE for s in seeds):
        raise ValueError(f"seeds must lie in 1..{ROW_SEED_STRIDE - 1}, got {tuple(seeds)}")
    return tuple(s + row * ROW_SEED_STRIDE for s in seeds)


def _run_rows(
    points: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]],
    seeds: Sequence[int],
    ctx: Context,
    name: str,
) -> list[Runs]:
    """Run every point (table row) with its own seeds (:func:`row_seeds`)."""
    return [
        Runs.run([point], row_seeds(seeds, row), ctx.out_dir, progress=ctx.progress, name=name)
        for row, point in enumerate(points)
    ]


def _dense(low: float, top: float) -> list[float]:
    return [low + (top - low) * i / 100 for i in range(101)]


def _queue_experiment(
    exp: str,
    label: str,
    scenario: Callable[..., dict[str, Any]],
    quantities: Sequence[tuple[str, str, str, Callable[[float, float], float], str]],
    ctx: Context,
) -> None:
    plan: Plan = ctx.plan
    points = [
        (
            {"rho": rho},
            scenario(rho * MU, MU, duration_s=plan.duration_s, warmup_s=plan.warmup_s),
        )
        for rho in plan.loads
    ]
    runs = _run_rows(points, plan.seeds, ctx, f"validation/{exp}")
    tables = {
        key: Table(f"{exp}_{key}", f"{label}: {title} ({unit})", row_label="load ρ")
        for key, title, unit, _, _ in quantities
    }
    curves: dict[str, list[dict[str, Any]]] = {key: [] for key, *_ in quantities}
    for row, rho in enumerate(plan.loads):
        measured = [measured_queue(r) for r in runs[row].select(rho=rho)]
        for key, _title, _unit, formula, metric in quantities:
            value = formula(rho * MU, MU)
            ci = _compare(tables[key], f"{rho:.2f}", value, [m[metric] for m in measured])
            curves[key].append(ci_point("rho", rho, ci))
    ctx.output.tables.extend(tables.values())
    for key, title, unit, formula, _ in quantities:
        dense = _dense(min(plan.loads) * 0.8, min(0.98, max(plan.loads) * 1.05))
        add_ci_figure(
            ctx.output,
            ctx.out_dir,
            f"{exp}_{key}",
            f"{label}: {title} against load",
            curves[key],
            "rho",
            x_label="load ρ = λ/μ",
            x_unit="fraction",
            y_label=title,
            y_unit=unit,
            reference=(dense, [formula(r * MU, MU) for r in dense], "theory"),
            title=f"{label}: {title}",
        )


def _erlang_experiment(ctx: Context) -> None:
    """erlang_b: loss system against Erlang B."""
    plan: Plan = ctx.plan
    points = [
        (
            {"offered_erlang": e},
            scenario_erlang_loss(
                e,
                CIRCUITS,
                duration_s=plan.loss_duration_s,
                warmup_s=plan.loss_warmup_s,
            ),
        )
        for e in plan.offered_erlang
    ]
    runs = _run_rows(points, plan.seeds, ctx, "validation/erlang_b")
    table = Table(
        "erlang_b_blocking",
        f"Loss system, {CIRCUITS} circuits: blocking probability (fraction)",
        row_label="offered (Erlang)",
    )
    curve = []
    for row, e in enumerate(plan.offered_erlang):
        value = theory.erlang_b(e, CIRCUITS)
        samples = [measured_blocking(r) for r in runs[row].select(offered_erlang=e)]
        curve.append(ci_point("offered", e, _compare(table, f"{e:g}", value, samples)))
    ctx.output.tables.append(table)
    import pandas as pd

    dense = _dense(min(plan.offered_erlang) * 0.8, max(plan.offered_erlang) * 1.1)
    fig = plots.loss_load(
        pd.DataFrame(curve),
        "offered",
        "mean",
        ci=("low", "high"),
        load_unit="Erlang",
        loss_label="blocking probability",
        reference=(dense, [theory.erlang_b(x, CIRCUITS) for x in dense], "Erlang B"),
        logy=True,
        title=f"Blocking with {CIRCUITS} circuits",
    )
    add_figure(
        ctx.output,
        ctx.out_dir,
        "erlang_b_blocking",
        "Loss system: blocking against offered load",
        fig,
    )


def notes(plan: Plan, quick: bool) -> list[str]:
    """Describe what was run (and, for ``--quick``, what the quick profile shortens)."""
    out = [
        f"Measured values are means over {len(plan.seeds)} seeds with "
        f"{CONFIDENCE:.0%} Student-t confidence intervals; ± gives the half-width.",
        f"Queues: service rate μ = {MU:g}/s, {plan.duration_s:g} s simulated per run, "
        f"the first {plan.warmup_s:g} s of them warm-up; loss system: {CIRCUITS} circuits, "
        f"mean holding {HOLDING_S:g} s, {plan.loss_duration_s:g} s simulated, the first "
        f"{plan.loss_warmup_s:g} s of them warm-up.",
        f"Each row runs seeds of its own, so rows are independent 95% tests: a correct "
        f"engine leaves theory outside the interval in about one row in twenty. M/M/1 "
        f"theory is exact for the geometric packet sizes simulated (mean {PACKET_BYTES} B), "
        f"ρ/{2 * PACKET_BYTES} below 1/(μ − λ) and ρ/(1 − ρ).",
    ]
    if quick:
        out.append(
            f"--quick: {len(QUICK.seeds)} seeds instead of {len(FULL.seeds)}, "
            f"{len(QUICK.loads)} queue loads instead of {len(FULL.loads)}, "
            f"{len(QUICK.offered_erlang)} loss-system loads instead of "
            f"{len(FULL.offered_erlang)}, and {QUICK.duration_s:g} s / "
            f"{QUICK.loss_duration_s:g} s simulated instead of {FULL.duration_s:g} s / "
            f"{FULL.loss_duration_s:g} s."
        )
    return out


STUDY = Study(
    profiles=Profiles(full=FULL, quick=QUICK),
    experiments=(
        Experiment(
            "mm1",
            "M/M/1 queue against 1/(μ − λ) and ρ/(1 − ρ)",
            lambda ctx: _queue_experiment(
                "mm1",
                "M/M/1",
                scenario_mm1,
                [
                    ("sojourn", "mean time in system", "s", geometric_mm1_sojourn, "sojourn_s"),
                    (
                        "number",
                        "mean number in system",
                        "customers",
                        geometric_mm1_number,
                        "number",
                    ),
                ],
                ctx,
            ),
        ),
        Experiment(
            "md1",
            "M/D/1 queue against Pollaczek–Khinchine",
            lambda ctx: _queue_experiment(
                "md1",
                "M/D/1",
                scenario_md1,
                [("wait", "mean waiting time", "s", theory.md1_wait, "wait_s")],
                ctx,
            ),
        ),
        Experiment.of(_erlang_experiment, lambda f, ctx: f(ctx)),
    ),
    notes=notes,
)
EXPERIMENTS = STUDY.ids
reproduce = STUDY.reproduce
