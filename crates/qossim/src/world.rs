//! The world: network, agents, flows, samplers and the event loop that drives them.
//!
//! One run is one `World` on one thread. Components live in arenas addressed by ids;
//! events are dispatched by a `match` on their [`Target`]. Agents (sources, sinks,
//! controllers, generators) implement [`Agent`] and act through a [`Ctx`], which gives
//! them the clock, timers, the network (to send packets), the flow table and the other
//! agents (to spawn, stop or call them).

use crate::engine::{Event, EventId, Scheduler, Target};
use crate::metrics::{Histogram, Probe, Sampler, Series};
use crate::net::{
    arrival_key, ledger_add, AgentId, FlowId, Landing, LinkId, Network, NodeId, Packet,
    SharedLedger, MARK_COUNTERS,
};
use crate::rng::{fnv1a64, Rng};
use crate::time::{to_secs, Time};
use serde_json::Value;
use std::any::Any;
use std::collections::HashMap;
use std::marker::PhantomData;

mod flows;
mod summary;

pub use flows::FLOW_DETAIL_LIMIT;
pub use flows::{FlowDetail, FlowRecord, Flows, GroupStats};
pub use summary::{
    DELAY_SERIES, FLOW_STATS, GROUP_STATS, LINK_STATS, METRIC_SERIES, RUN_STATS, SERIES_STATS,
};

/// Timer kind delivered to an agent when it is started.
pub const START: u32 = u32::MAX;

/// What a port element decides about a packet offered to its port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortVerdict {
    /// Hand it on (to the next element, then the port's hooks and queue).
    Pass,
    /// The element keeps it (absorbed, or to be re-sent later): the port never sees it.
    Consume,
}

/// A source, sink, controller or generator attached to the world.
pub trait Agent: Any {
    /// Called once when the agent starts (at the time it was added or spawned).
    fn start(&mut self, _ctx: &mut Ctx) {}
    /// A timer set by this agent fired; `kind` is the value it gave.
    fn on_timer(&mut self, _kind: u32, _ctx: &mut Ctx) {}
    /// A packet addressed to this agent arrived.
    fn on_packet(&mut self, _pkt: Packet, _ctx: &mut Ctx) {}
    /// A packet arrived at a node this agent taps (it is not consumed).
    fn on_tap(&mut self, _node: NodeId, _pkt: &Packet, _ctx: &mut Ctx) {}
    /// A packet is offered to the output port of `link`, where this agent is a port
    /// element (`World::attach_port`). It may change the packet (marks, header fields)
    /// and keeps it with [`PortVerdict::Consume`]. One agent may sit on many ports (all
    /// of a switch's), keeping state across them.
    fn on_port(&mut self, _link: LinkId, _pkt: &mut Packet, _ctx: &mut Ctx) -> PortVerdict {
        PortVerdict::Pass
    }
    /// A signal sent with [`Ctx::signal`] by agent `from` arrived. `msg` is the sent
    /// value; a receiver reads the message types it knows ([`read_signal`]).
    fn on_signal(&mut self, _from: AgentId, _msg: &dyn Any, _ctx: &mut Ctx) {}
    /// The warm-up ended at `now`: counts measured after it start again.
    fn on_warmup(&mut self, _now: Time) {}
    /// Shows `f` every packet this agent holds on its way (a station's transit and
    /// client queues): the end-of-run conservation check counts them as in flight. An
    /// agent that takes packets out of the network without delivering them tells
    /// [`Flows::discarded`].
    fn held(&self, _f: &mut dyn FnMut(&Packet)) {}
    /// Appends summary entries (key relative to the agent's name, value).
    fn report(&self, _now: Time, _out: &mut Vec<(String, Value)>) {}
    /// True if all this agent ever does with a packet addressed to it is count it as
    /// delivered (`Flows::delivered` at the arrival time) — a plain sink. The world then
    /// counts such packets itself without calling the agent: the same counts, for less.
    fn only_counts_deliveries(&self) -> bool {
        false
    }
}

/// The message of a signal ([`Agent::on_signal`]) if it is a `M`. Signals are the one
/// dynamically typed channel between agents: a receiver tries the message types it knows.
pub fn read_signal<M: Any>(msg: &dyn Any) -> Option<&M> {
    msg.downcast_ref::<M>()
}

/// A typed handle on an agent: its id and its type, as the call that added it returned
/// it ([`World::add_agent`], [`Ctx::spawn`]). Typed access through a handle
/// ([`Agents::get_mut`], [`World::agent`]) needs no type test where it is used: the one
/// check that the slot holds a `T` is in [`Agents`].
pub struct AgentHandle<T> {
    id: AgentId,
    agent: PhantomData<fn() -> T>,
}

impl<T> AgentHandle<T> {
    /// The agent's id (for packets addressed to it, taps, port elements, signals).
    #[inline]
    pub fn id(self) -> AgentId {
        self.id
    }
}

