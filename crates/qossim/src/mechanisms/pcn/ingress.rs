//! The PCN ingress of one ingress–egress aggregate: call arrivals, admission decisions
//! from the egress's Congestion Level Estimate, and flow termination from the sustainable
//! aggregate rate.

use super::marks;
use super::signals::{CleAnswer, CleRequest, SarReport};
use crate::engine::{Event, Target};
use crate::metrics::TimeAverage;
use crate::net::{AgentId, FlowId, LinkId, Network, NodeId, NONE};
use crate::rng::Rng;
use crate::time::{secs, to_secs, Time, NEVER, PS_PER_MS};
use crate::traffic::{Arrivals, Holding, PacketTemplate, Source, SourceModel};
use crate::world::{Agent, Ctx, World};
use serde_json::{json, Value};
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

/// An admitted flow still in progress.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActiveFlow {
    /// Its source agent.
    pub agent: AgentId,
    /// Its flow id.
    pub flow: FlowId,
    /// When its holding time ends.
    pub end: Time,
    /// Its model's mean rate, bit/s.
    pub mean_bps: f64,
    snap: u64,
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

const ARRIVAL: u32 = 0;
const SAR: u32 = 3;
const MEASUREMENT_END: u32 = 4;
const MEASURE_FROM: u32 = 5;

/// The PCN ingress controller of one ingress–egress aggregate, also its call generator.
///
/// Calls arrive by `cfg.arrivals` until `cfg.stop_arrivals`. With admission control, each
/// call sends a request that reaches the egress after the signalling forward delay; the
/// egress answers at once with its current CLE for this aggregate (the
/// [`super::PcnEgress`] at that instant, through the signals of [`super::signals`]); the answer arrives after the reverse delay and the call
/// is admitted iff CLE < `cfg.cle_threshold`. Rejected calls do not retry. Without
/// admission control every call is admitted on arrival. An admitted flow starts sending
/// at once: a [`Source`] with [`marks::PCN`] packets, holding time drawn from the call's
/// own random stream (`<name>/<call number>`, which also drives the flow's model choice
/// and jitter, so a call's flow is the same whatever happens to other calls).
///
/// Termination: a SAR report (a [`SarReport`] signal from the egress) starts a
/// `cfg.rate_measurement` (100 ms) measurement of this ingress's sending rate unless one
/// is running, or (with `cfg.ignore_stale_reports`) unless the report's egress
/// measurement began before this ingress last terminated flows. The rate is counted from the flow table's per-flow sent bytes (flows of
/// this ingress only, including flows that end during the measurement). At its end the
/// ingress terminates flows, in random order, whose measured rates sum to
/// (sending rate − SAR), rounded by `cfg.rounding`
/// ([`choose_flows_to_terminate`]); terminated flows are stopped and closed at once.
/// Each termination is written to the series `pcn.<name>.terminated` (value: flows
/// terminated at that instant), and every decision, terminating or not, to
/// `pcn.<name>.round_sar` (the SAR acted on) and `pcn.<name>.round_sending` (the measured
/// sending rate), both in bit/s.
pub struct PcnIngress {
    name: String,
    cfg: IngressConfig,
    tmpl: PacketTemplate,
    group: u32,
    sig: Signalling,
    rng: Rng,
    term_rng: Rng,
    calls: u64,
    active: Vec<ActiveFlow>,
    next_end: Time,
    active_avg: TimeAverage,
    measuring_stats: bool,
    offered: u64,
    admitted: u64,
    blocked: u64,
    offered_measured: u64,
    blocked_measured: u64,
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
    active_series: Option<usize>,
}

