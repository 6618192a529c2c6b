//! Runs one scenario file through the engine alone (no Python): for profiling a study's
//! run under `perf` or `valgrind --tool=callgrind`, and for checking that a change to
//! the engine leaves its results exactly as they were.
//!
//! Usage: `scenario FILE [--seed S] [--set KEY=VALUE ...] [--trace-hash] [--summary]`
//!
//! Prints one line: the events executed, the simulated and wall seconds, a hash of the
//! whole summary and of every sampled series (their `Debug` text, so every bit of every
//! number counts), and with `--trace-hash` the event-trace hash of fingerprint mode
//! (time, target and kind of every event, in order); with `--summary` the summary itself,
//! one `key = value` line each, on standard error.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::Path;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut file = None;
    let mut seed = None;
    let mut sets = Vec::new();
    let mut trace_hash = false;
    let mut summary_out = false;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--seed" => {
                i += 1;
                seed = Some(args[i].parse::<u64>().expect("--seed: a whole number"));
            }
            "--set" => {
                i += 1;
                let (k, v) = args[i].split_once('=').expect("--set KEY=VALUE");
                sets.push((k.to_string(), v.to_string()));
            }
            "--trace-hash" => trace_hash = true,
            "--summary" => summary_out = true,
            f => file = Some(f.to_string()),
        }
        i += 1;
    }
    let file = file.expect("usage: scenario FILE [--seed S] [--set KEY=VALUE ...]");
    let sc = qossim::api::load(Path::new(&file), &sets).unwrap_or_else(|d| {
        for d in d {
            eprintln!("{d}");
        }
        std::process::exit(2)
    });
    let options = qossim::scenario::RunOptions {
        fingerprint_events: trace_hash.then_some(u64::MAX),
        ..Default::default()
    };
    let out = qossim::scenario::run_with(&sc, seed, &mut |_| true, &options)
        .unwrap_or_else(|e| panic!("{e}"));
    if summary_out {
        for (k, v) in &out.summary {
            eprintln!("{k} = {v:?}");
        }
    }
    let mut h = DefaultHasher::new();
    format!("{:?}", out.summary).hash(&mut h);
    let summary = h.finish();
    let mut h = DefaultHasher::new();
    for s in &out.series {
        format!("{} {:?} {:?}", s.name, s.t, s.v).hash(&mut h);
    }
    let series = h.finish();
    let trace = out
        .trace_hash
        .map(|t| format!(" trace_hash={t:016x}"))
        .unwrap_or_default();
    println!(
        "events={} sim={}s wall={:.3}s summary_hash={summary:016x} series_hash={series:016x}{trace}",
        out.events, out.sim_time_s, out.wall_s
    );
}
