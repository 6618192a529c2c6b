//! A seeded, property-based fuzzer of the scenario reader, builder and engine.
//!
//! Inputs are the shipped scenario files mutated a few times each (lines dropped,
//! duplicated or swapped, keys misspelt, values replaced by values of every shape,
//! tables emptied, `--set` overrides added). Each input is read; a valid one is built
//! and run for at most [`EVENTS`] events with the bookkeeping checks on. The properties:
//! nothing panics; every rejection is a list of diagnostics with a line (>= 1, or the
//! `--set` index), a key path and a reason; a run ends and keeps its books.

#![allow(dead_code)] // the CI test and the long-run example use different parts

use qossim::scenario::{self, RunOptions};
use std::panic::AssertUnwindSafe;
use std::path::Path;

/// Events a valid input may run.
pub const EVENTS: u64 = 20_000;

/// A small deterministic generator (splitmix64).
pub struct Gen(u64);

impl Gen {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Gen(seed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "2",
    "7",
    "1e9",
    "1e300",
    "-1e300",
    "0.5",
    "1.0",
    "nan",
    "inf",
    "-inf",
    "18446744073709551615",
    "9223372036854775807",
    "-9223372036854775808",
    "true",
    "false",
    "\"\"",
    "\"0\"",
    "\"-1ms\"",
    "\"0s\"",
    "\"1s\"",
    "\"1e400s\"",
    "\"10Gbps\"",
    "\"0bps\"",
    "\"1Pbps\"",
    "\"999999999999Tbps\"",
    "\"OC3\"",
    "\"100p\"",
    "\"0p\"",
    "\"1B\"",
    "\"0B\"",
    "\"n0\"",
    "\"n1-n2\"",
    "\"r0-r1\"",
    "\"voice\"",
    "\"tcp\"",
    "\"CBR\"",
    "\"VBR\"",
    "\"poisson\"",
    "\"chain\"",
    "\"ring\"",
    "\"dumbbell\"",
    "\"x\"",
    "[]",
    "[1, 2]",
    "[\"a\", \"b\"]",
    "[[1]]",
    "{}",
    "\"\\u0000\"",
    "\"ünïcödé\"",
    // Degenerate values (tiny intervals, huge limits, extreme rates): where a run of them
    // would exhaust memory or never end, they must be refused with a diagnostic.
    "\"1ps\"",
    "\"1us\"",
    "\"exp:1ps\"",
    "\"fixed:1ps\"",
    "\"pareto:1.01:1ps\"",
    "\"1000000000p\"",
    "\"1e16p\"",
    "\"1e30B\"",
    "\"1e400bps\"",
    "\"1e12/s\"",
    "\"1e400/s\"",
    "10000000",
];

const KEYS: &[&str] = &[
    "kind",
    "rate",
    "delay",
    "flows",
    "model",
    "from",
    "to",
    "name",
    "length",
    "duration",
    "warmup",
    "seed",
    "queue",
    "interval",
    "size",
    "on",
    "off",
    "hosts",
    "stations",
    "nodes",
    "link",
    "traffic",
    "holding",
    "max_active",
];

/// Table headers the mutations insert besides those of the families' declared sections.
const HEADERS: &[&str] = &[
    "[run]",
    "[topology]",
    "[[traffic]]",
    "[[metric]]",
    "[[trace]]",
    "[links.\"n1-n2\"]",
    "[pcn]",
    "[x]",
];

/// The values, keys and table headers the mutations use: [`VALUES`], [`KEYS`] and
/// [`HEADERS`] plus, from the registries of queue disciplines, meters and traffic models,
/// the call arrivals' declaration, the core sections' (`[run]`, `[[traffic]]`, ...), the
/// topology kinds' (`topology.*`: the core's, a graph's link, the families') and the
/// families' declared sections, every kind or model (kinds also as a table), every
/// parameter key, every fixed default, every allowed value of a choice, a value of each
/// form of a two-form type and every declared family section's header (`[abr]`,
/// `[[endpoint.probe]]`).
pub fn vocabulary() -> &'static (Vec<String>, Vec<String>, Vec<String>) {
    static V: std::sync::OnceLock<(Vec<String>, Vec<String>, Vec<String>)> =
        std::sync::OnceLock::new();
    V.get_or_init(|| {
        let mut values: Vec<String> = VALUES.iter().map(|v| v.to_string()).collect();
        let mut keys: Vec<String> = KEYS.iter().map(|k| k.to_string()).collect();
        let mut headers: Vec<String> = HEADERS.iter().map(|h| h.to_string()).collect();
        let declared: Vec<&qossim::decl::Section> = qossim::mechanisms::registry()
            .families()
            .iter()
            .flat_map(|f| f.declared().iter().copied())
            .collect();
        headers.extend(declared.iter().map(|s| s.written.to_string()));
        let families = declared.iter().map(|s| (s.name, s.params, false));
        let queues = qossim::queue::DISCIPLINES
            .iter()
            .map(|k| (k.name, k.params));
        let meters = qossim::meter::METERS.iter().map(|k| (k.name, k.params));
        let models = qossim::traffic::MODELS.iter().map(|k| (k.name, k.params));
        let calls = std::iter::once(("calls", qossim::traffic::kind::CALLS));
        let core = qossim::scenario::sections::CORE
            .iter()
            .map(|s| (s.name, s.params));
        let topologies = qossim::scenario::topology_kinds::KINDS
            .iter()
            .copied()
            .chain([&qossim::scenario::topology_kinds::GRAPH_LINK])
            .chain(
                qossim::mechanisms::registry()
                    .families()
                    .iter()
                    .flat_map(|f| f.topology_declared().iter().copied()),
            )
            .map(|s| (s.name, s.params));
        let tables = queues.chain(meters).map(|(n, p)| (n, p, true));
        let sections = models
            .chain(calls)
            .chain(core)
            .chain(topologies)
            .map(|(n, p)| (n, p, false));
        for (name, params, by_kind) in tables.chain(sections).chain(families) {
            values.push(format!("{name:?}"));
            if by_kind {
                values.push(format!("{{ kind = {name:?} }}"));
            }
            for p in params {
                if !keys.iter().any(|x| x == p.key) {
                    keys.push(p.key.to_string());
                }
                if let qossim::decl::Absent::Is(d) = p.default {
                    values.push(p.ty.toml(d));
                    if by_kind {
                        values.push(format!("{{ kind = {name:?}, {} = {d:?} }}", p.key));
                    }
                }
                match p.ty {
                    qossim::decl::Type::Choice(allowed) => {
                        values.extend(allowed.iter().map(|a| format!("{a:?}")))
                    }
                    qossim::decl::Type::RateOrFraction { .. } => {
                        values.extend(["0.25".into(), "\"8Mbps\"".into()])
                    }
                    qossim::decl::Type::CountOrSize { .. } => {
                        values.extend(["256".into(), "\"40KB\"".into()])
                    }
                    // A list of names: one of a name the scenarios use, and an item of
                    // another type.
                    qossim::decl::Type::Names => {
                        values.push("[\"n1\", \"n1\"]".to_string());
                        values.push("[\"voice\", 3]".to_string());
                    }
                    _ => {}
                }
            }
        }
        values.sort();
        values.dedup();
        headers.sort();
        headers.dedup();
        (values, keys, headers)
    })
}

