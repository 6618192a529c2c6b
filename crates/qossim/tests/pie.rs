//! PIE from the scenario language: its keys come from its declaration (defaults, bounds,
//! one diagnostic per mistake), and under a TCP overload its controller, running on its
//! own timer, holds the queue delay near its target where drop-tail fills the buffer.

use qossim::decl::Value;
use qossim::scenario::QueueSpec;

mod common;
use common::{num, parse, run};

/// Sixteen TCP Reno connections (1500 B segments, no window limit) over a 10 Mb/s,
/// 10 ms bottleneck whose queue is `queue`.
fn with(queue: &str) -> String {
    common::tcp_bottleneck(queue, 16, "40s", "10s", "")
}

fn bottleneck_queue(text: &str) -> QueueSpec {
    common::link_queue(text, "r0-r1")
}

#[test]
fn keys_are_read_with_the_declared_defaults() {
    let QueueSpec::Declared { kind, values } =
        bottleneck_queue(&with(r#"queue = { kind = "pie" }"#))
    else {
        panic!("PIE is a declared discipline")
    };
    assert_eq!(kind, "pie");
    let ms = qossim::time::PS_PER_MS;
    assert_eq!(values.get("target"), Some(&Value::Time(15 * ms)));
    assert_eq!(values.get("t_update"), Some(&Value::Time(15 * ms)));
    assert_eq!(values.get("max_burst"), Some(&Value::Time(150 * ms)));
    assert_eq!(values.get("alpha"), Some(&Value::Number(0.125)));
    assert_eq!(values.get("beta"), Some(&Value::Number(1.25)));
    assert_eq!(values.get("limit"), Some(&Value::Packets(1000)));
    let QueueSpec::Declared { values, .. } = bottleneck_queue(&with(
        r#"queue = { kind = "pie", target = "5ms", limit = "64KB", alpha = 0.5, max_burst = "0s" }"#,
    )) else {
        panic!()
    };
    assert_eq!(values.get("target"), Some(&Value::Time(5 * ms)));
    assert_eq!(values.get("limit"), Some(&Value::Bytes(64_000)));
    assert_eq!(values.get("alpha"), Some(&Value::Number(0.5)));
    assert_eq!(values.get("max_burst"), Some(&Value::Time(0)));
}

/// `queue` is invalid with exactly one diagnostic, on the queue's line, for `key`, whose
/// reason contains `reason`.
fn bad(queue: &str, key: &str, reason: &str) {
    let text = with(queue);
    let d = parse(&text).expect_err("should be invalid");
    let line = text.lines().position(|l| l.starts_with("queue")).unwrap() + 1;
    assert_eq!(d.len(), 1, "{d:#?}");
    let path = format!("links.r0-r1.queue.{key}");
    assert_eq!(
        (d[0].line, d[0].path.as_str()),
        (line, path.as_str()),
        "{}",
        d[0]
    );
    assert!(d[0].reason.contains(reason), "{}", d[0]);
}

#[test]
fn bad_values_are_reported_at_their_key() {
    bad(
        r#"queue = { kind = "pie", target = "0ms" }"#,
        "target",
        "must be positive",
    );
    bad(
        r#"queue = { kind = "pie", t_update = 15 }"#,
        "t_update",
        "expected a string with a unit",
    );
    bad(
        r#"queue = { kind = "pie", alpha = -0.1 }"#,
        "alpha",
        "must be between 0 and 1000, got -0.1",
    );
    bad(
        r#"queue = { kind = "pie", limit = "0B" }"#,
        "limit",
        "must be positive",
    );
    bad(
        r#"queue = { kind = "pie", trget = "5ms" }"#,
        "trget",
        "did you mean \"target\"",
    );
    bad(
        r#"queue = { kind = "pei" }"#,
        "kind",
        "did you mean \"pie\"",
    );
    let d = parse(&with(
        r#"queue = { kind = "pie", target = "0s", beta = "x" }"#,
    ))
    .unwrap_err();
    assert_eq!(d.len(), 2, "{d:#?}");
}

/// Under overload (sixteen greedy connections, a 1000-packet buffer) PIE holds the delay
/// its controller sees near the target.
///
/// Why near: every update adds `alpha (d - target) + beta (d - d_old)` scaled by the
/// auto-tuning factor `1/s` of the probability's band; while the probability stays in
/// one band and inside (0, 1), the sum of the steps over `n` updates is the change of the
/// probability, so the mean of `d - target` over the updates is
/// `(s Δprob - beta (d_n - d_0)) / (alpha n)`, which goes to zero as the run grows: the
/// integral term leaves no standing error. Each run's mean delay over its updates after
/// the warm-up (2000 updates of 15 ms) is one observation; five seeds give a Student t
/// interval (t = 2.776 at 4 degrees of freedom, 95 %), which must contain the target
/// within what the identity leaves: with Δprob at most the band's width (0.1 in the
/// 1 %–10 % band PIE works in here, s = 2) and `|d_n - d_0|` at most the largest delay
/// the buffer allows (1000 packets at 1.2 ms = 1.2 s), the residual is at most
/// `(2 x 0.1 + 1.25 x 1.2) / (0.125 x 2000) = 6.8 ms`.
///
/// Drop-tail under the same load waits far longer (its buffer stays more than half full:
/// above 0.3 s), and PIE keeps the link busy (above 90 %).
#[test]
fn pie_holds_the_delay_near_its_target_under_overload() {
    let target = 0.015;
    let seeds = [1u64, 2, 3, 4, 5];
    let means: Vec<f64> = seeds
        .iter()
        .map(|&seed| {
            let out = run(&with(r#"queue = { kind = "pie" }"#), seed);
            assert!(num(&out, "link.r0-r1.utilization") > 0.9);
            assert!(num(&out, "link.r0-r1.pie_early_drops") > 0.0);
            // The port's drop counts cover the whole run, PIE's the time after the
            // warm-up: PIE's are a part of the port's.
            assert!(num(&out, "link.r0-r1.pie_early_drops") <= num(&out, "link.r0-r1.drops_early"));
            let updates = num(&out, "link.r0-r1.pie_updates");
            assert!(
                (1999.0..=2001.0).contains(&updates),
                "{updates} updates in 30 s"
            );
            let p = num(&out, "link.r0-r1.pie_drop_prob_mean");
            assert!(
                p > 0.01 && p < 0.1,
                "the probability left the 1%-10% band: {p}"
            );
            let d = num(&out, "link.r0-r1.pie_delay_mean_s");
            eprintln!("seed {seed}: mean delay {d} s, mean probability {p}, {updates} updates");
            d
        })
        .collect();
    let n = means.len() as f64;
    let mean = means.iter().sum::<f64>() / n;
    let sd = (means.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let half = 2.776 * sd / n.sqrt();
    let residual = (2.0 * 0.1 + 1.25 * 1.2) / (0.125 * 2000.0);
    assert!(
        (mean - target).abs() <= half + residual,
        "mean delay {mean} s ± {half} (runs {means:?}) against {target} ± {residual}"
    );
    let tail = run(
        &with(r#"queue = { kind = "droptail", limit = "1000p" }"#),
        1,
    );
    let tx = qossim::time::tx_time(1500, 10_000_000) as f64 / 1e12;
    assert!(num(&tail, "link.r0-r1.queue_mean_pkts") * tx > 0.3);
    // Same scenario and seed, same summary.
    let a = run(&with(r#"queue = { kind = "pie" }"#), 7);
    let b = run(&with(r#"queue = { kind = "pie" }"#), 7);
    assert_eq!(a.summary, b.summary);
}
