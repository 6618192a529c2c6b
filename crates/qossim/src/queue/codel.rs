//! CoDel, controlled delay (Nichols and Jacobson; RFC 8289): a FIFO that drops at its
//! head when packets have waited too long for too long.
//!
//! # Estimator
//! Every packet is stamped with its enqueue time, kept beside it in the discipline. When a
//! packet is taken for transmission at `now`, its sojourn time is `now - stamp`. The
//! queue is *above target* for that packet when the sojourn is at least `target` **and**
//! the queue still holds more than `mtu` bytes once the packet is removed (a queue of at
//! most one maximum-size packet is never considered standing). The first packet found
//! above target starts a clock: `first_above = now + interval`. Any packet found below
//! target (or an empty queue) stops it. A packet is *droppable* when it is above target
//! and `now >= first_above`, i.e. the sojourn has stayed at or above target, at every
//! dequeue, for at least one interval.
//!
//! # Control law
//! Outside the dropping state, a droppable packet is dropped, the state is entered and
//! the next packet is sent in its place. On entry the drop count starts at 1, except when
//! the previous dropping state ended recently: if that state dropped `delta > 1` packets
//! beyond its entry count and `now - drop_next < 16 interval` (`drop_next` is still the
//! schedule of the previous state), the count starts at `delta` (the drop rate that
//! controlled the queue last time is a good first guess). The next drop is scheduled at
//! `drop_next = now + interval / sqrt(count)`.
//!
//! In the dropping state, a packet that is not droppable ends the state. While the state
//! lasts and `now >= drop_next`, the packet at hand is dropped, the count is incremented,
//! the next packet is taken and, if it is droppable, `drop_next` advances by
//! `interval / sqrt(count)` from its previous value (not from `now`), so the k-th drop
//! after entry is `interval / sqrt(k)` after the (k-1)-th in the schedule.
//!
//! Head drops are recorded as [`DropCause::Early`]; arrivals finding the buffer full
//! (`limit`, packets or bytes) are dropped at the tail as [`DropCause::Overflow`].
//!
//! # ECN
//! With `ecn = true` (RFC 8289, section 5.4: mark instead of drop), a packet the control
//! law would drop that carries ECT ([`marks::ECN_ECT`]) is marked CE and sent instead:
//! on entry to the dropping state the marked packet is the one sent, and in the state a
//! mark counts and schedules like a drop (`count + 1`, `drop_next` advances by
//! `interval / sqrt(count)`) and ends the round, since the marked packet leaves. Packets
//! without ECT are dropped as before. Overflows are always drops.
//!
//! # Arithmetic
//! Times are integer picoseconds. The spacing `interval / sqrt(count)` is computed as
//! `isqrt(floor(interval^2 / count))` in 128-bit integers, which equals
//! `floor(interval / sqrt(count))` exactly (for real `x >= 0`,
//! `floor(sqrt(floor(x))) = floor(sqrt(x))`), so schedules are identical on every platform
//! and the spacing is the true value rounded down to the picosecond.

use super::{Dequeue, DropCause, DropLog, Limit, QueueDisc, QueueKind};
use crate::decl::{limit_value, Absent, Bounds, Param, Problem, Type, Value, Values};
use crate::metrics::declared::{stat, Stat, Window::Run};
use crate::packet::{marks, Packet};
use crate::scenario::QueueSpec;
use crate::time::Time;
use std::collections::VecDeque;

/// Parameters of a [`Codel`] queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    /// Acceptable standing sojourn time (RFC 8289 default 5 ms).
    pub target: Time,
    /// Window over which the sojourn must stay above target before dropping starts, and
    /// the base of the drop spacing (RFC 8289 default 100 ms).
    pub interval: Time,
    /// Maximum packet size, bytes: a queue holding at most this much is never judged
    /// to be standing (default 1500).
    pub mtu: u32,
    /// Buffer size; arrivals beyond it are dropped at the tail.
    pub limit: Limit,
    /// Mark ECN-capable packets CE instead of dropping them (RFC 8289, section 5.4).
    pub ecn: bool,
}

impl CodelParams {
    /// The RFC's defaults (target 5 ms, interval 100 ms, MTU 1500 bytes) with `limit`.
    pub fn new(limit: Limit) -> Self {
        CodelParams {
            limit,
            ..Self::from_values(&crate::decl::defaults(CODEL.params))
        }
    }

