//! The plug-in points that control loops use: port elements (an agent on a node's ports,
//! with its context), typed signals (a delayed-delivery channel between agents) and call
//! admission that decides later.

use qossim::net::{AgentId, LinkId, NodeId, Packet, NONE};
use qossim::queue::{DropTail, Limit};
use qossim::time::{PS_PER_MS, PS_PER_S};
use qossim::traffic::{
    ActiveCall, Admission, Arrivals, CallAdmission, CallStreams, Calls, FlowGenerator, Holding,
    PacketTemplate, Sink, Source, SourceModel, POLICY_TIMER,
};
use qossim::world::{Agent, AgentHandle, Ctx, PortVerdict, World};
use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;

/// A bit no family owns.
const SEEN: u16 = 1 << 9;

fn fifo() -> Box<dyn qossim::queue::QueueDisc> {
    Box::new(DropTail::new(Limit::Packets(1000)))
}

/// A switch element on both output ports of node B: marks forward packets, absorbs every
/// third one and answers it with a packet back to the source, and keeps per-port counts.
#[derive(Default)]
struct Switch {
    node: NodeId,
    reply_to: NodeId,
    forward: LinkId,
    backward: LinkId,
    seen_forward: u64,
    seen_backward: u64,
    absorbed: u64,
    log: Rc<RefCell<Vec<(LinkId, u64)>>>,
}

impl Agent for Switch {
    fn on_port(&mut self, link: LinkId, pkt: &mut Packet, ctx: &mut Ctx) -> PortVerdict {
        self.log.borrow_mut().push((link, pkt.seq));
        if link == self.backward {
            self.seen_backward += 1;
            return PortVerdict::Pass;
        }
        assert_eq!(link, self.forward);
        self.seen_forward += 1;
        pkt.set(SEEN);
        if self.seen_forward.is_multiple_of(3) {
            self.absorbed += 1;
            let reply = Packet {
                size: 53,
                src: self.node,
                dst: self.reply_to,
                dst_agent: NONE,
                route: NONE,
                seq: pkt.seq,
                created: ctx.now(),
                ..Packet::default()
            };
            ctx.send(reply);
            return PortVerdict::Consume;
        }
        PortVerdict::Pass
    }
}

#[test]
fn a_port_element_sees_marks_and_consumes_packets_and_sends_with_its_context() {
    let mut w = World::new(1);
    let a = w.net.add_node("A");
    let b = w.net.add_node("B");
    let c = w.net.add_node("C");
    let (ab, _ba) = w.net.add_duplex(a, b, 10_000_000, PS_PER_MS, fifo);
    let (bc, _) = w.net.add_duplex(b, c, 10_000_000, PS_PER_MS, fifo);
    let ba = w.net.link_between(b, a).unwrap();
    let log = Rc::new(RefCell::new(Vec::new()));
    let sw = w.add_agent(
        "switch",
        Box::new(Switch {
            node: b,
            reply_to: a,
            forward: bc,
            backward: ba,
            log: log.clone(),
            ..Switch::default()
        }),
    );
    w.attach_port(bc, sw.id());
    w.attach_port(ba, sw.id());
    let sink = w.add_agent("sink", Box::new(Sink));
    let g = w.flows.add_group("data");
    let flow = w.flows.open(g, 0);
    let tmpl = PacketTemplate::new(a, c, sink.id());
    let model = SourceModel::Cbr {
        size: 1000,
        interval: 0.001,
    };
    let stop = 300 * PS_PER_MS;
    let src = Source::new(&model, tmpl, flow, 0, stop, 0.0, w.rng("src"));
    w.add_agent("src", Box::new(src));
    w.run_until(PS_PER_S);
    let sent = w.flows.recs[flow as usize].sent_pkts;
    assert_eq!(sent, 300);
    let sw = w.agents.get_mut::<Switch>(sw).unwrap();
    let (fwd, back, absorbed) = (sw.seen_forward, sw.seen_backward, sw.absorbed);
    assert_eq!(fwd, sent, "every packet crossed the forward port once");
    assert_eq!(absorbed, sent / 3);
    assert_eq!(back, absorbed, "each answer left through the backward port");
    let rx = w.flows.recs[flow as usize].rx_pkts;
    assert_eq!(rx, sent - absorbed, "absorbed packets never reach the port");
    assert_eq!(w.net.links[bc as usize].stats.tx_pkts, sent - absorbed);
    assert_eq!(w.net.links[ab as usize].stats.tx_pkts, sent);
    assert_eq!(w.net.links[ba as usize].stats.tx_pkts, absorbed);
    // The answers went to A, which has no agent for them: they were delivered nowhere,
    // but they did arrive (none is unroutable).
    assert_eq!(w.net.unroutable, 0);
    // The element saw forward packets in sending order.
    let fwd_seqs: Vec<u64> = log
        .borrow()
        .iter()
        .filter(|(l, _)| *l == bc)
        .map(|(_, s)| *s)
        .collect();
    assert!(fwd_seqs.windows(2).all(|p| p[0] < p[1]));
}