impl<T> Clone for AgentHandle<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for AgentHandle<T> {}

impl<T> PartialEq for AgentHandle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
    }
}

impl<T> Eq for AgentHandle<T> {}

impl<T> std::fmt::Debug for AgentHandle<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AgentHandle({})", self.id)
    }
}

/// The agent arena.
#[derive(Default)]
pub struct Agents {
    slots: Vec<Option<Box<dyn Agent>>>,
    /// Names of the agents that have one (flows spawned by generators are anonymous, which
    /// keeps an idle flow small).
    names: HashMap<AgentId, String>,
}

impl Agents {
    /// Number of agents ever added.
    pub fn len(&self) -> usize {
        self.slots.len()
    }
    /// True when no agent was ever added.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }
    /// The name an agent was given (empty if none).
    pub fn name(&self, id: AgentId) -> &str {
        self.names.get(&id).map(String::as_str).unwrap_or("")
    }
    /// The first agent (lowest id) given `name`.
    pub fn by_name(&self, name: &str) -> Option<AgentId> {
        let mut ids: Vec<AgentId> = self
            .names
            .iter()
            .filter(|(_, n)| n.as_str() == name)
            .map(|(&i, _)| i)
            .collect();
        ids.sort_unstable();
        ids.first().copied()
    }
    /// Typed access to an agent (None if it was stopped or is running right now).
    pub fn get_mut<T: Agent>(&mut self, h: AgentHandle<T>) -> Option<&mut T> {
        let a: &mut dyn Any = self.slots.get_mut(h.id as usize)?.as_deref_mut()?;
        a.downcast_mut::<T>()
    }
    /// Typed shared access to an agent (None if it was stopped or is running right now).
    pub fn get<T: Agent>(&self, h: AgentHandle<T>) -> Option<&T> {
        let a: &dyn Any = self.slots.get(h.id as usize)?.as_deref()?;
        a.downcast_ref::<T>()
    }
    /// The handles of the live agents of type `T`, in id order (for tools that inspect
    /// a world built elsewhere, such as a scenario's; builders keep the handles they
    /// get). Agents running right now are not seen.
    pub fn of_type<T: Agent>(&self) -> Vec<AgentHandle<T>> {
        (0..self.slots.len())
            .filter(|&i| matches!(&self.slots[i], Some(a) if (a.as_ref() as &dyn Any).is::<T>()))
            .map(|i| AgentHandle {
                id: i as AgentId,
                agent: PhantomData,
            })
            .collect()
    }
    /// True if the agent exists and has not been stopped.
    pub fn alive(&self, id: AgentId) -> bool {
        matches!(self.slots.get(id as usize), Some(Some(_)))
    }
    /// Forgets a stopped agent (which no longer counts what reaches it).
    fn retire(&mut self, id: AgentId, landing: &mut Landing) {
        if let Some(s) = self.slots.get_mut(id as usize) {
            *s = None;
        }
        landing.set_counts(id, false);
    }
}

/// Agent-written series, registered by name.
#[derive(Default)]
pub struct Recorder {
    series: Vec<Series>,
    index: HashMap<String, usize>,
}

impl Recorder {
    /// The id of the series called `name`, creating it if needed.
    pub fn id(&mut self, name: &str, unit: &'static str) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.series.push(Series {
            name: name.to_string(),
            unit,
            ..Default::default()
        });
        self.index.insert(name.to_string(), self.series.len() - 1);
        self.series.len() - 1
    }
    /// Appends a sample.
    pub fn push(&mut self, id: usize, now: Time, v: f64) {
        // A failure to grow stops the run (see `metrics::take_growth_failure`).
        let _ = self.series[id].try_push(to_secs(now), v);
    }
}

/// Signals in transit: typed control messages delivered after a delay (the path's
/// propagation delay of a signalling channel), one event each.
#[derive(Default)]
pub struct Mailbox {
    slots: Vec<Option<Letter>>,
    free: Vec<u32>,
}

struct Letter {
    from: AgentId,
    to: AgentId,
    msg: Box<dyn Any>,
}

impl Mailbox {
    fn post(&mut self, letter: Letter) -> u32 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(letter);
                i
            }
            None => {
                self.slots.push(Some(letter));
                (self.slots.len() - 1) as u32
            }
        }
    }
    fn take(&mut self, slot: u32) -> Option<Letter> {
        let l = self.slots.get_mut(slot as usize)?.take();
        if l.is_some() {
            self.free.push(slot);
        }
        l
    }
    /// Signals in transit.
    pub fn in_transit(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

/// What an agent can do while handling an event.
pub struct Ctx<'a> {
    /// The agent being called.
    pub me: AgentId,
    /// Clock and pending events.
    pub sched: &'a mut Scheduler,
    /// The network.
    pub net: &'a mut Network,
    /// Flow table and group statistics.
    pub flows: &'a mut Flows,
    /// Agent-written time series.
    pub rec: &'a mut Recorder,
    agents: &'a mut Agents,
    mail: &'a mut Mailbox,
    seed: u64,
    retire_me: bool,
}

