//! The reference benchmark: N CBR voice flows (160 B every 20 ms, random phase) over a
//! 10 Gb/s access link and a 155.52 Mb/s bottleneck (1 ms each) to a sink, FIFO queues.
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
    let router = w.net.add_node("router");
    let dst = w.net.add_node("sink");
    let fifo = || Box::new(DropTail::new(Limit::Packets(limit)));
    w.net
        .add_link("access", src, router, 10_000_000_000, millis(1.0), fifo());
    w.net
        .add_link("bottleneck", router, dst, 155_520_000, millis(1.0), fifo());
    let sink = w.add_agent("sink", Box::new(Sink));
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
}
