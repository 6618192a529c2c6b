//! What a scenario costs is checked at validation: scenarios whose memory or work cannot
//! fit are refused with one diagnostic on the line that causes it, naming the estimate,
//! and shipped scenarios are all accepted.

use qossim::scenario::{budget, Diagnostic};
use std::path::Path;

/// The budget every test uses (the tests must not depend on the machine).
fn set_budget() {
    std::env::set_var(budget::BUDGET_ENV, "8GiB");
}

const BASE: &str = r#"
[run]
duration = "20s"

[topology]
kind = "chain"
length = 2
rate = "10Gbps"
delay = "1ms"
queue = { kind = "droptail", limit = "10000p" }

[[traffic]]
name = "voice"
from = "n0"
to = "n2"
model = "CBR"
flows = 1000
"#;

fn diags(text: &str, set: &[(&str, &str)]) -> Vec<Diagnostic> {
    set_budget();
    let set: Vec<(String, String)> = set
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    match qossim::parse(text, "s.toml", Path::new("."), &set) {
        Ok(_) => Vec::new(),
        Err(d) => d,
    }
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines()
        .position(|l| l.contains(needle))
        .expect("needle")
        + 1
}

/// Exactly one diagnostic, at `line` of `file`, for `path`, whose reason holds `words`.
fn one(d: &[Diagnostic], file: &str, line: usize, path: &str, words: &[&str]) {
    assert_eq!(d.len(), 1, "{d:#?}");
    let d = &d[0];
    assert_eq!(
        (d.file.as_str(), d.line, d.path.as_str()),
        (file, line, path),
        "{d}"
    );
    for w in words {
        assert!(d.reason.contains(w), "{w:?} not in {d}");
    }
}

#[test]
fn base_is_accepted() {
    assert!(diags(BASE, &[]).is_empty());
}

#[test]
fn a_picosecond_metric_interval_is_refused_on_its_line() {
    let text = format!(
        "{BASE}\n[[metric]]\nkind = \"queue_length\"\nlink = \"n1-n2\"\ninterval = \"1ps\"\n"
    );
    let d = diags(&text, &[]);
    one(
        &d,
        "s.toml",
        line_of(&text, "interval = \"1ps\""),
        "metric.0.interval",
        &["2.000e13 samples", "GiB", "more than the 8.00 GiB"],
    );
}

#[test]
fn an_override_is_blamed_on_the_override() {
    let text = format!("{BASE}\n[[metric]]\nkind = \"queue_length\"\nlink = \"n1-n2\"\n");
    assert!(diags(&text, &[]).is_empty());
    let d = diags(&text, &[("metric.0.interval", "1ps")]);
    one(&d, "--set", 1, "metric.0.interval", &["samples"]);
}

#[test]
fn twenty_thousand_metrics_at_a_microsecond_are_refused() {
    let mut text = BASE.to_string();
    for i in 0..20_000 {
        text.push_str(&format!(
            "[[metric]]\nname = \"q{i}\"\nkind = \"queue_length\"\nlink = \"n1-n2\"\ninterval = \"1us\"\n"
        ));
    }
    let d = diags(&text, &[]);
    // One series alone (2e7 samples, 2.1 GiB) fits; the sum does not.
    one(
        &d,
        "s.toml",
        line_of(&text, "interval = \"1us\""),
        "metric.0.interval",
        &["the scenario needs about", "the largest part"],
    );
}

#[test]
fn a_billion_packet_queue_is_refused_when_the_sources_can_fill_it() {
    // 2 000 flows of 10 Mb/s into a 10 Mb/s bottleneck over 100 s: 1.7e9 packets sent.
    let text = r#"
[run]
duration = "100s"

[topology]
kind = "chain"
length = 2
rate = "100Gbps"
delay = "1ms"
queue = { kind = "droptail", limit = "1000000000p" }

[links."n1-n2"]
rate = "10Mbps"

[[traffic]]
name = "flood"
from = "n0"
to = "n2"
model = "cbr"
size = "64B"
interval = "50us"
flows = 200
"#;
    let d = diags(text, &[]);
    one(
        &d,
        "s.toml",
        line_of(text, "queue = {"),
        "topology.queue",
        &["queued packets", "1.000e9", "more than the 8.00 GiB"],
    );
    // The same limit with sources that cannot fill it is fine.
    let calm = text
        .replace("flows = 200", "flows = 1")
        .replace("50us", "20ms");
    assert!(diags(&calm, &[]).is_empty());
}

#[test]
fn calls_at_a_trillion_per_second_are_refused() {
    let text = format!(
        "{BASE}\n[[traffic]]\nname = \"calls\"\nfrom = \"n0\"\nto = \"n2\"\nmodel = \"CBR\"\n\
         [traffic.calls]\nrate = \"1000000000000/s\"\nholding = \"exp:60s\"\n"
    );
    let d = diags(&text, &[]);
    one(
        &d,
        "s.toml",
        line_of(&text, "rate = \"1000000000000/s\""),
        "traffic.1.calls.rate",
        &["2.000e13 calls", "6.000e13 at once", "of memory"],
    );
}