impl<'a> Ctx<'a> {
    /// The current time.
    #[inline]
    pub fn now(&self) -> Time {
        self.sched.now()
    }
    /// The run seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// The random stream of the component called `name` (derived from the run seed).
    pub fn rng(&self, name: &str) -> Rng {
        Rng::stream(self.seed, name)
    }
    /// Sends a packet into the network at its source node `pkt.src` (drawing its
    /// [`Packet::tie`]).
    #[inline]
    pub fn send(&mut self, mut pkt: Packet) {
        pkt.tie = self.sched.draw();
        self.net.forward(pkt.src, pkt, self.sched);
    }
    /// Sets a timer for this agent after `delay`.
    #[inline]
    pub fn timer(&mut self, delay: Time, kind: u32) -> EventId {
        self.sched
            .after(delay, Event::new(Target::Agent(self.me), kind))
    }
    /// Sets a timer for this agent at absolute time `at`.
    #[inline]
    pub fn timer_at(&mut self, at: Time, kind: u32) -> EventId {
        self.sched.at(at, Event::new(Target::Agent(self.me), kind))
    }
    /// Sets a timer for another agent.
    pub fn timer_for(&mut self, agent: AgentId, at: Time, kind: u32) -> EventId {
        self.sched.at(at, Event::new(Target::Agent(agent), kind))
    }
    /// Cancels a timer.
    pub fn cancel(&mut self, id: EventId) {
        self.sched.cancel(id);
    }
    /// Sends `msg` to agent `to`, delivered after `delay` ([`Agent::on_signal`]): a
    /// typed signalling channel for control messages that the study models without
    /// queueing (the delay is the path's propagation and transmission time). Signals
    /// between the same pair with the same delay arrive in the order sent.
    pub fn signal<M: Any>(&mut self, to: AgentId, delay: Time, msg: M) -> EventId {
        let slot = self.mail.post(Letter {
            from: self.me,
            to,
            msg: Box::new(msg),
        });
        self.sched.after(delay, Event::new(Target::Signal(slot), 0))
    }
    /// Adds a new agent; its `start` runs at the current time, after this handler.
    pub fn spawn<T: Agent>(&mut self, name: String, agent: Box<T>) -> AgentHandle<T> {
        let id = push_agent(self.agents, &mut self.net.landing, name, agent);
        self.sched
            .at(self.sched.now(), Event::new(Target::Agent(id), START));
        AgentHandle {
            id,
            agent: PhantomData,
        }
    }
    /// Stops an agent: it receives nothing more and its pending timers are ignored.
    pub fn stop(&mut self, id: AgentId) {
        if id == self.me {
            self.retire_me = true;
        } else {
            self.agents.retire(id, &mut self.net.landing);
        }
    }
    /// The agent arena (typed access to other agents).
    pub fn agents(&mut self) -> &mut Agents {
        self.agents
    }
    /// Calls another agent synchronously with its own context. Returns `None` if it does
    /// not exist, was stopped, or is the caller.
    pub fn call<R>(
        &mut self,
        id: AgentId,
        f: impl FnOnce(&mut dyn Agent, &mut Ctx) -> R,
    ) -> Option<R> {
        let mut a = self.agents.slots.get_mut(id as usize)?.take()?;
        let mut sub = Ctx {
            me: id,
            sched: &mut *self.sched,
            net: &mut *self.net,
            flows: &mut *self.flows,
            rec: &mut *self.rec,
            agents: &mut *self.agents,
            mail: &mut *self.mail,
            seed: self.seed,
            retire_me: false,
        };
        let r = f(a.as_mut(), &mut sub);
        if sub.retire_me {
            self.agents.retire(id, &mut self.net.landing);
        } else {
            self.agents.slots[id as usize] = Some(a);
        }
        Some(r)
    }
}

/// Folds one dispatched event (time, target tag and id, kind) into the event-trace hash.
#[inline]
fn hash_event(h: &mut u64, time: Time, tag: u64, id: u32, kind: u32) {
    let mut b = [0u8; 24];
    b[..8].copy_from_slice(&time.to_le_bytes());
    b[8..16].copy_from_slice(&(tag << 32 | id as u64).to_le_bytes());
    b[16..].copy_from_slice(&(kind as u64).to_le_bytes());
    *h = fnv1a64(&b) ^ h.rotate_left(5);
}

/// The hash of a delivery that landed at `time` (tie `tie`) from `link`.
fn hash_landing(time: Time, tie: u64, link: LinkId) -> u64 {
    let mut b = [0u8; 20];
    b[..8].copy_from_slice(&time.to_le_bytes());
    b[8..16].copy_from_slice(&tie.to_le_bytes());
    b[16..].copy_from_slice(&link.to_le_bytes());
    fnv1a64(&b)
}

