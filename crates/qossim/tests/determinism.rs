//! Determinism and engine invariants: identical runs for identical seeds, random streams
//! that do not shift when components are added, links that never exceed their rate, and
//! the stopping rules of the event loop.

use qossim::engine::EventId;
use qossim::metrics::Probe;
use qossim::net::{LinkId, NodeId, Packet, PortHook, PortInfo};
use qossim::queue::{DropTail, Limit};
use qossim::time::{secs, tx_time, Time, NEVER, PS_PER_MS, PS_PER_S};
use qossim::traffic::{
    Arrivals, FlowGenerator, Holding, MaxActive, PacketTemplate, Period, Sink, SizeDist, Source,
    SourceModel,
};
use qossim::{Agent, AgentHandle, Ctx, World};

fn droptail(n: usize) -> Box<DropTail> {
    Box::new(DropTail::new(Limit::Packets(n)))
}

/// A call generator named `name` from `src` to a sink at `dst`, sending on-off and
/// Poisson flows (random sizes), counted in a group of the same name.
fn add_generator(
    w: &mut World,
    name: &str,
    src: NodeId,
    dst: NodeId,
    max_active: Option<usize>,
) -> u32 {
    let g = w.flows.add_group(name);
    let sink = w.add_agent(&format!("{name}-sink"), Box::new(Sink));
    let model = SourceModel::Mix(vec![
        SourceModel::OnOff {
            size: 500,
            interval: 0.002,
            on: Period::Exp(0.2),
            off: Period::Exp(0.3),
        },
        SourceModel::Poisson {
            rate: 300.0,
            size: SizeDist::Geometric(700.0),
        },
    ]);
    let mut gen = FlowGenerator::new(
        name,
        w.seed(),
        model,
        PacketTemplate::new(src, dst, sink.id()),
        g,
        Arrivals::Poisson { rate: 4.0 },
        Holding::Exp(2.0),
        0.1,
    )
    .measure_from(secs(1.0));
    if let Some(c) = max_active {
        gen = gen.with_admission(Box::new(MaxActive(c)));
    }
    w.add_agent(name, Box::new(gen));
    g
}

/// A small scenario exercising sources, a generator with admission, two queues in tandem,
/// a sampler and a warm-up.
fn scenario(seed: u64) -> World {
    let mut w = World::new(seed);
    let a = w.net.add_node("a");
    let b = w.net.add_node("b");
    let c = w.net.add_node("c");
    let ab = w
        .net
        .add_link("ab", a, b, 10_000_000, 2 * PS_PER_MS, droptail(50));
    w.net
        .add_link("bc", b, c, 6_000_000, 5 * PS_PER_MS, droptail(30));
    add_generator(&mut w, "calls", a, c, Some(12));
    let g = w.flows.add_group("background");
    let sink = w.add_agent("bg-sink", Box::new(Sink));
    let flow = w.flows.open(g, 0);
    let model = SourceModel::Poisson {
        rate: 400.0,
        size: SizeDist::Geometric(600.0),
    };
    let src = Source::new(
        &model,
        PacketTemplate::new(b, c, sink.id()),
        flow,
        0,
        NEVER,
        0.0,
        w.rng("bg"),
    );
    w.add_agent("bg", Box::new(src));
    w.add_sampler(
        "ab.throughput",
        Probe::LinkThroughput {
            link: ab,
            class: None,
            marked: None,
        },
        secs(0.05),
    );
    w.set_warmup(secs(2.0));
    w
}

fn run(seed: u64) -> (u64, String, u64) {
    let mut w = scenario(seed);
    w.enable_trace_hash();
    w.run_until(secs(20.0));
    let s = w.summary();
    let events = w.sched.processed();
    (
        w.trace_hash().unwrap(),
        serde_json::to_string(&s).unwrap(),
        events,
    )
}

#[test]
fn same_seed_same_run_different_seed_different_run() {
    let (h1, s1, e1) = run(42);
    let (h2, s2, e2) = run(42);
    assert!(e1 > 50_000, "only {e1} events");
    assert_eq!(h1, h2);
    assert_eq!(e1, e2);
    assert_eq!(s1, s2);
    let (h3, s3, _) = run(43);
    assert_ne!(h1, h3);
    assert_ne!(s1, s3);
}

