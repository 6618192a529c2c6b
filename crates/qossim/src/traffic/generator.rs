//! Flow-level traffic: calls arrive, are admitted or blocked, hold for a while, leave.

use super::source::{PacketTemplate, Source, SourceModel};
use crate::metrics::TimeAverage;
use crate::net::{AgentId, FlowId};
use crate::rng::Rng;
use crate::time::{secs, Time, NEVER};
use crate::world::{Agent, Ctx};
use serde_json::{json, Value};
use std::any::Any;
use std::collections::HashMap;

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
    /// through [`CallAdmission::on_signal`] or [`CallAdmission::on_timer`].
    Pending,
}

/// Where a generator's random numbers come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum CallStreams {
    /// Arrivals and holding times from the stream `<name>`; the `n`-th admitted flow's
    /// model and jitter from `<name>/<n>`.
    #[default]
    ByAdmission,
    /// Arrivals from `<name>/arrivals`; call number `c`'s holding time, model and jitter
    /// from `<name>/<c>`, drawn when it starts. A call's flow is then the same whatever
    /// is decided for the calls before it, so two admission policies compared with one
    /// seed see common random numbers.
    PerCall,
}

/// An admitted call still in progress.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ActiveCall {
    /// Call number (counted from 1 over offered calls).
    pub call: u64,
    /// Its source agent.
    pub agent: AgentId,
    /// Its flow.
    pub flow: FlowId,
    /// When its holding time ends.
    pub end: Time,
    /// Its model's mean rate, bit/s.
    pub mean_bps: f64,
    /// A byte count the admission policy may keep per call (0 when the call starts),
    /// e.g. the flow's sent bytes when a rate measurement began.
    pub mark: u64,
}

/// What a policy sees of its generator's calls while it handles a signal or a timer,
/// and what it asks the generator to do once it returns.
pub struct Calls<'a> {
    /// Calls in progress, in the order they were admitted (calls whose holding time has
    /// ended have been removed).
    pub active: &'a mut [ActiveCall],
    decided: Vec<(u64, bool)>,
    terminate: Vec<usize>,
}

impl Calls<'_> {
    /// Pending call `call` is now decided: started when `admitted`, blocked otherwise.
    pub fn decide(&mut self, call: u64, admitted: bool) {
        self.decided.push((call, admitted));
    }

    /// Terminates `active[index]` now: its source stops and its flow closes.
    pub fn terminate(&mut self, index: usize) {
        self.terminate.push(index);
    }
}

/// A call admission policy of a [`FlowGenerator`]: it decides each call at once, or
/// later, when a signal (a probe's verdict, an answer from a measurement point) or one
/// of its timers reaches the generator; it may also terminate calls in progress (flow
/// termination). Signals addressed to the generator, and timers of kind
/// [`POLICY_TIMER`] and above, are handed to its policy.
pub trait CallAdmission: Any {
    /// The run starts (register series here).
    fn start(&mut self, _ctx: &mut Ctx) {}
    /// Call number `call` (counted from 1) arrives while `active` calls are in progress.
    fn admit(&mut self, call: u64, active: usize, ctx: &mut Ctx) -> Admission;
    /// A signal from `from` reached the generator.
    fn on_signal(&mut self, _from: AgentId, _msg: &dyn Any, _ctx: &mut Ctx, _calls: &mut Calls) {}
    /// A timer of kind `kind` (set by the policy, at least [`POLICY_TIMER`]) fired.
    fn on_timer(&mut self, _kind: u32, _ctx: &mut Ctx, _calls: &mut Calls) {}
    /// `call`'s holding time ended (told in order of ends, before the event that found
    /// it ended is handled).
    fn on_call_end(&mut self, _call: &ActiveCall, _ctx: &Ctx) {}
    /// Adds the policy's own summary entries.
    fn report(&self, _now: Time, _out: &mut Vec<(String, Value)>) {}
}