    /// Checks the parameters against their declaration ([`CODEL`]): `Err("key:
    /// reason")` for the first problem.
    pub fn validate(&self) -> Result<(), String> {
        crate::decl::validate(CODEL.params, &self.values(), codel_rules)
    }

    /// The parameters as declared values.
    pub fn values(&self) -> Values {
        Values(vec![
            ("limit", limit_value(self.limit)),
            ("target", Value::Time(self.target)),
            ("interval", Value::Time(self.interval)),
            ("mtu", Value::Size(self.mtu as u64)),
            ("ecn", Value::Bool(self.ecn)),
        ])
    }

    /// Parameters from declared values (every key set, see [`crate::decl::defaults`]).
    pub fn from_values(v: &Values) -> Self {
        CodelParams {
            target: v.time("target"),
            interval: v.time("interval"),
            mtu: v.count("mtu") as u32,
            limit: v.limit("limit"),
            ecn: v.bool("ecn"),
        }
    }
}

/// CoDel's statistics (`link.{link}.` keys of its port's summary).
pub const STATS: &[Stat] = &[
    stat(
        "link.{link}.codel_early_drops",
        "packets",
        Run,
        "CoDel: drops by the control law (head drops)",
    ),
    stat(
        "link.{link}.codel_overflow_drops",
        "packets",
        Run,
        "CoDel: drops of a full buffer",
    ),
    stat(
        "link.{link}.codel_dropping_entered",
        "times",
        Run,
        "CoDel: entries into the dropping state",
    ),
    stat(
        "link.{link}.codel_count_reused",
        "times",
        Run,
        "CoDel: entries that resumed the previous drop count",
    ),
    stat(
        "link.{link}.codel_max_count",
        "drops",
        Run,
        "CoDel: the largest drop count of a dropping state",
    ),
    stat(
        "link.{link}.codel_sojourn_mean_s",
        "s",
        Run,
        "CoDel: mean sojourn time of the packets dequeued",
    ),
    stat(
        "link.{link}.codel_ecn_marks",
        "packets",
        Run,
        "CoDel with ecn = true: ECN-capable packets marked CE where the law would drop",
    ),
];

/// CoDel as scenarios name it (`kind = "codel"`).
pub static CODEL: QueueKind = QueueKind {
    name: "codel",
    aliases: &[],
    title: "CoDel",
    doc: "Controlled delay (RFC 8289): drops at the head once packets have waited over target for an interval.",
    params: &[
        Param::new("limit", Type::Limit, Absent::Is("1000p"), "Buffer; arrivals beyond it are dropped at the tail.")
            .unit("p or B")
            .bounds(Bounds::Positive),
        Param::new("target", Type::Time, Absent::Is("5ms"), "Acceptable standing sojourn time.")
            .unit("s")
            .bounds(Bounds::Positive),
        Param::new("interval", Type::Time, Absent::Is("100ms"), "How long the sojourn must stay above target before dropping; base of the drop spacing.")
            .unit("s")
            .bounds(Bounds::PositiveAtMost(1000.0)),
        Param::new("mtu", Type::Size, Absent::Is("1500B"), "A queue of at most this many bytes is never judged standing.")
            .unit("B")
            .bounds(Bounds::PositiveAtMost(u32::MAX as f64)),
        ECN,
    ],
    rules: codel_rules,
    spec: |v| QueueSpec::Codel(CodelParams::from_values(&v)),
    stats: STATS,
    build: |q, _| match q {
        QueueSpec::Codel(p) => Box::new(Codel::new(*p)),
        q => unreachable!("CoDel asked to build {q:?}"),
    },
};

/// ECN marking instead of head drops, shared with FQ-CoDel.
pub(super) const ECN: Param = Param::new(
    "ecn",
    Type::Bool,
    Absent::Is("false"),
    "Mark ECN-capable packets CE where the control law would drop them (overflows stay drops).",
);

/// The interval must be longer than the target.
fn codel_rules(v: &Values) -> Vec<Problem> {
    let (target, interval) = (v.time("target"), v.time("interval"));
    if interval <= target {
        return vec![(
            "interval",
            format!(
                "must be longer than target ({}s <= {}s)",
                crate::time::to_secs(interval),
                crate::time::to_secs(target)
            ),
        )];
    }
    Vec::new()
}

