//! ECN end to end (RFC 3168): ECN-capable TCP connections through a RED, CoDel, PIE or
//! FQ-CoDel bottleneck with `ecn = true` are marked where they would have been dropped
//! early, and react to the echoes; without ECN the same decisions are drops.

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

/// The same bottleneck under CoDel, PIE or FQ-CoDel (`queue` without its `ecn` key), with
/// ECN on both sides or on neither; no warm-up, so that the disciplines' counters and the
/// senders' cover the same time.
fn aqm(queue: &str, ecn: bool) -> String {
    common::tcp_bottleneck(
        &format!("queue = {{ {queue}, ecn = {ecn} }}"),
        4,
        "40s",
        "0s",
        &format!("ecn = {ecn}"),
    )
}

/// What a run of [`aqm`] counted: marks (the discipline's `{prefix}ecn_marks`), early
/// drops at the bottleneck, the senders' ECN reductions and retransmits.
struct Counts {
    marks: f64,
    early: f64,
    reductions: f64,
    retransmits: f64,
}

fn counts(out: &qossim::scenario::RunOutput, prefix: &str) -> Counts {
    let key = |k: &str| format!("link.r0-r1.{k}");
    let senders = |k: &str| -> f64 {
        (0..4)
            .map(|i| num(out, &format!("agent.tcp.ftp.{i}.{k}")))
            .sum()
    };
    Counts {
        marks: num(out, &key(&format!("{prefix}ecn_marks"))),
        early: num(out, &key("drops_early")),
        reductions: senders("ecn_reductions"),
        retransmits: senders("retransmits"),
    }
}

/// CoDel, PIE and FQ-CoDel with `ecn = true` mark where their laws would drop: the only
/// early drops left are of packets without ECT, i.e. retransmissions (RFC 3168 forbids
/// ECT on them), so there are at most as many early drops as retransmits; the senders
/// react (at most one reduction per mark). PIE is given `mark_ecnth = 1` so that
/// every early decision on an ECT packet is a mark (its threshold is checked on its own
/// in the next test and in its unit tests). Without ECN the same laws drop.
#[test]
fn codel_pie_and_fq_codel_mark_ecn_capable_tcp_instead_of_dropping_it() {
    for (queue, prefix) in [
        ("kind = \"codel\"", "codel_"),
        ("kind = \"pie\", mark_ecnth = 1.0", "pie_"),
        ("kind = \"fq_codel\"", "fq_codel_"),
    ] {
        let on = counts(&run(&aqm(queue, true), 1), prefix);
        let off_run = run(&aqm(queue, false), 1);
        let off_early = num(&off_run, "link.r0-r1.drops_early");
        eprintln!(
            "{queue}: ECN {} marks, {} early drops, {} reductions, {} retransmits; \
             without: {off_early} early drops",
            on.marks, on.early, on.reductions, on.retransmits
        );
        assert!(on.marks > 0.0 && on.reductions > 0.0, "{queue}");
        assert!(on.reductions <= on.marks, "{queue}");
        assert!(
            on.early <= on.retransmits,
            "{queue}: {} > {}",
            on.early,
            on.retransmits
        );
        assert!(off_early > 0.0, "{queue}");
        let no_key = format!("link.r0-r1.{prefix}ecn_marks");
        assert!(off_run.summary.get(&no_key).is_none(), "{queue}");
    }
}

/// PIE marks only while its drop probability is at most `mark_ecnth`: with the threshold
/// at 0 (marking only at probability 0, where nothing is drawn to drop) no packet is
/// marked and the ECN-capable connections see early drops as without ECN.
#[test]
fn pie_drops_ect_packets_above_its_marking_threshold() {
    let out = run(&aqm("kind = \"pie\", mark_ecnth = 0.0", true), 1);
    let c = counts(&out, "pie_");
    assert_eq!(c.marks, 0.0);
    assert_eq!(c.reductions, 0.0);
    assert!(c.early > 0.0);
}

/// Every discipline's `ecn` key is declared (default false) and read.
#[test]
fn the_ecn_keys_are_read() {
    for kind in ["codel", "pie", "fq_codel"] {
        let text = aqm(&format!("kind = \"{kind}\""), true);
        assert!(common::parse(&text).is_ok(), "{kind}");
        let bad = text.replace("ecn = true }", "ecn = 3 }");
        let d = common::parse(&bad).expect_err(kind);
        assert_eq!(d.len(), 1, "{kind}: {d:?}");
        assert!(
            d[0].to_string().contains("links.r0-r1.queue.ecn"),
            "{kind}: {}",
            d[0]
        );
    }
}
