//! The RED family: RED (Floyd and Jacobson 1993) with its gentle and byte-mode variants,
//! and RIO (Clark and Fang 1998), coupled (RIO-C) or decoupled (RIO-D). All share one
//! average estimator and one drop decision, described here once.
//!
//! # Average queue
//! An exponentially weighted moving average with weight `w_q`, updated on every arrival
//! of a packet it covers, from the number of packets queued *before* the arrival (the
//! packet in transmission is not counted):
//! `avg <- (1 - w_q) avg + w_q q`.
//! After an idle period of length `t` (the queue was empty), the average is first decayed
//! as if `m = floor(t / s)` packets of the mean size had arrived to an empty queue, where
//! `s` is the transmission time of a mean-size packet on the link:
//! `avg <- (1 - w_q)^m avg`. The power is computed by exact binary exponentiation, so
//! results are identical on every platform. With a link rate of 0 there is no idle
//! correction.
//!
//! For [`Red`], an idle period starts when the port asks for a packet and finds the queue
//! empty (the end of the last transmission), as in ns-2's RED. For [`Rio`], the average of
//! one class goes idle when the last packet it covers leaves the queue (start of its
//! transmission), as in ns-2's DiffServ RIO.
//!
//! # Drop decision
//! With `pb` the curve's probability at the current average ([`RedCurve::pb`]):
//! - `avg < min_th`: accept; the inter-drop counter is set to -1;
//! - `avg >= max_th` (or `>= 2 max_th` with `gentle`): drop ("forced" early drop); the
//!   counter is set to 0;
//! - otherwise the counter is incremented (from -1 it becomes 0) and the packet is dropped
//!   with probability `pa = pb / (1 - count pb)` (1 once `count pb >= 1`); a drop sets the
//!   counter to 0. This is the counter convention of Floyd and Jacobson's paper and of
//!   ns-2's RIO: the first packet after the average crosses `min_th` sees `pa = pb`, the
//!   k-th packet after a drop sees `pa = pb / (1 - k pb)`, so the gap between drops is
//!   close to uniform on `1 ..= 1/pb - 1` (mean `1/(2 pb)`).
//! - In byte mode the counter counts bytes since the last drop in units of the mean packet
//!   size, and `pa` is then scaled by `size / mean_size` (as ns-2's `bytes_` option).
//!
//! Then, if the packet is still accepted but the physical queue already holds `limit`
//! packets, it is dropped as an overflow (whatever its class) and the counter, if in the
//! probabilistic region, is reset to 0 (ns-2 resets it on every forced drop).
//!
//! Random and forced early drops are recorded as [`DropCause::Early`] (they are queue
//! management decisions taken before the queue is full), overflows as
//! [`DropCause::Overflow`]; the reports also give forced drops separately.
//!
//! Differences from ns-2, deliberately: ns-2 RED's `wait_` option (drop probability 0 until
//! `count pb >= 1`), its `qlen > 1` guard and its "first packet above `min_th` is never
//! dropped" rule are not reproduced; the classic algorithm above is. ns-2 RIO's
//! unclamped `pa` (which turns negative when `count pb > 1`, so nothing is dropped) is
//! clamped to 1 as in RED. Thresholds are in packets; byte mode changes the drop
//! probability, not the unit of the queue.

use super::{Dequeue, DropCause, DropLog, QueueDisc, QueueKind};
use crate::decl::{self, Absent, Bounds, Param, Problem, Type, Value, Values};
use crate::metrics::declared::{
    stat, Stat,
    Window::{End, Run},
};
use crate::packet::{marks, Packet};
use crate::rng::Rng;
use crate::scenario::QueueSpec;
use crate::time::{Time, PS_PER_S};
use std::collections::VecDeque;

/// A RED drop curve: thresholds on the average queue (packets) and the maximum early-drop
/// probability.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedCurve {
    /// Below this average nothing is dropped early.
    pub min_th: f64,
    /// At this average the probability reaches `max_p`; above it everything is dropped
    /// (or, with `gentle`, the probability rises linearly to 1 at `2 max_th`).
    pub max_th: f64,
    /// Drop probability at `max_th`.
    pub max_p: f64,
    /// Gentle RED: between `max_th` and `2 max_th` the probability rises from `max_p` to 1.
    pub gentle: bool,
}