fn push_agent(
    agents: &mut Agents,
    landing: &mut Landing,
    name: String,
    agent: Box<dyn Agent>,
) -> AgentId {
    let counts = agent.only_counts_deliveries();
    agents.slots.push(Some(agent));
    let id = (agents.slots.len() - 1) as AgentId;
    if counts {
        landing.set_counts(id, true);
    }
    if !name.is_empty() {
        agents.names.insert(id, name);
    }
    id
}

type Action = Box<dyn FnMut(&mut World)>;

/// A simulation run: everything that exists and the loop that drives it.
pub struct World {
    /// Clock and pending events.
    pub sched: Scheduler,
    /// The network.
    pub net: Network,
    /// Flows and groups.
    pub flows: Flows,
    /// Agents.
    pub agents: Agents,
    /// Agent-written series.
    pub rec: Recorder,
    /// Signals in transit.
    pub mail: Mailbox,
    samplers: Vec<Sampler>,
    actions: Vec<Option<Action>>,
    seed: u64,
    warmup: Time,
    trace: Option<u64>,
    /// With the trace hash on: the sum of the hashes of the deliveries that landed.
    landed: u64,
    link_tx_at_warmup: Vec<(u64, [u64; MARK_COUNTERS])>,
    /// Per link at the end of the warm-up: bits sent (whole packets), arrivals and drops.
    link_at_warmup: Vec<summary::LinkMark>,
    /// Per link: whether the summary reports it (empty: every link).
    link_in_summary: Vec<bool>,
}

impl World {
    /// An empty world for a run with seed `seed`.
    pub fn new(seed: u64) -> Self {
        World {
            sched: Scheduler::default(),
            net: Network::new(),
            flows: Flows {
                detail_limit: FLOW_DETAIL_LIMIT,
                ..Flows::default()
            },
            agents: Agents::default(),
            rec: Recorder::default(),
            mail: Mailbox::default(),
            samplers: Vec::new(),
            actions: Vec::new(),
            seed,
            warmup: 0,
            trace: None,
            landed: 0,
            link_tx_at_warmup: Vec::new(),
            link_at_warmup: Vec::new(),
            link_in_summary: Vec::new(),
        }
    }

    /// The run seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The random stream of the component called `name`.
    pub fn rng(&self, name: &str) -> Rng {
        Rng::stream(self.seed, name)
    }

    /// Keeps a running hash of every executed event (time, target, kind), for
    /// determinism checks. Off by default.
    pub fn enable_trace_hash(&mut self) {
        self.trace = Some(0xcbf2_9ce4_8422_2325);
    }

    /// The event-trace hash, if enabled. Deliveries that landed without an event (see
    /// [`crate::net::Landing`]) are part of it: their arrival times, ties and links.
    pub fn trace_hash(&self) -> Option<u64> {
        self.trace.map(|h| h ^ self.landed)
    }

    /// Reports only the links whose flag is true in the summary (`link.NAME.*`); an empty
    /// list (the default) reports every link.
    pub fn set_link_summary(&mut self, report: Vec<bool>) {
        self.link_in_summary = report;
    }

    /// Sets the warm-up: statistics before this time are discarded from the summary.
    pub fn set_warmup(&mut self, t: Time) {
        self.warmup = t;
        self.flows.warmup = t;
        let id = self.actions.len() as u32;
        self.actions
            .push(Some(Box::new(|w: &mut World| w.end_warmup())));
        self.sched.at(t, Event::new(Target::Action(id), 0));
    }

    /// The end of the warm-up, one broadcast: link averages restart, and every drop
    /// observer, queue discipline, port hook and agent is told.
    fn end_warmup(&mut self) {
        let now = self.sched.now();
        self.net.settle_all(now, self.sched.key());
        for l in self.net.links.iter_mut() {
            l.stats.drops.on_warmup();
            l.qdisc.on_warmup(now);
            for h in l.hooks.iter_mut() {
                h.on_warmup(now);
            }
        }
        for a in self.agents.slots.iter_mut().flatten() {
            a.on_warmup(now);
        }
        self.link_at_warmup = self
            .net
            .links
            .iter()
            .map(|l| summary::LinkMark::of(l, now))
            .collect();
        self.link_tx_at_warmup = self
            .net
            .links
            .iter_mut()
            .map(|l| {
                l.stats.queue_avg.reset_at(now);
                (l.stats.tx_bytes, l.stats.tx_bytes_marked)
            })
            .collect();
    }

    /// Makes room for `n` more agents at once (a builder that knows how many flows it
    /// will add avoids the arena's doubling, whose peak would otherwise count in memory).
    pub fn reserve_agents(&mut self, n: usize) {
        self.agents.slots.reserve_exact(n);
    }

