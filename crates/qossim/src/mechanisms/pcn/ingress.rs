//! The PCN ingress of one ingress–egress aggregate: the admission policy of its call
//! generator (decisions from the egress's Congestion Level Estimate) and flow termination
//! from the sustainable aggregate rate.

use super::marks;
use super::signals::{CleAnswer, CleRequest, SarReport};
use crate::engine::{Event, Target};
use crate::net::{AgentId, LinkId, Network, NodeId, NONE};
use crate::rng::Rng;
use crate::time::{to_secs, Time, NEVER, PS_PER_MS};
use crate::traffic::{
    ActiveCall, Admission, Arrivals, CallAdmission, CallStreams, Calls, FlowGenerator, Holding,
    PacketTemplate, SourceModel, POLICY_TIMER,
};
use crate::world::{AgentHandle, Ctx, World};
use serde_json::{json, Value};
use std::any::Any;
use std::collections::VecDeque;

/// Mean number of calls in a BATCH arrival.
pub const BATCH_MEAN_CALLS: f64 = 5.0;

/// The call arrival rate λ (calls per second) for a demand overload `k`: the offered mean
/// rate `λ × mean_flow_bps × mean_holding_s` equals `k × ra_bps`.
pub fn call_rate_for_overload(k: f64, ra_bps: f64, mean_flow_bps: f64, mean_holding_s: f64) -> f64 {
    assert!(
        mean_flow_bps > 0.0 && mean_holding_s > 0.0,
        "flow rate and holding time must be positive"
    );
    k * ra_bps / (mean_flow_bps * mean_holding_s)
}

/// The two call arrival processes of the study.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CallArrivals {
    /// Calls arrive as a Poisson process of rate λ.
    #[default]
    Poisson,
    /// Batches arrive as a Poisson process of rate λ/5, each with a geometric number of
    /// calls (mean 5, at least 1): the mean call rate is still λ.
    Batch,
}

impl CallArrivals {
    /// The arrival process with mean call rate `call_rate` (λ, calls per second).
    pub fn arrivals(self, call_rate: f64) -> Arrivals {
        match self {
            CallArrivals::Poisson => Arrivals::Poisson { rate: call_rate },
            CallArrivals::Batch => Arrivals::Batch {
                rate: call_rate / BATCH_MEAN_CALLS,
                mean: BATCH_MEAN_CALLS,
            },
        }
    }
}

/// How an ingress rounds the rate to terminate to whole flows.
///
/// Flows are visited in a random order and their measured rates accumulated; the
/// *crossing* flow is the one with which the running sum reaches the rate to terminate.
/// Every flow before it is terminated; the crossing flow itself is terminated under `Up`,
/// kept under `Down`, and under `Nearest` terminated iff that leaves the terminated sum at
/// least as close to the target as stopping before it (ties round up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Rounding {
    /// Terminate at least the target (the study's default).
    #[default]
    Up,
    /// Terminate at most the target.
    Down,
    /// Terminate the whole number of flows closest to the target.
    Nearest,
}

/// Chooses flows to terminate: indices into `rates` (the flows' measured rates, bit/s)
/// whose rates sum to `excess_bps` rounded to whole flows by `rounding` (see
/// [`Rounding`]), visiting flows in a random order drawn from `rng`. Returns nothing when
/// `excess_bps` is not positive.
pub fn choose_flows_to_terminate(
    rates: &[f64],
    excess_bps: f64,
    rounding: Rounding,
    rng: &mut Rng,
) -> Vec<usize> {
    let mut chosen = Vec::new();
    if excess_bps <= 0.0 || rates.is_empty() {
        return chosen;
    }
    let mut order: Vec<usize> = (0..rates.len()).collect();
    for i in (1..order.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        order.swap(i, j);
    }
    let mut sum = 0.0;
    for i in order {
        if sum >= excess_bps {
            break;
        }
        let with = sum + rates[i];
        if with < excess_bps {
            chosen.push(i);
            sum = with;
            continue;
        }
        // The crossing flow.
        let take = match rounding {
            Rounding::Up => true,
            Rounding::Down => with <= excess_bps,
            Rounding::Nearest => with - excess_bps <= excess_bps - sum,
        };
        if take {
            chosen.push(i);
        }
        break;
    }
    chosen
}

