//! PIE, Proportional Integral controller Enhanced (Pan, Natarajan, Baker and White;
//! RFC 8033): a FIFO that drops arriving packets at random with a probability that a
//! controller, running on its own clock, moves up and down to hold the queueing delay
//! near a target.
//!
//! # Queue delay
//! Every packet is stamped with its enqueue time, kept beside it in the discipline (the
//! RFC's timestamp variant, not its departure-rate estimate). The *current delay* is the
//! waiting time of the packet that last left the queue (`dequeue time - stamp`); it is
//! zero at an update that finds the queue empty.
//!
//! # Controller
//! Every `t_update` (15 ms by default) on the discipline's own timer (the engine schedules
//! it as an event of the port, whether packets move or not), with `d` the current delay
//! and `d_old` the one of the previous update, both in seconds:
//! - the step is `p = alpha (d - target) + beta (d - d_old)` (alpha and beta per second);
//! - auto-tuning: while the drop probability is small the step is scaled down — divided
//!   by 2048 below 10^-6, by 512 below 10^-5, by 128 below 10^-4, by 32 below 10^-3, by 8
//!   below 10^-2 and by 2 below 10^-1 — so the controller is gentle where a small change
//!   is a large relative one;
//! - at a probability of 10 % or more a step is at most 0.02 upward;
//! - the probability moves by the step; when both `d` and `d_old` are zero it then decays
//!   by the factor 0.98; it is kept within [0, 1];
//! - the burst allowance falls by `t_update` (not below zero); when the probability is
//!   zero and both delays are below half the target it is refilled to `max_burst`;
//! - `d_old` becomes `d`.
//!
//! The first update is `t_update` after the start of the run; later ones follow
//! `t_update` apart.
//!
//! # Arrivals
//! An arrival finding the buffer full (`limit`, packets or bytes) is dropped at the tail
//! ([`DropCause::Overflow`]). Otherwise it is kept without a draw while the burst
//! allowance lasts, while `d_old` is below half the target and the probability below
//! 20 %, or while the queue holds at most two MTU-sized packets (`2 mtu` bytes);
//! otherwise it is dropped with the current probability ([`DropCause::Early`]), one
//! uniform draw from the discipline's stream per judged arrival. The RFC's optional
//! de-randomisation is not modelled.
//!
//! # ECN
//! With `ecn = true` (RFC 8033, section 5.1), an arrival the draw would drop is instead
//! marked CE and kept when it carries ECT ([`marks::ECN_ECT`]) and the drop probability
//! is at most `mark_ecnth` (10 % by default); above that threshold, or without ECT, it
//! is dropped. Marking does not change the controller, which sees only the delay.
//!
//! # Arithmetic
//! Times are integer picoseconds; the controller works in `f64` with additions,
//! multiplications and divisions only (no library functions), so runs are identical on
//! every platform.

use super::{Dequeue, DropCause, DropLog, Limit, QueueDisc, QueueKind};
use crate::decl::{self, limit_value, Absent, Bounds, Param, Type, Value, Values};
use crate::metrics::declared::{stat, Stat, Window::AfterWarmup};
use crate::packet::{marks, Packet};
use crate::rng::Rng;
use crate::scenario::QueueSpec;
use crate::time::{to_secs, Time};
use std::collections::VecDeque;

/// PIE's statistics (`link.{link}.` keys of its port's summary).
pub const STATS: &[Stat] = &[
    stat(
        "link.{link}.pie_{early_drops|overflow_drops}",
        "packets",
        AfterWarmup,
        "PIE: random early drops; drops of a full buffer",
    ),
    stat(
        "link.{link}.pie_updates",
        "times",
        AfterWarmup,
        "PIE: updates of the drop probability (its timer)",
    ),
    stat(
        "link.{link}.pie_delay_mean_s",
        "s",
        AfterWarmup,
        "PIE: the queue delay it measured, averaged over its updates",
    ),
    stat(
        "link.{link}.pie_drop_prob_mean",
        "fraction",
        AfterWarmup,
        "PIE: the drop probability, averaged over its updates",
    ),
    stat(
        "link.{link}.pie_ecn_marks",
        "packets",
        AfterWarmup,
        "PIE with ecn = true: ECN-capable arrivals marked CE instead of dropped",
    ),
];