    /// Adds an agent; it starts at time 0 (or now, if the run is under way). Returns its
    /// typed handle (the agent is given boxed: it lives boxed in the arena).
    pub fn add_agent<T: Agent>(&mut self, name: &str, agent: Box<T>) -> AgentHandle<T> {
        AgentHandle {
            id: self.add_boxed_agent(name, agent),
            agent: PhantomData,
        }
    }

    /// [`World::add_agent`] for an agent whose type is chosen at run time: it returns the
    /// id only (no typed access).
    pub fn add_boxed_agent(&mut self, name: &str, agent: Box<dyn Agent>) -> AgentId {
        let id = push_agent(
            &mut self.agents,
            &mut self.net.landing,
            name.to_string(),
            agent,
        );
        self.sched.at_agent_in_run(self.sched.now(), id, START);
        id
    }

    /// The agent `h` (panics if it was stopped).
    pub fn agent<T: Agent>(&self, h: AgentHandle<T>) -> &T {
        self.agents.get(h).expect("the agent was stopped")
    }

    /// The agent `h`, mutable (panics if it was stopped).
    pub fn agent_mut<T: Agent>(&mut self, h: AgentHandle<T>) -> &mut T {
        self.agents.get_mut(h).expect("the agent was stopped")
    }

    /// Makes agent `agent` see every packet arriving at `node` from a link.
    pub fn tap(&mut self, node: NodeId, agent: AgentId) {
        self.net.nodes[node as usize].taps.push(agent);
        self.net.tapped(node);
    }

    /// Makes agent `agent` a port element of `link`: it sees every packet offered to the
    /// link's output port, with its context, before the port's hooks and queue
    /// ([`Agent::on_port`]). Elements run in the order attached.
    pub fn attach_port(&mut self, link: LinkId, agent: AgentId) {
        self.net.links[link as usize].elements.push(agent);
    }

    /// Shows every deferred packet to its port's elements, then enqueues those they pass.
    /// Packets the elements send meanwhile join the end of the line.
    fn drain_ports(&mut self) {
        while let Some((link, mut pkt)) = self.net.deferred.pop_front() {
            let n = self.net.links[link as usize].elements.len();
            let mut verdict = PortVerdict::Pass;
            for i in 0..n {
                let a = self.net.links[link as usize].elements[i];
                self.with_agent(a, |ag, ctx| verdict = ag.on_port(link, &mut pkt, ctx));
                if verdict == PortVerdict::Consume {
                    break;
                }
            }
            if verdict == PortVerdict::Pass {
                self.net.offer(link, pkt, &mut self.sched);
            }
        }
    }

    /// Schedules a world-level action at time `at` (a failure, a rate change).
    pub fn schedule_action(&mut self, at: Time, action: impl FnMut(&mut World) + 'static) {
        let id = self.actions.len() as u32;
        self.actions.push(Some(Box::new(action)));
        self.sched.at(at, Event::new(Target::Action(id), 0));
    }

    /// Adds a periodic sampler writing the series `name`; the first sample is taken one
    /// interval after time 0.
    pub fn add_sampler(&mut self, name: &str, probe: Probe, interval: Time) -> usize {
        let unit = match probe {
            Probe::QueueLength { .. } => "packets",
            _ => "b/s",
        };
        self.samplers.push(Sampler {
            probe,
            interval,
            last: 0,
            last_bits: 0.0,
            series: Series {
                name: name.to_string(),
                unit,
                ..Default::default()
            },
        });
        let id = self.samplers.len() - 1;
        self.sched
            .at(interval, Event::new(Target::Sampler(id as u32), 0));
        id
    }

    /// The series written by sampler `id` so far.
    pub fn sampler_series(&self, id: usize) -> &Series {
        &self.samplers[id].series
    }

    fn sample(&mut self, id: usize) {
        let now = self.sched.now();
        let s = &mut self.samplers[id];
        let secs = to_secs(s.interval);
        let v = match s.probe {
            Probe::LinkThroughput {
                link,
                class,
                marked,
            } => {
                let key = self.sched.key();
                let l = &mut self.net.links[link as usize];
                l.settle(now, key);
                // Bits on the wire in the interval, so that no bin exceeds the rate (a
                // packet is not counted whole in the bin where its transmission starts).
                let bits = if let Some(slot) = marked {
                    l.bits_sent_marked(now, slot)
                } else if let Some(cl) = class {
                    l.bits_sent_by_class(now, cl)
                } else {
                    l.bits_sent_by(now)
                };
                let d = bits - s.last_bits;
                s.last_bits = bits;
                return self.push_sample(id, now, d / secs);
            }
            Probe::QueueLength { link } => {
                let key = self.sched.key();
                let l = &mut self.net.links[link as usize];
                l.settle(now, key);
                l.queue_len() as f64
            }
            Probe::GroupThroughput { group } => {
                let c = self.flows.groups[group as usize].rx_bytes;
                let d = c - s.last;
                s.last = c;
                d as f64 * 8.0 / secs
            }
        };
        self.push_sample(id, now, v);
    }