/// What an ingress controller does for its aggregate.
#[derive(Clone, Debug)]
pub struct IngressConfig {
    /// How each flow sends (a mix is resolved per flow).
    pub model: SourceModel,
    /// Call arrivals (see [`CallArrivals::arrivals`] and [`call_rate_for_overload`]).
    pub arrivals: Arrivals,
    /// Holding times of admitted flows (exponential, mean 60 s, by default).
    pub holding: Holding,
    /// Randomization f: every packet is delayed by U(0, f × inter-packet time).
    pub jitter: f64,
    /// Admission control on (request the CLE, admit iff CLE < threshold) or off (admit
    /// every call at once, as in the termination experiments).
    pub admission_control: bool,
    /// The CLE-threshold (0.5 by default).
    pub cle_threshold: f64,
    /// Calls stop arriving at this time ([`NEVER`] by default; `t_fail` in termination
    /// experiments).
    pub stop_arrivals: Time,
    /// Rounding of the rate to terminate to whole flows.
    pub rounding: Rounding,
    /// Length of the ingress's sending-rate measurement after a SAR (100 ms).
    pub rate_measurement: Time,
    /// Ignore a SAR report whose egress measurement began before this ingress's last
    /// termination (one that terminated at least one flow): such a report describes the
    /// aggregate as it was before that termination, and acting on it would compare a
    /// post-termination sending rate with a pre-termination sustainable rate. Off by
    /// default (every report starts a measurement unless one is running).
    pub ignore_stale_reports: bool,
    /// Size of an admission request, bytes (its transmission time on every link of the
    /// path adds to the signalling delay).
    pub request_bytes: u32,
    /// Call statistics (offered, blocked, mean active flows) count from this time on.
    pub measure_from: Time,
    /// Write the number of active flows at every change to the series
    /// `pcn.<name>.active`.
    pub record_active: bool,
    /// Write each termination to the series `pcn.<name>.terminated`, and each decision's
    /// SAR and sending rate to `pcn.<name>.round_sar` and `pcn.<name>.round_sending` (on by default; off
    /// keeps runs with hundreds of aggregates from carrying as many empty series).
    pub record_terminations: bool,
    /// Keep every admission decision (see [`PcnIngress::decisions`]).
    pub log_decisions: bool,
}

impl IngressConfig {
    /// The study's defaults for flows of `model` arriving by `arrivals`: exponential
    /// holding with mean 60 s, no randomization, admission control with CLE-threshold
    /// 0.5, no stop, rounding up, 100 ms rate measurement, 64-byte requests.
    pub fn new(model: SourceModel, arrivals: Arrivals) -> Self {
        IngressConfig {
            model,
            arrivals,
            holding: Holding::Exp(60.0),
            jitter: 0.0,
            admission_control: true,
            cle_threshold: 0.5,
            stop_arrivals: NEVER,
            rounding: Rounding::Up,
            rate_measurement: 100 * PS_PER_MS,
            ignore_stale_reports: false,
            request_bytes: 64,
            measure_from: 0,
            record_active: false,
            record_terminations: true,
            log_decisions: false,
        }
    }
}

/// The signalling channel between an ingress and its egress: no queueing, only the
/// path's delays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Signalling {
    /// The egress controller ([`super::PcnEgress`]) asked for the CLE.
    pub egress_agent: AgentId,
    /// Ingress to egress: propagation plus the request's transmission time on every link.
    pub forward: Time,
    /// Egress to ingress (answers and SAR reports): propagation.
    pub reverse: Time,
}

impl Signalling {
    /// The channel from `ingress` to `egress` (controller `egress_agent`). The forward
    /// path is `route` if given, otherwise the shortest path; its delay is
    /// [`Network::path_delay`] with a `request_bytes` request. The reverse delay is the
    /// propagation delay of the shortest path back, or of the forward path when there is
    /// no link back (the study's topologies are drawn in the data direction only).
    pub fn between(
        net: &mut Network,
        ingress: NodeId,
        egress: NodeId,
        route: Option<&[LinkId]>,
        egress_agent: AgentId,
        request_bytes: u32,
    ) -> Result<Self, String> {
        let fwd = match route {
            Some(r) => r.to_vec(),
            None => net.path(ingress, egress)?,
        };
        // Only look for a way back when some link leads into the ingress: a search that
        // must fail would still compute a forwarding column per ingress.
        let has_way_in = net.links.iter().any(|l| l.to == ingress);
        let reverse = match has_way_in.then(|| net.path(egress, ingress)) {
            Some(Ok(back)) => net.path_delay(&back, 0),
            _ => net.path_delay(&fwd, 0),
        };
        Ok(Signalling {
            egress_agent,
            forward: net.path_delay(&fwd, request_bytes),
            reverse,
        })
    }