impl PcnIngress {
    /// The controller called `name` (its random streams and series derive from the name)
    /// in a run with seed `seed`; its flows send packets with header `tmpl` (the PCN mark
    /// is added), are counted in flow group `group`, and it signals over `sig`.
    pub fn new(
        name: &str,
        seed: u64,
        cfg: IngressConfig,
        mut tmpl: PacketTemplate,
        group: u32,
        sig: Signalling,
    ) -> Self {
        tmpl.marks |= marks::PCN;
        PcnIngress {
            name: name.to_string(),
            rng: Rng::stream(seed, &format!("{name}/arrivals")),
            term_rng: Rng::stream(seed, &format!("{name}/termination")),
            cfg,
            tmpl,
            group,
            sig,
            calls: 0,
            active: Vec::new(),
            next_end: NEVER,
            active_avg: TimeAverage::default(),
            measuring_stats: true,
            offered: 0,
            admitted: 0,
            blocked: 0,
            offered_measured: 0,
            blocked_measured: 0,
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
            active_series: None,
        }
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
        self.tmpl.src
    }

    /// The flow group its flows are counted in.
    pub fn group(&self) -> u32 {
        self.group
    }

    /// Admitted flows as of this controller's last event (flows whose holding time ended
    /// since then are still listed; see [`PcnIngress::active_at`]).
    pub fn active_flows(&self) -> &[ActiveFlow] {
        &self.active
    }

    /// Number of admitted flows still in progress at `now`.
    pub fn active_at(&self, now: Time) -> usize {
        self.active.iter().filter(|f| f.end > now).count()
    }

    /// Calls offered so far (all time).
    pub fn offered(&self) -> u64 {
        self.offered
    }

    /// Calls admitted so far (all time).
    pub fn admitted(&self) -> u64 {
        self.admitted
    }

