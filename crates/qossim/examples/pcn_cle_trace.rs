//! Per-interval trace of a PCN admission run on a single link:
//! `cargo run --release -p qossim --example pcn_cle_trace -- SCENARIO SEED [FROM_S TO_S]`.
//!
//! Builds the scenario (a `pcn_single` admission scenario: one aggregate `A-B`), runs it
//! with SEED and prints, for every 50-ms interval from FROM_S to TO_S (default: the whole
//! run), the egress's CLE of the aggregate at the end of the interval, the calls that
//! arrived, were admitted and were blocked in it, the flows active at its end and the PCN
//! rate sent on `A-B` in it (Mb/s and relative to `Ra` = half the link), one line each.
//! Admission decisions are counted when they are taken (a call's request and answer take
//! the signalling round trip).

use qossim::mechanisms::pcn::PcnEgress;
use qossim::time::{secs, to_secs, PS_PER_MS};
use qossim::traffic::FlowGenerator;
use qossim::World;
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

/// One interval's record.
#[derive(Clone, Copy, Default)]
struct Row {
    t: f64,
    cle: f64,
    offered: u64,
    admitted: u64,
    blocked: u64,
    active: usize,
    tx_bytes: u64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args
        .first()
        .expect("usage: pcn_cle_trace SCENARIO SEED [FROM_S TO_S]");
    let seed: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let sc = qossim::load(Path::new(path), &[]).unwrap_or_else(|d| {
        panic!(
            "{}",
            d.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    let duration = sc.run.duration;
    let from = args.get(2).and_then(|a| a.parse().ok()).map_or(0, secs);
    let to = args
        .get(3)
        .and_then(|a| a.parse().ok())
        .map_or(duration, secs);
    let mut w: World = qossim::scenario::build(&sc, seed).expect("build");
    // The last of each (a pcn_single scenario has one egress and one aggregate).
    let egress = *w.agents.of_type::<PcnEgress>().last().expect("an egress");
    let generator = *w
        .agents
        .of_type::<FlowGenerator>()
        .last()
        .expect("an aggregate");
    let link = w.link("A-B").expect("a pcn_single topology");
    let ingress = w.net.links[link as usize].from;
    let rate = w.net.links[link as usize].rate_bps as f64;
    let rows: Rc<RefCell<Vec<Row>>> = Rc::default();
    let step = 50 * PS_PER_MS;
    let mut t = step;
    while t <= duration {
        let rows = rows.clone();
        w.schedule_action(t, move |w: &mut World| {
            let now = w.sched.now();
            let cle = w
                .agents
                .get_mut::<PcnEgress>(egress)
                .map_or(f64::NAN, |e| e.cle(ingress));
            let g = w.agents.get_mut::<FlowGenerator>(generator).expect("gen");
            let row = Row {
                t: to_secs(now),
                cle,
                offered: g.offered(),
                admitted: g.admitted(),
                blocked: g.blocked(),
                active: g.active_at(now),
                tx_bytes: w.net.links[link as usize].stats.tx_bytes,
            };
            rows.borrow_mut().push(row);
        });
        t += step;
    }
    w.run_until(duration);
    let rows = rows.borrow();
    println!("t_s\tcle\tarrived\tadmitted\tblocked\tactive\tmbps\tover_ra_pct");
    let mut prev = Row::default();
    for r in rows.iter() {
        let mbps = (r.tx_bytes - prev.tx_bytes) as f64 * 8.0 / to_secs(step) / 1e6;
        if secs(r.t) > from && secs(r.t) <= to {
            println!(
                "{:.2}\t{:.4}\t{}\t{}\t{}\t{}\t{:.3}\t{:+.2}",
                r.t,
                r.cle,
                r.offered - prev.offered,
                r.admitted - prev.admitted,
                r.blocked - prev.blocked,
                r.active,
                mbps,
                (mbps * 1e6 / (rate / 2.0) - 1.0) * 100.0
            );
        }
        prev = *r;
    }
}
