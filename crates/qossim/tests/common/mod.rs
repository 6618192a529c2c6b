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