impl RedCurve {
    /// A curve with the given thresholds and maximum probability, not gentle.
    pub fn new(min_th: f64, max_th: f64, max_p: f64) -> Self {
        RedCurve {
            min_th,
            max_th,
            max_p,
            gentle: false,
        }
    }

    /// The same curve with the gentle option set to `on`.
    pub fn gentle(mut self, on: bool) -> Self {
        self.gentle = on;
        self
    }

    /// Parses `min_th/max_th/max_p`, e.g. `"420/840/0.05"`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.trim().split('/').collect();
        if parts.len() != 3 {
            return Err(format!("RED curve {s:?}: expected min_th/max_th/max_p"));
        }
        let num = |x: &str, what: &str| -> Result<f64, String> {
            x.trim()
                .parse::<f64>()
                .map_err(|_| format!("RED curve {s:?}: {what} {x:?} is not a number"))
        };
        let c = RedCurve::new(
            num(parts[0], "min_th")?,
            num(parts[1], "max_th")?,
            num(parts[2], "max_p")?,
        );
        c.validate()?;
        Ok(c)
    }

    /// Checks the curve against RED's declared `min_th`, `max_th` and `max_p`
    /// (`0 <= min_th < max_th`, `0 < max_p <= 1`).
    pub fn validate(&self) -> Result<(), String> {
        let v = Values(vec![
            ("min_th", Value::Number(self.min_th)),
            ("max_th", Value::Number(self.max_th)),
            ("max_p", Value::Number(self.max_p)),
        ]);
        decl::validate(RED.params, &v, red_rules).map_err(|e| {
            format!(
                "RED curve {}/{}/{}: {e}",
                self.min_th, self.max_th, self.max_p
            )
        })
    }

    /// The average from which every packet is dropped: `max_th`, or `2 max_th` if gentle.
    pub fn drop_all_from(&self) -> f64 {
        if self.gentle {
            2.0 * self.max_th
        } else {
            self.max_th
        }
    }

    /// The probability `pb` at average `avg`, before the inter-drop count correction:
    /// 0 below `min_th`, `max_p (avg - min_th) / (max_th - min_th)` up to `max_th`, then
    /// (gentle) `max_p + (1 - max_p)(avg - max_th) / max_th` up to `2 max_th`, and 1 from
    /// [`RedCurve::drop_all_from`] on.
    pub fn pb(&self, avg: f64) -> f64 {
        if avg < self.min_th {
            0.0
        } else if avg >= self.drop_all_from() {
            1.0
        } else if avg < self.max_th {
            self.max_p * (avg - self.min_th) / (self.max_th - self.min_th)
        } else {
            (self.max_p + (1.0 - self.max_p) * (avg - self.max_th) / self.max_th).min(1.0)
        }
    }
}

/// The probability with which RED drops a packet of `size` bytes, given the curve's
/// `pb`, the inter-drop `count` (packets since the last drop, or in byte mode bytes since
/// the last drop) and, in byte mode, the mean packet size: `pb / (1 - c pb)` with `c` the
/// count (in mean-size packets in byte mode), 1 once `c pb >= 1`, then in byte mode
/// multiplied by `size / mean_size`; never above 1.
pub fn red_drop_probability(pb: f64, count: f64, size: u32, byte_mode: Option<u32>) -> f64 {
    let c = match byte_mode {
        Some(mean) => count / mean.max(1) as f64,
        None => count,
    };
    let x = c * pb;
    let mut pa = if x < 1.0 { pb / (1.0 - x) } else { 1.0 };
    if let Some(mean) = byte_mode {
        if pa < 1.0 {
            pa = pa * size as f64 / mean.max(1) as f64;
        }
    }
    pa.min(1.0)
}