/// The first timer kind that belongs to a generator's admission policy.
pub const POLICY_TIMER: u32 = 3;

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
/// holding time ends (or its policy terminates it).
pub struct FlowGenerator {
    name: String,
    model: SourceModel,
    shared: Vec<std::sync::Arc<SourceModel>>,
    tmpl: PacketTemplate,
    group: u32,
    arrivals: Arrivals,
    holding: Holding,
    jitter: f64,
    streams: CallStreams,
    /// False: the calls' flows share their group's one record (no per-call memory).
    per_flow: bool,
    stop_arrivals: Time,
    start_arrivals: Time,
    measure_from: Time,
    admission: Option<Box<dyn CallAdmission>>,
    rng: Rng,
    calls: Vec<ActiveCall>,
    next_end: Time,
    active: TimeAverage,
    record_active: Option<String>,
    active_series: Option<usize>,
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
            streams: CallStreams::ByAdmission,
            per_flow: true,
            stop_arrivals: NEVER,
            start_arrivals: 0,
            measure_from: 0,
            admission: None,
            rng: Rng::stream(seed, name),
            calls: Vec::new(),
            next_end: NEVER,
            active: TimeAverage::default(),
            record_active: None,
            active_series: None,
            offered: 0,
            admitted: 0,
            blocked: 0,
            offered_measured: 0,
            blocked_measured: 0,
            measuring: true,
            pending: HashMap::new(),
        }
    }

    /// Draws random numbers by `streams` (see [`CallStreams`]) in a run with seed `seed`.
    pub fn with_call_streams(mut self, streams: CallStreams, seed: u64) -> Self {
        self.streams = streams;
        self.rng = match streams {
            CallStreams::ByAdmission => Rng::stream(seed, &self.name),
            CallStreams::PerCall => Rng::stream(seed, &format!("{}/arrivals", self.name)),
        };
        self
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

    /// Writes the number of calls in progress at every change to the series `series`.
    pub fn record_active(mut self, series: &str) -> Self {
        self.record_active = Some(series.to_string());
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

    /// The admission policy, if it is a `T`.
    pub fn admission<T: 'static>(&mut self) -> Option<&mut T> {
        let a: &mut dyn Any = self.admission.as_deref_mut()?;
        a.downcast_mut::<T>()
    }

    /// The generator's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The flow group its flows are counted in.
    pub fn group(&self) -> u32 {
        self.group
    }

    /// Removes calls that ended by `now`, in order of their ends, keeping the active-call
    /// average exact (every end lies after the previous update, so updates stay monotone
    /// in time) and telling the policy.
    fn expire(&mut self, now: Time, ctx: &mut Ctx) {
        if now < self.next_end {
            return;
        }
        let mut ended: Vec<ActiveCall> = self
            .calls
            .iter()
            .filter(|c| c.end <= now)
            .copied()
            .collect();
        ended.sort_by_key(|c| (c.end, c.flow));
        self.calls.retain(|c| c.end > now);
        let mut n = self.calls.len() + ended.len();
        for c in ended {
            n -= 1;
            self.active.set(c.end, n as f64);
            if let Some(s) = self.active_series {
                ctx.rec.push(s, c.end, n as f64);
            }
            if let Some(p) = self.admission.as_mut() {
                p.on_call_end(&c, ctx);
            }
        }
        self.next_end = self.calls.iter().map(|c| c.end).min().unwrap_or(NEVER);
    }

    fn active_changed(&mut self, now: Time, ctx: &mut Ctx) {
        let n = self.calls.len() as f64;
        self.active.set(now, n);
        if let Some(s) = self.active_series {
            ctx.rec.push(s, now, n);
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

    /// Calls in progress as of the generator's last event (calls whose holding time ended
    /// since then are still listed; see [`FlowGenerator::active_at`]).
    pub fn active_calls(&self) -> &[ActiveCall] {
        &self.calls
    }

    /// Calls in progress as of the generator's last event.
    pub fn active(&self) -> usize {
        self.calls.len()
    }

    /// Calls in progress at `now`.
    pub fn active_at(&self, now: Time) -> usize {
        self.calls.iter().filter(|c| c.end > now).count()
    }

    /// Calls awaiting their policy's decision.
    pub fn pending(&self) -> usize {
        self.pending.len()
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

    /// Time-averaged number of calls in progress from the start of measuring to `now`.
    pub fn active_mean(&self, now: Time) -> f64 {
        let mut avg = self.active.clone();
        let mut ends: Vec<Time> = self
            .calls
            .iter()
            .map(|c| c.end)
            .filter(|&t| t <= now)
            .collect();
        ends.sort_unstable();
        let mut n = self.calls.len();
        for t in ends {
            n -= 1;
            avg.set(t, n as f64);
        }
        avg.mean(now)
    }

    fn block(&mut self, measured: bool) {
        self.blocked += 1;
        if measured {
            self.blocked_measured += 1;
        }
    }

    /// Starts admitted call `call` now: a flow and its source, for a fresh holding time.
    fn start_call(&mut self, call: u64, ctx: &mut Ctx) {
        let now = ctx.now();
        self.admitted += 1;
        let (hold, mut frng) = match self.streams {
            CallStreams::ByAdmission => {
                let hold = self.draw_holding(None);
                let name = format!("{}/{}", self.name, self.admitted);
                (hold, Rng::stream(ctx.seed(), &name))
            }
            CallStreams::PerCall => {
                let mut r = Rng::stream(ctx.seed(), &format!("{}/{}", self.name, call));
                (self.draw_holding(Some(&mut r)), r)
            }
        };
        let end = now.saturating_add(secs(hold).max(1));
        let model = self.shared[self.model.pick_index(&mut frng)].clone();
        let flow = if self.per_flow {
            ctx.flows.open(self.group, now)
        } else {
            ctx.flows.open_shared(self.group, now)
        };
        let mean_bps = model.mean_bps();
        let src = Source::with_shared(model, self.tmpl, flow, 0, end, self.jitter, frng);
        let agent = ctx.spawn(String::new(), Box::new(src)).id();
        self.calls.push(ActiveCall {
            call,
            agent,
            flow,
            end,
            mean_bps,
            mark: 0,
        });
        self.next_end = self.next_end.min(end);
        self.active_changed(now, ctx);
    }

    /// A holding time from `rng`, or from the generator's own stream.
    fn draw_holding(&mut self, rng: Option<&mut Rng>) -> f64 {
        match self.holding {
            Holding::Exp(m) => rng.unwrap_or(&mut self.rng).exp(m),
            Holding::Fixed(m) => m,
        }
    }

    /// Hands a signal or a timer to the policy, then carries out what it asked:
    /// terminations first, then decisions.
    fn consult(
        &mut self,
        ctx: &mut Ctx,
        ask: impl FnOnce(&mut dyn CallAdmission, &mut Ctx, &mut Calls),
    ) {
        let Some(mut policy) = self.admission.take() else {
            return;
        };
        let mut calls = Calls {
            active: &mut self.calls,
            decided: Vec::new(),
            terminate: Vec::new(),
        };
        ask(policy.as_mut(), ctx, &mut calls);
        let Calls {
            decided, terminate, ..
        } = calls;
        self.admission = Some(policy);
        if !terminate.is_empty() {
            let now = ctx.now();
            let mut stop = vec![false; self.calls.len()];
            for i in terminate {
                stop[i] = true;
            }
            let mut k = 0;
            self.calls.retain(|c| {
                let s = stop[k];
                k += 1;
                if s {
                    ctx.stop(c.agent);
                    ctx.flows.close(c.flow, now);
                }
                !s
            });
            self.next_end = self.calls.iter().map(|c| c.end).min().unwrap_or(NEVER);
            self.active_changed(now, ctx);
        }
        for (call, admitted) in decided {
            let Some(measured) = self.pending.remove(&call) else {
                continue;
            };
            if admitted {
                self.start_call(call, ctx);
            } else {
                self.block(measured);
            }
        }
    }
}

impl Agent for FlowGenerator {
    fn start(&mut self, ctx: &mut Ctx) {
        if let Some(p) = self.admission.as_mut() {
            p.start(ctx);
        }
        if let Some(name) = &self.record_active {
            self.active_series = Some(ctx.rec.id(name, "flows"));
        }
        self.measuring = self.measure_from <= ctx.now();
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
        self.expire(now, ctx);
        match kind {
            MEASURE => {
                self.measuring = true;
                self.active.reset_at(now);
                return;
            }
            OPEN => {
                self.schedule_next(ctx);
                return;
            }
            k if k >= POLICY_TIMER => {
                self.consult(ctx, |p, ctx, calls| p.on_timer(k, ctx, calls));
                return;
            }
            _ => {}
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
                Some(a) => a.admit(call, self.calls.len(), ctx),
                None => Admission::Admit,
            };
            match decision {
                Admission::Admit => self.start_call(call, ctx),
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
        // Calls that ended since the last event leave at the next one: the average's
        // value then changes at their (earlier) ends without adding area before `now`.
        self.measuring = true;
        self.active.reset_at(now);
        self.offered_measured = 0;
        self.blocked_measured = 0;
        for m in self.pending.values_mut() {
            *m = false;
        }
    }

    fn on_signal(&mut self, from: AgentId, msg: &dyn Any, ctx: &mut Ctx) {
        self.expire(ctx.now(), ctx);
        self.consult(ctx, |p, ctx, calls| p.on_signal(from, msg, ctx, calls));
    }

    fn report(&self, now: Time, out: &mut Vec<(String, Value)>) {
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
        out.push(("active_mean".into(), json!(self.active_mean(now))));
        out.push(("active_now".into(), json!(self.active_at(now))));
        if let Some(p) = &self.admission {
            p.report(now, out);
        }
    }
}

use crate::metrics::declared::{stat, Stat, Window::*};

/// A flow generator's statistics (an entry with `[traffic.calls]` is the agent
/// `traffic.NAME`).
pub const STATS: &[Stat] = &[
    stat(
        "agent.{generator}.{offered_calls|blocked_calls}",
        "calls",
        AfterWarmup,
        "calls offered and blocked",
    ),
    stat(
        "agent.{generator}.admitted_calls_total",
        "calls",
        Run,
        "calls admitted",
    ),
    stat(
        "agent.{generator}.blocking",
        "fraction",
        AfterWarmup,
        "blocked over offered calls",
    ),
    stat(
        "agent.{generator}.active_mean",
        "flows",
        AfterWarmup,
        "time-average of the active calls",
    ),
    stat(
        "agent.{generator}.active_now",
        "flows",
        End,
        "calls active at the end",
    ),
    stat("{generator}.active", "flows", Run, "series: active calls"),
];
