//! Flow-level traffic: calls arrive, are admitted or blocked, hold for a while, leave.

use super::source::{PacketTemplate, Source, SourceModel};
use crate::metrics::TimeAverage;
use crate::net::AgentId;
use crate::rng::Rng;
use crate::time::{secs, Time, NEVER};
use crate::world::{Agent, Ctx};
use serde_json::{json, Value};
use std::any::Any;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// How calls arrive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrivals {
    /// A Poisson process of `rate` calls per second.
    Poisson {
        /// Calls per second.
        rate: f64,
    },
    /// Batches arrive as a Poisson process of `rate` batches per second, each carrying a
    /// geometric number of calls (at least one) with the given mean.
    Batch {
        /// Batches per second.
        rate: f64,
        /// Mean calls per batch.
        mean: f64,
    },
}

impl Arrivals {
    /// Mean calls per second.
    pub fn call_rate(&self) -> f64 {
        match *self {
            Arrivals::Poisson { rate } => rate,
            Arrivals::Batch { rate, mean } => rate * mean,
        }
    }
}

/// How long an admitted call lasts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Holding {
    /// Exponential with this mean, seconds.
    Exp(f64),
    /// Exactly this long, seconds.
    Fixed(f64),
}

impl Holding {
    /// Mean holding time, seconds.
    pub fn mean(&self) -> f64 {
        match *self {
            Holding::Exp(m) | Holding::Fixed(m) => m,
        }
    }
}

/// What an admission policy answers when a call arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The call starts now.
    Admit,
    /// The call is blocked (it never retries).
    Reject,
    /// The policy decides later (after a probe, or a request's round trip), answering
    /// through [`CallAdmission::on_signal`].
    Pending,
}

/// A call admission policy of a [`FlowGenerator`]: it decides each call at once, or
/// later, when a signal (a probe's verdict, an answer from a measurement point) reaches
/// the generator. Signals addressed to the generator are handed to its policy.
pub trait CallAdmission {
    /// Call number `call` (counted from 1) arrives while `active` calls are in progress.
    fn admit(&mut self, call: u64, active: usize, ctx: &mut Ctx) -> Admission;
    /// A signal from `from` reached the generator; the policy pushes each pending call it
    /// now decides onto `decided` as (call, admitted).
    fn on_signal(
        &mut self,
        _from: AgentId,
        _msg: &dyn Any,
        _ctx: &mut Ctx,
        _decided: &mut Vec<(u64, bool)>,
    ) {
    }
}

/// A trunk of `0` circuits: admit while fewer than this many calls are active
/// (M/G/c/c; its blocking is Erlang-B).
pub struct MaxActive(pub usize);

impl CallAdmission for MaxActive {
    fn admit(&mut self, _call: u64, active: usize, _ctx: &mut Ctx) -> Admission {
        if active < self.0 {
            Admission::Admit
        } else {
            Admission::Reject
        }
    }
}

/// Generates calls; every admitted call becomes a [`Source`] agent sending until its
/// holding time ends.
pub struct FlowGenerator {
    name: String,
    model: SourceModel,
    shared: Vec<std::sync::Arc<SourceModel>>,
    tmpl: PacketTemplate,
    group: u32,
    arrivals: Arrivals,
    holding: Holding,
    jitter: f64,
    /// False: the calls' flows share their group's one record (no per-call memory).
    per_flow: bool,
    stop_arrivals: Time,
    start_arrivals: Time,
    measure_from: Time,
    admission: Option<Box<dyn CallAdmission>>,
    rng: Rng,
    ends: BinaryHeap<Reverse<Time>>,
    active: TimeAverage,
    offered: u64,
    admitted: u64,
    blocked: u64,
    offered_measured: u64,
    blocked_measured: u64,
    measuring: bool,
    /// Calls awaiting a decision: call number and whether it arrived while measuring.
    pending: HashMap<u64, bool>,
}