fn value(g: &mut Gen) -> &'static str {
    let v = &vocabulary().0;
    &v[g.below(v.len())]
}

fn key(g: &mut Gen) -> &'static str {
    let k = &vocabulary().1;
    &k[g.below(k.len())]
}

fn mutate_once(g: &mut Gen, lines: &mut Vec<String>, sets: &mut Vec<(String, String)>) {
    if lines.is_empty() {
        lines.push("[run]".into());
        return;
    }
    let i = g.below(lines.len());
    match g.below(9) {
        0 => {
            lines.remove(i);
        }
        1 => {
            let l = lines[i].clone();
            lines.insert(i, l);
        }
        2 => {
            let j = g.below(lines.len());
            lines.swap(i, j);
        }
        3 | 4 => {
            if let Some((k, _)) = lines[i].clone().split_once('=') {
                lines[i] = format!("{} = {}", k.trim_end(), value(g));
            }
        }
        5 => {
            if let Some((k, v)) = lines[i].clone().split_once('=') {
                let k = k.trim();
                let bad = match g.below(3) {
                    0 => format!("{k}x"),
                    1 => key(g).to_string(),
                    _ => k.chars().rev().collect(),
                };
                lines[i] = format!("{bad} ={v}");
            }
        }
        6 => {
            lines.insert(i, format!("{} = {}", key(g), value(g)));
        }
        7 => {
            let header = g.pick(&vocabulary().2);
            lines.insert(i, header.clone());
        }
        _ => {
            let path = match g.below(4) {
                0 => format!("run.{}", key(g)),
                1 => format!("topology.{}", key(g)),
                2 => format!("traffic.{}.{}", g.below(3), key(g)),
                _ => format!("{}.{}", key(g), key(g)),
            };
            let v = value(g).trim_matches('"').to_string();
            sets.push((path, v));
        }
    }
}

