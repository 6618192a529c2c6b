//! The engine's shortcuts change how many events a run takes, never its results: every
//! shipped scenario (FIFO chains and dumbbells, priority ports, RED and RIO, CoDel, TCP,
//! PCN markers, ABR switches, RPR stations, endpoint probing) gives the same summary with
//! the FIFO fast path on and off; a plain sink the world counts for gives what the sink
//! itself would.

mod common;

use qossim::scenario;
use serde_json::{Map, Value};

/// The scenario's core summary after `secs` simulated seconds (or its whole run if
/// shorter), with the fast path on or off; the event count, which the fast path is there
/// to lower, left out; and the number of ports on the fast path.
fn summary(
    path: &std::path::Path,
    text: &str,
    secs: f64,
    fast: bool,
) -> (Map<String, Value>, usize) {
    let sc = qossim::parse(
        text,
        &path.display().to_string(),
        path.parent().unwrap(),
        &[],
    )
    .unwrap_or_else(|d| panic!("{}: {d:#?}", path.display()));
    let mut w = scenario::build(&sc, 1).unwrap();
    if !fast {
        w.net.disable_fast_paths();
    }
    w.run_until(sc.run.duration.min(qossim::time::secs(secs)));
    let fast_ports = w.net.links.iter().filter(|l| l.uses_fast_path()).count();
    let mut m = w.summary();
    m.remove("events");
    (m, fast_ports)
}

#[test]
fn the_fifo_fast_path_changes_no_result() {
    let mut checked = 0;
    let mut fast_ports = 0;
    for (path, text) in common::shipped_scenarios() {
        let (on, n) = summary(&path, &text, 0.5, true);
        let (off, none) = summary(&path, &text, 0.5, false);
        assert_eq!(none, 0);
        assert!(on.len() > 3, "{}", path.display());
        for (k, v) in &on {
            assert_eq!(Some(v), off.get(k), "{}: {k}", path.display());
        }
        assert_eq!(on.len(), off.len(), "{}", path.display());
        checked += 1;
        fast_ports += n;
    }
    assert!(checked >= 20);
    assert!(fast_ports > 100, "{fast_ports} ports on the fast path");
}

/// A plain sink that the world must call: the same counting as [`Sink`], without the
/// flag that lets the world count for it.
struct CalledSink;

impl qossim::world::Agent for CalledSink {
    fn on_packet(&mut self, pkt: qossim::net::Packet, ctx: &mut qossim::world::Ctx) {
        let now = ctx.now();
        ctx.flows.delivered(&pkt, now);
    }
}

/// Stops one agent at a given time.
struct Stopper(qossim::net::AgentId, qossim::time::Time);

impl qossim::world::Agent for Stopper {
    fn start(&mut self, ctx: &mut qossim::world::Ctx) {
        ctx.timer_at(self.1, 1);
    }
    fn on_timer(&mut self, _kind: u32, ctx: &mut qossim::world::Ctx) {
        ctx.stop(self.0);
    }
}

/// Poisson flows into one sink, stopped halfway: group counts, delays and the event
/// count (last), and the conservation check's account of packets lost at the stopped
/// sink.
fn sink_run(called: bool) -> (Vec<u64>, Vec<String>) {
    use qossim::queue::{DropTail, Limit};
    use qossim::time::{millis, secs};
    use qossim::traffic::{PacketTemplate, Source, SourceModel};
    let mut w = qossim::World::new(4);
    let a = w.net.add_node("a");
    let b = w.net.add_node("b");
    w.net.add_link(
        "ab",
        a,
        b,
        10_000_000,
        millis(3.0),
        Box::new(DropTail::new(Limit::Packets(20))),
    );
    let sink: Box<dyn qossim::world::Agent> = if called {
        Box::new(CalledSink)
    } else {
        Box::new(qossim::traffic::Sink)
    };
    let sink = w.add_boxed_agent("sink", sink);
    w.add_agent("stopper", Box::new(Stopper(sink, secs(1.0))));
    let g = w.flows.add_group("g");
    w.enable_flow_conservation();
    let model = SourceModel::Poisson {
        rate: 300.0,
        size: qossim::traffic::SizeDist::Fixed(500),
    };
    for i in 0..4 {
        let flow = w.flows.open(g, 0);
        let src = Source::new(
            &model,
            PacketTemplate::new(a, b, sink),
            flow,
            0,
            u64::MAX,
            0.0,
            w.rng(&format!("s{i}")),
        );
        w.add_agent("", Box::new(src));
    }
    w.run_until(secs(2.0));
    let gs = &w.flows.groups[g as usize];
    let counts = vec![
        gs.sent_pkts,
        gs.rx_pkts,
        gs.rx_bytes,
        gs.delay.count(),
        gs.delay.mean().to_bits(),
        w.sched.processed(),
    ];
    (counts, w.check_invariants())
}

#[test]
fn a_plain_sink_counted_by_the_world_counts_what_it_would() {
    let (called, ok_called) = sink_run(true);
    let (counted, ok_counted) = sink_run(false);
    // The same counts; the packets for the plain sink land without arrival events.
    assert_eq!(called[..5], counted[..5]);
    assert!(
        counted[5] + counted[1] <= called[5],
        "{counted:?} {called:?}"
    );
    assert!(ok_called.is_empty(), "{ok_called:?}");
    assert!(ok_counted.is_empty(), "{ok_counted:?}");
    // Half the packets arrived after the sink stopped: lost, not delivered.
    assert!(
        counted[1] > 1000 && counted[1] < counted[0] * 6 / 10,
        "{counted:?}"
    );
}
