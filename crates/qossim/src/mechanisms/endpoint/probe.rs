//! Endpoint admission control: a host probes the path at its flow's token rate before
//! sending; the receiver counts probe losses (or congestion marks) and returns the
//! decision. Three probing algorithms: simple, early reject and slow start.

use crate::packet::{marks, AgentId, NodeId, Packet, NONE};
use crate::time::{to_secs, Time};
use crate::traffic::{Admission, CallAdmission, Calls};
use crate::world::{Agent, Ctx};
use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

/// How a host probes and decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    /// Probe at r for the whole probe time; reject as soon as the losses so far exceed
    /// ε × (probes the whole probe sends), else decide at the end.
    Simple,
    /// Probe at r; reject at the end of any interval whose loss fraction exceeds ε.
    EarlyReject,
    /// Five equal levels at r/16, r/8, r/4, r/2, r; reject at the end of any interval
    /// whose loss fraction exceeds ε.
    SlowStart,
}

impl Algorithm {
    /// The name used in scenarios.
    pub fn name(&self) -> &'static str {
        match self {
            Algorithm::Simple => "simple",
            Algorithm::EarlyReject => "early_reject",
            Algorithm::SlowStart => "slow_start",
        }
    }
}

/// A probing configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeSpec {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Largest acceptable loss (or mark) fraction.
    pub epsilon: f64,
    /// Probe rate r (the flow's token rate), bits/s.
    pub rate: f64,
    /// Whole probing time (slow start: five levels of a fifth each).
    pub probe_time: Time,
    /// Decision interval.
    pub interval: Time,
    /// Probe packet size, bytes (the flow's data packet size).
    pub size: u32,
    /// Service class of probe packets.
    pub class: u8,
    /// How long after an interval's end the receiver waits for its last probes.
    pub grace: Time,
    /// One-way propagation delay between prober and receiver (setup and decision).
    pub one_way: Time,
}

/// One probing interval: its offsets from the probe's start and its rate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Start, from the probe's start.
    pub start: Time,
    /// End, from the probe's start.
    pub end: Time,
    /// Probe rate in the interval, bits/s.
    pub rate: f64,
}

impl Interval {
    /// Time between probes.
    pub fn gap(&self, size: u32) -> Time {
        (size as f64 * 8.0 * 1e12 / self.rate).ceil() as Time
    }
    /// Probes sent in the interval: one at its start and every gap after, before its end.
    pub fn count(&self, size: u32) -> u64 {
        let g = self.gap(size);
        (self.end - self.start).div_ceil(g)
    }
}

impl ProbeSpec {
    /// The probing intervals of this configuration.
    pub fn schedule(&self) -> Vec<Interval> {
        let mut out = Vec::new();
        let levels: Vec<f64> = match self.algorithm {
            Algorithm::SlowStart => [16.0, 8.0, 4.0, 2.0, 1.0]
                .iter()
                .map(|d| self.rate / d)
                .collect(),
            _ => vec![self.rate],
        };
        let per_level = self.probe_time / levels.len() as Time;
        let mut t = 0;
        for r in levels {
            let level_end = t + per_level;
            while t < level_end {
                let end = (t + self.interval).min(level_end);
                out.push(Interval {
                    start: t,
                    end,
                    rate: r,
                });
                t = end;
            }
        }
        out
    }

    /// Whether interval `k` of `n` probes, `bad` of them lost or marked, rejects the flow
    /// (early reject and slow start).
    pub fn interval_rejects(&self, n: u64, bad: u64) -> bool {
        n > 0 && bad as f64 > self.epsilon * n as f64
    }

    /// Whether `bad` losses or marks so far reject a simple probe of `total` probes.
    pub fn simple_rejects(&self, total: u64, bad: u64) -> bool {
        bad as f64 > self.epsilon * total as f64
    }

    /// The receiver's rule at the end of an interval of `n` probes, `bad` of them lost or
    /// marked (`bad_so_far` over the whole probe until now, of `total`): early reject and
    /// slow start reject if the interval's fraction exceeds ε, simple if the losses so far
    /// exceed ε × `total`; a probe not rejected by its `last` interval is admitted.
    pub fn interval_end(&self, last: bool, n: u64, bad: u64, total: u64, bad_so_far: u64) -> Step {
        let reject = match self.algorithm {
            Algorithm::Simple => self.simple_rejects(total, bad_so_far),
            _ => self.interval_rejects(n, bad),
        };
        if reject {
            Step::Reject
        } else if last {
            Step::Admit
        } else {
            Step::Continue
        }
    }
}