/// The records of the flows of group `name`: (start, stop, sent packets, sent bytes,
/// delivered packets, delivered bytes), in order of creation.
fn group_records(w: &World, name: &str) -> Vec<(Time, Time, u64, u64, u64, u64)> {
    let g = w.flows.group_id(name).unwrap();
    w.flows
        .recs
        .iter()
        .filter(|r| r.group == g)
        .map(|r| {
            (
                r.start,
                r.stop,
                r.sent_pkts,
                r.sent_bytes,
                r.rx_pkts,
                r.rx_bytes,
            )
        })
        .collect()
}

#[test]
fn adding_a_component_does_not_shift_other_streams() {
    let seed = 7;
    let end = secs(60.0);
    // World A: generator "gen-a" on its own link.
    let mut wa = World::new(seed);
    let a1 = wa.net.add_node("a1");
    let b1 = wa.net.add_node("b1");
    wa.net
        .add_link("la", a1, b1, 5_000_000, PS_PER_MS, droptail(40));
    add_generator(&mut wa, "gen-a", a1, b1, None);
    wa.run_until(end);

    // World B: another generator on another link, added first (so every id differs).
    let mut wb = World::new(seed);
    let a2 = wb.net.add_node("a2");
    let b2 = wb.net.add_node("b2");
    wb.net
        .add_link("lb", a2, b2, 5_000_000, PS_PER_MS, droptail(40));
    add_generator(&mut wb, "gen-b", a2, b2, Some(3));
    let a1 = wb.net.add_node("a1");
    let b1 = wb.net.add_node("b1");
    wb.net
        .add_link("la", a1, b1, 5_000_000, PS_PER_MS, droptail(40));
    add_generator(&mut wb, "gen-a", a1, b1, None);
    wb.run_until(end);

    let ra = group_records(&wa, "gen-a");
    let rb = group_records(&wb, "gen-a");
    assert!(ra.len() > 100, "{} flows", ra.len());
    assert!(!group_records(&wb, "gen-b").is_empty());
    assert_eq!(ra, rb);
    let (ga, gb) = (
        &wa.flows.groups[wa.flows.group_id("gen-a").unwrap() as usize],
        &wb.flows.groups[wb.flows.group_id("gen-a").unwrap() as usize],
    );
    assert_eq!(ga.delay.mean(), gb.delay.mean());
    let (sa, sb) = (wa.summary(), wb.summary());
    for k in ["offered_calls", "admitted_calls_total", "active_mean"] {
        let key = format!("agent.gen-a.{k}");
        assert_eq!(sa[&key], sb[&key], "{key}");
    }
    assert_eq!(sa["link.la.tx_pkts"], sb["link.la.tx_pkts"]);
}

/// Records (time, size) of every transmission start on a port.
#[derive(Default)]
struct DepartureLog {
    log: Vec<(Time, u32)>,
}

impl PortHook for DepartureLog {
    fn on_arrival(&mut self, _pkt: &mut Packet, _now: Time, _port: &PortInfo) -> bool {
        true
    }
    fn wants_departures(&self) -> bool {
        true
    }
    fn on_departure(&mut self, pkt: &mut Packet, now: Time) {
        self.log.push((now, pkt.size));
    }
}

/// Records (time, size) of every packet reaching the node it taps.
#[derive(Default)]
struct ArrivalLog {
    log: Vec<(Time, u32)>,
}

impl Agent for ArrivalLog {
    fn on_tap(&mut self, _node: NodeId, pkt: &Packet, ctx: &mut Ctx) {
        self.log.push((ctx.now(), pkt.size));
    }
}