    /// Request to decision: forward plus reverse delay.
    pub fn round_trip(&self) -> Time {
        self.forward + self.reverse
    }
}

/// One admission decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CallDecision {
    /// Call number at this ingress (1, 2, ...).
    pub call: u64,
    /// When the call arrived and its request left.
    pub requested: Time,
    /// When the answer arrived and the decision was taken.
    pub decided: Time,
    /// The CLE in the answer.
    pub cle: f64,
    /// Admitted?
    pub admitted: bool,
}

/// One termination decision, at the end of a sending-rate measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TerminationEvent {
    /// When the SAR that started the measurement arrived.
    pub sar_received: Time,
    /// When flows were terminated (end of the measurement).
    pub at: Time,
    /// The sustainable aggregate rate received, bit/s.
    pub sar_bps: f64,
    /// The measured sending rate, bit/s.
    pub sending_bps: f64,
    /// Active flows before terminating.
    pub active_before: usize,
    /// Flows terminated.
    pub terminated: usize,
    /// Sum of the measured rates of the terminated flows, bit/s.
    pub terminated_bps: f64,
}

#[derive(Clone, Copy, Debug)]
struct PendingSar {
    at: Time,
    sar_bps: f64,
    measured_from: Time,
}

#[derive(Clone, Copy, Debug)]
struct Measurement {
    sar_bps: f64,
    sar_received: Time,
    ended_bytes: u64,
}

const SAR: u32 = POLICY_TIMER;
const MEASUREMENT_END: u32 = POLICY_TIMER + 1;

/// The PCN ingress controller of one ingress–egress aggregate: the admission and
/// termination policy of the aggregate's [`FlowGenerator`] (built by
/// [`PcnIngress::generator`]).
///
/// Calls arrive by `cfg.arrivals` until `cfg.stop_arrivals`. With admission control, each
/// call sends a request that reaches the egress after the signalling forward delay; the
/// egress answers at once with its current CLE for this aggregate (the
/// [`super::PcnEgress`] at that instant, through the signals of [`super::signals`]); the
/// answer arrives after the reverse delay and the call is admitted iff CLE <
/// `cfg.cle_threshold`. Rejected calls do not retry. Without admission control every
/// call is admitted on arrival. An admitted flow starts sending at once: a [`Source`]
/// with [`marks::PCN`] packets whose holding time, model and jitter come from the call's
/// own random stream ([`CallStreams::PerCall`]: `<name>/<call number>`, so a call's flow
/// is the same whatever happens to other calls).
///
/// Termination: a SAR report (a [`SarReport`] signal from the egress) starts a
/// `cfg.rate_measurement` (100 ms) measurement of this ingress's sending rate unless one
/// is running, or (with `cfg.ignore_stale_reports`) unless the report's egress
/// measurement began before this ingress last terminated flows. The rate is counted from
/// the flow table's per-flow sent bytes (flows of this ingress only, including flows that
/// end during the measurement). At its end the ingress terminates flows, in random order,
/// whose measured rates sum to (sending rate − SAR), rounded by `cfg.rounding`
/// ([`choose_flows_to_terminate`]); terminated flows are stopped and closed at once.
/// Each termination is written to the series `pcn.<name>.terminated` (value: flows
/// terminated at that instant), and every decision, terminating or not, to
/// `pcn.<name>.round_sar` (the SAR acted on) and `pcn.<name>.round_sending` (the measured
/// sending rate), both in bit/s.
///
/// [`Source`]: crate::traffic::Source
pub struct PcnIngress {
    name: String,
    cfg: IngressConfig,
    ingress_node: NodeId,
    sig: Signalling,
    term_rng: Rng,
    measurement: Option<Measurement>,
    pending_sars: VecDeque<PendingSar>,
    sars_received: u64,
    sars_ignored: u64,
    sars_stale: u64,
    last_termination: Option<Time>,
    terminated: u64,
    terminations: Vec<TerminationEvent>,
    decisions: Vec<CallDecision>,
    terminated_series: Option<usize>,
    round_series: Option<(usize, usize)>,
}

