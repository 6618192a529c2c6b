//! One mistake, one diagnostic: every shipped scenario, with one value at a time
//! replaced by a value of the wrong type, is either still valid or reported with exactly
//! one error on the line of the mistake.

mod common;

use qossim::scenario::Diagnostic;
use std::path::Path;

/// A value of another type than `value`'s, or None when the line is not `key = scalar`.
fn wrong(value: &str) -> Option<&'static str> {
    let v = value.split('#').next().unwrap().trim();
    if v.starts_with('"') {
        Some("[1, 2]")
    } else if v == "true" || v == "false" || v.parse::<f64>().is_ok() {
        Some("\"not-this\"")
    } else {
        None
    }
}

fn check(path: &Path, text: &str, line: usize, diags: &[Diagnostic]) -> Result<(), String> {
    if diags.is_empty() {
        return Ok(());
    }
    if diags.len() != 1 || diags[0].line != line {
        return Err(format!(
            "{}:{line}: {:?}\n  -> {}",
            path.display(),
            text.lines().nth(line - 1).unwrap(),
            diags
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n  -> ")
        ));
    }
    Ok(())
}

#[test]
fn each_wrong_value_is_one_diagnostic_on_its_line() {
    let mut cases = 0;
    let mut failures = Vec::new();
    for (path, text) in common::shipped_scenarios() {
        let base = path.parent().unwrap();
        assert!(
            qossim::parse(&text, "s.toml", base, &[]).is_ok(),
            "{} must be valid",
            path.display()
        );
        for (i, l) in text.lines().enumerate() {
            let Some((key, value)) = l.split_once('=') else {
                continue;
            };
            if key.trim().starts_with('#') || key.contains('{') || key.contains('[') {
                continue;
            }
            let Some(bad) = wrong(value) else { continue };
            let mut lines: Vec<String> = text.lines().map(String::from).collect();
            lines[i] = format!("{} = {bad}", key.trim_end());
            let mutated = lines.join("\n");
            cases += 1;
            let diags = match qossim::parse(&mutated, "s.toml", base, &[]) {
                Ok(_) => Vec::new(),
                Err(d) => d,
            };
            if let Err(e) = check(&path, &mutated, i + 1, &diags) {
                failures.push(e);
            }
        }
    }
    assert!(cases > 100, "only {cases} cases");
    assert!(
        failures.is_empty(),
        "{} of {cases} single mistakes gave other than one diagnostic on their line:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn an_unknown_queue_kind_is_one_diagnostic() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../studies/assured-service/scenarios/s3.toml"),
    )
    .unwrap()
    .replacen("kind = \"rio\"", "kind = \"rioo\"", 1);
    let d = qossim::parse(&text, "s.toml", Path::new("."), &[]).unwrap_err();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(
        d[0].reason.contains("unknown queue kind"),
        "{}",
        d[0].reason
    );
}

#[test]
fn a_negative_topology_delay_is_one_diagnostic() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/reference.toml"),
    )
    .unwrap()
    .replace("delay = \"1ms\"", "delay = \"-1ms\"");
    let d = qossim::parse(&text, "s.toml", Path::new("."), &[]).unwrap_err();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].path, "topology.delay");
}

#[test]
fn too_many_flows_in_one_entry_is_refused_before_building() {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/codel.toml"),
    )
    .unwrap()
    .replace("flows = 4", "flows = 9223372036854775807");
    let d = qossim::parse(&text, "s.toml", Path::new("."), &[]).unwrap_err();
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!(d[0].path, "traffic.0.flows");
    assert!(
        d[0].reason == "must be between 0 and 10000000, got 9223372036854775807",
        "{}",
        d[0].reason
    );
}

#[test]
fn a_class_beyond_255_is_one_diagnostic_wherever_it_is_given() {
    // A service class is one byte: 300 is refused, not wrapped to 44, in a traffic entry
    // and in a per-class throughput metric alike.
    let base = r#"
[run]
duration = "1s"
[topology]
kind = "single_link"
rate = "10Mbps"
delay = "1ms"
[[traffic]]
name = "v"
from = "a"
to = "b"
model = "CBR"
class = TRAFFIC
[[metric]]
kind = "link_throughput"
link = "a-b"
class = METRIC
"#;
    for (traffic, metric, path) in [
        ("300", "1", "traffic.0.class"),
        ("1", "300", "metric.0.class"),
    ] {
        let text = base.replace("TRAFFIC", traffic).replace("METRIC", metric);
        let d = qossim::parse(&text, "s.toml", Path::new("."), &[]).unwrap_err();
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(d[0].path, path);
        assert!(d[0].reason.contains("between 0 and 255"), "{}", d[0].reason);
    }
    let ok = base.replace("TRAFFIC", "255").replace("METRIC", "255");
    assert!(qossim::parse(&ok, "s.toml", Path::new("."), &[]).is_ok());
}