#[test]
fn two_hundred_thousand_entries_are_refused_at_the_entry_that_crosses_the_budget() {
    let mut text = BASE.to_string();
    for i in 0..200_000 {
        text.push_str(&format!(
            "[[traffic]]\nname = \"t{i}\"\nfrom = \"n0\"\nto = \"n2\"\nmodel = \"CBR\"\nflows = 1\n"
        ));
    }
    let d = diags(&text, &[]);
    // 8 GiB / 64 KiB = 131 072 entries fit.
    let line = line_of(&text, "name = \"t131071\"");
    one(
        &d,
        "s.toml",
        line,
        "traffic.131072.name",
        &["200001 traffic entries", "64 KiB"],
    );
}

#[test]
fn a_degenerate_on_period_is_refused() {
    let text = BASE.replace(
        "model = \"CBR\"\nflows = 1000",
        "model = \"onoff\"\nsize = \"200B\"\ninterval = \"20ms\"\non = \"exp:1ps\"\noff = \"exp:1s\"\nflows = 1",
    );
    let d = diags(&text, &[]);
    one(
        &d,
        "s.toml",
        line_of(&text, "on = \"exp:1ps\""),
        "traffic.0.on",
        &["on period", "for each packet it sends"],
    );
    // An on period of a tenth of the spacing is allowed.
    assert!(diags(&text.replace("exp:1ps", "exp:2ms"), &[]).is_empty());
}

#[test]
fn a_picosecond_cbr_is_refused_as_too_much_work() {
    let text = BASE.replace(
        "model = \"CBR\"\nflows = 1000",
        "model = \"cbr\"\nsize = \"100B\"\ninterval = \"1ps\"\nflows = 1",
    );
    let d = diags(&text, &[]);
    one(
        &d,
        "s.toml",
        line_of(&text, "flows = 1"),
        "traffic.0.flows",
        &["events", "a run may take"],
    );
}

#[test]
fn every_shipped_scenario_fits() {
    set_budget();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut seen = 0;
    for dir in ["scenarios", "studies"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                    continue;
                }
                if p.extension().is_none_or(|x| x != "toml") {
                    continue;
                }
                let text = std::fs::read_to_string(&p).unwrap();
                if text.contains("[campaign]") {
                    continue;
                }
                if let Err(d) = qossim::load(&p, &[]) {
                    let budget: Vec<_> = d
                        .iter()
                        .filter(|d| d.reason.contains("memory") || d.reason.contains("events"))
                        .collect();
                    assert!(budget.is_empty(), "{}: {budget:#?}", p.display());
                }
                seen += 1;
            }
        }
    }
    assert!(seen > 20, "only {seen} scenarios found");
}

/// A quoted key in an override names the key with its dots and dashes, and a mistake in
/// the value is blamed on the override, never on the file.
#[test]
fn quoted_override_keys_reach_their_link() {
    let text = format!("{BASE}\n[links.\"n1-n2\"]\nrate = \"OC3\"\n");
    assert!(diags(&text, &[("links.\"n1-n2\".rate", "T1")]).is_empty());
    let d = diags(
        &text,
        &[("traffic.0.flows", "-1"), ("links.\"n1-n2\".rate", "fast")],
    );
    let at: Vec<(&str, usize)> = d.iter().map(|d| (d.file.as_str(), d.line)).collect();
    assert_eq!(at, [("--set", 1), ("--set", 2)], "{d:#?}");
    let d = diags(&text, &[("links.\"n1-n2\".rate", "fast")]);
    one(&d, "--set", 1, "links.n1-n2.rate", &["\"fast\""]);
    let d = diags(
        &text,
        &[("traffic.0.flows", "2"), ("links.\"n1-n2.rate", "T1")],
    );
    one(&d, "--set", 2, "links.\"n1-n2.rate", &["unclosed quote"]);
}

/// Whatever a diagnostic echoes from the input is printable and short.
#[test]
fn echoed_names_are_cut_and_escaped() {
    let long = "x".repeat(5000);
    let text = BASE.replace("to = \"n2\"", &format!("to = \"{long}\\u001b[31m\""));
    let d = diags(&text, &[]);
    assert_eq!(d.len(), 1, "{d:#?}");
    let shown = d[0].to_string();
    assert!(shown.len() < 700, "{} chars", shown.len());
    assert!(shown.contains('…'), "{shown}");
    assert!(!shown.chars().any(|c| c.is_control()), "{shown:?}");
    let text = BASE.replace("to = \"n2\"", "to = \"n\\u001b[31mred\"");
    let d = diags(&text, &[]);
    assert!(
        !d[0].to_string().chars().any(|c| c.is_control()),
        "{}",
        d[0]
    );
}