/// Checks that `log` (time, size), in time order, never exceeds `rate`: consecutive
/// entries are at least `gap(previous, next)` apart, and for every pair `i <= j` the
/// bytes of entries `i..=j` fit in `rate (t_j - t_i) / 8` plus one largest packet
/// (exact integer arithmetic, O(n) with a running minimum).
fn assert_rate_respected(log: &[(Time, u32)], rate: u64, gap: impl Fn(u32, u32) -> Time) {
    for w in log.windows(2) {
        assert!(
            w[1].0 - w[0].0 >= gap(w[0].1, w[1].1),
            "{:?} then {:?}: closer than one transmission time",
            w[0],
            w[1]
        );
    }
    let unit: i128 = 8 * PS_PER_S as i128; // token units per byte: exact
    let max = log.iter().map(|x| x.1).max().unwrap() as i128 * unit;
    let (mut prefix, mut best) = (0i128, i128::MAX);
    for &(t, s) in log {
        let rt = rate as i128 * t as i128;
        best = best.min(prefix - rt);
        prefix += s as i128 * unit;
        assert!(
            prefix - rt - best <= max,
            "window ending at {t} exceeds the rate"
        );
    }
}

/// Saturates one link (offered about 1.6x its rate by Poisson and CBR sources) and
/// returns its departure log (if observed) and the arrival log at the far end.
type Logs = (
    u64,
    Vec<(Time, u32)>,
    Vec<(Time, u32)>,
    serde_json::Map<String, serde_json::Value>,
);

fn saturated(seed: u64, observe_departures: bool) -> Logs {
    let rate = 3_000_000u64; // not a divisor of 10^12 x 8 x size: transmission times round
    let mut w = World::new(seed);
    let a = w.net.add_node("a");
    let b = w.net.add_node("b");
    let l = w
        .net
        .add_link("ab", a, b, rate, 3 * PS_PER_MS, droptail(20));
    let log = observe_departures.then(|| w.net.add_hook(l, Box::new(DepartureLog::default())));
    let tap = w.add_agent("tap", Box::new(ArrivalLog::default()));
    w.tap(b, tap.id());
    let g = w.flows.add_group("g");
    let sink = w.add_agent("sink", Box::new(Sink));
    let models = [
        SourceModel::Poisson {
            rate: 150.0,
            size: SizeDist::Geometric(1200.0),
        },
        SourceModel::Poisson {
            rate: 400.0,
            size: SizeDist::Geometric(300.0),
        },
        SourceModel::Cbr {
            size: 1499,
            interval: 0.01,
        },
        SourceModel::Cbr {
            size: 53,
            interval: 0.0007,
        },
    ];
    for (i, m) in models.iter().enumerate() {
        let flow = w.flows.open(g, 0);
        let name = format!("s{i}");
        let src = Source::new(
            m,
            PacketTemplate::new(a, b, sink.id()),
            flow,
            i as Time * 17,
            NEVER,
            0.0,
            w.rng(&name),
        );
        w.add_agent(&name, Box::new(src));
    }
    w.run_until(secs(30.0));
    let deps = if let Some(h) = log {
        std::mem::take(&mut w.net.hook_mut(h).log)
    } else {
        Vec::new()
    };
    let arrs = std::mem::take(&mut w.agents.get_mut::<ArrivalLog>(tap).unwrap().log);
    let s = w.summary();
    assert!(
        s["link.ab.drops_overflow"].as_u64().unwrap() > 0,
        "link not saturated"
    );
    (rate, deps, arrs, s)
}

#[test]
fn a_link_never_sends_faster_than_its_rate() {
    // With a departure observer the port takes the general path (one event per
    // transmission); without, FIFO ports may compute transmissions on arrival. Both must
    // respect the rate, and they must produce the same packet times.
    let (rate, deps, arrs, sum) = saturated(3, true);
    assert!(deps.len() > 10_000);
    // A transmission starts no earlier than the end of the previous one.
    assert_rate_respected(&deps, rate, |prev, _| tx_time(prev, rate));
    // At the far end, consecutive packets are at least the later one's transmission time
    // apart (each arrives one transmission time plus the delay after it started).
    assert_rate_respected(&arrs, rate, |_, next| tx_time(next, rate));
    let busy: Time = deps.iter().map(|d| tx_time(d.1, rate)).sum();
    let span = deps.last().unwrap().0 + tx_time(deps.last().unwrap().1, rate) - deps[0].0;
    assert!(busy <= span);
    let (_, _, arrs_fast, sum_fast) = saturated(3, false);
    assert_rate_respected(&arrs_fast, rate, |_, next| tx_time(next, rate));
    assert_eq!(arrs.len(), arrs_fast.len());
    assert_eq!(arrs, arrs_fast);
    for k in [
        "tx_pkts",
        "drops",
        "queue_mean_pkts",
        "queue_max_pkts",
        "throughput_bps",
    ] {
        let key = format!("link.ab.{k}");
        assert_eq!(sum[&key], sum_fast[&key], "{key}");
    }
    assert_eq!(
        sum["group.g.delay_mean_s"],
        sum_fast["group.g.delay_mean_s"]
    );
}

