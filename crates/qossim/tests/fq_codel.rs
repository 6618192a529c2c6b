//! FQ-CoDel from the scenario language: its keys come from its declaration, and at a
//! bottleneck shared by a greedy TCP aggregate and a thin constant-rate flow it keeps
//! the thin flow's packets out of the aggregate's queue, where drop-tail makes them wait
//! behind it.

use qossim::decl::Value;
use qossim::scenario::QueueSpec;
use qossim::time::tx_time;

mod common;
use common::{num, parse, run};

/// Eight TCP Reno connections (1500 B segments, no window limit) and one CBR flow of
/// 200 B every 10 ms (160 kb/s) over a 10 Mb/s, 10 ms bottleneck whose queue is
/// `QUEUE`; 2 ms access links at 100 Mb/s.
const SHARED: &str = r#"
[run]
duration = "20s"
warmup = "5s"
[topology]
kind = "dumbbell"
hosts = 2
access_rate = "100Mbps"
access_delay = "2ms"
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"
[links."r0-r1"]
QUEUE
[[traffic]]
name = "ftp"
from = "s0"
to = "d0"
model = "tcp"
flows = 8
packet_size = "1500B"
start_spread = "1s"
[[traffic]]
name = "cbr"
from = "s1"
to = "d1"
model = "cbr"
size = "200B"
interval = "10ms"
"#;

fn with(queue: &str) -> String {
    SHARED.replace("QUEUE", queue)
}

#[test]
fn keys_are_read_with_the_declared_defaults() {
    let sc = parse(&with(r#"queue = { kind = "fq_codel", quantum = "300B" }"#))
        .unwrap_or_else(|d| panic!("{d:#?}"));
    let l = sc
        .topology
        .links
        .iter()
        .find(|l| l.name == "r0-r1")
        .unwrap();
    let QueueSpec::Declared { kind, values } = &l.queue else {
        panic!("{:?}", l.queue)
    };
    assert_eq!(*kind, "fq_codel");
    assert_eq!(values.get("quantum"), Some(&Value::Size(300)));
    assert_eq!(values.get("flows"), Some(&Value::Integer(1024)));
    assert_eq!(values.get("limit"), Some(&Value::Packets(10240)));
    let d = parse(&with(
        r#"queue = { kind = "fq_codel", target = "100ms", interval = "100ms" }"#,
    ))
    .unwrap_err();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].path, "links.r0-r1.queue.interval");
    assert!(
        d[0].reason.contains("must be longer than target"),
        "{}",
        d[0]
    );
    let d = parse(&with(r#"queue = { kind = "fq_codel", flows = 0 }"#)).unwrap_err();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].path, "links.r0-r1.queue.flows");
}

/// Every CBR packet waits a bounded time behind FQ-CoDel, whatever the aggregate does.
///
/// The CBR flow's sub-queue holds at most its one packet (200 B every 10 ms drains in
/// 0.16 ms): CoDel never judges it standing (at most `mtu` bytes) and the buffer never
/// takes from it (it is never the fattest), so it loses nothing. A packet is sent at
/// the sub-queue's next visit by the scheduler. Before that visit come, at most: the
/// packet in transmission; for each of the eight TCP sub-queues, one visit from the
/// old list and one from the new list (a sub-queue that empties on the old list leaves
/// it and may come back on the new list, ahead; one that empties on the new list goes
/// behind on the old list). A visit sends while the deficit is positive, at most two
/// 1500 B segments with the 1514 B quantum (1514 - 1500 = 14 > 0). So no CBR packet
/// waits longer than 1 + 8 x 2 x 2 = 33 segment times (1.2 ms each: 40 ms), where
/// drop-tail makes it wait behind the aggregate's standing queue (more than 0.3 s on
/// average, as in the CoDel test). At the end of the run at most ceil((14 ms + 40 ms) /
/// 10 ms) = 6 CBR packets can be on their way, so sent and received differ by at most 6.
/// Checked on two seeds (a seed whose salt hashes the CBR flow into a TCP connection's
/// sub-queue would break the premise; 8 of 1024 sub-queues are taken).
#[test]
fn fq_codel_isolates_a_cbr_flow_from_a_greedy_tcp_aggregate() {
    let base = 0.014 + (tx_time(200, 100_000_000) * 2 + tx_time(200, 10_000_000)) as f64 / 1e12;
    let slot = tx_time(1500, 10_000_000) as f64 / 1e12;
    for seed in [1, 2] {
        let fq = run(&with(r#"queue = { kind = "fq_codel" }"#), seed);
        let tail = run(
            &with(r#"queue = { kind = "droptail", limit = "1000p" }"#),
            seed,
        );
        let worst_fq = num(&fq, "group.cbr.delay_max_s") - base;
        let mean_fq = num(&fq, "group.cbr.delay_mean_s") - base;
        let mean_tail = num(&tail, "group.cbr.delay_mean_s") - base;
        eprintln!(
            "seed {seed}: CBR waits {mean_fq} s on average, {worst_fq} s at most behind \
             FQ-CoDel; {mean_tail} s on average behind drop-tail"
        );
        assert!(worst_fq <= 33.0 * slot, "{worst_fq}");
        assert!(mean_tail > 0.3, "{mean_tail}");
        let lost = num(&fq, "group.cbr.sent_pkts") - num(&fq, "group.cbr.rx_pkts");
        assert!((0.0..=6.0).contains(&lost), "{lost}");
        assert!(num(&fq, "link.r0-r1.utilization") > 0.9);
        assert!(num(&fq, "link.r0-r1.fq_codel_early_drops") > 0.0);
    }
}