/// What one input did.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Rejected with diagnostics that all have a line, a path and a reason.
    Rejected,
    /// Read, built and run within the event cap, books balanced.
    Ran,
    /// A property broke: what happened.
    Broken(String),
}

/// Reads, builds and runs one input; never panics itself.
pub fn check(text: &str, sets: &[(String, String)], base: &Path) -> Outcome {
    let result = std::panic::catch_unwind(AssertUnwindSafe(|| {
        match qossim::parse(text, "f.toml", base, sets) {
            Err(diags) => {
                if diags.is_empty() {
                    return Outcome::Broken("rejected with no diagnostic".into());
                }
                for d in &diags {
                    let ok_file = d.file == "f.toml" || d.file == "--set";
                    if !ok_file || d.line == 0 || d.reason.trim().is_empty() {
                        return Outcome::Broken(format!("malformed diagnostic: {d}"));
                    }
                }
                Outcome::Rejected
            }
            Ok(sc) => {
                let opts = RunOptions {
                    fingerprint_events: Some(EVENTS),
                    check_invariants: true,
                    ..Default::default()
                };
                match scenario::run_with(&sc, Some(1), &mut |_| true, &opts) {
                    Ok(_) => Outcome::Ran,
                    Err(e) if e.contains("invariant violated") => Outcome::Broken(e),
                    // A run may legitimately fail to build (e.g. no route): a clear error.
                    Err(e) if !e.trim().is_empty() => Outcome::Ran,
                    Err(_) => Outcome::Broken("run failed with an empty message".into()),
                }
            }
        }
    }));
    result.unwrap_or_else(|e| {
        let what = e
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| e.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        Outcome::Broken(format!("panic: {what}"))
    })
}

/// Counts of one fuzzing campaign.
#[derive(Debug, Default)]
pub struct Tally {
    /// Inputs tried.
    pub inputs: u64,
    /// Rejected with proper diagnostics.
    pub rejected: u64,
    /// Ran.
    pub ran: u64,
    /// Broken properties: (seed, input number, what, the input).
    pub broken: Vec<(u64, u64, String, String)>,
}

/// Fuzzes `inputs` inputs from `seed`, or until `stop` says so.
pub fn fuzz(seed: u64, inputs: u64, mut stop: impl FnMut(u64) -> bool) -> Tally {
    let files = crate::common::shipped_scenarios();
    let mut g = Gen::new(seed);
    let mut t = Tally::default();
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // panics are collected, not printed
    for n in 0..inputs {
        if stop(n) {
            break;
        }
        let (path, text) = &files[g.below(files.len())];
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let mut sets = Vec::new();
        for _ in 0..1 + g.below(2) {
            mutate_once(&mut g, &mut lines, &mut sets);
        }
        let input = lines.join("\n");
        t.inputs += 1;
        if std::env::var_os("QOSSIM_FUZZ_SHOW").is_some() {
            eprintln!("=== seed {seed} input {n}\n{input}\n# --set {sets:?}");
        }
        match check(&input, &sets, path.parent().unwrap()) {
            Outcome::Rejected => t.rejected += 1,
            Outcome::Ran => t.ran += 1,
            Outcome::Broken(why) => {
                let shown = format!("{input}\n# --set {sets:?}");
                t.broken.push((seed, n, why, shown));
            }
        }
    }
    std::panic::set_hook(prev);
    t
}