impl PcnIngress {
    /// The controller called `name` (its random streams and series derive from the name)
    /// in a run with seed `seed`, at `ingress_node`, signalling over `sig`.
    pub fn new(
        name: &str,
        seed: u64,
        cfg: IngressConfig,
        ingress_node: NodeId,
        sig: Signalling,
    ) -> Self {
        PcnIngress {
            name: name.to_string(),
            term_rng: Rng::stream(seed, &format!("{name}/termination")),
            cfg,
            ingress_node,
            sig,
            measurement: None,
            pending_sars: VecDeque::new(),
            sars_received: 0,
            sars_ignored: 0,
            sars_stale: 0,
            last_termination: None,
            terminated: 0,
            terminations: Vec::new(),
            decisions: Vec::new(),
            terminated_series: None,
            round_series: None,
        }
    }

    /// The call generator of aggregate `name` with this controller as its policy: its
    /// flows send packets with header `tmpl` (the PCN mark is added) and are counted in
    /// flow group `group`.
    pub fn generator(
        name: &str,
        seed: u64,
        cfg: IngressConfig,
        mut tmpl: PacketTemplate,
        group: u32,
        sig: Signalling,
    ) -> FlowGenerator {
        tmpl.marks |= marks::PCN;
        let mut g = FlowGenerator::new(
            name,
            seed,
            cfg.model.clone(),
            tmpl,
            group,
            cfg.arrivals,
            cfg.holding,
            cfg.jitter,
        )
        .with_call_streams(CallStreams::PerCall, seed)
        .stop_arrivals_at(cfg.stop_arrivals)
        .measure_from(cfg.measure_from);
        if cfg.record_active {
            g = g.record_active(&format!("pcn.{name}.active"));
        }
        g.with_admission(Box::new(PcnIngress::new(name, seed, cfg, tmpl.src, sig)))
    }

    /// The controller of the generator agent `agent`, if it is one.
    pub fn of(world: &mut World, agent: AgentHandle<FlowGenerator>) -> Option<&mut PcnIngress> {
        world
            .agents
            .get_mut::<FlowGenerator>(agent)?
            .admission::<PcnIngress>()
    }

    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its configuration.
    pub fn config(&self) -> &IngressConfig {
        &self.cfg
    }

    /// Its signalling channel.
    pub fn signalling(&self) -> Signalling {
        self.sig
    }

    /// The ingress node (the aggregate's key at the egress).
    pub fn ingress_node(&self) -> NodeId {
        self.ingress_node
    }

    /// Flows terminated so far.
    pub fn terminated(&self) -> u64 {
        self.terminated
    }

    /// SAR reports received, and those ignored (because a measurement was running, or as
    /// stale reports under `cfg.ignore_stale_reports`).
    pub fn sars(&self) -> (u64, u64) {
        (self.sars_received, self.sars_ignored)
    }

    /// SAR reports ignored as stale (measured before the last termination).
    pub fn stale_sars(&self) -> u64 {
        self.sars_stale
    }

    /// Every termination decision so far.
    pub fn terminations(&self) -> &[TerminationEvent] {
        &self.terminations
    }

    /// Every admission decision so far (only kept with `cfg.log_decisions`).
    pub fn decisions(&self) -> &[CallDecision] {
        &self.decisions
    }

    /// Delivers a SAR report of `sar_bps` to the ingress generator `ingress` at `at` from
    /// outside the run (a scripted report, or a controller that is not an agent). Its
    /// measurement is taken to have begun at `at` (never stale).
    pub fn schedule_sar(
        world: &mut World,
        ingress: AgentHandle<FlowGenerator>,
        at: Time,
        sar_bps: f64,
    ) {
        Self::schedule_report(world, ingress, at, sar_bps, at);
    }

    /// Like [`PcnIngress::schedule_sar`] for a report whose egress measurement began at
    /// `measured_from`.
    pub fn schedule_report(
        world: &mut World,
        ingress: AgentHandle<FlowGenerator>,
        at: Time,
        sar_bps: f64,
        measured_from: Time,
    ) {
        if let Some(i) = Self::of(world, ingress) {
            i.queue_sar(at, sar_bps, measured_from);
            world
                .sched
                .at(at, Event::new(Target::Agent(ingress.id()), SAR));
        }
    }

