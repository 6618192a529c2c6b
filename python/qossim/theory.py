"""Textbook queueing results used to validate the simulator.

Rates are in customers per second and times in seconds; ``rho = lam / mu``.
"""

from __future__ import annotations

import math

__all__ = [
    "erlang_b",
    "erlang_c",
    "md1_number",
    "md1_sojourn",
    "md1_wait",
    "mg1_number",
    "mg1_sojourn",
    "mg1_wait",
    "mm1_number",
    "mm1_queue_number",
    "mm1_sojourn",
    "mm1_wait",
    "utilisation",
]


def utilisation(lam: float, mu: float) -> float:
    """Return ``rho = lam / mu`` after checking that the queue is stable."""
    if not (lam >= 0 and math.isfinite(lam)):
        raise ValueError(f"arrival rate must be finite and >= 0, got {lam}")
    if not (mu > 0 and math.isfinite(mu)):
        raise ValueError(f"service rate must be finite and > 0, got {mu}")
    rho = lam / mu
    if rho >= 1:
        raise ValueError(f"unstable queue: rho = lam/mu = {rho:g} >= 1")
    return rho


def mm1_sojourn(lam: float, mu: float) -> float:
    """M/M/1 mean time in system (waiting + service): ``1 / (mu - lam)`` seconds."""
    utilisation(lam, mu)
    return 1.0 / (mu - lam)


def mm1_wait(lam: float, mu: float) -> float:
    """M/M/1 mean waiting time before service: ``rho / (mu - lam)`` seconds."""
    rho = utilisation(lam, mu)
    return rho / (mu - lam)


def mm1_number(lam: float, mu: float) -> float:
    """M/M/1 mean number in system: ``rho / (1 - rho)``."""
    rho = utilisation(lam, mu)
    return rho / (1.0 - rho)


def mm1_queue_number(lam: float, mu: float) -> float:
    """M/M/1 mean number waiting (not in service): ``rho**2 / (1 - rho)``."""
    rho = utilisation(lam, mu)
    return rho * rho / (1.0 - rho)


def md1_wait(lam: float, mu: float) -> float:
    """M/D/1 mean waiting time (Pollaczek–Khinchine): ``rho / (2 mu (1 - rho))`` seconds."""
    rho = utilisation(lam, mu)
    return rho / (2.0 * mu * (1.0 - rho))


def md1_sojourn(lam: float, mu: float) -> float:
    """M/D/1 mean time in system: mean wait plus the service time ``1/mu`` seconds."""
    return md1_wait(lam, mu) + 1.0 / mu


def md1_number(lam: float, mu: float) -> float:
    """M/D/1 mean number in system (Little's law on :func:`md1_sojourn`)."""
    return lam * md1_sojourn(lam, mu)


def mg1_wait(lam: float, mean_s: float, second_moment_s2: float) -> float:
    """M/G/1 mean waiting time (Pollaczek–Khinchine): ``lam E[S^2] / (2 (1 - rho))`` seconds.

    ``mean_s`` is the mean service time ``E[S]`` and ``second_moment_s2`` its second
    moment ``E[S^2]``; ``rho = lam E[S]``. Exponential service (``E[S^2] = 2 E[S]^2``)
    gives :func:`mm1_wait`, constant service (``E[S^2] = E[S]^2``) :func:`md1_wait`.
    """
    if not (mean_s > 0 and math.isfinite(mean_s)):
        raise ValueError(f"mean service time must be finite and > 0, got {mean_s}")
    if not (second_moment_s2 >= mean_s * mean_s and math.isfinite(second_moment_s2)):
        raise ValueError(
            f"second moment must be finite and >= mean^2 = {mean_s * mean_s:g}, "
            f"got {second_moment_s2}"
        )
    utilisation(lam, 1.0 / mean_s)
    return lam * second_moment_s2 / (2.0 * (1.0 - lam * mean_s))


def mg1_sojourn(lam: float, mean_s: float, second_moment_s2: float) -> float:
    """M/G/1 mean time in system: :func:`mg1_wait` plus the mean service time."""
    return mg1_wait(lam, mean_s, second_moment_s2) + mean_s


def mg1_number(lam: float, mean_s: float, second_moment_s2: float) -> float:
    """M/G/1 mean number in system (Little's law on :func:`mg1_sojourn`)."""
    return lam * mg1_sojourn(lam, mean_s, second_moment_s2)


def erlang_b(offered: float, servers: int) -> float:
    """Erlang-B blocking probability of ``offered`` Erlangs on ``servers`` servers.

    Uses the stable recursion ``B(0) = 1``, ``B(k) = E B(k-1) / (k + E B(k-1))``.
    """
    if not (offered >= 0 and math.isfinite(offered)):
        raise ValueError(f"offered load must be finite and >= 0 Erlang, got {offered}")
    if isinstance(servers, bool) or int(servers) != servers or servers < 0:
        raise ValueError(f"servers must be a non-negative integer, got {servers}")
    blocking = 1.0
    for k in range(1, int(servers) + 1):
        blocking = offered * blocking / (k + offered * blocking)
    return blocking


def erlang_c(offered: float, servers: int) -> float:
    """Erlang-C probability that an arrival waits (M/M/c), from :func:`erlang_b`."""
    if offered >= servers:
        raise ValueError(f"unstable queue: offered load {offered:g} >= {servers} servers")
    b = erlang_b(offered, servers)
    rho = offered / servers
    return b / (1.0 - rho * (1.0 - b))