    fn push_sample(&mut self, id: usize, now: Time, v: f64) {
        let s = &mut self.samplers[id];
        if !s.series.try_push(to_secs(now), v) {
            return; // out of memory: the run stops at its next progress check
        }
        let next = now + s.interval;
        self.sched
            .at(next, Event::new(Target::Sampler(id as u32), 0));
    }

    #[inline]
    fn with_agent(&mut self, id: AgentId, f: impl FnOnce(&mut dyn Agent, &mut Ctx)) -> bool {
        let Some(slot) = self.agents.slots.get_mut(id as usize) else {
            return false;
        };
        let Some(mut a) = slot.take() else {
            return false;
        };
        let mut ctx = Ctx {
            me: id,
            sched: &mut self.sched,
            net: &mut self.net,
            flows: &mut self.flows,
            rec: &mut self.rec,
            agents: &mut self.agents,
            mail: &mut self.mail,
            seed: self.seed,
            retire_me: false,
        };
        f(a.as_mut(), &mut ctx);
        if ctx.retire_me {
            self.agents.retire(id, &mut self.net.landing);
        } else {
            self.agents.slots[id as usize] = Some(a);
        }
        true
    }

    /// Runs one event. Returns false when nothing is pending.
    #[inline]
    pub fn step(&mut self) -> bool {
        let Some(e) = self.sched.pop_next() else {
            return false;
        };
        self.dispatch(e.time, e.seq, e.event);
        true
    }

    // Always inlined: each run loop gets its own copy, so adding a loop never moves the
    // hot one's code out of line (measured: +10 % instructions on the reference run).
    #[inline(always)]
    fn dispatch(&mut self, time: Time, seq: u64, ev: Event) {
        // Deliveries that land without an event, due before this one.
        if time >= (self.net.landing.next >> 64) as Time {
            let key = arrival_key(time, seq);
            if key > self.net.landing.next {
                self.land(key);
            }
        }
        if let Some(h) = self
            .trace
            .as_mut()
            .filter(|_| !matches!(ev.target, Target::Run(_)))
        {
            let (tag, id) = match ev.target {
                Target::Port(i) => (1u64, i),
                Target::LinkArrival(i) => (2, i),
                Target::Agent(i) => (3, i),
                Target::Sampler(i) => (4, i),
                Target::Action(i) => (5, i),
                Target::Signal(i) => (6, i),
                // Not hashed: the event it stands for is, in `dispatch_run`.
                Target::Run(_) => (0, 0),
            };
            hash_event(h, time, tag, id, ev.kind);
        }
        match ev.target {
            Target::Port(l) => self.net.port_event(l, ev.kind, &mut self.sched),
            Target::LinkArrival(l) if ev.kind != self.net.links[l as usize].gen => {
                // Its packet was taken back from the wire (see `Network::offer`).
            }
            Target::LinkArrival(l) => {
                let (node, head) = self.net.arriving(l);
                if head.dst == node
                    && self.net.nodes[node as usize].taps.is_empty()
                    && self.net.landing.counts(head.dst_agent)
                {
                    // Delivered to a plain sink: counted where it lies (see `arrive`).
                    self.flows.delivered(head, time);
                    self.net.drop_arrival(l, &mut self.sched);
                } else {
                    let pkt = self.net.link_arrival(l, &mut self.sched);
                    self.arrive(node, pkt);
                }
            }
            Target::Agent(a) => self.agent_event(a, ev.kind),
            Target::Sampler(s) => self.sample(s as usize),
            Target::Action(i) => {
                if let Some(mut act) = self.actions[i as usize].take() {
                    act(self);
                }
            }
            Target::Run(_) => self.dispatch_run(time, ev),
            Target::Signal(i) => {
                if let Some(l) = self.mail.take(i) {
                    self.with_agent(l.to, |ag, ctx| ag.on_signal(l.from, l.msg.as_ref(), ctx));
                }
            }
        }
        if !self.net.deferred.is_empty() {
            self.drain_ports();
        }
    }

    /// An agent's timer (or its start).
    #[inline(always)]
    fn agent_event(&mut self, a: AgentId, kind: u32) {
        self.with_agent(a, |ag, ctx| {
            if kind == START {
                ag.start(ctx)
            } else {
                ag.on_timer(kind, ctx)
            }
        });
    }

