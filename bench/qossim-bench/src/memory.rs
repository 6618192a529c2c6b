//! Peak memory of one run: `memory SCENARIO.toml DURATION_S [KEY=VALUE ...]`.
//!
//! Reads the scenario with the overrides, sets `run.duration`, runs it and prints one
//! line: `duration=Ds events=E peak_rss_kb=K`, the peak resident set size read from the
//! kernel (`VmHWM`) after the run.

use std::path::Path;

fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1).map(str::to_string))
        })
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: memory SCENARIO.toml DURATION_S [KEY=VALUE ...]");
        std::process::exit(2);
    }
    let path = Path::new(&args[0]);
    let mut overrides: Vec<(String, String)> = args[2..]
        .iter()
        .filter_map(|a| {
            a.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect();
    overrides.push(("run.duration".into(), format!("\"{}s\"", args[1])));
    let sc = match qossim::load(path, &overrides) {
        Ok(sc) => sc,
        Err(d) => {
            for x in d {
                eprintln!("{x}");
            }
            std::process::exit(2);
        }
    };
    let out = qossim::scenario::run(&sc, None, &mut |_| true).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    println!(
        "duration={}s events={} peak_rss_kb={}",
        args[1],
        out.events,
        peak_rss_kb()
    );
}
