//! CoDel from the scenario language: the queue table's keys are read and checked (each
//! mistake gets `FILE:LINE: key.path: reason`), and at a TCP bottleneck CoDel keeps the
//! standing queue near its target where drop-tail fills its buffer.

use qossim::queue::{CodelParams, Limit};
use qossim::scenario::QueueSpec;
use qossim::time::{tx_time, PS_PER_MS};
use std::path::Path;

mod common;
use common::{num, parse, run};

/// Four TCP Reno connections (1500 B segments, no window limit) over a 10 Mb/s, 10 ms
/// bottleneck whose queue is `queue`.
fn with(queue: &str) -> String {
    common::tcp_bottleneck(queue, 4, "30s", "5s", "")
}

fn bottleneck_queue(text: &str) -> QueueSpec {
    common::link_queue(text, "r0-r1")
}

#[test]
fn keys_are_read_with_the_rfc_defaults() {
    let ms = PS_PER_MS;
    assert_eq!(
        bottleneck_queue(&with(r#"queue = { kind = "codel" }"#)),
        QueueSpec::Codel(CodelParams {
            target: 5 * ms,
            interval: 100 * ms,
            mtu: 1500,
            limit: Limit::Packets(1000),
            ecn: false,
        })
    );
    assert_eq!(
        bottleneck_queue(&with(
            r#"queue = { kind = "codel", limit = "64KB", target = "2ms", interval = "40ms", mtu = "9000B" }"#
        )),
        QueueSpec::Codel(CodelParams {
            target: 2 * ms,
            interval: 40 * ms,
            mtu: 9000,
            limit: Limit::Bytes(64_000),
            ecn: false,
        })
    );
    // The topology's default queue reaches every link.
    let text = with("").replace(
        "bottleneck_delay = \"10ms\"",
        "bottleneck_delay = \"10ms\"\nqueue = { kind = \"codel\", limit = \"50p\" }",
    );
    let sc = parse(&text).unwrap_or_else(|d| panic!("{d:#?}"));
    assert!(sc
        .topology
        .links
        .iter()
        .all(|l| matches!(l.queue, QueueSpec::Codel(p) if p.limit == Limit::Packets(50))));
}

/// `text` is invalid with exactly one diagnostic, at the `[links."r0-r1"]` queue line,
/// for `path`, whose reason contains `reason`.
fn bad(queue: &str, path: &str, reason: &str) {
    let text = with(queue);
    let d = parse(&text).expect_err("should be invalid");
    let line = text.lines().position(|l| l.starts_with("queue")).unwrap() + 1;
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(
        (d[0].file.as_str(), d[0].line, d[0].path.as_str()),
        ("s.toml", line, path),
        "{}",
        d[0]
    );
    assert!(d[0].reason.contains(reason), "{}", d[0]);
}

#[test]
fn bad_values_are_reported_at_their_key() {
    let p = "links.r0-r1.queue.";
    bad(
        r#"queue = { kind = "codel", target = "0ms" }"#,
        &format!("{p}target"),
        "must be positive",
    );
    bad(
        r#"queue = { kind = "codel", target = 5 }"#,
        &format!("{p}target"),
        "expected a string with a unit",
    );
    bad(
        r#"queue = { kind = "codel", interval = "fast" }"#,
        &format!("{p}interval"),
        "",
    );
    bad(
        r#"queue = { kind = "codel", target = "100ms", interval = "100ms" }"#,
        &format!("{p}interval"),
        "must be longer than target (0.1s <= 0.1s)",
    );
    bad(
        r#"queue = { kind = "codel", interval = "2000s" }"#,
        &format!("{p}interval"),
        "at most 1000s",
    );
    bad(
        r#"queue = { kind = "codel", limit = "0B" }"#,
        &format!("{p}limit"),
        "must be positive",
    );
    bad(
        r#"queue = { kind = "codel", limit = "0p" }"#,
        &format!("{p}limit"),
        "positive whole number",
    );
    bad(
        r#"queue = { kind = "codel", mtu = "0B" }"#,
        &format!("{p}mtu"),
        "must be a positive size",
    );
    bad(
        r#"queue = { kind = "codel", min_th = 5 }"#,
        &format!("{p}min_th"),
        "unknown key",
    );
    // Two mistakes, two diagnostics.
    let d = parse(&with(
        r#"queue = { kind = "codel", target = "0s", mtu = "x" }"#,
    ))
    .unwrap_err();
    assert_eq!(d.len(), 2, "{d:#?}");
}

/// The same four connections behind drop-tail and behind CoDel (1000 packets each).
///
/// Drop-tail: the connections have no window limit, so they grow until the buffer
/// overflows; Reno then halves its window at most once per loss episode, so the queue
/// never drains much below half the buffer minus the pipe (BDP = 10 Mb/s x 28 ms RTT,
/// about 24 packets). The mean queue must be above a quarter of the buffer (250 packets,
/// 300 ms of waiting), a loose form of that bound.
///
/// CoDel: drops start once the sojourn has stayed above 5 ms for 100 ms, and each
/// connection halves its window on a drop, so the standing queue is held near the
/// target; the mean waiting time (Little: mean queue x transmission time of a packet)
/// must be below the interval, 100 ms, i.e. under a third of drop-tail's bound, and
/// the link must stay busy (above 90 % utilisation: the pipe holds 24 packets, four
/// halved windows still cover it most of the time). Every run is deterministic, so both
/// bounds are checked on one seed and then on a second.
#[test]
fn codel_keeps_the_queue_near_target_where_droptail_fills_the_buffer() {
    let tx = tx_time(1500, 10_000_000) as f64 / 1e12;
    for seed in [1, 2] {
        let tail = run(
            &with(r#"queue = { kind = "droptail", limit = "1000p" }"#),
            seed,
        );
        let codel = run(
            &with(r#"queue = { kind = "codel", limit = "1000p" }"#),
            seed,
        );
        let wait_tail = num(&tail, "link.r0-r1.queue_mean_pkts") * tx;
        let wait_codel = num(&codel, "link.r0-r1.queue_mean_pkts") * tx;
        assert!(wait_tail > 0.3, "drop-tail waits {wait_tail} s");
        assert!(wait_codel < 0.1, "CoDel waits {wait_codel} s");
        assert!(num(&codel, "link.r0-r1.utilization") > 0.9);
        assert!(num(&codel, "link.r0-r1.codel_early_drops") > 0.0);
        assert_eq!(
            num(&codel, "link.r0-r1.drops_early"),
            num(&codel, "link.r0-r1.codel_early_drops")
        );
        assert_eq!(num(&codel, "link.r0-r1.drops_overflow"), 0.0);
        // The discipline's own sojourn mean agrees with the port's queue mean: both
        // are near the target rather than near the buffer.
        let sojourn = num(&codel, "link.r0-r1.codel_sojourn_mean_s");
        assert!(sojourn < 0.1, "{sojourn}");
    }
    // Same scenario and seed, same summary.
    let a = run(&with(r#"queue = { kind = "codel" }"#), 7);
    let b = run(&with(r#"queue = { kind = "codel" }"#), 7);
    assert_eq!(a.summary, b.summary);
}

#[test]
fn the_example_scenario_parses() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/codel.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    let sc = qossim::parse(&text, "codel.toml", path.parent().unwrap(), &[])
        .unwrap_or_else(|d| panic!("{d:#?}"));
    assert!(sc
        .topology
        .links
        .iter()
        .any(|l| l.name == "r0-r1" && l.queue.kind() == "codel"));
}