/// (1 - w)^m by binary exponentiation (deterministic on every platform).
fn pow_u64(mut base: f64, mut m: u64) -> f64 {
    let mut acc = 1.0;
    while m > 0 {
        if m & 1 == 1 {
            acc *= base;
        }
        base *= base;
        m >>= 1;
        if base == 0.0 {
            return if m > 0 { 0.0 } else { acc };
        }
    }
    acc
}

/// How many mean-size packets the link could have sent in `dt`.
#[derive(Clone, Copy, Debug)]
pub(super) struct IdleClock {
    /// The link's rate, b/s.
    pub(super) rate_bps: u64,
    /// The mean packet size, bytes.
    pub(super) mean_size: u32,
}

impl IdleClock {
    pub(super) fn slots(&self, dt: Time) -> u64 {
        if self.rate_bps == 0 {
            return 0;
        }
        let den = 8u128 * self.mean_size.max(1) as u128 * PS_PER_S as u128;
        let m = dt as u128 * self.rate_bps as u128 / den;
        m.min(u64::MAX as u128) as u64
    }
}

/// An EWMA of a queue length with idle-time correction.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ewma {
    /// The average, packets.
    pub(super) avg: f64,
    idle: bool,
    idle_since: Time,
}

impl Ewma {
    pub(super) fn new() -> Self {
        Ewma {
            avg: 0.0,
            idle: true,
            idle_since: 0,
        }
    }

    /// Updates with `q` packets queued at an arrival at `now`. An idle period is accounted
    /// for up to `now` (it goes on from `now` if the arrival is not queued).
    #[inline]
    pub(super) fn update(&mut self, q: usize, now: Time, w: f64, clock: &IdleClock) {
        if self.idle {
            let m = clock.slots(now.saturating_sub(self.idle_since));
            if m > 0 {
                self.avg *= pow_u64(1.0 - w, m);
            }
            self.idle_since = now;
        }
        self.avg = (1.0 - w) * self.avg + w * q as f64;
    }

    #[inline]
    pub(super) fn busy(&mut self) {
        self.idle = false;
    }

    #[inline]
    pub(super) fn go_idle(&mut self, now: Time) {
        if !self.idle {
            self.idle = true;
            self.idle_since = now;
        }
    }
}

/// What the drop decision says about an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    Accept,
    /// Probabilistic early drop.
    Random,
    /// Average beyond the probabilistic region.
    Forced,
}

/// The inter-drop counter of one curve.
#[derive(Clone, Copy, Debug)]
pub(super) struct Dropper {
    count: i64,
    count_bytes: f64,
}

impl Dropper {
    pub(super) fn new() -> Self {
        Dropper {
            count: -1,
            count_bytes: 0.0,
        }
    }

    #[inline]
    pub(super) fn reset(&mut self) {
        self.count = 0;
        self.count_bytes = 0.0;
    }

    #[inline]
    pub(super) fn decide(
        &mut self,
        c: &RedCurve,
        avg: f64,
        size: u32,
        byte_mode: Option<u32>,
        rng: &mut Rng,
    ) -> Verdict {
        if avg < c.min_th {
            self.count = -1;
            self.count_bytes = 0.0;
            return Verdict::Accept;
        }
        if avg >= c.drop_all_from() {
            self.reset();
            return Verdict::Forced;
        }
        if self.count < 0 {
            self.reset();
        } else {
            self.count += 1;
            self.count_bytes += size as f64;
        }
        let cnt = if byte_mode.is_some() {
            self.count_bytes
        } else {
            self.count as f64
        };
        let pa = red_drop_probability(c.pb(avg), cnt, size, byte_mode);
        let drop = pa >= 1.0 || (pa > 0.0 && rng.uniform() < pa);
        if drop {
            self.reset();
            Verdict::Random
        } else {
            Verdict::Accept
        }
    }

    #[inline]
    pub(super) fn on_overflow(&mut self) {
        if self.count >= 0 {
            self.reset();
        }
    }
}