/// What the receiver does at the end of a probing interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Keep probing.
    Continue,
    /// Admit the flow.
    Admit,
    /// Reject the flow.
    Reject,
}

/// The prober's setup message to the receiver: which call, when its intervals end and
/// how many probes each holds.
#[derive(Clone, Debug)]
pub struct ProbeSetup {
    /// The call (its number at its generator).
    pub call: u64,
    /// Absolute end of every interval.
    pub ends: Vec<Time>,
    /// Probes in every interval.
    pub counts: Vec<u64>,
}

/// The receiver's decision, sent to the prober, which hands it to its generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProbeVerdict {
    /// The call.
    pub call: u64,
    /// Admitted or rejected.
    pub admit: bool,
}

/// Running counts of a probing population (one receiver).
#[derive(Clone, Copy, Debug, Default)]
pub struct ProbeCounts {
    /// Probes received.
    pub received: u64,
    /// Probes received marked.
    pub marked: u64,
    /// Calls decided: admitted.
    pub admitted: u64,
    /// Calls decided: rejected.
    pub rejected: u64,
}

struct CallState {
    prober: AgentId,
    ends: Vec<Time>,
    counts: Vec<u64>,
    received: Vec<u64>,
    marked: Vec<u64>,
    total: u64,
    received_all: u64,
    marked_all: u64,
    evaluated: usize,
}

/// Counts the probes of every call of one population at the receiving host and decides.
pub struct ProbeReceiver {
    spec: Arc<ProbeSpec>,
    calls: HashMap<u64, CallState>,
    timers: Vec<(u64, usize)>,
    free: Vec<u32>,
    /// Counts so far.
    pub counts: ProbeCounts,
}

impl ProbeReceiver {
    /// A receiver deciding with `spec`.
    pub fn new(spec: Arc<ProbeSpec>) -> Self {
        ProbeReceiver {
            spec,
            calls: HashMap::new(),
            timers: Vec::new(),
            free: Vec::new(),
            counts: ProbeCounts::default(),
        }
    }

    fn decide(&mut self, call: u64, admit: bool, ctx: &mut Ctx) {
        if let Some(st) = self.calls.remove(&call) {
            if admit {
                self.counts.admitted += 1;
            } else {
                self.counts.rejected += 1;
            }
            ctx.signal(st.prober, self.spec.one_way, ProbeVerdict { call, admit });
        }
    }

    fn bad_so_far(st: &CallState, upto: usize) -> u64 {
        let lost: u64 = (0..upto)
            .map(|k| st.counts[k] - st.received[k].min(st.counts[k]))
            .sum();
        lost + st.marked_all
    }
}

impl Agent for ProbeReceiver {
    fn on_signal(&mut self, from: AgentId, msg: &dyn Any, ctx: &mut Ctx) {
        let Some(s) = crate::world::read_signal::<ProbeSetup>(msg) else {
            return;
        };
        let n = s.ends.len();
        for (k, &end) in s.ends.iter().enumerate() {
            let slot = match self.free.pop() {
                Some(i) => {
                    self.timers[i as usize] = (s.call, k);
                    i
                }
                None => {
                    self.timers.push((s.call, k));
                    (self.timers.len() - 1) as u32
                }
            };
            ctx.timer_at(end + self.spec.grace, slot);
        }
        self.calls.insert(
            s.call,
            CallState {
                prober: from,
                ends: s.ends.clone(),
                counts: s.counts.clone(),
                received: vec![0; n],
                marked: vec![0; n],
                total: s.counts.iter().sum(),
                received_all: 0,
                marked_all: 0,
                evaluated: 0,
            },
        );
    }

    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        let call = pkt.seq;
        let k = (pkt.ack >> 32) as usize;
        let seq = pkt.ack & 0xffff_ffff;
        self.counts.received += 1;
        ctx.flows.delivered(&pkt, ctx.now());
        let marked = pkt.has(marks::ECN_CE);
        if marked {
            self.counts.marked += 1;
        }
        // Disjoint fields: the decision reads the spec while the call's state changes.
        let spec = &self.spec;
        let Some(st) = self.calls.get_mut(&call) else {
            return;
        };
        if k < st.evaluated || k >= st.ends.len() {
            return;
        }
        st.received[k] += 1;
        st.received_all += 1;
        if marked {
            st.marked[k] += 1;
            st.marked_all += 1;
        }
        // Probes are sent in sequence and a class is served in order: a gap is a loss.
        let lost = (seq + 1).saturating_sub(st.received_all);
        if spec.algorithm == Algorithm::Simple
            && spec.simple_rejects(st.total, lost + st.marked_all)
        {
            self.decide(call, false, ctx);
        }
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        let Some(&(call, k)) = self.timers.get(kind as usize) else {
            return;
        };
        self.free.push(kind);
        let spec = &self.spec;
        let Some(st) = self.calls.get_mut(&call) else {
            return;
        };
        st.evaluated = k + 1;
        let last = k + 1 == st.ends.len();
        let n = st.counts[k];
        let bad = n - st.received[k].min(n) + st.marked[k];
        let so_far = if spec.algorithm == Algorithm::Simple {
            Self::bad_so_far(st, k + 1)
        } else {
            0
        };
        match spec.interval_end(last, n, bad, st.total, so_far) {
            Step::Reject => self.decide(call, false, ctx),
            Step::Admit => self.decide(call, true, ctx),
            Step::Continue => {}
        }
    }

    fn on_warmup(&mut self, _now: Time) {
        self.counts = ProbeCounts::default();
    }
}