/// An agent that sets timers at given times, records when they fire, and on a given
/// kind cancels another timer and sets one at the current time.
#[derive(Default)]
struct Timers {
    plan: Vec<(Time, u32)>,
    ids: Vec<EventId>,
    fired: Vec<(Time, u32)>,
    /// (kind that acts, index in `plan` of the timer it cancels)
    canceller: Option<(u32, usize)>,
}

impl Agent for Timers {
    fn start(&mut self, ctx: &mut Ctx) {
        for &(t, k) in &self.plan {
            self.ids.push(ctx.timer_at(t, k));
        }
    }
    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        self.fired.push((ctx.now(), kind));
        if let Some((k, idx)) = self.canceller {
            if k == kind {
                ctx.cancel(self.ids[idx]);
                // A timer set for "now" at the stopping time still runs.
                ctx.timer(0, 99);
            }
        }
    }
}

fn timers(
    w: &mut World,
    plan: &[(Time, u32)],
    canceller: Option<(u32, usize)>,
) -> AgentHandle<Timers> {
    w.add_agent(
        "timers",
        Box::new(Timers {
            plan: plan.to_vec(),
            canceller,
            ..Default::default()
        }),
    )
}

fn fired(w: &mut World, id: AgentHandle<Timers>) -> Vec<(Time, u32)> {
    w.agent(id).fired.clone()
}

#[test]
fn run_until_includes_the_end_time_and_stops() {
    let mut w = World::new(1);
    // Kind 3 at t = 5 cancels the timer at t = 7 (plan index 2) and sets one for now.
    let plan = [(5, 1), (5, 3), (7, 2), (6, 4), (10, 5)];
    let id = timers(&mut w, &plan, Some((3, 2)));
    w.run_until(5);
    assert_eq!(w.sched.now(), 5);
    assert_eq!(fired(&mut w, id), vec![(5, 1), (5, 3), (5, 99)]);
    // Running to the same time again does nothing.
    w.run_until(5);
    assert_eq!(fired(&mut w, id).len(), 3);
    // Stopping between events advances the clock to the stopping time.
    w.run_until(8);
    assert_eq!(w.sched.now(), 8);
    assert_eq!(fired(&mut w, id), vec![(5, 1), (5, 3), (5, 99), (6, 4)]);
    assert_eq!(w.sched.peek_time(), Some(10));
    w.run_to_empty();
    assert_eq!(fired(&mut w, id).last(), Some(&(10, 5)));
    assert_eq!(w.sched.now(), 10);
    assert_eq!(w.sched.pending(), 0);
    assert!(!w.step());
}

#[test]
fn run_while_checks_before_each_event() {
    let mut w = World::new(1);
    let plan = [(2, 1), (4, 2), (4, 3), (9, 4)];
    let id = timers(&mut w, &plan, None);
    // Stops as soon as the condition is false: after the first event at t = 4.
    w.run_while(|w| w.sched.now() < 4);
    assert_eq!(fired(&mut w, id), vec![(2, 1), (4, 2)]);
    w.run_while(|_| true);
    assert_eq!(fired(&mut w, id).len(), 4);
    assert_eq!(w.sched.now(), 9);
}

