//! A per-packet account of a RIO port:
//! `cargo run --release -p qossim --example rio_trace -- SCENARIO LINK SEED [UNTIL_S]`.
//!
//! Runs the scenario event by event and prints, for every packet offered to the RIO
//! queue of LINK, one tab-separated line: time (s), flow, sequence number, class as it
//! arrives (`IN`, `OUT`, or `DEM` for an IN packet a policer demoted), the verdict
//! (`ok`, `early`, `overflow`), the IN average and the OUT-side average right after
//! the arrival's update (the values the decision used), and the IN and total packets
//! queued before it. Packets are matched to their verdict through the drop log; an event
//! that offers several packets at once is split in the order they were queued.

use qossim::packet::{marks, Packet};
use qossim::queue::{DropCause, DropObserver, Rio};
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

type Dropped = Rc<RefCell<Vec<(u32, u64, u16, DropCause)>>>;

struct Log(Dropped);

impl DropObserver for Log {
    fn on_drop(&mut self, pkt: &Packet, cause: DropCause) {
        self.0
            .borrow_mut()
            .push((pkt.flow, pkt.seq, pkt.marks, cause));
    }
}

fn class(m: u16) -> &'static str {
    if m & marks::IN_PROFILE != 0 {
        "IN"
    } else if m & marks::DEMOTED != 0 {
        "DEM"
    } else {
        "OUT"
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 3 {
        eprintln!("usage: rio_trace SCENARIO LINK SEED [UNTIL_S]");
        std::process::exit(2);
    }
    let sc = qossim::api::load(Path::new(&args[0]), &[]).unwrap_or_else(|d| {
        for x in d {
            eprintln!("{x}");
        }
        std::process::exit(1)
    });
    let seed: u64 = args[2].parse().expect("seed");
    let mut w = qossim::api::build(&sc, seed).expect("build");
    let until = args
        .get(3)
        .map(|s| qossim::time::secs(s.parse().expect("seconds")))
        .unwrap_or(sc.run.duration);
    let link = w.link(&args[1]).expect("no such link") as usize;
    let dropped: Dropped = Rc::default();
    w.net.links[link]
        .stats
        .drops
        .observe(Box::new(Log(dropped.clone())));
    let rio = |w: &mut qossim::World| -> (u64, u64, f64, f64, usize, usize) {
        let q: &mut dyn std::any::Any = w.net.links[link].qdisc.as_mut();
        let q = q.downcast_mut::<Rio>().expect("not a RIO queue");
        let (ci, co) = (q.counters(true), q.counters(false));
        (
            ci.arrivals,
            co.arrivals,
            q.avg_in(),
            q.avg_out(),
            q.len_in(),
            q.len_in() + q.len_out(),
        )
    };
    let mut last = rio(&mut w);
    println!("t_s\tflow\tseq\tclass\tverdict\tavg_in\tavg_out\tq_in\tq");
    while w.sched.now() < until && w.step() {
        let now = rio(&mut w);
        let offered = (now.0 - last.0) + (now.1 - last.1);
        if offered > 0 {
            let t = w.sched.now() as f64 / 1e12;
            let drops: Vec<_> = dropped.borrow_mut().drain(..).collect();
            let accepted = offered as usize - drops.len();
            let mut rows: Vec<(u32, u64, u16, &str)> = drops
                .iter()
                .map(|&(f, s, m, c)| {
                    let v = if c == DropCause::Overflow {
                        "overflow"
                    } else {
                        "early"
                    };
                    (f, s, m, v)
                })
                .collect();
            if accepted > 0 {
                let mut queued = Vec::new();
                w.net.links[link]
                    .qdisc
                    .for_each_queued(&mut |p| queued.push((p.flow, p.seq, p.marks)));
                // The accepted packets are the last ones queued (a transmission may
                // have taken the head in the same event, not the tail).
                for &(f, s, m) in queued.iter().rev().take(accepted).rev() {
                    rows.push((f, s, m, "ok"));
                }
            }
            let tag = if offered > 1 { "*" } else { "" };
            for (f, s, m, v) in rows {
                println!(
                    "{t:.6}{tag}\t{f}\t{s}\t{}\t{v}\t{:.4}\t{:.4}\t{}\t{}",
                    class(m),
                    now.2,
                    now.3,
                    last.4,
                    last.5
                );
            }
        }
        last = now;
    }
}