/// Arrival and drop counters of one class (IN or OUT) at a RED-family queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RedCounters {
    /// Packets offered.
    pub arrivals: u64,
    /// Probabilistic early drops.
    pub early_random: u64,
    /// Forced early drops (average beyond the probabilistic region).
    pub early_forced: u64,
    /// Drops because the physical queue was full.
    pub overflow: u64,
    /// ECN-capable packets marked CE instead of dropped early (with `ecn`).
    pub ecn_marks: u64,
}

impl RedCounters {
    /// All early drops (random and forced), as recorded with [`DropCause::Early`].
    pub fn early(&self) -> u64 {
        self.early_random + self.early_forced
    }
}

pub(super) fn class_of(pkt: &Packet) -> usize {
    usize::from(pkt.has(marks::IN_PROFILE))
}

pub(super) fn report_counters(prefix: &str, c: &[RedCounters; 2], out: &mut Vec<(String, f64)>) {
    for (i, tag) in [(1usize, "in"), (0usize, "out")] {
        let k = &c[i];
        out.push((format!("{prefix}arrivals_{tag}"), k.arrivals as f64));
        out.push((format!("{prefix}early_drops_{tag}"), k.early() as f64));
        out.push((format!("{prefix}forced_drops_{tag}"), k.early_forced as f64));
        out.push((format!("{prefix}overflow_drops_{tag}"), k.overflow as f64));
    }
}

/// Parameters of a [`Red`] queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    /// Drop curve (thresholds in packets).
    pub curve: RedCurve,
    /// EWMA weight, 0 < w_q <= 1 (1 makes the average the instantaneous queue).
    pub w_q: f64,
    /// Physical limit, packets.
    pub limit: usize,
    /// Byte mode: the drop probability of a packet scales with its size.
    pub byte_mode: bool,
    /// Mean packet size, bytes (byte mode and idle correction).
    pub mean_pkt_size: u32,
    /// Rate of the link the queue feeds, bits per second (idle correction; 0 = none).
    pub link_rate_bps: u64,
    /// ECN (RFC 3168): a random early drop of an ECN-capable packet becomes a CE mark
    /// (the packet is queued); forced drops and overflows stay drops.
    pub ecn: bool,
}

impl RedParams {
    /// RED with the given curve and limit; `w_q` = 0.002, packet mode, mean packet size
    /// 500 bytes (ns-2's default), no idle correction until [`RedParams::with_link`].
    pub fn new(curve: RedCurve, limit: usize) -> Self {
        let d = decl::defaults(RED.params);
        RedParams {
            curve,
            w_q: d.number("w_q"),
            limit,
            byte_mode: d.bool("byte_mode"),
            mean_pkt_size: d.count("mean_pkt_size") as u32,
            link_rate_bps: 0,
            ecn: d.bool("ecn"),
        }
    }

    /// Sets the link rate and mean packet size used by the idle correction (and byte mode).
    pub fn with_link(mut self, rate_bps: u64, mean_pkt_size: u32) -> Self {
        self.link_rate_bps = rate_bps;
        self.mean_pkt_size = mean_pkt_size;
        self
    }

    /// Sets the EWMA weight.
    pub fn with_w_q(mut self, w_q: f64) -> Self {
        self.w_q = w_q;
        self
    }

    /// Turns byte mode on or off.
    pub fn with_byte_mode(mut self, on: bool) -> Self {
        self.byte_mode = on;
        self
    }

    /// Checks every field against RED's declaration ([`RED`]): `Err("key: reason")`.
    pub fn validate(&self) -> Result<(), String> {
        decl::validate(RED.params, &self.values(), red_rules)
    }

    /// The parameters as declared values (the link rate is not a parameter).
    pub fn values(&self) -> Values {
        let c = &self.curve;
        Values(vec![
            ("min_th", Value::Number(c.min_th)),
            ("max_th", Value::Number(c.max_th)),
            ("max_p", Value::Number(c.max_p)),
            ("w_q", Value::Number(self.w_q)),
            ("gentle", Value::Bool(c.gentle)),
            ("byte_mode", Value::Bool(self.byte_mode)),
            ("mean_pkt_size", Value::Size(self.mean_pkt_size as u64)),
            ("limit", Value::Packets(self.limit as u64)),
        ])
    }
}