const MEASURE: u32 = 1;
const OPEN: u32 = 2;

impl FlowGenerator {
    /// A generator named `name` (its random stream and its flows' streams derive from the
    /// name) whose flows send `model` packets with header `tmpl`, counted in `group`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: &str,
        seed: u64,
        model: SourceModel,
        tmpl: PacketTemplate,
        group: u32,
        arrivals: Arrivals,
        holding: Holding,
        jitter: f64,
    ) -> Self {
        FlowGenerator {
            name: name.to_string(),
            shared: model.shared_choices(),
            model,
            tmpl,
            group,
            arrivals,
            holding,
            jitter,
            per_flow: true,
            stop_arrivals: NEVER,
            start_arrivals: 0,
            measure_from: 0,
            admission: None,
            rng: Rng::stream(seed, name),
            ends: BinaryHeap::new(),
            active: TimeAverage::default(),
            offered: 0,
            admitted: 0,
            blocked: 0,
            offered_measured: 0,
            blocked_measured: 0,
            measuring: true,
            pending: HashMap::new(),
        }
    }

    /// Calls start arriving at `t` (the first one an exponential time after it).
    pub fn start_arrivals_at(mut self, t: Time) -> Self {
        self.start_arrivals = t;
        self
    }

    /// Calls stop arriving at `t`.
    pub fn stop_arrivals_at(mut self, t: Time) -> Self {
        self.stop_arrivals = t;
        self
    }

    /// Statistics (active calls, blocking) count from `t` on.
    pub fn measure_from(mut self, t: Time) -> Self {
        self.measure_from = t;
        self
    }

    /// With `false`, the calls' flows share their group's one flow record, so a long run
    /// of many calls does not grow by a record per call (for flows nobody measures one
    /// by one).
    pub fn with_per_flow(mut self, per_flow: bool) -> Self {
        self.per_flow = per_flow;
        self
    }

    /// Decides each call with `adm`.
    pub fn with_admission(mut self, adm: Box<dyn CallAdmission>) -> Self {
        self.admission = Some(adm);
        self
    }

    /// Sets (or replaces) the call admission policy of a built generator (a mechanism
    /// family adds its policy after the core has built the traffic).
    pub fn set_admission(&mut self, adm: Box<dyn CallAdmission>) {
        self.admission = Some(adm);
    }

    /// Removes calls that ended by `now`, in order, keeping the active-call average exact
    /// (every end lies after the previous update, so updates stay monotone in time).
    fn expire(&mut self, now: Time) {
        while let Some(&Reverse(t)) = self.ends.peek() {
            if t > now {
                break;
            }
            self.ends.pop();
            self.active.set(t, self.ends.len() as f64);
        }
    }

    fn schedule_next(&mut self, ctx: &mut Ctx) {
        let rate = match self.arrivals {
            Arrivals::Poisson { rate } | Arrivals::Batch { rate, .. } => rate,
        };
        if rate <= 0.0 {
            return;
        }
        let at = ctx.now() + secs(self.rng.exp(1.0 / rate)).max(1);
        if at < self.stop_arrivals {
            ctx.timer_at(at, 0);
        }
    }

    /// Calls in progress now.
    pub fn active(&self) -> usize {
        self.ends.len()
    }

    /// Calls awaiting their policy's decision.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    fn block(&mut self, measured: bool) {
        self.blocked += 1;
        if measured {
            self.blocked_measured += 1;
        }
    }

    /// Starts an admitted call now: a flow and its source, for a fresh holding time.
    fn start_call(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        self.admitted += 1;
        let hold = match self.holding {
            Holding::Exp(m) => self.rng.exp(m),
            Holding::Fixed(m) => m,
        };
        let end = now + secs(hold).max(1);
        self.ends.push(Reverse(end));
        self.active.set(now, self.ends.len() as f64);
        let flow = if self.per_flow {
            ctx.flows.open(self.group, now)
        } else {
            ctx.flows.open_shared(self.group, now)
        };
        let mut frng = Rng::stream(ctx.seed(), &format!("{}/{}", self.name, self.admitted));
        let model = self.shared[self.model.pick_index(&mut frng)].clone();
        let src = Source::with_shared(model, self.tmpl, flow, 0, end, self.jitter, frng);
        ctx.spawn(String::new(), Box::new(src));
    }
}