/// PIE as scenarios name it (`kind = "pie"`).
pub static PIE: QueueKind = QueueKind {
    name: "pie",
    aliases: &[],
    title: "PIE",
    doc: "Proportional Integral controller Enhanced (RFC 8033): random drops on arrival, the probability updated on a timer to hold the queue delay at target.",
    params: &[
        Param::new("limit", Type::Limit, Absent::Is("1000p"), "Buffer; arrivals beyond it are dropped at the tail.")
            .unit("p or B")
            .bounds(Bounds::Positive),
        Param::new("target", Type::Time, Absent::Is("15ms"), "Queue delay the controller holds.")
            .unit("s")
            .bounds(Bounds::PositiveAtMost(1000.0)),
        Param::new("t_update", Type::Time, Absent::Is("15ms"), "Period of the controller's updates (its timer).")
            .unit("s")
            .bounds(Bounds::PositiveAtMost(1000.0)),
        Param::new("alpha", Type::Number, Absent::Is("0.125"), "Weight of the delay's distance from target in a step.")
            .unit("1/s")
            .bounds(Bounds::Between(0.0, 1000.0)),
        Param::new("beta", Type::Number, Absent::Is("1.25"), "Weight of the delay's change since the last update in a step.")
            .unit("1/s")
            .bounds(Bounds::Between(0.0, 1000.0)),
        Param::new("max_burst", Type::Time, Absent::Is("150ms"), "Burst allowance: no early drop for this long after the queue was quiet.")
            .unit("s")
            .bounds(Bounds::Between(0.0, 1000.0)),
        Param::new("mtu", Type::Size, Absent::Is("1500B"), "A queue of at most two of these is never dropped from early.")
            .unit("B")
            .bounds(Bounds::PositiveAtMost(u32::MAX as f64)),
        Param::new("ecn", Type::Bool, Absent::Is("false"), "Mark ECN-capable packets CE instead of dropping them while the probability is at most mark_ecnth.")
        ,
        Param::new("mark_ecnth", Type::Number, Absent::Is("0.1"), "Drop probability above which ECN-capable packets are dropped, not marked.")
            .bounds(Bounds::Between(0.0, 1.0)),
    ],
    rules: decl::no_rules,
    spec: |v| QueueSpec::Declared {
        kind: "pie",
        values: v,
    },
    stats: STATS,
    build: |q, env| match q {
        QueueSpec::Declared { values, .. } => {
            Box::new(Pie::new(PieParams::from_values(values), (env.rng)()))
        }
        q => unreachable!("PIE asked to build {q:?}"),
    },
};

/// Parameters of a [`Pie`] queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    /// Buffer size; arrivals beyond it are dropped at the tail.
    pub limit: Limit,
    /// Queue delay the controller holds.
    pub target: Time,
    /// Period of the updates.
    pub t_update: Time,
    /// Weight of the distance from target, per second.
    pub alpha: f64,
    /// Weight of the change since the last update, per second.
    pub beta: f64,
    /// Burst allowance after a quiet period.
    pub max_burst: Time,
    /// Maximum packet size, bytes.
    pub mtu: u32,
    /// Mark ECN-capable packets instead of dropping them (RFC 8033, section 5.1).
    pub ecn: bool,
    /// Marking only while the drop probability is at most this.
    pub mark_ecnth: f64,
}

impl PieParams {
    /// The declared defaults (RFC 8033's) with `limit`.
    pub fn new(limit: Limit) -> Self {
        PieParams {
            limit,
            ..Self::from_values(&decl::defaults(PIE.params))
        }
    }

    /// Parameters from declared values (every key set).
    pub fn from_values(v: &Values) -> Self {
        PieParams {
            limit: v.limit("limit"),
            target: v.time("target"),
            t_update: v.time("t_update"),
            alpha: v.number("alpha"),
            beta: v.number("beta"),
            max_burst: v.time("max_burst"),
            mtu: v.count("mtu") as u32,
            ecn: v.bool("ecn"),
            mark_ecnth: v.number("mark_ecnth"),
        }
    }

    /// The parameters as declared values.
    pub fn values(&self) -> Values {
        Values(vec![
            ("limit", limit_value(self.limit)),
            ("target", Value::Time(self.target)),
            ("t_update", Value::Time(self.t_update)),
            ("alpha", Value::Number(self.alpha)),
            ("beta", Value::Number(self.beta)),
            ("max_burst", Value::Time(self.max_burst)),
            ("mtu", Value::Size(self.mtu as u64)),
            ("ecn", Value::Bool(self.ecn)),
            ("mark_ecnth", Value::Number(self.mark_ecnth)),
        ])
    }