/// The EWMA weight RED and RIO share.
pub(super) const W_Q: Param = Param::new(
    "w_q",
    Type::Number,
    Absent::Is("0.002"),
    "Weight of the newest queue length in the average (1: the instantaneous queue).",
)
.bounds(Bounds::AboveUpTo(0.0, 1.0));
/// The gentle option RED and RIO share.
pub(super) const GENTLE: Param = Param::new(
    "gentle",
    Type::Bool,
    Absent::Is("false"),
    "Between max_th and 2 max_th the probability rises from max_p to 1.",
);
/// The byte mode RED and RIO share.
pub(super) const BYTE_MODE: Param = Param::new(
    "byte_mode",
    Type::Bool,
    Absent::Is("false"),
    "The drop probability scales with the packet's size over mean_pkt_size.",
);
/// The mean packet size RED and RIO share.
pub(super) const MEAN_PKT_SIZE: Param = Param::new(
    "mean_pkt_size",
    Type::Size,
    Absent::Is("500B"),
    "Mean packet size, for byte mode and the idle-time correction.",
)
.unit("B")
.bounds(Bounds::PositiveAtMost(u32::MAX as f64));
/// ECN marking instead of random early drops.
const ECN: Param = Param::new(
    "ecn",
    Type::Bool,
    Absent::Is("false"),
    "Mark ECN-capable packets CE instead of dropping them early (forced drops stay drops).",
);
/// A threshold on the average queue.
const fn threshold(key: &'static str, doc: &'static str) -> Param {
    Param::new(key, Type::Number, Absent::Required, doc)
        .unit("packets")
        .bounds(Bounds::AtLeast(0.0))
}

/// RED's statistics (`link.{link}.` keys of its port's summary).
pub const RED_STATS: &[Stat] = &[
    stat("link.{link}.red_avg_queue_pkts", "packets", End, "RED: the average queue (EWMA) at the end"),
    stat("link.{link}.red_arrivals", "packets", Run, "RED: packets offered to the queue"),
    stat("link.{link}.red_early_drops", "packets", Run, "RED: early drops, random and forced (max_th) together"),
    stat("link.{link}.red_random_drops", "packets", Run, "RED: early drops at random (average between min_th and max_th)"),
    stat("link.{link}.red_forced_drops", "packets", Run, "RED: forced drops (average above max_th, or above 2 max_th when gentle)"),
    stat("link.{link}.red_overflow_drops", "packets", Run, "RED: drops of a full buffer (the physical limit)"),
    stat("link.{link}.red_arrivals_{in|out}", "packets", Run, "RED: packets offered, IN-profile or OUT (kept for old records; plain RED treats both alike)"),
    stat("link.{link}.red_early_drops_{in|out}", "packets", Run, "RED: early drops of IN or OUT packets"),
    stat("link.{link}.red_forced_drops_{in|out}", "packets", Run, "RED: forced drops of IN or OUT packets"),
    stat("link.{link}.red_overflow_drops_{in|out}", "packets", Run, "RED: overflow drops of IN or OUT packets"),
    stat("link.{link}.red_ecn_marks", "packets", Run, "RED with ecn = true: ECN-capable packets marked CE instead of dropped at random"),
];

