//! Build-time scaling: how long reading and building a scenario takes as one dimension
//! grows while the others stay small.
//!
//! `build_scaling --dim DIM --n N [--reps K]` generates a scenario of size N in dimension
//! DIM and prints one line:
//! `dim=DIM n=N parse=Ps build=Bs run=Rs` where `parse` reads the scenario text, `build`
//! makes its world, and `run` is a whole run of one microsecond of simulated time
//! (building included, the summary and the per-flow records too); each the smallest of
//! K repetitions (default 3).
//!
//! The dimensions:
//! * `hosts`: a dumbbell of N host pairs with one CBR flow between the first pair;
//! * `tcp`: a dumbbell of N host pairs with a TCP connection between each pair (the TCP
//!   benchmark's scenario);
//! * `links`: a chain of N links with one CBR flow from end to end;
//! * `entries`: N `[[traffic]]` entries of one CBR flow each over a single link;
//! * `flows`: one `[[traffic]]` entry of N CBR flows over a single link.

mod args;
use args::arg;

use qossim::scenario;
use std::fmt::Write;
use std::path::Path;
use std::time::Instant;

/// The scenario text of size `n` in dimension `dim`.
fn scenario_text(dim: &str, n: usize) -> String {
    let mut t = String::from("[run]\nduration = \"1us\"\nwarmup = \"0s\"\nseed = 1\n\n");
    match dim {
        "hosts" => {
            writeln!(
                t,
                "[topology]\nkind = \"dumbbell\"\nhosts = {n}\nrate = \"100Mbps\"\n\n\
                 [[traffic]]\nname = \"v\"\nfrom = \"s0\"\nto = \"d0\"\nmodel = \"CBR\"\n"
            )
            .unwrap();
        }
        "tcp" => {
            writeln!(
                t,
                "[topology]\nkind = \"dumbbell\"\nhosts = {n}\naccess_rate = \"100Mbps\"\n\
                 bottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"5ms\"\n"
            )
            .unwrap();
            for i in 0..n {
                writeln!(
                    t,
                    "[[traffic]]\nname = \"c{i}\"\nfrom = \"s{i}\"\nto = \"d{i}\"\n\
                     model = \"tcp\"\npacket_size = \"1500B\"\nwnd = 64\nstart_spread = \"1s\"\n"
                )
                .unwrap();
            }
        }
        "links" => {
            writeln!(
                t,
                "[topology]\nkind = \"chain\"\nlength = {n}\nrate = \"1Gbps\"\n\n\
                 [[traffic]]\nname = \"v\"\nfrom = \"n0\"\nto = \"n{n}\"\nmodel = \"CBR\"\n"
            )
            .unwrap();
        }
        "entries" => {
            writeln!(t, "[topology]\nkind = \"single_link\"\nrate = \"1Gbps\"\n").unwrap();
            for i in 0..n {
                writeln!(
                    t,
                    "[[traffic]]\nname = \"v{i}\"\nfrom = \"a\"\nto = \"b\"\nmodel = \"CBR\"\n"
                )
                .unwrap();
            }
        }
        "flows" => {
            writeln!(
                t,
                "[topology]\nkind = \"single_link\"\nrate = \"1Gbps\"\n\n\
                 [[traffic]]\nname = \"v\"\nfrom = \"a\"\nto = \"b\"\nmodel = \"CBR\"\nflows = {n}\n"
            )
            .unwrap();
        }
        other => panic!("--dim: unknown dimension {other:?} (hosts, tcp, links, entries, flows)"),
    }
    t
}

/// The dimension named after `--dim` on the command line.
fn dim_arg() -> String {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--dim")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "hosts".into())
}

fn main() {
    let dim = dim_arg();
    let n = arg("--n", 1000.0) as usize;
    let reps = arg("--reps", 3.0).max(1.0) as usize;
    let text = scenario_text(&dim, n);
    let (mut parse, mut build, mut run) = (f64::MAX, f64::MAX, f64::MAX);
    for _ in 0..reps {
        let t0 = Instant::now();
        let sc = qossim::parse(&text, "build-scaling.toml", Path::new("."), &[])
            .unwrap_or_else(|d| panic!("{d:#?}"));
        parse = parse.min(t0.elapsed().as_secs_f64());
        let t0 = Instant::now();
        let w = scenario::build(&sc, 1).expect("build");
        build = build.min(t0.elapsed().as_secs_f64());
        drop(w);
        let t0 = Instant::now();
        let out = scenario::run(&sc, None, &mut |_| true).expect("run");
        run = run.min(t0.elapsed().as_secs_f64());
        drop(out);
    }
    println!("dim={dim} n={n} parse={parse:.4}s build={build:.4}s run={run:.4}s");
}