    /// Checks the parameters against their declaration ([`PIE`]): `Err("key: reason")`.
    pub fn validate(&self) -> Result<(), String> {
        decl::validate(PIE.params, &self.values(), PIE.rules)
    }
}

/// What a [`Pie`] queue counted (since the warm-up, once it has ended).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PieCounters {
    /// Random drops on arrival.
    pub early_drops: u64,
    /// Arrivals dropped because the buffer was full.
    pub overflow_drops: u64,
    /// ECN-capable arrivals marked CE instead of dropped (with `ecn`).
    pub ecn_marks: u64,
    /// Controller updates.
    pub updates: u64,
    /// Sum of the current delay seen at the updates, seconds.
    pub delay_sum_s: f64,
    /// Sum of the drop probability after the updates.
    pub prob_sum: f64,
}

/// A PIE queue (see the module documentation).
pub struct Pie {
    p: PieParams,
    q: VecDeque<(Time, Packet)>,
    bytes: u64,
    rng: Rng,
    prob: f64,
    delay: Time,
    delay_old: Time,
    burst: Time,
    next_update: Time,
    counters: PieCounters,
}

impl Pie {
    /// A PIE queue with parameters `p` (checked: panics if [`PieParams::validate`] fails)
    /// drawing from `rng`.
    pub fn new(p: PieParams, rng: Rng) -> Self {
        if let Err(e) = p.validate() {
            panic!("PIE: {e}");
        }
        Pie {
            p,
            q: VecDeque::new(),
            bytes: 0,
            rng,
            prob: 0.0,
            delay: 0,
            delay_old: 0,
            burst: p.max_burst,
            next_update: p.t_update,
            counters: PieCounters::default(),
        }
    }

    /// The current drop probability.
    pub fn probability(&self) -> f64 {
        self.prob
    }

    /// The burst allowance left.
    pub fn burst_allowance(&self) -> Time {
        self.burst
    }

    /// The current delay (of the packet that last left).
    pub fn current_delay(&self) -> Time {
        self.delay
    }

    /// What the queue counted.
    pub fn counters(&self) -> PieCounters {
        self.counters
    }

    /// The parameters.
    pub fn params(&self) -> &PieParams {
        &self.p
    }

    fn fits(&self, size: u32) -> bool {
        match self.p.limit {
            Limit::Packets(n) => self.q.len() < n,
            Limit::Bytes(b) => self.bytes + size as u64 <= b,
        }
    }

    /// True if an arrival is kept without a draw.
    fn spared(&self) -> bool {
        self.burst > 0
            || (2 * self.delay_old < self.p.target && self.prob < 0.2)
            || self.bytes <= 2 * self.p.mtu as u64
    }

    /// One controller update at `now`.
    fn update(&mut self) {
        if self.q.is_empty() {
            self.delay = 0;
        }
        let (d, d_old) = (to_secs(self.delay), to_secs(self.delay_old));
        let mut step = self.p.alpha * (d - to_secs(self.p.target)) + self.p.beta * (d - d_old);
        const SCALES: [(f64, f64); 6] = [
            (0.000001, 2048.0),
            (0.00001, 512.0),
            (0.0001, 128.0),
            (0.001, 32.0),
            (0.01, 8.0),
            (0.1, 2.0),
        ];
        if let Some((_, s)) = SCALES.iter().find(|(below, _)| self.prob < *below) {
            step /= s;
        }
        if self.prob >= 0.1 && step > 0.02 {
            step = 0.02;
        }
        self.prob += step;
        if self.delay == 0 && self.delay_old == 0 {
            self.prob *= 0.98;
        }
        self.prob = self.prob.clamp(0.0, 1.0);
        self.burst = self.burst.saturating_sub(self.p.t_update);
        if self.prob == 0.0 && 2 * self.delay < self.p.target && 2 * self.delay_old < self.p.target
        {
            self.burst = self.p.max_burst;
        }
        self.delay_old = self.delay;
        let c = &mut self.counters;
        c.updates += 1;
        c.delay_sum_s += d;
        c.prob_sum += self.prob;
    }
}