/// RED as scenarios name it (`kind = "red"`).
pub static RED: QueueKind = QueueKind {
    name: "red",
    aliases: &[],
    title: "RED",
    doc: "Random Early Detection: early drops with a probability rising with the average queue.",
    params: &[
        threshold(
            "min_th",
            "a threshold on the average queue: no early drop below it",
        ),
        threshold(
            "max_th",
            "a threshold on the average queue: the probability reaches max_p there",
        ),
        ECN,
        Param::new(
            "max_p",
            Type::Number,
            Absent::Required,
            "drop probability at max_th, e.g. 0.1",
        )
        .bounds(Bounds::AboveUpTo(0.0, 1.0)),
        W_Q,
        GENTLE,
        BYTE_MODE,
        MEAN_PKT_SIZE,
        Param::new(
            "limit",
            Type::PacketLimit,
            Absent::Is("1000p"),
            "Physical buffer; arrivals beyond it overflow.",
        )
        .unit("p")
        .bounds(Bounds::Positive),
    ],
    rules: red_rules,
    spec: |v| {
        let curve = RedCurve::new(v.number("min_th"), v.number("max_th"), v.number("max_p"))
            .gentle(v.bool("gentle"));
        let mut p = RedParams::new(curve, v.count("limit") as usize)
            .with_w_q(v.number("w_q"))
            .with_byte_mode(v.bool("byte_mode"));
        p.mean_pkt_size = v.count("mean_pkt_size") as u32;
        p.ecn = v.bool("ecn");
        QueueSpec::Red(p)
    },
    stats: RED_STATS,
    build: |q, env| match q {
        QueueSpec::Red(p) => Box::new(Red::new(
            p.with_link(env.rate_bps, p.mean_pkt_size),
            (env.rng)(),
        )),
        q => unreachable!("RED asked to build {q:?}"),
    },
};

/// The lower threshold must be below the upper one.
fn red_rules(v: &Values) -> Vec<Problem> {
    let (lo, hi) = (v.number("min_th"), v.number("max_th"));
    if lo >= hi {
        return vec![("min_th", format!("must be below max_th ({lo} >= {hi})"))];
    }
    Vec::new()
}

/// Random Early Detection on one FIFO (see the module documentation for the algorithm).
pub struct Red {
    p: RedParams,
    clock: IdleClock,
    q: VecDeque<Packet>,
    bytes: u64,
    avg: Ewma,
    dropper: Dropper,
    rng: Rng,
    counters: [RedCounters; 2],
}

impl Red {
    /// A RED queue drawing its random numbers from `rng`.
    ///
    /// # Panics
    /// Panics if the parameters are invalid ([`RedParams::validate`]).
    pub fn new(params: RedParams, rng: Rng) -> Self {
        if let Err(e) = params.validate() {
            panic!("{e}");
        }
        Red {
            p: params,
            clock: IdleClock {
                rate_bps: params.link_rate_bps,
                mean_size: params.mean_pkt_size,
            },
            q: VecDeque::new(),
            bytes: 0,
            avg: Ewma::new(),
            dropper: Dropper::new(),
            rng,
            counters: [RedCounters::default(); 2],
        }
    }

    /// The average queue, packets (as of the last arrival).
    pub fn avg(&self) -> f64 {
        self.avg.avg
    }

    /// The parameters.
    pub fn params(&self) -> &RedParams {
        &self.p
    }

    /// Counters of IN-profile packets (`true`) or of all others (`false`).
    pub fn counters(&self, in_profile: bool) -> RedCounters {
        self.counters[usize::from(in_profile)]
    }
}

impl QueueDisc for Red {
    fn enqueue(&mut self, pkt: Packet, now: Time, drops: &mut DropLog) {
        let cls = class_of(&pkt);
        self.counters[cls].arrivals += 1;
        self.avg.update(self.q.len(), now, self.p.w_q, &self.clock);
        let byte_mode = self.p.byte_mode.then_some(self.p.mean_pkt_size);
        match self.dropper.decide(
            &self.p.curve,
            self.avg.avg,
            pkt.size,
            byte_mode,
            &mut self.rng,
        ) {
            Verdict::Random if !(self.p.ecn && pkt.has(marks::ECN_ECT)) => {
                self.counters[cls].early_random += 1;
                drops.record(&pkt, DropCause::Early);
            }
            Verdict::Forced => {
                self.counters[cls].early_forced += 1;
                drops.record(&pkt, DropCause::Early);
            }
            v => {
                let mut pkt = pkt;
                if v == Verdict::Random {
                    pkt.set(marks::ECN_CE);
                    self.counters[cls].ecn_marks += 1;
                }
                if self.q.len() >= self.p.limit {
                    self.dropper.on_overflow();
                    self.counters[cls].overflow += 1;
                    drops.record(&pkt, DropCause::Overflow);
                } else {
                    self.bytes += pkt.size as u64;
                    self.q.push_back(pkt);
                    self.avg.busy();
                }
            }
        }
    }