/// The probing half of one call at the sending host: sends the probes of its schedule
/// to the receiver, then passes the receiver's verdict to its generator.
pub struct Prober {
    call: u64,
    spec: Arc<ProbeSpec>,
    generator: AgentId,
    receiver: AgentId,
    src: NodeId,
    dst: NodeId,
    flow: u32,
    intervals: Vec<Interval>,
    started: Time,
    k: usize,
    next: Time,
    seq: u64,
    timer: Option<crate::engine::EventId>,
}

impl Prober {
    /// The prober of `call` (generator `generator`) from `src` to the receiver
    /// `receiver` at `dst`; probes count in flow `flow`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        call: u64,
        spec: Arc<ProbeSpec>,
        generator: AgentId,
        receiver: AgentId,
        src: NodeId,
        dst: NodeId,
        flow: u32,
    ) -> Self {
        let intervals = spec.schedule();
        Prober {
            call,
            spec,
            generator,
            receiver,
            src,
            dst,
            flow,
            intervals,
            started: 0,
            k: 0,
            next: 0,
            seq: 0,
            timer: None,
        }
    }
}

impl Agent for Prober {
    fn start(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        self.started = now;
        let setup = ProbeSetup {
            call: self.call,
            ends: self.intervals.iter().map(|i| now + i.end).collect(),
            counts: self
                .intervals
                .iter()
                .map(|i| i.count(self.spec.size))
                .collect(),
        };
        ctx.signal(self.receiver, self.spec.one_way, setup);
        self.next = now;
        self.timer = Some(ctx.timer_at(now, 0));
    }

    fn on_timer(&mut self, _kind: u32, ctx: &mut Ctx) {
        self.timer = None;
        let now = ctx.now();
        let Some(iv) = self.intervals.get(self.k).copied() else {
            return;
        };
        let mut p = Packet::of_size(self.spec.size);
        p.src = self.src;
        p.dst = self.dst;
        p.dst_agent = self.receiver;
        p.route = NONE;
        p.flow = self.flow;
        p.class = self.spec.class;
        p.seq = self.call;
        p.ack = (self.k as u64) << 32 | self.seq;
        p.created = now;
        ctx.flows.sent(&p, now);
        ctx.send(p);
        self.seq += 1;
        let mut next = now + iv.gap(self.spec.size);
        if next >= self.started + iv.end {
            self.k += 1;
            match self.intervals.get(self.k) {
                Some(n) => next = self.started + n.start,
                None => return,
            }
        }
        self.next = next;
        self.timer = Some(ctx.timer_at(next, 0));
    }

    fn on_signal(&mut self, _from: AgentId, msg: &dyn Any, ctx: &mut Ctx) {
        if let Some(v) = crate::world::read_signal::<ProbeVerdict>(msg) {
            if let Some(id) = self.timer.take() {
                ctx.cancel(id);
            }
            ctx.signal(self.generator, 0, *v);
            let me = ctx.me;
            ctx.stop(me);
        }
    }
}

/// The probing admission policy of a flow generator: every call probes first; the call
/// starts (or is blocked) when its verdict comes back.
pub struct ProbeAdmission {
    spec: Arc<ProbeSpec>,
    receiver: AgentId,
    src: NodeId,
    dst: NodeId,
    flow: u32,
}

