//! The run's bookkeeping checks: they hold on every shipped scenario and name what
//! breaks when they do not.

mod common;

use qossim::scenario::{self, RunOptions};

#[test]
fn every_shipped_scenario_keeps_its_books() {
    let files = common::shipped_scenarios();
    assert!(files.len() >= 20);
    for (path, text) in files {
        let sc = qossim::parse(
            &text,
            &path.display().to_string(),
            path.parent().unwrap(),
            &[],
        )
        .unwrap();
        let opts = RunOptions {
            fingerprint_events: Some(1 << 15),
            check_invariants: true,
            ..Default::default()
        };
        if let Err(e) = scenario::run_with(&sc, None, &mut |_| true, &opts) {
            panic!("{e}");
        }
    }
}

const SCENARIO: &str = r#"
[run]
duration = "3s"

[topology]
kind = "chain"
length = 2
rate = "10Mbps"
delay = "1ms"
queue = { kind = "droptail", limit = "5p" }

[links."n1-n2"]
rate = "1Mbps"

[[traffic]]
name = "voice"
from = "n0"
to = "n2"
model = "CBR"
flows = 20
"#;

#[test]
fn a_broken_count_is_named() {
    let sc = common::parse(SCENARIO).unwrap();
    let mut w = scenario::build(&sc, 1).unwrap();
    w.run_until(sc.run.duration);
    assert!(w.check_invariants().is_empty());
    let l = w.net.link_id("n1-n2").unwrap() as usize;
    assert!(
        w.net.links[l].stats.drops.pkts > 0,
        "the bottleneck must overflow"
    );
    w.net.links[l].stats.arrivals += 1;
    w.flows.recs[3].rx_pkts = w.flows.recs[3].sent_pkts + 1;
    w.net.links[0].stats.tx_bytes += 10_000_000;
    let broken = w.check_invariants();
    assert_eq!(broken.len(), 4, "{broken:#?}");
    assert!(broken[0].starts_with("link n0-n1: ") && broken[0].contains("bytes offered"));
    assert!(broken[1].starts_with("link n0-n1: ") && broken[1].contains("more than its rate"));
    assert!(broken[2].starts_with("link n1-n2: ") && broken[2].contains("packets offered"));
    assert!(broken[3].starts_with("flow 3: "));
}

#[test]
fn a_packet_missing_from_a_flow_is_named() {
    // The flows of the chain lose packets at the 1 Mb/s bottleneck and have some still
    // queued or on a wire at 3 s: the per-flow books balance only if each is counted.
    let sc = common::parse(SCENARIO).unwrap();
    let mut w = scenario::build(&sc, 1).unwrap();
    w.enable_flow_conservation();
    w.run_until(sc.run.duration);
    let f = (0..w.flows.recs.len())
        .max_by_key(|&f| w.flows.recs[f].sent_pkts - w.flows.recs[f].rx_pkts)
        .unwrap();
    let r = &w.flows.recs[f];
    assert!(
        r.sent_pkts > r.rx_pkts + 1,
        "some flow must lose or hold packets"
    );
    assert!(w.check_invariants().is_empty());
    w.flows.recs[f].sent_pkts += 1;
    let broken = w.check_invariants();
    assert_eq!(broken.len(), 1, "{broken:#?}");
    assert!(
        broken[0].starts_with(&format!("flow {f}: ")) && broken[0].contains("lost"),
        "{}",
        broken[0]
    );
}