    fn dequeue(&mut self, now: Time) -> Dequeue {
        match self.q.pop_front() {
            Some(p) => {
                self.bytes -= p.size as u64;
                Dequeue::Packet(p)
            }
            None => {
                self.avg.go_idle(now);
                Dequeue::Empty
            }
        }
    }

    fn len(&self) -> usize {
        self.q.len()
    }

    fn bytes(&self) -> u64 {
        self.bytes
    }
    fn for_each_queued(&self, f: &mut dyn FnMut(&Packet)) {
        self.q.iter().for_each(f);
    }

    fn report(&self, out: &mut Vec<(String, f64)>) {
        out.push(("red_avg_queue_pkts".into(), self.avg.avg));
        // Plain RED treats IN and OUT alike: its drops under its own names, by cause.
        let [a, b] = &self.counters;
        out.push(("red_arrivals".into(), (a.arrivals + b.arrivals) as f64));
        out.push(("red_early_drops".into(), (a.early() + b.early()) as f64));
        let random = a.early_random + b.early_random;
        out.push(("red_random_drops".into(), random as f64));
        let forced = a.early_forced + b.early_forced;
        out.push(("red_forced_drops".into(), forced as f64));
        let overflow = a.overflow + b.overflow;
        out.push(("red_overflow_drops".into(), overflow as f64));
        report_counters("red_", &self.counters, out);
        if self.p.ecn {
            let marks = self.counters[0].ecn_marks + self.counters[1].ecn_marks;
            out.push(("red_ecn_marks".into(), marks as f64));
        }
    }

    fn average_queue(&self, _in_only: bool) -> Option<f64> {
        Some(self.avg())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::rio::{RioMode, RioParams};

    #[test]
    fn binary_power_matches_repeated_products() {
        let mut x = 1.0;
        for m in 0..200u64 {
            let p = pow_u64(0.998, m);
            assert!((p - x).abs() <= 1e-12 * x.max(1e-300), "m={m}");
            x *= 0.998;
        }
        assert_eq!(pow_u64(0.5, 5000), 0.0);
    }

    #[test]
    fn idle_time_decays_average() {
        // 8 Mb/s and 1000-byte packets: one mean packet time is 1 ms.
        let params = RedParams::new(RedCurve::new(50.0, 100.0, 0.1), 1000)
            .with_w_q(0.01)
            .with_link(8_000_000, 1000);
        let mut q = Red::new(params, Rng::from_seed(1));
        let mut d = DropLog::default();
        for _ in 0..40 {
            q.enqueue(Packet::of_size(1000), 0, &mut d);
        }
        while let Dequeue::Packet(_) = q.dequeue(0) {}
        let before = q.avg();
        assert!(before > 0.0);
        // Idle from t = 0 (the empty dequeue above) for 25.5 ms: m = 25.
        let t = 25_500 * crate::time::PS_PER_US;
        q.enqueue(Packet::of_size(1000), t, &mut d);
        let expect = before * 0.99f64.powi(25) * 0.99;
        assert!((q.avg() - expect).abs() < 1e-12, "{} vs {expect}", q.avg());
    }

    #[test]
    fn curve_parse_and_pb() {
        let c = RedCurve::parse("420/840/0.05").unwrap();
        assert_eq!(c, RedCurve::new(420.0, 840.0, 0.05));
        assert_eq!(c.pb(630.0), 0.025);
        assert!(RedCurve::parse("840/420/0.05").is_err());
        assert!(RedCurve::parse("1/2").is_err());
        let r = RioParams::parse("420/840/0.05 500/840/0.02").unwrap();
        assert_eq!(r.out_curve, RedCurve::new(420.0, 840.0, 0.05));
        assert_eq!(r.in_curve, RedCurve::new(500.0, 840.0, 0.02));
        assert_eq!(r.limit, 840);
        assert_eq!(r.mode, RioMode::Coupled);
    }
}