/// `floor(interval / sqrt(count))` in picoseconds, exactly (see the module notes); for
/// `count = 0` the interval itself.
pub fn codel_spacing(interval: Time, count: u64) -> Time {
    if count <= 1 {
        return interval;
    }
    let x = (interval as u128 * interval as u128) / count as u128;
    isqrt(x) as Time
}

/// The largest `r` with `r * r <= x`, by Newton's iteration on integers.
fn isqrt(x: u128) -> u128 {
    if x < 2 {
        return x;
    }
    // Start above the root: 2^ceil(bits/2) > sqrt(x).
    let bits = 128 - x.leading_zeros();
    let mut r: u128 = 1 << bits.div_ceil(2);
    loop {
        let next = (r + x / r) / 2;
        if next >= r {
            return r;
        }
        r = next;
    }
}

/// What a [`Codel`] queue counted over the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelCounters {
    /// Packets accepted into the buffer.
    pub enqueued: u64,
    /// Packets handed to the port for transmission.
    pub dequeued: u64,
    /// Packets dropped at the head by the control law.
    pub early_drops: u64,
    /// Arrivals dropped because the buffer was full.
    pub overflow_drops: u64,
    /// Times the dropping state was entered.
    pub dropping_entered: u64,
    /// Entries that reused the previous state's drop count.
    pub count_reused: u64,
    /// The largest drop count reached.
    pub max_count: u64,
    /// ECN-capable packets marked CE instead of dropped (with `ecn`).
    pub ecn_marks: u64,
}

/// A CoDel queue (RFC 8289), see the module notes.
pub struct Codel {
    q: VecDeque<(Time, Packet)>,
    bytes: u64,
    p: CodelParams,
    first_above: Option<Time>,
    drop_next: Time,
    count: u64,
    last_count: u64,
    dropping: bool,
    counters: CodelCounters,
    sojourn_sum: u128,
}

