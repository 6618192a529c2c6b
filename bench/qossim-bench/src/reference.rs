//! The reference benchmark: N CBR voice flows (160 B every 20 ms, random phase) over a
//! 10 Gb/s access link and a 155.52 Mb/s bottleneck (1 ms each) to a sink, FIFO queues;
//! `--hops H` makes the path H links long (the access link, then H - 1 bottlenecks).
//! Prints one line: `flows=N sim=Ts delivered_pkts=D wall=Ws pkts_per_wall_s=R`.

mod args;
use args::arg;

use qossim::queue::{DropTail, Limit};
use qossim::time::{millis, secs};
use qossim::traffic::{PacketTemplate, Sink, Source, SourceModel};
use qossim::World;

fn main() {
    let flows = arg("--flows", 1000.0) as usize;
    let sim = arg("--sim", 20.0);
    let seed = arg("--seed", 1.0) as u64;
    // Drop-tail limit of both queues, packets (the same default as the ns-3 program and
    // the baseline; 10k and 100k flows overload the bottleneck).
    let limit = arg("--queue-pkts", 10_000.0) as usize;
    let t0 = std::time::Instant::now();
    let mut w = World::new(seed);
    let src = w.net.add_node("src");
    // `--hops H` (default 2): the access link, then H - 1 links of 155.52 Mb/s in a chain
    // (with H = 1, the bottleneck alone); 1 ms each.
    let hops = arg("--hops", 2.0).max(1.0) as usize;
    let fifo = || Box::new(DropTail::new(Limit::Packets(limit)));
    let mut at = src;
    for h in 0..hops {
        let next = if h + 1 == hops {
            w.net.add_node("sink")
        } else {
            w.net.add_node(&format!("router{h}"))
        };
        let (name, rate) = if h == 0 && hops > 1 {
            ("access".to_string(), 10_000_000_000)
        } else {
            (format!("bottleneck{h}"), 155_520_000)
        };
        w.net.add_link(&name, at, next, rate, millis(1.0), fifo());
        at = next;
    }
    let dst = at;
    if arg("--transit", 1.0) == 0.0 {
        w.net.disable_fast_paths();
    }
    let sink = w.add_agent("sink", Box::new(Sink)).id();
    let group = w.flows.add_group("voice");
    let model = std::sync::Arc::new(SourceModel::Cbr {
        size: 160,
        interval: 0.020,
    });
    let tmpl = PacketTemplate::new(src, dst, sink);
    let mut phase = w.rng("phases");
    w.reserve_agents(flows);
    for i in 0..flows {
        let flow = w.flows.open_shared(group, 0);
        let offset = secs(phase.uniform() * 0.020);
        let s = Source::with_shared(
            model.clone(),
            tmpl,
            flow,
            offset,
            u64::MAX,
            0.0,
            w.rng(&format!("f{i}")),
        );
        w.add_agent("", Box::new(s));
    }
    w.run_until(secs(sim));
    let wall = t0.elapsed().as_secs_f64();
    let delivered = w.flows.groups[group as usize].rx_pkts;
    println!(
        "flows={flows} sim={sim}s delivered_pkts={delivered} wall={wall:.3}s pkts_per_wall_s={}",
        (delivered as f64 / wall) as u64
    );
    if arg("--summary", 0.0) > 0.0 {
        let g = &w.flows.groups[group as usize];
        eprintln!(
            "rx={} bytes={} mean_delay={:?} events={}",
            g.rx_pkts,
            g.rx_bytes,
            g.delay.mean(),
            w.sched.processed()
        );
        for l in &mut w.net.links {
            l.settle(secs(sim), ((secs(sim) + 1) as u128) << 64);
            eprintln!("{} {:?}", l.name, l.stats);
        }
    }
}