impl ProbeAdmission {
    /// Probing with `spec` from `src` to the receiver agent `receiver` at `dst`; probe
    /// packets count in flow `flow`.
    pub fn new(
        spec: Arc<ProbeSpec>,
        receiver: AgentId,
        src: NodeId,
        dst: NodeId,
        flow: u32,
    ) -> Self {
        ProbeAdmission {
            spec,
            receiver,
            src,
            dst,
            flow,
        }
    }
}

impl CallAdmission for ProbeAdmission {
    fn admit(&mut self, call: u64, _active: usize, ctx: &mut Ctx) -> Admission {
        let p = Prober::new(
            call,
            self.spec.clone(),
            ctx.me,
            self.receiver,
            self.src,
            self.dst,
            self.flow,
        );
        ctx.spawn(String::new(), Box::new(p));
        Admission::Pending
    }

    fn on_signal(&mut self, _from: AgentId, msg: &dyn Any, _ctx: &mut Ctx, calls: &mut Calls) {
        if let Some(v) = crate::world::read_signal::<ProbeVerdict>(msg) {
            calls.decide(v.call, v.admit);
        }
    }
}

/// The rule-of-thumb floor of the in-band dropping design's loss: δ = 1 − 2^(−P/(r·T))
/// for probe packets of `packet_bits`, probe rate `rate` (bits/s) and probe time `t`.
pub fn loss_floor(packet_bits: f64, rate: f64, t: Time) -> f64 {
    1.0 - 2f64.powf(-packet_bits / (rate * to_secs(t)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::secs;

    fn spec(algorithm: Algorithm, eps: f64, probe_time: f64) -> ProbeSpec {
        ProbeSpec {
            algorithm,
            epsilon: eps,
            rate: 256_000.0,
            probe_time: secs(probe_time),
            interval: secs(1.0),
            size: 125,
            class: 0,
            grace: secs(0.1),
            one_way: secs(0.02),
        }
    }

    #[test]
    fn schedules() {
        // Simple / early reject: five 1-s intervals at r, 256 probes each (256 kb/s of
        // 125-byte packets is 256 packets per second).
        let s = spec(Algorithm::EarlyReject, 0.01, 5.0).schedule();
        assert_eq!(s.len(), 5);
        assert!(s.iter().all(|i| i.rate == 256_000.0 && i.count(125) == 256));
        // Slow start: one second at each of r/16 … r.
        let s = spec(Algorithm::SlowStart, 0.01, 5.0).schedule();
        let counts: Vec<u64> = s.iter().map(|i| i.count(125)).collect();
        assert_eq!(counts, [16, 32, 64, 128, 256]);
        // Long probing: five seconds at each level, still decided every second.
        let s = spec(Algorithm::SlowStart, 0.01, 25.0).schedule();
        assert_eq!(s.len(), 25);
        assert_eq!(s[4].rate, 16_000.0);
        assert_eq!(s[5].rate, 32_000.0);
    }

    #[test]
    fn decisions_on_scripted_losses() {
        let e = spec(Algorithm::EarlyReject, 0.02, 5.0);
        // 256 probes: 5 lost is 1.95 % (kept), 6 is 2.3 % (rejected).
        assert!(!e.interval_rejects(256, 5));
        assert!(e.interval_rejects(256, 6));
        // ε = 0: any loss rejects, none admits.
        let z = spec(Algorithm::SlowStart, 0.0, 5.0);
        assert!(z.interval_rejects(16, 1));
        assert!(!z.interval_rejects(16, 0));
        // Simple: the bound is ε × all the probes of the whole probe (1280 at 256 kb/s
        // for 5 s): with ε = 0.01, 12 losses are allowed and the 13th rejects, however
        // early it comes.
        let s = spec(Algorithm::Simple, 0.01, 5.0);
        let total: u64 = s.schedule().iter().map(|i| i.count(125)).sum();
        assert_eq!(total, 1280);
        assert!(!s.simple_rejects(total, 12));
        assert!(s.simple_rejects(total, 13));
    }

    /// Runs the receiver's rule over a scripted sequence: `bad[k]` probes of interval k
    /// lost or marked. Returns the verdict and the interval it came at.
    fn script(spec: &ProbeSpec, bad: &[u64]) -> (bool, usize) {
        let counts: Vec<u64> = spec.schedule().iter().map(|i| i.count(spec.size)).collect();
        assert_eq!(counts.len(), bad.len(), "one entry per interval");
        let total = counts.iter().sum();
        let mut so_far = 0;
        for (k, (&n, &b)) in counts.iter().zip(bad).enumerate() {
            so_far += b;
            match spec.interval_end(k + 1 == counts.len(), n, b, total, so_far) {
                Step::Continue => {}
                Step::Admit => return (true, k),
                Step::Reject => return (false, k),
            }
        }
        unreachable!("the last interval decides")
    }

    #[test]
    fn slow_start_stages_on_scripted_losses() {
        // Stages of 16, 32, 64, 128, 256 probes; a stage rejects when bad > ε·n.
        let z = spec(Algorithm::SlowStart, 0.0, 5.0);
        assert_eq!(script(&z, &[0, 0, 0, 0, 0]), (true, 4));
        assert_eq!(script(&z, &[0, 0, 0, 0, 1]), (false, 4));
        assert_eq!(script(&z, &[0, 0, 1, 0, 0]), (false, 2));
        // ε = 0.05: the first stage allows 0.8 losses, so one rejects; the later stages
        // allow 1 (of 32), 3 (of 64), 6 (of 128) and 12 (of 256).
        let e = spec(Algorithm::SlowStart, 0.05, 5.0);
        assert_eq!(script(&e, &[1, 0, 0, 0, 0]), (false, 0));
        assert_eq!(script(&e, &[0, 1, 3, 6, 12]), (true, 4));
        assert_eq!(script(&e, &[0, 2, 0, 0, 0]), (false, 1));
        assert_eq!(script(&e, &[0, 1, 4, 0, 0]), (false, 2));
        assert_eq!(script(&e, &[0, 1, 3, 7, 0]), (false, 3));
        assert_eq!(script(&e, &[0, 1, 3, 6, 13]), (false, 4));
        // The first rejecting stage decides; what would come later does not matter.
        assert_eq!(script(&e, &[0, 2, 64, 128, 256]), (false, 1));
        // One loss in the 16 probes of the first stage rejects for every ε < 1/16 and
        // passes from ε = 1/16 on (1 > 16ε is false at equality).
        for eps in [0.01, 0.02, 0.04, 0.05, 0.06, 0.0624] {
            assert_eq!(
                script(&spec(Algorithm::SlowStart, eps, 5.0), &[1, 0, 0, 0, 0]),
                (false, 0),
                "{eps}"
            );
        }
        let sixteenth = spec(Algorithm::SlowStart, 1.0 / 16.0, 5.0);
        assert_eq!(script(&sixteenth, &[1, 2, 4, 8, 16]), (true, 4));
        assert_eq!(script(&sixteenth, &[2, 0, 0, 0, 0]), (false, 0));
        assert_eq!(script(&sixteenth, &[1, 2, 4, 8, 17]), (false, 4));
        // Long probing: five 1-s decisions per level, each at its own count.
        let long = spec(Algorithm::SlowStart, 0.05, 25.0);
        let mut bad = [0u64; 25];
        bad[4] = 1; // fifth second at r/16: 1 of 16 rejects
        assert_eq!(script(&long, &bad), (false, 4));
        bad[4] = 0;
        bad[5] = 1; // first second at r/8: 1 of 32 passes
        assert_eq!(script(&long, &bad), (true, 24));
    }

    #[test]
    fn early_reject_and_simple_on_scripted_losses() {
        // Early reject, ε = 0.02: 256 probes a second, 5 allowed each second.
        let e = spec(Algorithm::EarlyReject, 0.02, 5.0);
        assert_eq!(script(&e, &[5, 5, 5, 5, 5]), (true, 4));
        assert_eq!(script(&e, &[5, 5, 6, 0, 0]), (false, 2));
        // Simple, ε = 0.01: 12 of all 1280 allowed in total, however they fall.
        let s = spec(Algorithm::Simple, 0.01, 5.0);
        assert_eq!(script(&s, &[12, 0, 0, 0, 0]), (true, 4));
        assert_eq!(script(&s, &[3, 3, 3, 3, 0]), (true, 4));
        assert_eq!(script(&s, &[3, 3, 3, 3, 1]), (false, 4));
        assert_eq!(script(&s, &[13, 0, 0, 0, 0]), (false, 0));
    }

    #[test]
    fn floor_by_hand() {
        // P = 1000 bits, r = 256 kb/s, T = 5 s: 1 - 2^(-1/1280).
        let d = loss_floor(1000.0, 256_000.0, secs(5.0));
        assert!((d - (1.0 - 2f64.powf(-1.0 / 1280.0))).abs() < 1e-15);
        assert!((d - 5.4e-4).abs() < 1e-5);
    }
}
