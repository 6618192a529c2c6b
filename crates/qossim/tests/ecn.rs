//! ECN end to end (RFC 3168): ECN-capable TCP connections through a RED bottleneck with
//! `ecn = true` are marked where they would have been dropped early, and react to the
//! echoes; without ECN the same decisions are drops.

mod common;

use common::{num, run};

fn scenario(ecn: bool) -> String {
    common::tcp_bottleneck(
        &format!(
            "queue = {{ kind = \"red\", min_th = 5, max_th = 15, max_p = 0.1, limit = \"200p\", ecn = {ecn} }}"
        ),
        4,
        "40s",
        "5s",
        &format!("ecn = {ecn}"),
    )
}

/// With ECN on both sides every random early decision on ECT data becomes a mark (only
/// retransmissions, which carry no ECT, can still be dropped at random), and the senders reduce on the
/// echoes. What is still dropped (forced early drops above max_th, overflows) bounds what
/// is retransmitted, since a segment is only resent after a loss. Without ECN the random
/// early decisions are drops. The first run's own counts are the reference: same
/// scenario, same seed, only the ECN keys differ.
#[test]
fn red_marks_ecn_capable_tcp_instead_of_dropping_it() {
    let on = run(&scenario(true), 1);
    let off = run(&scenario(false), 1);
    let key = |k: &str| format!("link.r0-r1.{k}");
    let random_on = num(&on, &key("red_early_drops_out")) - num(&on, &key("red_forced_drops_out"));
    let marks = num(&on, &key("red_ecn_marks"));
    let reductions: f64 = (0..4)
        .map(|k| num(&on, &format!("agent.tcp.ftp.{k}.ecn_reductions")))
        .sum();
    let retransmits: f64 = (0..4)
        .map(|k| num(&on, &format!("agent.tcp.ftp.{k}.retransmits")))
        .sum();
    let dropped = num(&on, &key("red_early_drops_out")) + num(&on, &key("red_overflow_drops_out"));
    let random_off =
        num(&off, &key("red_early_drops_out")) - num(&off, &key("red_forced_drops_out"));
    eprintln!(
        "ECN: {marks} marks, {random_on} random drops, {dropped} drops, {reductions} \
         reductions, {retransmits} retransmits; without: {random_off} random drops"
    );
    // Only retransmissions lack ECT (RFC 3168 forbids it on them), so only they can be
    // dropped at random.
    assert!(random_on <= retransmits, "{random_on} > {retransmits}");
    assert!(marks > 0.0 && reductions > 0.0);
    // Once per window: never more reductions than marks.
    assert!(reductions <= marks);
    assert!(retransmits <= dropped, "{retransmits} > {dropped}");
    assert!(random_off > 0.0);
    assert!(off.summary.get(&key("red_ecn_marks")).is_none());
}