impl Codel {
    /// A CoDel queue with parameters `p` (assumed valid, see [`CodelParams::validate`]).
    pub fn new(p: CodelParams) -> Self {
        Codel {
            q: VecDeque::new(),
            bytes: 0,
            p,
            first_above: None,
            drop_next: 0,
            count: 0,
            last_count: 0,
            dropping: false,
            counters: CodelCounters::default(),
            sojourn_sum: 0,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &CodelParams {
        &self.p
    }

    /// The counters so far.
    pub fn counters(&self) -> CodelCounters {
        self.counters
    }

    /// True while in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// The current drop count (kept after the dropping state ends, for reuse).
    pub fn count(&self) -> u64 {
        self.count
    }

    /// When the next drop is scheduled (meaningful in the dropping state).
    pub fn drop_next(&self) -> Time {
        self.drop_next
    }

    /// Mean sojourn time of the packets sent so far, seconds (0 before the first).
    pub fn sojourn_mean_s(&self) -> f64 {
        if self.counters.dequeued == 0 {
            0.0
        } else {
            self.sojourn_sum as f64 / self.counters.dequeued as f64 / 1e12
        }
    }

    fn fits(&self, size: u32) -> bool {
        match self.p.limit {
            Limit::Packets(n) => self.q.len() < n,
            Limit::Bytes(b) => self.bytes + size as u64 <= b,
        }
    }

    /// Removes the head packet and judges it: `(packet, sojourn, droppable)`.
    fn take(&mut self, now: Time) -> Option<(Packet, Time, bool)> {
        let Some((stamp, pkt)) = self.q.pop_front() else {
            self.first_above = None;
            return None;
        };
        self.bytes -= pkt.size as u64;
        let sojourn = now.saturating_sub(stamp);
        let droppable = if sojourn < self.p.target || self.bytes <= self.p.mtu as u64 {
            self.first_above = None;
            false
        } else {
            match self.first_above {
                None => {
                    self.first_above = Some(now + self.p.interval);
                    false
                }
                Some(t) => now >= t,
            }
        };
        Some((pkt, sojourn, droppable))
    }

    /// With `ecn`, marks `pkt` CE if it is ECN-capable (true: it is to be sent, not
    /// dropped).
    fn mark(&mut self, pkt: &mut Packet) -> bool {
        if self.p.ecn && pkt.has(marks::ECN_ECT) {
            pkt.set(marks::ECN_CE);
            self.counters.ecn_marks += 1;
            true
        } else {
            false
        }
    }

    fn drop_head(&mut self, pkt: &Packet, drops: &mut DropLog) {
        self.counters.early_drops += 1;
        drops.record(pkt, DropCause::Early);
    }

    fn send(&mut self, pkt: Packet, sojourn: Time) -> Dequeue {
        self.counters.dequeued += 1;
        self.sojourn_sum += sojourn as u128;
        self.counters.max_count = self.counters.max_count.max(self.count);
        Dequeue::Packet(pkt)
    }

    /// Drops the head packet without judging it, as an overflow of a buffer this queue
    /// shares with others (FQ-CoDel's drop from its fattest flow); `None` when empty.
    pub fn drop_head_overflow(&mut self, drops: &mut DropLog) -> Option<Packet> {
        let (_, pkt) = self.q.pop_front()?;
        self.bytes -= pkt.size as u64;
        self.counters.overflow_drops += 1;
        drops.record(&pkt, DropCause::Overflow);
        Some(pkt)
    }

    /// The control law: the next packet to send at `now`, recording head drops in
    /// `drops`.
    pub fn pull(&mut self, now: Time, drops: &mut DropLog) -> Dequeue {
        let Some((mut pkt, mut sojourn, droppable)) = self.take(now) else {
            self.dropping = false;
            return Dequeue::Empty;
        };
        if self.dropping {
            if !droppable {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                if self.mark(&mut pkt) {
                    self.count += 1;
                    self.drop_next += codel_spacing(self.p.interval, self.count);
                    break;
                }
                self.drop_head(&pkt, drops);
                self.count += 1;
                match self.take(now) {
                    None => {
                        self.dropping = false;
                        self.counters.max_count = self.counters.max_count.max(self.count);
                        return Dequeue::Empty;
                    }
                    Some((p, s, ok)) => {
                        pkt = p;
                        sojourn = s;
                        if ok {
                            self.drop_next += codel_spacing(self.p.interval, self.count);
                        } else {
                            self.dropping = false;
                        }
                    }
                }
            }
        } else if droppable {
            let next = if self.mark(&mut pkt) {
                Some((pkt, sojourn, true))
            } else {
                self.drop_head(&pkt, drops);
                self.take(now)
            };
            self.dropping = true;
            self.counters.dropping_entered += 1;
            let delta = self.count.saturating_sub(self.last_count);
            self.count = 1;
            if delta > 1 && now.saturating_sub(self.drop_next) < 16 * self.p.interval {
                self.count = delta;
                self.counters.count_reused += 1;
            }
            self.drop_next = now + codel_spacing(self.p.interval, self.count);
            self.last_count = self.count;
            match next {
                None => {
                    self.counters.max_count = self.counters.max_count.max(self.count);
                    return Dequeue::Empty;
                }
                Some((p, s, _)) => {
                    pkt = p;
                    sojourn = s;
                }
            }
        }
        self.send(pkt, sojourn)
    }
}

impl QueueDisc for Codel {
    fn enqueue(&mut self, pkt: Packet, now: Time, drops: &mut DropLog) {
        if self.fits(pkt.size) {
            self.counters.enqueued += 1;
            self.bytes += pkt.size as u64;
            self.q.push_back((now, pkt));
        } else {
            self.counters.overflow_drops += 1;
            drops.record(&pkt, DropCause::Overflow);
        }
    }
    fn dequeue(&mut self, now: Time) -> Dequeue {
        // Head drops still count in the discipline's own counters.
        self.pull(now, &mut DropLog::default())
    }
    fn dequeue_with_drops(&mut self, now: Time, drops: &mut DropLog) -> Dequeue {
        self.pull(now, drops)
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
    fn report(&self, out: &mut Vec<(String, f64)>) {
        let c = &self.counters;
        out.push(("codel_early_drops".into(), c.early_drops as f64));
        out.push(("codel_overflow_drops".into(), c.overflow_drops as f64));
        out.push(("codel_dropping_entered".into(), c.dropping_entered as f64));
        out.push(("codel_count_reused".into(), c.count_reused as f64));
        out.push(("codel_max_count".into(), c.max_count as f64));
        out.push(("codel_sojourn_mean_s".into(), self.sojourn_mean_s()));
        if self.p.ecn {
            out.push(("codel_ecn_marks".into(), c.ecn_marks as f64));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{PS_PER_MS, PS_PER_US};

    const MS: Time = PS_PER_MS;

    /// Drives a queue: arrivals (1500 B) and dequeue instants, merged in time order
    /// (arrivals first on ties). Returns the instants of head drops, one entry per drop.
    struct Script {
        q: Codel,
        log: DropLog,
        drops: Vec<Time>,
        sent: u64,
    }

    impl Script {
        fn new(p: CodelParams) -> Self {
            Script {
                q: Codel::new(p),
                log: DropLog::default(),
                drops: Vec::new(),
                sent: 0,
            }
        }
        fn arrive(&mut self, t: Time) {
            self.q.enqueue(Packet::of_size(1500), t, &mut self.log);
        }
        fn serve(&mut self, t: Time) -> bool {
            let before = self.log.early_total();
            let r = self.q.dequeue_with_drops(t, &mut self.log);
            for _ in before..self.log.early_total() {
                self.drops.push(t);
            }
            match r {
                Dequeue::Packet(_) => {
                    self.sent += 1;
                    true
                }
                _ => false,
            }
        }
        /// Arrivals every `gap` in `[from, to)`, services every `svc` from `first` until
        /// `to`.
        fn run(&mut self, from: Time, to: Time, gap: Time, first: Time, svc: Time) {
            let (mut a, mut s) = (from, first);
            while a < to || s < to {
                if a < to && a <= s {
                    self.arrive(a);
                    a += gap;
                } else {
                    self.serve(s);
                    s += svc;
                }
            }
        }
        fn check_conservation(&self) {
            let c = self.q.counters();
            assert_eq!(c.dequeued, self.sent);
            assert_eq!(
                c.enqueued,
                c.dequeued + c.early_drops + self.q.len() as u64,
                "{c:?}"
            );
            assert_eq!(c.early_drops, self.log.early_total());
            assert_eq!(c.overflow_drops, self.log.overflow_total());
        }
    }

    fn params() -> CodelParams {
        CodelParams::new(Limit::Packets(100_000))
    }

    #[test]
    fn spacing_is_floor_of_interval_over_root_count() {
        let i = 100 * MS;
        assert_eq!(codel_spacing(i, 1), i);
        assert_eq!(codel_spacing(i, 4), i / 2);
        assert_eq!(codel_spacing(i, 100), i / 10);
        // 1e11 / sqrt(2) = 70710678118.65..., / sqrt(3) = 57735026918.96...
        assert_eq!(codel_spacing(i, 2), 70_710_678_118);
        assert_eq!(codel_spacing(i, 3), 57_735_026_918);
        for interval in [1, 7, 5 * MS, i, 1_000_000 * MS] {
            for k in (1..2000).chain([1 << 20, u64::MAX / 3, u64::MAX]) {
                let s = codel_spacing(interval, k) as u128;
                let (i2, k) = (interval as u128 * interval as u128, k as u128);
                assert!(s * s * k <= i2, "{interval} {k}");
                assert!((s + 1) * (s + 1) * k > i2, "{interval} {k}");
            }
        }
    }

    /// Twice the service rate arrives (every 0.5 ms, served every 1 ms from 1 ms): the
    /// packet served at `k` ms waited `(k + 1) / 2` ms, so the sojourn first reaches
    /// 5 ms at 9 ms; the first drop is one interval later, at 109 ms; then the schedule
    /// is 209, 279.710678118, 337.445705036, 387.445705036 ms, ... (spacings
    /// 100/sqrt(k) ms), each drop at the first service at or after its schedule.
    #[test]
    fn constant_overload_follows_the_control_law() {
        let mut s = Script::new(params());
        s.run(0, 2000 * MS, MS / 2, MS, MS);
        assert_eq!(
            &s.drops[..5],
            &[109 * MS, 209 * MS, 280 * MS, 338 * MS, 388 * MS]
        );
        // The whole schedule: drop k+1 is due interval/sqrt(k) after drop k was due.
        let mut due = s.drops[0] + 100 * MS;
        for (k, &t) in s.drops.iter().enumerate().skip(1) {
            assert_eq!(t, due.div_ceil(MS) * MS, "drop {k}");
            due += codel_spacing(100 * MS, k as u64 + 1);
        }
        let c = s.q.counters();
        assert_eq!(c.dropping_entered, 1);
        assert_eq!(s.q.count(), s.drops.len() as u64);
        assert!(s.drops.len() > 20, "{}", s.drops.len());
        s.check_conservation();
    }

    /// The same overload as above with ECN on and ECN-capable packets: every decision of
    /// the control law is a mark at the same instant the drop was (109, 209, 280, 338,
    /// 388 ms, ...: a mark counts and schedules like a drop), nothing is dropped and every
    /// service sends a packet. Packets without ECT are still dropped on that schedule.
    #[test]
    fn with_ecn_the_control_law_marks_ect_packets_instead_of_dropping() {
        let run = |ect: bool| {
            let mut q = Codel::new(CodelParams {
                ecn: true,
                ..params()
            });
            let mut log = DropLog::default();
            let (mut marked, mut sent, mut drops) = (Vec::new(), 0u64, Vec::new());
            let (mut a, mut s) = (0, MS);
            let to = 2000 * MS;
            while a < to || s < to {
                if a < to && a <= s {
                    let mut p = Packet::of_size(1500);
                    if ect {
                        p.set(marks::ECN_ECT);
                    }
                    q.enqueue(p, a, &mut log);
                    a += MS / 2;
                } else {
                    let before = log.early_total();
                    if let Dequeue::Packet(p) = q.dequeue_with_drops(s, &mut log) {
                        sent += 1;
                        if p.has(marks::ECN_CE) {
                            marked.push(s);
                        }
                    }
                    drops.extend((before..log.early_total()).map(|_| s));
                    s += MS;
                }
            }
            (marked, drops, sent, q.counters())
        };
        let (marked, drops, sent, c) = run(true);
        assert_eq!(
            &marked[..5],
            &[109 * MS, 209 * MS, 280 * MS, 338 * MS, 388 * MS]
        );
        let mut due = marked[0] + 100 * MS;
        for (k, &t) in marked.iter().enumerate().skip(1) {
            assert_eq!(t, due.div_ceil(MS) * MS, "mark {k}");
            due += codel_spacing(100 * MS, k as u64 + 1);
        }
        assert!(drops.is_empty());
        assert_eq!(sent, 1999, "one packet per service from 1 ms to 1999 ms");
        assert_eq!(c.ecn_marks, marked.len() as u64);
        assert_eq!((c.early_drops, c.dropping_entered), (0, 1));
        let (marked, drops, _, c) = run(false);
        assert!(marked.is_empty());
        assert_eq!(
            &drops[..5],
            &[109 * MS, 209 * MS, 280 * MS, 338 * MS, 388 * MS]
        );
        assert_eq!(c.ecn_marks, 0);
    }

    /// A packet every 1 ms, each served 6 ms after it arrived (above the 5 ms target,
    /// with five more packets queued), except that packet 80 comes 3 ms late and waits
    /// only 3 ms: the clock started at the first service (6 ms) stops at 86 ms and
    /// restarts at 90 ms, so the first drop is at 190 ms instead of 106 ms.
    #[test]
    fn a_sojourn_below_target_restarts_the_interval() {
        let run = |late: bool| {
            let mut s = Script::new(params());
            let shift = |i: u64| if late && i >= 80 { 3 * MS } else { 0 };
            let mut events: Vec<(Time, bool)> = Vec::new();
            for i in 0..400u64 {
                let a = i * MS + shift(i);
                events.push((a, true));
                let d = if late && i == 80 {
                    a + 3 * MS
                } else {
                    a + 6 * MS
                };
                events.push((d, false));
            }
            events.sort();
            for (t, arrival) in events {
                if arrival {
                    s.arrive(t);
                } else {
                    s.serve(t);
                }
                if t == 200 * MS {
                    break;
                }
            }
            s.drops[0]
        };
        assert_eq!(run(false), 106 * MS);
        assert_eq!(run(true), 190 * MS);
    }

    /// Enter the dropping state under overload, leave it when the queue is flushed down
    /// to one packet, then overload again: coming back within 16 intervals reuses the
    /// previous count minus its entry count (3 - 1 = 2 here), later it starts at 1.
    #[test]
    fn reentry_soon_after_leaving_reuses_the_count() {
        let reentry = |restart: Time| {
            let mut s = Script::new(params());
            s.run(0, 300 * MS, MS / 2, MS, MS);
            assert_eq!(s.drops, [109 * MS, 209 * MS, 280 * MS]);
            assert!(s.q.dropping());
            // Flush at 300.5 ms, before the next drop is due (337.4 ms): no drop, and
            // the state ends when at most one MTU remains.
            let t = 300 * MS + MS / 2;
            while s.serve(t) {}
            assert_eq!(s.drops.len(), 3);
            assert!(!s.q.dropping());
            assert_eq!(s.q.count(), 3);
            // The same overload from `restart`: served k ms after restart + 1 ms, the
            // packet waited 1 + k/2 ms; 5 ms at k = 8, so re-entry at restart + 109 ms.
            s.drops.clear();
            s.run(restart, restart + 400 * MS, MS / 2, restart + MS, MS);
            s.check_conservation();
            (s.drops[0] - restart, s.drops[1] - restart, s.q.counters())
        };
        let (first, second, c) = reentry(301 * MS);
        assert_eq!(first, 109 * MS);
        // count 2: next drop 100/sqrt(2) = 70.71 ms later, at the 71st service.
        assert_eq!(second, 109 * MS + 71 * MS);
        assert_eq!((c.dropping_entered, c.count_reused), (2, 1));
        // 16 intervals after the old schedule (337.4 ms + 1600 ms) the count restarts.
        let (first, second, c) = reentry(1900 * MS);
        assert_eq!(first, 109 * MS);
        assert_eq!(second, 209 * MS);
        assert_eq!((c.dropping_entered, c.count_reused), (2, 0));
    }

    /// One packet at a time, each waiting 40 ms (eight times the target) for 10 s: a
    /// queue holding at most one MTU is never standing, so nothing is dropped.
    #[test]
    fn a_queue_below_one_mtu_never_drops() {
        let mut s = Script::new(params());
        for i in 0..200u64 {
            s.arrive(i * 50 * MS);
            assert!(s.serve(i * 50 * MS + 40 * MS));
        }
        assert!(s.drops.is_empty());
        assert_eq!(s.q.counters().dropping_entered, 0);
        assert!((s.q.sojourn_mean_s() - 0.040).abs() < 1e-15);
        s.check_conservation();
    }

    #[test]
    fn tail_drop_at_the_limit_and_conservation() {
        let mut s = Script::new(CodelParams::new(Limit::Packets(10)));
        for i in 0..15 {
            s.arrive(i * PS_PER_US);
        }
        assert_eq!((s.q.len(), s.log.overflow_total()), (10, 5));
        let mut q = Codel::new(CodelParams::new(Limit::Bytes(4000)));
        let mut log = DropLog::default();
        for size in [1500, 1500, 1500, 1000] {
            q.enqueue(Packet::of_size(size), 0, &mut log);
        }
        assert_eq!((q.len(), q.bytes(), log.overflow_total()), (3, 4000, 1));
        // A long overload with a small buffer: both kinds of drops, all accounted for.
        let mut s = Script::new(CodelParams::new(Limit::Packets(50)));
        s.run(0, 3000 * MS, MS / 2, MS, MS);
        let c = s.q.counters();
        assert!(c.early_drops > 0 && c.overflow_drops > 0, "{c:?}");
        s.check_conservation();
        assert_eq!(c.enqueued + c.overflow_drops, 6000);
    }

    #[test]
    fn parameters_are_checked() {
        let ok = params();
        assert!(ok.validate().is_ok());
        let bad = [
            CodelParams { target: 0, ..ok },
            CodelParams {
                interval: 5 * MS,
                ..ok
            },
            CodelParams { mtu: 0, ..ok },
            CodelParams {
                limit: Limit::Bytes(0),
                ..ok
            },
        ];
        for p in bad {
            assert!(p.validate().is_err(), "{p:?}");
        }
    }
}