    fn queue_sar(&mut self, at: Time, sar_bps: f64, measured_from: Time) {
        let pos = self.pending_sars.partition_point(|p| p.at <= at);
        self.pending_sars.insert(
            pos,
            PendingSar {
                at,
                sar_bps,
                measured_from,
            },
        );
    }

    fn on_answer(&mut self, answer: &CleAnswer, ctx: &mut Ctx, calls: &mut Calls) {
        let CleAnswer {
            call,
            requested,
            cle,
        } = *answer;
        let admitted = cle < self.cfg.cle_threshold;
        if self.cfg.log_decisions {
            self.decisions.push(CallDecision {
                call,
                requested,
                decided: ctx.now(),
                cle,
                admitted,
            });
        }
        calls.decide(call, admitted);
    }

    fn on_sar(&mut self, ctx: &mut Ctx, calls: &mut Calls) {
        let now = ctx.now();
        let Some(&PendingSar {
            at,
            sar_bps,
            measured_from,
        }) = self.pending_sars.front()
        else {
            return;
        };
        if at > now {
            return;
        }
        self.pending_sars.pop_front();
        self.sars_received += 1;
        if self.measurement.is_some() {
            self.sars_ignored += 1;
            return;
        }
        if self.cfg.ignore_stale_reports && self.last_termination.is_some_and(|t| measured_from < t)
        {
            self.sars_ignored += 1;
            self.sars_stale += 1;
            return;
        }
        for c in calls.active.iter_mut() {
            c.mark = ctx.flows.recs[c.flow as usize].sent_bytes;
        }
        self.measurement = Some(Measurement {
            sar_bps,
            sar_received: now,
            ended_bytes: 0,
        });
        ctx.timer(self.cfg.rate_measurement, MEASUREMENT_END);
    }

    fn on_measurement_end(&mut self, ctx: &mut Ctx, calls: &mut Calls) {
        let now = ctx.now();
        let Some(m) = self.measurement.take() else {
            return;
        };
        let t = to_secs(self.cfg.rate_measurement);
        let mut bytes = m.ended_bytes;
        let rates: Vec<f64> = calls
            .active
            .iter()
            .map(|c| {
                let b = ctx.flows.recs[c.flow as usize].sent_bytes - c.mark;
                bytes += b;
                b as f64 * 8.0 / t
            })
            .collect();
        let sending_bps = bytes as f64 * 8.0 / t;
        let chosen = choose_flows_to_terminate(
            &rates,
            sending_bps - m.sar_bps,
            self.cfg.rounding,
            &mut self.term_rng,
        );
        let mut terminated_bps = 0.0;
        for &i in &chosen {
            calls.terminate(i);
            terminated_bps += rates[i];
        }
        let n = chosen.len();
        self.terminated += n as u64;
        if let Some((sar, sending)) = self.round_series {
            ctx.rec.push(sar, now, m.sar_bps);
            ctx.rec.push(sending, now, sending_bps);
        }
        self.terminations.push(TerminationEvent {
            sar_received: m.sar_received,
            at: now,
            sar_bps: m.sar_bps,
            sending_bps,
            active_before: calls.active.len(),
            terminated: n,
            terminated_bps,
        });
        if n > 0 {
            self.last_termination = Some(now);
            if let Some(s) = self.terminated_series {
                ctx.rec.push(s, now, n as f64);
            }
        }
    }
}

impl CallAdmission for PcnIngress {
    fn start(&mut self, ctx: &mut Ctx) {
        if self.cfg.record_terminations {
            self.terminated_series = Some(
                ctx.rec
                    .id(&format!("pcn.{}.terminated", self.name), "flows"),
            );
            self.round_series = Some((
                ctx.rec.id(&format!("pcn.{}.round_sar", self.name), "b/s"),
                ctx.rec
                    .id(&format!("pcn.{}.round_sending", self.name), "b/s"),
            ));
        }
    }