/// Records every signal: (arrival time, sender, which type, value).
#[derive(Default)]
struct Listener {
    got: Vec<(u64, AgentId, &'static str, u64)>,
}

#[derive(Debug)]
struct Report(u64);
#[derive(Debug)]
struct Request(u64);

impl Agent for Listener {
    fn on_signal(&mut self, from: AgentId, msg: &dyn Any, ctx: &mut Ctx) {
        if let Some(r) = msg.downcast_ref::<Report>() {
            self.got.push((ctx.now(), from, "report", r.0));
        } else if let Some(r) = msg.downcast_ref::<Request>() {
            self.got.push((ctx.now(), from, "request", r.0));
        }
    }
}

struct Talker {
    to: AgentId,
}

impl Agent for Talker {
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.timer(5 * PS_PER_MS, 0);
    }
    fn on_timer(&mut self, _kind: u32, ctx: &mut Ctx) {
        for i in 0..3 {
            ctx.signal(self.to, 2 * PS_PER_MS, Report(i));
        }
        ctx.signal(self.to, PS_PER_MS, Request(7));
    }
}

#[test]
fn signals_arrive_after_their_delay_typed_and_in_order() {
    let mut w = World::new(2);
    let l = w.add_agent("listener", Box::new(Listener::default()));
    let t = w.add_agent("talker", Box::new(Talker { to: l.id() })).id();
    w.run_until(PS_PER_S);
    let got = &w.agents.get_mut::<Listener>(l).unwrap().got;
    let ms = PS_PER_MS;
    assert_eq!(
        got,
        &vec![
            (6 * ms, t, "request", 7),
            (7 * ms, t, "report", 0),
            (7 * ms, t, "report", 1),
            (7 * ms, t, "report", 2),
        ]
    );
    assert_eq!(w.mail.in_transit(), 0, "delivered letters are freed");
}

/// A world of two nodes A and B (100 Mb/s both ways) with a sink at B and a generator
/// "gen" (seed `seed`) of CBR calls of 100-byte packets every `interval` seconds from A,
/// `rate` calls per second held by `holding`, finished by `f`; and the generator's handle.
fn call_world(
    seed: u64,
    interval: f64,
    rate: f64,
    holding: Holding,
    f: impl FnOnce(FlowGenerator) -> FlowGenerator,
) -> (World, AgentHandle<FlowGenerator>) {
    let mut w = World::new(seed);
    let a = w.net.add_node("A");
    let b = w.net.add_node("B");
    w.net.add_duplex(a, b, 100_000_000, PS_PER_MS, fifo);
    let sink = w.add_agent("sink", Box::new(Sink));
    let g = w.flows.add_group("calls");
    let gen = FlowGenerator::new(
        "gen",
        seed,
        SourceModel::Cbr {
            size: 100,
            interval,
        },
        PacketTemplate::new(a, b, sink.id()),
        g,
        Arrivals::Poisson { rate },
        holding,
        0.0,
    );
    let gid = w.add_agent("gen", Box::new(f(gen)));
    (w, gid)
}

