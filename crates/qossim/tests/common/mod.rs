//! Helpers shared by the scenario-level integration tests: read a scenario from text,
//! run it, and read a number from its summary.
#![allow(dead_code)] // each test crate uses a subset

use qossim::scenario::{self, Diagnostic, RunOutput, Scenario};
use std::path::Path;

/// Reads `text` as the file `s.toml` of the current directory, with every family.
pub fn parse(text: &str) -> Result<Scenario, Vec<Diagnostic>> {
    qossim::parse(text, "s.toml", Path::new("."), &[])
}

/// Reads and runs `text` with `seed`; panics with the diagnostics if it is invalid.
pub fn run(text: &str, seed: u64) -> RunOutput {
    let sc = parse(text).unwrap_or_else(|d| panic!("{d:#?}"));
    scenario::run(&sc, Some(seed), &mut |_| true).unwrap()
}

/// The numeric summary value `key` of a run; panics if there is none.
pub fn num(out: &RunOutput, key: &str) -> f64 {
    out.summary
        .get(key)
        .and_then(|v| v.as_f64())
        .unwrap_or_else(|| panic!("no numeric summary key {key}"))
}

/// Every shipped scenario file under `scenarios/` and `studies/` (campaign files and the
/// studies' published data under `published/` left out), sorted, with its text.
pub fn shipped_scenarios() -> Vec<(std::path::PathBuf, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    let mut stack = vec![root.join("scenarios"), root.join("studies")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                if p.file_name().is_some_and(|n| n != "published") {
                    stack.push(p);
                }
            } else if p.extension().is_some_and(|e| e == "toml") {
                let text = std::fs::read_to_string(&p).unwrap();
                if !text.lines().any(|l| l.trim() == "[campaign]") {
                    out.push((p, text));
                }
            }
        }
    }
    out.sort();
    out
}

/// A dumbbell of four hosts whose 10 Mb/s, 10-ms bottleneck `r0-r1` has the queue given
/// by `queue` (a TOML line `queue = …`), loaded by `flows` TCP connections from `s0` to
/// `d0` (1500-B segments, starts spread over 1 s, `extra` lines added to the entry), run
/// for `duration` after a `warmup`.
pub fn tcp_bottleneck(
    queue: &str,
    flows: u32,
    duration: &str,
    warmup: &str,
    extra: &str,
) -> String {
    format!(
        r#"
[run]
duration = "{duration}"
warmup = "{warmup}"
[topology]
kind = "dumbbell"
hosts = 4
access_rate = "100Mbps"
access_delay = "2ms"
bottleneck_rate = "10Mbps"
bottleneck_delay = "10ms"
[links."r0-r1"]
{queue}
[[traffic]]
name = "ftp"
from = "s0"
to = "d0"
model = "tcp"
flows = {flows}
packet_size = "1500B"
start_spread = "1s"
{extra}
"#
    )
}

/// The queue configured on link `name` of the scenario `text`.
pub fn link_queue(text: &str, name: &str) -> scenario::QueueSpec {
    let sc = parse(text).unwrap_or_else(|d| panic!("{d:#?}"));
    let l = sc.topology.links.iter().find(|l| l.name == name);
    l.unwrap_or_else(|| panic!("no link {name}")).queue.clone()
}

/// The keys the reader of a table accepts, as its "unknown key" diagnostic for
/// `zz_unknown` at `at` lists them (`text` puts that key in the table).
pub fn accepted_keys(text: &str, at: &str) -> Vec<String> {
    let d = match qossim::parse(text, "s.toml", Path::new("."), &[]) {
        Ok(_) => panic!("an unknown key was accepted"),
        Err(d) => d,
    };
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(d[0].path, format!("{at}.zz_unknown"), "{d:?}");
    let (_, list) = d[0]
        .reason
        .split_once("expected one of: ")
        .expect("the keys");
    let mut keys: Vec<String> = list.split(", ").map(String::from).collect();
    keys.sort();
    keys
}

/// The keys `qossim describe` lists for `family.NAME`.
pub fn described_keys(name: &str) -> Vec<String> {
    let all = qossim::decl::catalogue();
    let kind = all
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == format!("family.{name}"))
        .unwrap_or_else(|| panic!("family.{name} is not described"));
    let mut keys: Vec<String> = kind["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["key"].as_str().unwrap().to_string())
        .collect();
    keys.sort();
    keys
}