    /// Calls blocked so far (all time).
    pub fn blocked(&self) -> u64 {
        self.blocked
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

    /// Time-averaged number of active flows from `cfg.measure_from` to `now`.
    pub fn active_mean(&self, now: Time) -> f64 {
        let mut avg = self.active_avg.clone();
        let mut ends: Vec<Time> = self
            .active
            .iter()
            .map(|f| f.end)
            .filter(|&t| t <= now)
            .collect();
        ends.sort_unstable();
        let mut n = self.active.len();
        for t in ends {
            n -= 1;
            avg.set(t, n as f64);
        }
        avg.mean(now)
    }

    /// Delivers a SAR report of `sar_bps` to the ingress controller `ingress` at `at`
    /// from outside the run (a scripted report, or a controller that is not an agent).
    /// Its measurement is taken to have begun at `at` (never stale).
    pub fn schedule_sar(world: &mut World, ingress: AgentId, at: Time, sar_bps: f64) {
        Self::schedule_report(world, ingress, at, sar_bps, at);
    }

    /// Like [`PcnIngress::schedule_sar`] for a report whose egress measurement began at
    /// `measured_from`.
    pub fn schedule_report(
        world: &mut World,
        ingress: AgentId,
        at: Time,
        sar_bps: f64,
        measured_from: Time,
    ) {
        if let Some(i) = world.agents.get_mut::<PcnIngress>(ingress) {
            i.queue_sar(at, sar_bps, measured_from);
            world.sched.at(at, Event::new(Target::Agent(ingress), SAR));
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

    fn schedule_next_arrival(&mut self, ctx: &mut Ctx) {
        let rate = match self.cfg.arrivals {
            Arrivals::Poisson { rate } | Arrivals::Batch { rate, .. } => rate,
        };
        if rate <= 0.0 {
            return;
        }
        let at = ctx.now() + secs(self.rng.exp(1.0 / rate)).max(1);
        if at < self.cfg.stop_arrivals {
            ctx.timer_at(at, ARRIVAL);
        }
    }

    /// Removes flows whose holding time ended by `now`, in order of their ends.
    fn expire(&mut self, now: Time, ctx: &mut Ctx) {
        if now < self.next_end {
            return;
        }
        let mut ended: Vec<ActiveFlow> = self
            .active
            .iter()
            .filter(|f| f.end <= now)
            .copied()
            .collect();
        ended.sort_by_key(|f| (f.end, f.flow));
        self.active.retain(|f| f.end > now);
        let mut n = self.active.len() + ended.len();
        for f in ended {
            n -= 1;
            self.active_avg.set(f.end, n as f64);
            if let Some(s) = self.active_series {
                ctx.rec.push(s, f.end, n as f64);
            }
            if let Some(m) = self.measurement.as_mut() {
                m.ended_bytes += ctx.flows.recs[f.flow as usize].sent_bytes - f.snap;
            }
        }
        self.next_end = self.active.iter().map(|f| f.end).min().unwrap_or(NEVER);
    }

    fn active_changed(&mut self, now: Time, ctx: &mut Ctx) {
        let n = self.active.len() as f64;
        self.active_avg.set(now, n);
        if let Some(s) = self.active_series {
            ctx.rec.push(s, now, n);
        }
    }

    fn start_flow(&mut self, call: u64, ctx: &mut Ctx) {
        let now = ctx.now();
        let mut frng = Rng::stream(ctx.seed(), &format!("{}/{}", self.name, call));
        let hold = match self.cfg.holding {
            Holding::Exp(m) => frng.exp(m),
            Holding::Fixed(m) => m,
        };
        let model = self.cfg.model.pick(&mut frng).clone();
        let end = now.saturating_add(secs(hold).max(1));
        let flow = ctx.flows.open(self.group, now);
        let src = Source::new(&model, self.tmpl, flow, 0, end, self.cfg.jitter, frng);
        let agent = ctx.spawn(String::new(), Box::new(src));
        self.active.push(ActiveFlow {
            agent,
            flow,
            end,
            mean_bps: model.mean_bps(),
            snap: 0,
        });
        self.next_end = self.next_end.min(end);
        self.admitted += 1;
        self.active_changed(now, ctx);
    }

    fn on_arrival(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        let calls = match self.cfg.arrivals {
            Arrivals::Poisson { .. } => 1,
            Arrivals::Batch { mean, .. } => self.rng.geometric(mean),
        };
        for _ in 0..calls {
            self.calls += 1;
            self.offered += 1;
            if self.measuring_stats {
                self.offered_measured += 1;
            }
            if self.cfg.admission_control {
                let request = CleRequest {
                    call: self.calls,
                    requested: now,
                    ingress_node: self.tmpl.src,
                    reply_after: self.sig.reverse,
                };
                if self.sig.egress_agent == NONE {
                    // No egress controller: nothing marks, the CLE is 0.
                    let answer = CleAnswer {
                        call: self.calls,
                        requested: now,
                        cle: 0.0,
                    };
                    let me = ctx.me;
                    ctx.signal(me, self.sig.forward + self.sig.reverse, answer);
                } else {
                    ctx.signal(self.sig.egress_agent, self.sig.forward, request);
                }
            } else {
                if self.cfg.log_decisions {
                    self.decisions.push(CallDecision {
                        call: self.calls,
                        requested: now,
                        decided: now,
                        cle: 0.0,
                        admitted: true,
                    });
                }
                self.start_flow(self.calls, ctx);
            }
        }
        self.schedule_next_arrival(ctx);
    }

    fn on_answer(&mut self, answer: &CleAnswer, ctx: &mut Ctx) {
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
        if admitted {
            self.start_flow(call, ctx);
        } else {
            self.blocked += 1;
            if requested >= self.cfg.measure_from {
                self.blocked_measured += 1;
            }
        }
    }

    fn on_sar(&mut self, ctx: &mut Ctx) {
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
        for f in self.active.iter_mut() {
            f.snap = ctx.flows.recs[f.flow as usize].sent_bytes;
        }
        self.measurement = Some(Measurement {
            sar_bps,
            sar_received: now,
            ended_bytes: 0,
        });
        ctx.timer(self.cfg.rate_measurement, MEASUREMENT_END);
    }

    fn on_measurement_end(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        self.expire(now, ctx);
        let Some(m) = self.measurement.take() else {
            return;
        };
        let t = to_secs(self.cfg.rate_measurement);
        let mut bytes = m.ended_bytes;
        let rates: Vec<f64> = self
            .active
            .iter()
            .map(|f| {
                let b = ctx.flows.recs[f.flow as usize].sent_bytes - f.snap;
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
        let mut kill = vec![false; self.active.len()];
        let mut terminated_bps = 0.0;
        for &i in &chosen {
            kill[i] = true;
            terminated_bps += rates[i];
        }
        let active_before = self.active.len();
        let mut k = 0;
        self.active.retain(|f| {
            let stop = kill[k];
            k += 1;
            if stop {
                ctx.stop(f.agent);
                ctx.flows.close(f.flow, now);
            }
            !stop
        });
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
            active_before,
            terminated: n,
            terminated_bps,
        });
        if n > 0 {
            self.last_termination = Some(now);
            if let Some(s) = self.terminated_series {
                ctx.rec.push(s, now, n as f64);
            }
            self.next_end = self.active.iter().map(|f| f.end).min().unwrap_or(NEVER);
            self.active_changed(now, ctx);
        }
    }
}

impl Agent for PcnIngress {
    fn start(&mut self, ctx: &mut Ctx) {
        if self.cfg.record_terminations {
            self.terminated_series = Some(
                ctx.rec
                    .id(&format!("pcn.{}.terminated", self.name), "flows"),
            );
            self.round_series = Some((
                ctx.rec.id(&format!("pcn.{}.round_sar", self.name), "bit/s"),
                ctx.rec
                    .id(&format!("pcn.{}.round_sending", self.name), "bit/s"),
            ));
        }
        if self.cfg.record_active {
            self.active_series = Some(ctx.rec.id(&format!("pcn.{}.active", self.name), "flows"));
        }
        let now = ctx.now();
        self.measuring_stats = self.cfg.measure_from <= now;
        if !self.measuring_stats {
            ctx.timer_at(self.cfg.measure_from, MEASURE_FROM);
        }
        self.schedule_next_arrival(ctx);
    }

    /// An answer to an admission request, or a SAR report from the egress.
    fn on_signal(&mut self, _from: AgentId, msg: &dyn std::any::Any, ctx: &mut Ctx) {
        let now = ctx.now();
        self.expire(now, ctx);
        if let Some(a) = msg.downcast_ref::<CleAnswer>() {
            self.on_answer(a, ctx);
        } else if let Some(r) = msg.downcast_ref::<SarReport>() {
            self.queue_sar(now, r.sar_bps, r.measured_from);
            self.on_sar(ctx);
        }
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        let now = ctx.now();
        self.expire(now, ctx);
        match kind {
            ARRIVAL => self.on_arrival(ctx),
            SAR => self.on_sar(ctx),
            MEASUREMENT_END => self.on_measurement_end(ctx),
            MEASURE_FROM => {
                self.measuring_stats = true;
                self.active_avg.reset_at(now);
            }
            _ => {}
        }
    }

    fn report(&self, now: Time, out: &mut Vec<(String, Value)>) {
        out.push(("offered_calls".into(), json!(self.offered_measured)));
        out.push(("blocked_calls".into(), json!(self.blocked_measured)));
        out.push((
            "blocking".into(),
            json!(if self.offered_measured > 0 {
                self.blocked_measured as f64 / self.offered_measured as f64
            } else {
                0.0
            }),
        ));
        out.push(("admitted_calls_total".into(), json!(self.admitted)));
        out.push(("active_mean".into(), json!(self.active_mean(now))));
        out.push(("active_now".into(), json!(self.active_at(now))));
        out.push(("terminated_flows".into(), json!(self.terminated)));
        out.push(("sar_received".into(), json!(self.sars_received)));
        out.push(("sar_stale".into(), json!(self.sars_stale)));
        out.push(("termination_rounds".into(), json!(self.terminations.len())));
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
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