    /// Counts every landing delivery whose arrival key is below `key` (see
    /// [`Landing`]): delivered if its agent still only counts, lost if it was stopped,
    /// as the arrival event would have had it.
    #[inline(never)]
    fn land(&mut self, key: u128) {
        if self.trace.is_some() {
            self.hash_landing(key);
        }
        let mut next = u128::MAX;
        let mut i = 0;
        while let Some(&id) = self.net.landing.links.get(i) {
            let l = &mut self.net.links[id as usize];
            while let Some((t, p)) = l.landing.front() {
                let k = arrival_key(*t, p.tie);
                if k >= key {
                    next = next.min(k);
                    break;
                }
                if self.net.landing.counts(p.dst_agent) {
                    self.flows.delivered(p, *t);
                } else {
                    self.flows.discarded(p);
                }
                l.landing.pop_front();
            }
            if l.landing.is_empty() {
                self.net.landing.links.swap_remove(i);
            } else {
                i += 1;
            }
        }
        self.net.landing.next = next;
    }

    /// Adds the deliveries [`World::land`] is about to count to the trace hash, as a sum:
    /// the order-free way, since landing lists are counted link by link.
    #[cold]
    fn hash_landing(&mut self, key: u128) {
        for &id in &self.net.landing.links {
            let due = self.net.links[id as usize]
                .landing
                .iter()
                .take_while(|(t, p)| arrival_key(*t, p.tie) < key);
            for (t, p) in due {
                self.landed = self.landed.wrapping_add(hash_landing(*t, p.tie, id));
            }
        }
    }

    /// Dispatches the next event of a scheduler run (always an agent's), hashing it as
    /// that event.
    #[cold]
    #[inline(never)]
    fn dispatch_run(&mut self, time: Time, ev: Event) {
        let ev = self.sched.next_of_run(time, ev);
        let Target::Agent(a) = ev.target else {
            unreachable!("a run holds agent events")
        };
        if let Some(h) = self.trace.as_mut() {
            hash_event(h, time, 3, a, ev.kind);
        }
        self.agent_event(a, ev.kind);
        if !self.net.deferred.is_empty() {
            self.drain_ports();
        }
    }

    #[inline]
    fn arrive(&mut self, node: NodeId, pkt: Packet) {
        let ntaps = self.net.nodes[node as usize].taps.len();
        for i in 0..ntaps {
            let a = self.net.nodes[node as usize].taps[i];
            self.with_agent(a, |ag, ctx| ag.on_tap(node, &pkt, ctx));
        }
        if pkt.dst == node {
            if self.net.landing.counts(pkt.dst_agent) {
                // What the agent's `on_packet` would do.
                self.flows.delivered(&pkt, self.sched.now());
            } else if !self.with_agent(pkt.dst_agent, |ag, ctx| ag.on_packet(pkt, ctx)) {
                // Nobody to receive it: it leaves the network here, undelivered.
                self.flows.discarded(&pkt);
            }
        } else {
            self.net.forward(node, pkt, &mut self.sched);
        }
    }

    /// Runs until simulated time `end` (events at exactly `end` are executed).
    pub fn run_until(&mut self, end: Time) {
        self.run_with_progress(end, &mut |_| true);
    }

    /// Runs until `end`, calling `progress(fraction done)` about every 2^16 events; the
    /// run stops early if `progress` returns false. Returns true if it reached `end`.
    pub fn run_with_progress(&mut self, end: Time, progress: &mut dyn FnMut(f64) -> bool) -> bool {
        let start = self.sched.now();
        let span = (end.saturating_sub(start)).max(1) as f64;
        let mut n: u32 = 0;
        while let Some(e) = self.sched.next_until(end) {
            self.dispatch(e.time, e.seq, e.event);
            n = n.wrapping_add(1);
            if n & 0xffff == 0 {
                let f = (self.sched.now() - start) as f64 / span;
                if crate::metrics::growth_failed() || !progress(f) {
                    return false;
                }
            }
        }
        self.sched.advance_to(end);
        self.land_through(end);
        progress(1.0);
        true
    }

    /// Counts the landing deliveries due by `end` inclusive (the run has executed every
    /// event at `end`).
    fn land_through(&mut self, end: Time) {
        let key = end.checked_add(1).map_or(u128::MAX, |t| arrival_key(t, 0));
        if key > self.net.landing.next {
            self.land(key);
        }
    }

    /// Keeps, from now on, a per-flow count of data packets taken out of the network
    /// undelivered (port drops, no route, discarded by agents), so that
    /// [`World::check_invariants`] can check conservation per flow: every packet a flow's
    /// source counted as sent was delivered, lost or is still held (in a queue, on a
    /// wire, or by an agent). Call before the run; it costs a hash-map update per loss.
    pub fn enable_flow_conservation(&mut self) {
        let ledger = SharedLedger::default();
        for l in self.net.links.iter_mut() {
            l.stats
                .drops
                .observe(Box::new(crate::net::LedgerObserver(ledger.clone())));
        }
        self.net.set_ledger(ledger.clone());
        self.flows.ledger = Some(ledger);
    }