/// Admits each call `delay` after it arrives, by a signal to its own generator.
struct DelayedAdmit {
    delay: u64,
    arrivals: Rc<RefCell<Vec<(u64, u64)>>>,
}

struct Decide(u64);

impl CallAdmission for DelayedAdmit {
    fn admit(&mut self, call: u64, _active: usize, ctx: &mut Ctx) -> Admission {
        self.arrivals.borrow_mut().push((call, ctx.now()));
        let me = ctx.me;
        ctx.signal(me, self.delay, Decide(call));
        Admission::Pending
    }
    fn on_signal(&mut self, _from: AgentId, msg: &dyn Any, _ctx: &mut Ctx, calls: &mut Calls) {
        if let Some(Decide(call)) = msg.downcast_ref::<Decide>() {
            calls.decide(*call, true);
        }
    }
}

#[test]
fn admission_decided_later_starts_each_call_exactly_when_decided() {
    let arrivals = Rc::new(RefCell::new(Vec::new()));
    let delay = 40 * PS_PER_MS;
    let (mut w, gid) = call_world(3, 0.02, 5.0, Holding::Fixed(1.0), |g| {
        g.with_admission(Box::new(DelayedAdmit {
            delay,
            arrivals: arrivals.clone(),
        }))
    });
    w.run_until(20 * PS_PER_S);
    let arrivals = arrivals.borrow();
    assert!(arrivals.len() > 50, "enough calls: {}", arrivals.len());
    // Every call decided before the end started a flow exactly `delay` after arriving.
    let starts: Vec<u64> = w.flows.recs.iter().map(|r| r.start).collect();
    let decided: Vec<u64> = arrivals
        .iter()
        .map(|&(_, t)| t + delay)
        .filter(|&t| t <= 20 * PS_PER_S)
        .collect();
    assert_eq!(starts, decided);
    let pending = w.agents.get_mut::<FlowGenerator>(gid).unwrap().pending();
    assert_eq!(pending, arrivals.len() - decided.len());
}

/// Rejects every call after a delay.
struct RejectLater;

impl CallAdmission for RejectLater {
    fn admit(&mut self, call: u64, _active: usize, ctx: &mut Ctx) -> Admission {
        let me = ctx.me;
        ctx.signal(me, PS_PER_MS, Decide(call));
        Admission::Pending
    }
    fn on_signal(&mut self, _from: AgentId, msg: &dyn Any, _ctx: &mut Ctx, calls: &mut Calls) {
        if let Some(Decide(call)) = msg.downcast_ref::<Decide>() {
            calls.decide(*call, false);
        }
    }
}

#[test]
fn calls_rejected_later_count_as_blocked_and_send_nothing() {
    let (mut w, gid) = call_world(4, 0.02, 10.0, Holding::Exp(1.0), |g| {
        g.with_admission(Box::new(RejectLater))
    });
    w.run_until(10 * PS_PER_S);
    let pending = w.agents.get_mut::<FlowGenerator>(gid).unwrap().pending() as u64;
    let s = w.summary();
    let offered = s["agent.gen.offered_calls"].as_u64().unwrap();
    let blocked = s["agent.gen.blocked_calls"].as_u64().unwrap();
    assert!(offered > 50);
    // Calls offered in the last millisecond are still pending.
    assert_eq!(blocked + pending, offered);
    assert_eq!(w.flows.recs.len(), 0);
    assert_eq!(s["group.calls.sent_pkts"].as_u64().unwrap(), 0);
}

/// Admits odd calls, rejects even ones (or admits all), and writes down each call's end.
struct OddOnly {
    all: bool,
    ends: Rc<RefCell<Vec<(u64, u64)>>>,
}

impl CallAdmission for OddOnly {
    fn admit(&mut self, call: u64, _active: usize, _ctx: &mut Ctx) -> Admission {
        if self.all || call % 2 == 1 {
            Admission::Admit
        } else {
            Admission::Reject
        }
    }
    fn on_call_end(&mut self, call: &ActiveCall, _ctx: &Ctx) {
        self.ends.borrow_mut().push((call.call, call.end));
    }
}