impl QueueDisc for Pie {
    fn enqueue(&mut self, pkt: Packet, now: Time, drops: &mut DropLog) {
        if !self.fits(pkt.size) {
            self.counters.overflow_drops += 1;
            drops.record(&pkt, DropCause::Overflow);
            return;
        }
        let mut pkt = pkt;
        if !self.spared() && self.rng.uniform() < self.prob {
            if self.p.ecn && self.prob <= self.p.mark_ecnth && pkt.has(marks::ECN_ECT) {
                pkt.set(marks::ECN_CE);
                self.counters.ecn_marks += 1;
            } else {
                self.counters.early_drops += 1;
                drops.record(&pkt, DropCause::Early);
                return;
            }
        }
        self.bytes += pkt.size as u64;
        self.q.push_back((now, pkt));
    }
    fn dequeue(&mut self, now: Time) -> Dequeue {
        match self.q.pop_front() {
            Some((stamp, pkt)) => {
                self.bytes -= pkt.size as u64;
                self.delay = now - stamp;
                Dequeue::Packet(pkt)
            }
            None => Dequeue::Empty,
        }
    }
    fn len(&self) -> usize {
        self.q.len()
    }
    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet)) {
        self.q.iter().for_each(|(_, p)| f(p));
    }
    fn timer(&self) -> Option<Time> {
        Some(self.next_update)
    }
    fn on_timer(&mut self, now: Time, _drops: &mut DropLog) {
        if now < self.next_update {
            return;
        }
        self.update();
        self.next_update = now + self.p.t_update;
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        let c = &self.counters;
        let per_update = |x: f64| {
            if c.updates == 0 {
                0.0
            } else {
                x / c.updates as f64
            }
        };
        out.push(("pie_early_drops".into(), c.early_drops as f64));
        out.push(("pie_overflow_drops".into(), c.overflow_drops as f64));
        out.push(("pie_updates".into(), c.updates as f64));
        out.push(("pie_delay_mean_s".into(), per_update(c.delay_sum_s)));
        out.push(("pie_drop_prob_mean".into(), per_update(c.prob_sum)));
        if self.p.ecn {
            out.push(("pie_ecn_marks".into(), c.ecn_marks as f64));
        }
    }
    fn on_warmup(&mut self, _now: Time) {
        self.counters = PieCounters::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::PS_PER_MS;

    const MS: Time = PS_PER_MS;

    fn pie() -> Pie {
        Pie::new(PieParams::new(Limit::Packets(1000)), Rng::from_seed(1))
    }

    fn pkt() -> Packet {
        Packet::of_size(1500)
    }

    /// A queue whose packets wait 40 ms: the first update's step is
    /// 0.125 (0.040 - 0.015) + 1.25 (0.040 - 0) = 0.053125, divided by 2048 (the
    /// probability is 0, below 10^-6): 2.594e-5. The second sees no change of delay:
    /// 0.125 x 0.025 = 0.003125, divided by 128 (2.594e-5 is below 10^-4 but not below
    /// 10^-5): 2.441e-5, for 5.035e-5 in all.
    #[test]
    fn the_controller_steps_as_the_rfc_scales_them() {
        let mut q = pie();
        let mut log = DropLog::default();
        for _ in 0..10 {
            q.enqueue(pkt(), 0, &mut log);
        }
        let _ = q.dequeue(40 * MS);
        assert_eq!(q.timer(), Some(15 * MS));
        q.on_timer(15 * MS, &mut log);
        let p1 = 0.053125 / 2048.0;
        assert!((q.probability() - p1).abs() < 1e-15, "{}", q.probability());
        // Not due: nothing changes.
        q.on_timer(20 * MS, &mut log);
        assert!((q.probability() - p1).abs() < 1e-15);
        assert_eq!(q.timer(), Some(30 * MS));
        q.on_timer(30 * MS, &mut log);
        let p2 = p1 + 0.003125 / 128.0;
        assert!((q.probability() - p2).abs() < 1e-15, "{}", q.probability());
        assert_eq!(q.counters().updates, 2);
    }

    /// The burst allowance: 150 ms of no early drop, ten updates of 15 ms.
    #[test]
    fn the_burst_allowance_runs_down_then_drops_start() {
        let mut q = pie();
        let mut log = DropLog::default();
        q.prob = 1.0;
        for k in 1..=10u64 {
            q.delay = 100 * MS;
            q.enqueue(pkt(), k * 15 * MS - 1, &mut log);
            q.enqueue(pkt(), k * 15 * MS - 1, &mut log);
            q.enqueue(pkt(), k * 15 * MS - 1, &mut log);
            assert_eq!(log.early_total(), 0, "dropped within the allowance");
            q.on_timer(k * 15 * MS, &mut log);
            q.prob = 1.0;
        }
        assert_eq!(q.burst_allowance(), 0);
        q.enqueue(pkt(), 151 * MS, &mut log);
        assert_eq!(log.early_total(), 1, "probability 1 after the allowance");
    }

    /// Two packets or less are never dropped early, whatever the probability.
    #[test]
    fn a_short_queue_is_spared() {
        let mut q = pie();
        let mut log = DropLog::default();
        q.burst = 0;
        q.prob = 1.0;
        q.delay_old = 100 * MS;
        q.enqueue(pkt(), 0, &mut log);
        q.enqueue(pkt(), 0, &mut log);
        q.enqueue(pkt(), 0, &mut log);
        assert_eq!((q.len(), log.early_total()), (3, 0));
        q.enqueue(pkt(), 0, &mut log);
        assert_eq!((q.len(), log.early_total()), (3, 1));
    }

    /// An idle queue decays: no delay at two updates in a row multiplies by 0.98
    /// after the (negative) step.
    #[test]
    fn an_idle_queue_decays_its_probability() {
        let mut q = pie();
        let mut log = DropLog::default();
        q.prob = 0.5;
        q.on_timer(15 * MS, &mut log);
        let step = 0.125 * -0.015;
        assert!((q.probability() - (0.5 + step) * 0.98).abs() < 1e-15);
    }

    /// ECN marking: with the probability at 0.1 (the threshold, inclusive) every judged
    /// ECT arrival is marked when the draw says drop, a non-ECT one dropped; at 0.11 the
    /// ECT ones are dropped too. Draws are those of a second stream with the same seed,
    /// so the expected verdict of each arrival is known.
    #[test]
    fn ecn_marks_ect_arrivals_only_up_to_the_threshold() {
        for prob in [0.1, 0.11] {
            let p = PieParams {
                ecn: true,
                ..PieParams::new(Limit::Packets(100_000))
            };
            let mut q = Pie::new(p, Rng::from_seed(9));
            let mut draws = Rng::from_seed(9);
            let mut log = DropLog::default();
            q.burst = 0;
            q.prob = prob;
            q.delay_old = 100 * MS;
            for _ in 0..3 {
                q.enqueue(pkt(), 0, &mut log);
            }
            let (mut marks_expected, mut drops_expected) = (0, 0);
            for i in 0..2000 {
                let mut a = pkt();
                let ect = i % 2 == 0;
                if ect {
                    a.set(marks::ECN_ECT);
                }
                if draws.uniform() < prob {
                    if ect && prob <= 0.1 {
                        marks_expected += 1;
                    } else {
                        drops_expected += 1;
                    }
                }
                q.enqueue(a, 0, &mut log);
            }
            let c = q.counters();
            assert_eq!(
                (c.ecn_marks, c.early_drops),
                (marks_expected, drops_expected)
            );
            assert_eq!(log.early_total(), drops_expected);
            let mut ce = 0;
            q.for_each_queued(&mut |p| ce += u64::from(p.has(marks::ECN_CE)));
            assert_eq!(ce, marks_expected);
            assert!(drops_expected > 50, "{drops_expected}");
            if prob <= 0.1 {
                assert!(marks_expected > 50, "{marks_expected}");
            } else {
                assert_eq!(marks_expected, 0);
            }
        }
    }

    #[test]
    fn parameters_are_checked() {
        let ok = PieParams::new(Limit::Packets(10));
        assert!(ok.validate().is_ok());
        let e = PieParams { target: 0, ..ok }.validate().unwrap_err();
        assert_eq!(e, "target: must be positive");
        let e = PieParams { alpha: -1.0, ..ok }.validate().unwrap_err();
        assert_eq!(e, "alpha: must be between 0 and 1000, got -1");
        let e = PieParams {
            limit: Limit::Bytes(0),
            ..ok
        }
        .validate()
        .unwrap_err();
        assert_eq!(e, "limit: must be positive");
    }
}