#[test]
fn cancelled_timers_never_fire_and_late_cancels_are_harmless() {
    let mut w = World::new(1);
    let plan: Vec<(Time, u32)> = (0..100).map(|k| (10 + 3 * k as Time, k)).collect();
    // Kind 10 cancels kind 50's timer; kind 60 cancels kind 20's, which already fired.
    let id = timers(&mut w, &plan, Some((10, 50)));
    w.run_until(150);
    {
        let t = w.agents.get_mut::<Timers>(id).unwrap();
        t.canceller = Some((60, 20));
    }
    w.run_to_empty();
    let got: Vec<u32> = fired(&mut w, id).iter().map(|f| f.1).collect();
    let mut want: Vec<u32> = (0..100).filter(|&k| k != 50).collect();
    want.insert(want.iter().position(|&k| k == 10).unwrap() + 1, 99);
    want.insert(want.iter().position(|&k| k == 60).unwrap() + 1, 99);
    assert_eq!(got, want);
}

#[test]
fn flow_generator_streams_are_independent_of_the_link() {
    // The same generator on a much slower link: different deliveries, same call arrivals
    // and holding times (flow records' start/stop), and the same packets sent.
    let build = |rate: u64| {
        let mut w = World::new(11);
        let a = w.net.add_node("a");
        let b = w.net.add_node("b");
        let _: LinkId = w.net.add_link("ab", a, b, rate, PS_PER_MS, droptail(10));
        add_generator(&mut w, "g", a, b, None);
        w.run_until(secs(30.0));
        group_records(&w, "g")
    };
    let fast = build(100_000_000);
    let slow = build(1_000_000);
    let key = |v: &Vec<(Time, Time, u64, u64, u64, u64)>| -> Vec<(Time, Time, u64, u64)> {
        v.iter().map(|r| (r.0, r.1, r.2, r.3)).collect()
    };
    assert_eq!(key(&fast), key(&slow));
    let rx = |v: &Vec<(Time, Time, u64, u64, u64, u64)>| v.iter().map(|r| r.4).sum::<u64>();
    assert!(rx(&slow) < rx(&fast));
}

/// A port hook that does nothing but asks for departure calls, which keeps a FIFO port on
/// the general path (one event per transmission).
struct Passive;

impl PortHook for Passive {
    fn on_arrival(&mut self, _pkt: &mut Packet, _now: Time, _port: &PortInfo) -> bool {
        true
    }
    fn wants_departures(&self) -> bool {
        true
    }
}

#[test]
fn fifo_ports_agree_on_both_paths_even_with_exact_ties() {
    // Two CBR sources whose packets arrive exactly when a transmission ends (1000 B at
    // 8 Mb/s = 1 ms; sources every 1 ms and 1.5 ms): the drop decision at a full buffer
    // depends on whether the departure is accounted before the arrival. Both port paths
    // must decide alike.
    let run = |general: bool, limit: Limit| {
        let mut w = World::new(1);
        let a = w.net.add_node("a");
        let b = w.net.add_node("b");
        let l = w
            .net
            .add_link("ab", a, b, 8_000_000, 0, Box::new(DropTail::new(limit)));
        if general {
            w.net.add_hook(l, Box::new(Passive));
        }
        let g = w.flows.add_group("g");
        let sink = w.add_agent("sink", Box::new(Sink));
        for (i, interval) in [0.001, 0.0015].into_iter().enumerate() {
            let f = w.flows.open(g, 0);
            let m = SourceModel::Cbr {
                size: 1000,
                interval,
            };
            let s = Source::new(
                &m,
                PacketTemplate::new(a, b, sink.id()),
                f,
                0,
                NEVER,
                0.0,
                w.rng("cbr"),
            );
            w.add_agent(&format!("s{i}"), Box::new(s));
        }
        w.run_until(secs(1.0));
        w.summary()
    };
    for limit in [
        Limit::Packets(1),
        Limit::Packets(2),
        Limit::Packets(5),
        Limit::Bytes(2500),
    ] {
        let (g, f) = (run(true, limit), run(false, limit));
        assert!(g["link.ab.drops"].as_u64().unwrap() > 0);
        for k in ["tx_pkts", "drops", "queue_mean_pkts"] {
            let key = format!("link.ab.{k}");
            assert_eq!(g[&key], f[&key], "{limit:?} {key}");
        }
        assert_eq!(
            g["group.g.delay_mean_s"], f["group.g.delay_mean_s"],
            "{limit:?}"
        );
    }
}