    /// With admission control, sends the call's request to the egress (or, without an
    /// egress controller, answers itself with CLE 0 after the round trip) and decides
    /// when the answer arrives; without, admits at once.
    fn admit(&mut self, call: u64, _active: usize, ctx: &mut Ctx) -> Admission {
        let now = ctx.now();
        if !self.cfg.admission_control {
            if self.cfg.log_decisions {
                self.decisions.push(CallDecision {
                    call,
                    requested: now,
                    decided: now,
                    cle: 0.0,
                    admitted: true,
                });
            }
            return Admission::Admit;
        }
        if self.sig.egress_agent == NONE {
            // No egress controller: nothing marks, the CLE is 0.
            let answer = CleAnswer {
                call,
                requested: now,
                cle: 0.0,
            };
            let me = ctx.me;
            ctx.signal(me, self.sig.forward + self.sig.reverse, answer);
        } else {
            let request = CleRequest {
                call,
                requested: now,
                ingress_node: self.ingress_node,
                reply_after: self.sig.reverse,
            };
            ctx.signal(self.sig.egress_agent, self.sig.forward, request);
        }
        Admission::Pending
    }

    /// An answer to an admission request, or a SAR report from the egress.
    fn on_signal(&mut self, _from: AgentId, msg: &dyn Any, ctx: &mut Ctx, calls: &mut Calls) {
        if let Some(a) = crate::world::read_signal::<CleAnswer>(msg) {
            self.on_answer(a, ctx, calls);
        } else if let Some(r) = crate::world::read_signal::<SarReport>(msg) {
            self.queue_sar(ctx.now(), r.sar_bps, r.measured_from);
            self.on_sar(ctx, calls);
        }
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx, calls: &mut Calls) {
        match kind {
            SAR => self.on_sar(ctx, calls),
            MEASUREMENT_END => self.on_measurement_end(ctx, calls),
            _ => {}
        }
    }

    /// A flow that ends during a rate measurement still counts what it sent in it.
    fn on_call_end(&mut self, call: &ActiveCall, ctx: &Ctx) {
        if let Some(m) = self.measurement.as_mut() {
            m.ended_bytes += ctx.flows.recs[call.flow as usize].sent_bytes - call.mark;
        }
    }

    fn report(&self, _now: Time, out: &mut Vec<(String, Value)>) {
        out.push(("terminated_flows".into(), json!(self.terminated)));
        out.push(("sar_received".into(), json!(self.sars_received)));
        out.push(("sar_stale".into(), json!(self.sars_stale)));
        out.push(("termination_rounds".into(), json!(self.terminations.len())));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overload_rate() {
        // 2x over Ra = 22.5 Mb/s with 64 kb/s flows held 60 s: 11.71875 calls/s.
        let l = call_rate_for_overload(2.0, 22.5e6, 64e3, 60.0);
        assert!((l - 11.71875).abs() < 1e-12);
        match CallArrivals::Batch.arrivals(10.0) {
            Arrivals::Batch { rate, mean } => assert_eq!((rate, mean), (2.0, 5.0)),
            a => panic!("{a:?}"),
        }
        assert_eq!(CallArrivals::Batch.arrivals(10.0).call_rate(), 10.0);
    }

    #[test]
    fn rounding_policies_on_equal_flows() {
        let rates = vec![64e3; 10];
        let mut r = Rng::from_seed(3);
        for (excess, up, down, nearest) in [
            (3.3 * 64e3, 4, 3, 3),
            (3.7 * 64e3, 4, 3, 4),
            (3.5 * 64e3, 4, 3, 4),
            (3.0 * 64e3, 3, 3, 3),
            (0.2 * 64e3, 1, 0, 0),
            (20.0 * 64e3, 10, 10, 10),
            (-1.0, 0, 0, 0),
        ] {
            let mut n = |p| choose_flows_to_terminate(&rates, excess, p, &mut r).len();
            assert_eq!(n(Rounding::Up), up, "up {excess}");
            assert_eq!(n(Rounding::Down), down, "down {excess}");
            assert_eq!(n(Rounding::Nearest), nearest, "nearest {excess}");
        }
    }

    #[test]
    fn choice_is_random_and_distinct() {
        let rates = vec![1.0; 50];
        let mut r = Rng::from_seed(9);
        let a = choose_flows_to_terminate(&rates, 10.0, Rounding::Up, &mut r);
        let b = choose_flows_to_terminate(&rates, 10.0, Rounding::Up, &mut r);
        assert_eq!(a.len(), 10);
        assert_ne!(a, b);
        let mut s = a.clone();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s.len(), 10);
    }
}