    /// The per-flow half of [`World::check_invariants`], when
    /// [`World::enable_flow_conservation`] was called: for every flow record whose
    /// source counted packets as sent (acknowledgements and packets no source counted,
    /// such as control cells, are not part of it), sent = delivered + lost + held.
    fn check_flow_conservation(&self, out: &mut Vec<String>) {
        let Some(ledger) = &self.flows.ledger else {
            return;
        };
        let mut held = crate::net::FlowCounts::new();
        let mut count = |p: &Packet| crate::net::tally(&mut held, p);
        for l in &self.net.links {
            l.for_each_held(&mut count);
        }
        for (_, p) in &self.net.deferred {
            count(p);
        }
        for a in self.agents.slots.iter().flatten() {
            a.held(&mut count);
        }
        let lost = ledger.borrow();
        for (f, r) in self.flows.recs.iter().enumerate() {
            if r.sent_pkts == 0 {
                continue;
            }
            let f = f as FlowId;
            let (lp, lb) = lost.get(&f).copied().unwrap_or_default();
            let (hp, hb) = held.get(&f).copied().unwrap_or_default();
            if r.sent_pkts != r.rx_pkts + lp + hp || r.sent_bytes != r.rx_bytes + lb + hb {
                out.push(format!(
                    "flow {f}: {} packets ({} B) sent but {} ({} B) delivered + {} ({} B) \
                     lost + {} ({} B) still in the network",
                    r.sent_pkts, r.sent_bytes, r.rx_pkts, r.rx_bytes, lp, lb, hp, hb
                ));
            }
        }
    }

    /// Checks the run's bookkeeping: at every link each packet (and byte) offered was
    /// sent, dropped or is still queued; no link sent more bits than its rate allows in the time
    /// elapsed (plus one packet of at most 64 KiB in progress); no flow had more packets
    /// or bytes delivered than it sent. Returns one line per violation, naming the link
    /// or flow.
    pub fn check_invariants(&mut self) -> Vec<String> {
        let now = self.sched.now();
        self.net.settle_all(now, self.sched.key());
        let mut out = Vec::new();
        self.check_flow_conservation(&mut out);
        for l in &self.net.links {
            let st = &l.stats;
            let queued = l.queue_len() as u64;
            if st.arrivals != st.tx_pkts + st.drops.pkts + queued {
                out.push(format!(
                    "link {}: {} packets offered but {} sent + {} dropped + {} queued",
                    l.name, st.arrivals, st.tx_pkts, st.drops.pkts, queued
                ));
            }
            let queued_bytes = l.queue_bytes();
            if st.arrival_bytes != st.tx_bytes + st.drops.bytes + queued_bytes {
                out.push(format!(
                    "link {}: {} bytes offered but {} sent + {} dropped + {} queued",
                    l.name, st.arrival_bytes, st.tx_bytes, st.drops.bytes, queued_bytes
                ));
            }
            let allowed =
                l.rate_bps as u128 * now as u128 / crate::time::PS_PER_S as u128 + 8 * 65_536;
            if st.tx_bytes as u128 * 8 > allowed {
                out.push(format!(
                    "link {}: {} bits sent in {} s, more than its rate of {} b/s allows",
                    l.name,
                    st.tx_bytes * 8,
                    crate::time::to_secs(now),
                    l.rate_bps
                ));
            }
        }
        for (f, r) in self.flows.recs.iter().enumerate() {
            if r.rx_pkts > r.sent_pkts || r.rx_bytes > r.sent_bytes {
                out.push(format!(
                    "flow {f}: {} packets ({} B) delivered but only {} ({} B) sent",
                    r.rx_pkts, r.rx_bytes, r.sent_pkts, r.sent_bytes
                ));
            }
        }
        out
    }

    /// Runs until simulated time `end` or until `max_events` events have run, whichever
    /// comes first; returns true if the run reached `end`.
    pub fn run_limited(&mut self, end: Time, max_events: u64) -> bool {
        while self.sched.processed() < max_events {
            match self.sched.next_until(end) {
                Some(e) => self.dispatch(e.time, e.seq, e.event),
                None => {
                    self.sched.advance_to(end);
                    self.land_through(end);
                    return true;
                }
            }
        }
        false
    }

    /// Runs until `cond` is false or nothing is pending (checking before each event).
    pub fn run_while(&mut self, mut cond: impl FnMut(&World) -> bool) {
        while cond(self) && self.step() {}
    }

    /// Runs until no event is pending.
    pub fn run_to_empty(&mut self) {
        while self.step() {}
    }

    /// All series written so far (samplers first, then agent-written ones).
    pub fn series(&self) -> Vec<&Series> {
        self.samplers
            .iter()
            .map(|s| &s.series)
            .chain(self.rec.series.iter())
            .collect()
    }

    /// The link with the given name.
    pub fn link(&self, name: &str) -> Option<LinkId> {
        self.net.link_id(name)
    }
}