/// The (call, end) pairs of the odd calls of one run that admits all calls or only odd
/// ones, with random numbers drawn by `streams`.
fn odd_call_ends(streams: CallStreams, all: bool) -> Vec<(u64, u64)> {
    let ends = Rc::new(RefCell::new(Vec::new()));
    let (mut w, _) = call_world(5, 0.02, 5.0, Holding::Exp(1.0), |g| {
        g.with_call_streams(streams, 5)
            .with_admission(Box::new(OddOnly {
                all,
                ends: ends.clone(),
            }))
    });
    w.run_until(30 * PS_PER_S);
    let mut odd: Vec<(u64, u64)> = ends
        .borrow()
        .iter()
        .copied()
        .filter(|c| c.0 % 2 == 1)
        .collect();
    odd.sort_unstable();
    odd
}

#[test]
fn per_call_streams_keep_a_calls_flow_whatever_is_decided_for_the_others() {
    let all = odd_call_ends(CallStreams::PerCall, true);
    let odd = odd_call_ends(CallStreams::PerCall, false);
    assert!(all.len() > 40, "enough calls ended: {}", all.len());
    assert_eq!(all, odd, "each odd call holds exactly as long in both runs");
    // Drawn by admission, holding times share the arrivals' stream: the decisions for
    // even calls change what the odd ones draw.
    let all = odd_call_ends(CallStreams::ByAdmission, true);
    let odd = odd_call_ends(CallStreams::ByAdmission, false);
    assert_ne!(all, odd);
}

/// At 5 s, terminates every other call in progress.
struct HalveAt5s {
    before: usize,
    terminated: Vec<ActiveCall>,
}

impl CallAdmission for HalveAt5s {
    fn start(&mut self, ctx: &mut Ctx) {
        ctx.timer_at(5 * PS_PER_S, POLICY_TIMER);
    }
    fn admit(&mut self, _call: u64, _active: usize, _ctx: &mut Ctx) -> Admission {
        Admission::Admit
    }
    fn on_timer(&mut self, kind: u32, _ctx: &mut Ctx, calls: &mut Calls) {
        assert_eq!(kind, POLICY_TIMER);
        self.before = calls.active.len();
        for i in (0..calls.active.len()).step_by(2) {
            self.terminated.push(calls.active[i]);
            calls.terminate(i);
        }
    }
}

#[test]
fn a_policy_terminates_calls_in_progress() {
    let (mut w, gid) = call_world(6, 0.01, 10.0, Holding::Fixed(100.0), |g| {
        g.stop_arrivals_at(4 * PS_PER_S)
            .with_admission(Box::new(HalveAt5s {
                before: 0,
                terminated: Vec::new(),
            }))
    });
    w.run_until(8 * PS_PER_S);
    let gen = w.agents.get_mut::<FlowGenerator>(gid).unwrap();
    let left: Vec<ActiveCall> = gen.active_calls().to_vec();
    let p = gen.admission::<HalveAt5s>().unwrap();
    let (before, terminated) = (p.before, p.terminated.clone());
    assert!(before > 20, "calls in progress at 5 s: {before}");
    assert_eq!(terminated.len(), before.div_ceil(2));
    assert_eq!(left.len(), before - terminated.len());
    // Terminated flows stop at 5 s and send nothing after; the others send on.
    for c in &terminated {
        let r = &w.flows.recs[c.flow as usize];
        assert_eq!(r.stop, 5 * PS_PER_S, "call {}", c.call);
        assert!(
            r.sent_pkts <= 501,
            "call {}: {} packets",
            c.call,
            r.sent_pkts
        );
    }
    for c in &left {
        assert!(
            w.flows.recs[c.flow as usize].sent_pkts > 400,
            "call {}",
            c.call
        );
    }
    let s = w.summary();
    assert_eq!(
        s["agent.gen.active_now"].as_u64().unwrap() as usize,
        left.len()
    );
}
