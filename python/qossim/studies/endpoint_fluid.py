"""The thrashing model of endpoint admission (experiment E12), without packets.

Flows arrive as a Poisson process, probe for an exponential time, and are admitted when
their probe ends if it saw no loss (ε = 0, perfect measurement); admitted flows hold for
an exponential time. Every flow, admitted or probing, sends at the same rate r on a link
of capacity C. The state is (admitted a, probing p), a continuous-time Markov chain:

* a flow arrives: (a, p) -> (a, p + 1) at rate λ (the probing count is truncated at
  ``max_probing``; arrivals beyond it are not counted);
* a probe ends: at rate p / T, to (a + 1, p − 1) if (a + p)·r ≤ C, the probes then
  losing nothing, and to (a, p − 1) otherwise (the probe saw loss and the flow leaves);
* an admitted flow ends: (a, p) -> (a − 1, p) at rate a·μ.

In-band, probes and data share the link: when (a + p)·r > C every packet is lost with
probability 1 − C/((a + p)·r), data included, and useful utilization collapses as
probing grows. Out-of-band, data goes first: data is lost only if a·r > C (never: a
flow is admitted only when a + p fits), but probes starve, admissions stop and the link
empties. The chain is solved with a sparse linear solver; :meth:`Model.simulate` runs
the same chain event by event for the cross-check.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Measures:
    """What the study reads from the chain (or a simulation of it)."""

    #: Data delivered (not lost) over the link capacity.
    useful_utilization: float
    #: Data lost over data sent.
    data_loss: float
    #: Mean number of probing flows.
    mean_probing: float
    #: Mean number of admitted flows.
    mean_admitted: float


@dataclass(frozen=True)
class Model:
    """E12's parameters.

    Flows arrive every ``tau_s`` seconds, hold ``holding_s`` and probe ``probe_mean_s``
    on average, each at ``flow_bps`` on a link of ``link_bps``.
    """

    probe_mean_s: float
    out_of_band: bool = False
    tau_s: float = 3.5
    holding_s: float = 30.0
    flow_bps: float = 128e3
    link_bps: float = 10e6
    #: Truncation of the probing count (None: three times the mean number of flows
    #: that would be probing with no admissions, plus 100).
    max_probing: int | None = None

    @property
    def probing_limit(self) -> int:
        """The truncation of the probing count in use."""
        if self.max_probing is not None:
            return self.max_probing
        return int(3 * self.probe_mean_s / self.tau_s) + 100

    @property
    def capacity(self) -> float:
        """Flows the link carries without loss, C / r (need not be whole)."""
        return self.link_bps / self.flow_bps

    def admits(self, a: int, p: int) -> bool:
        """Tell whether a probe ending in state (a, p) saw no loss."""
        return a + p <= self.capacity

    def data_loss_at(self, a: int, p: int) -> float:
        """Fraction of data lost in state (a, p)."""
        load = a + p if not self.out_of_band else a
        return max(0.0, 1.0 - self.capacity / load) if load > 0 else 0.0

    def max_admitted(self) -> int:
        """Return the largest number of admitted flows the chain can reach."""
        return math.floor(self.capacity)

    def _measures(self, weights: dict[tuple[int, int], float]) -> Measures:
        total = sum(weights.values())
        sent = delivered = probing = admitted = 0.0
        for (a, p), w in weights.items():
            w /= total
            sent += w * a
            delivered += w * a * (1.0 - self.data_loss_at(a, p))
            probing += w * p
            admitted += w * a
        return Measures(
            useful_utilization=delivered / self.capacity,
            # Undefined when (almost) nothing is admitted: the ratio of two vanishing masses.
            data_loss=(sent - delivered) / sent if sent > 1e-9 else math.nan,
            mean_probing=probing,
            mean_admitted=admitted,
        )

    def solve(self) -> Measures:
        """Return the stationary measures of the (truncated) chain (sparse linear solve)."""
        import numpy as np
        from scipy.sparse import csr_matrix
        from scipy.sparse.linalg import spsolve

        amax, pmax = self.max_admitted(), self.probing_limit
        lam, mu, nu = 1.0 / self.tau_s, 1.0 / self.holding_s, 1.0 / self.probe_mean_s
        n = (amax + 1) * (pmax + 1)

        def idx(a: int, p: int) -> int:
            return a * (pmax + 1) + p

        rows, cols, vals = [], [], []

        def rate(i: int, j: int, r: float) -> None:
            # Q^T: the flow into j from i.
            rows.append(j)
            cols.append(i)
            vals.append(r)
            rows.append(i)
            cols.append(i)
            vals.append(-r)

        for a in range(amax + 1):
            for p in range(pmax + 1):
                i = idx(a, p)
                if p < pmax:
                    rate(i, idx(a, p + 1), lam)
                if p > 0:
                    if self.admits(a, p) and a < amax:
                        rate(i, idx(a + 1, p - 1), p * nu)
                    else:
                        rate(i, idx(a, p - 1), p * nu)
                if a > 0:
                    rate(i, idx(a - 1, p), a * mu)
        qt = csr_matrix((vals, (rows, cols)), shape=(n, n)).tolil()
        # Replace one balance equation by the normalization.
        qt[n - 1, :] = np.ones(n)
        b = np.zeros(n)
        b[n - 1] = 1.0
        pi = spsolve(qt.tocsr(), b)
        weights = {
            (a, p): float(pi[idx(a, p)])
            for a in range(amax + 1)
            for p in range(pmax + 1)
            if pi[idx(a, p)] > 0
        }
        return self._measures(weights)

    def simulate(self, duration_s: float, seed: int) -> Measures:
        """Simulate the chain event by event and return its time-averaged measures.

        The first tenth of ``duration_s`` more is a warm-up, not measured.
        """
        rng = random.Random(seed)
        lam, mu, nu = 1.0 / self.tau_s, 1.0 / self.holding_s, 1.0 / self.probe_mean_s
        a = p = 0
        t = 0.0
        warm = duration_s / 10
        end = warm + duration_s
        weights: dict[tuple[int, int], float] = {}
        while t < end:
            r_arr = lam if p < self.probing_limit else 0.0
            r_probe = p * nu
            r_dep = a * mu
            total = r_arr + r_probe + r_dep
            dt = rng.expovariate(total)
            stay = min(t + dt, end) - max(t, warm)
            if stay > 0:
                weights[(a, p)] = weights.get((a, p), 0.0) + stay
            t += dt
            if t >= end:
                break
            u = rng.random() * total
            if u < r_arr:
                p += 1
            elif u < r_arr + r_probe:
                if self.admits(a, p) and a < self.max_admitted():
                    a += 1
                p -= 1
            else:
                a -= 1
        return self._measures(weights)