impl Agent for FlowGenerator {
    fn start(&mut self, ctx: &mut Ctx) {
        self.measuring = self.measure_from == 0;
        if !self.measuring {
            ctx.timer_at(self.measure_from, MEASURE);
        }
        if self.start_arrivals > ctx.now() {
            ctx.timer_at(self.start_arrivals, OPEN);
        } else {
            self.schedule_next(ctx);
        }
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        let now = ctx.now();
        self.expire(now);
        if kind == MEASURE {
            self.measuring = true;
            self.active.reset_at(now);
            return;
        }
        if kind == OPEN {
            self.schedule_next(ctx);
            return;
        }
        let calls = match self.arrivals {
            Arrivals::Poisson { .. } => 1,
            Arrivals::Batch { mean, .. } => self.rng.geometric(mean),
        };
        for _ in 0..calls {
            self.offered += 1;
            let call = self.offered;
            let measured = self.measuring;
            if measured {
                self.offered_measured += 1;
            }
            let decision = match self.admission.as_mut() {
                Some(a) => a.admit(call, self.ends.len(), ctx),
                None => Admission::Admit,
            };
            match decision {
                Admission::Admit => self.start_call(ctx),
                Admission::Reject => self.block(measured),
                Admission::Pending => {
                    self.pending.insert(call, measured);
                }
            }
        }
        self.schedule_next(ctx);
    }

    /// Blocking and active-call statistics count from the end of the warm-up.
    fn on_warmup(&mut self, now: Time) {
        self.expire(now);
        self.measuring = true;
        self.active.reset_at(now);
        self.offered_measured = 0;
        self.blocked_measured = 0;
        for m in self.pending.values_mut() {
            *m = false;
        }
    }

    fn on_signal(&mut self, from: AgentId, msg: &dyn Any, ctx: &mut Ctx) {
        let Some(mut policy) = self.admission.take() else {
            return;
        };
        let mut decided = Vec::new();
        policy.on_signal(from, msg, ctx, &mut decided);
        self.admission = Some(policy);
        if decided.is_empty() {
            return;
        }
        self.expire(ctx.now());
        for (call, admitted) in decided {
            let Some(measured) = self.pending.remove(&call) else {
                continue;
            };
            if admitted {
                self.start_call(ctx);
            } else {
                self.block(measured);
            }
        }
    }

    fn report(&self, now: Time, out: &mut Vec<(String, Value)>) {
        // Account for calls that ended since the last arrival without mutating.
        let mut active = self.active.clone();
        let mut ends: Vec<Time> = self
            .ends
            .iter()
            .map(|r| r.0)
            .filter(|&t| t <= now)
            .collect();
        ends.sort_unstable();
        let mut n = self.ends.len();
        for t in ends {
            n -= 1;
            active.set(t, n as f64);
        }
        out.push(("offered_calls".into(), json!(self.offered_measured)));
        out.push(("blocked_calls".into(), json!(self.blocked_measured)));
        out.push(("admitted_calls_total".into(), json!(self.admitted)));
        out.push((
            "blocking".into(),
            json!(if self.offered_measured > 0 {
                self.blocked_measured as f64 / self.offered_measured as f64
            } else {
                0.0
            }),
        ));
        out.push(("active_mean".into(), json!(active.mean(now))));
        out.push(("active_now".into(), json!(n)));
    }

    fn as_any_mut(&mut self) -> &mut dyn std::any::Any {
        self
    }
}
