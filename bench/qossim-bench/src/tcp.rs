//! The TCP benchmark: N TCP bulk transfers (default 50) across a dumbbell whose 10 Mb/s
//! bottleneck (5 ms) has a RED queue; host i's access links (100 Mb/s) give it a
//! round-trip propagation time of 50 + 100·i/(N−1) ms. 1500-byte segments (1460 bytes of
//! payload), a 64-segment window (`--rwnd N` segments), an ACK for every segment, no
//! timestamps; connections start uniformly within the first second. `--variant` picks the congestion control:
//! `reno` (the default: Reno without SACK), `newreno-sack` (NewReno with SACK recovery),
//! `cubic-sack` (CUBIC with SACK recovery) or `dctcp-sack` (DCTCP with ECN and SACK, the
//! bottleneck a step-marking queue that marks arrivals finding more than 17 packets
//! queued, i.e. 18 or more, with the same 100-packet buffer).
//!
//! Prints one line: `flows=N sim=Ts delivered_pkts=D wall=Ws pkts_per_wall_s=R
//! goodput_mean_mbps=G goodput_min_mbps=A goodput_p10_mbps=.. goodput_median_mbps=..
//! goodput_p90_mbps=.. goodput_max_mbps=B goodput_jain=J goodputs_mbps=g0,g1,...` where
//! D counts data segments delivered in order to the receivers, the goodputs are per
//! connection over the whole run (percentiles by the nearest-rank rule, J is Jain's
//! fairness index (sum g)^2 / (N sum g^2)) and the list gives every connection's goodput
//! in connection order. The wall time covers building and running.
//!
//! `--cwnd-trace PATH` writes connection `--cwnd-conn I`'s (default 0) window at every
//! change, one `time_s cwnd_segments` line each (as `bench/ns3/tcp.cc` does).

mod args;
use args::arg;

use qossim::scenario;
use std::fmt::Write;
use std::path::Path;

/// What a run is asked for besides its size: the receive window (segments), the variant's
/// TOML lines and the connection whose window is recorded, if any.
struct Options<'a> {
    rwnd: u64,
    variant: &'a str,
    /// A step-marking bottleneck (DCTCP) instead of RED.
    step_queue: bool,
    cwnd_conn: Option<usize>,
}

/// The scenario text for `n` connections and `sim` seconds.
fn scenario_text(n: usize, sim: f64, seed: u64, o: &Options) -> String {
    let mut t = String::new();
    writeln!(
        t,
        "[run]\nduration = \"{sim}s\"\nwarmup = \"0s\"\nseed = {seed}\n"
    )
    .unwrap();
    writeln!(
        t,
        "[topology]\nkind = \"dumbbell\"\nhosts = {n}\naccess_rate = \"100Mbps\""
    )
    .unwrap();
    let delays: Vec<String> = (0..n)
        .map(|i| {
            let rtt_ms = 50.0 + 100.0 * i as f64 / (n.max(2) - 1) as f64;
            format!("\"{:.6}ms\"", (rtt_ms / 2.0 - 5.0) / 2.0)
        })
        .collect();
    writeln!(t, "access_delays = [{}]", delays.join(", ")).unwrap();
    writeln!(
        t,
        "bottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"5ms\"\n"
    )
    .unwrap();
    if o.step_queue {
        writeln!(
            t,
            "[links.\"r0-r1\"]\nqueue = {{ kind = \"step\", k = \"17p\", limit = \"100p\" }}\n"
        )
        .unwrap();
    } else {
        writeln!(
            t,
            "[links.\"r0-r1\"]\nqueue = {{ kind = \"red\", min_th = 5, max_th = 15, max_p = 0.1, \
             w_q = 0.002, limit = \"100p\", mean_pkt_size = \"1500B\" }}\n"
        )
        .unwrap();
    }
    for i in 0..n {
        writeln!(
            t,
            "[[traffic]]\nname = \"c{i}\"\nfrom = \"s{i}\"\nto = \"d{i}\"\nmodel = \"tcp\"\n\
             packet_size = \"1500B\"\nwnd = {}\nstart_spread = \"1s\"\n{}\n",
            o.rwnd, o.variant
        )
        .unwrap();
    }
    if let Some(i) = o.cwnd_conn {
        writeln!(t, "[[metric]]\nkind = \"tcp_window\"\ntraffic = \"c{i}\"\n").unwrap();
    }
    t
}

/// The TOML lines of a variant name.
fn variant_lines(name: &str) -> &'static str {
    match name {
        "reno" => "",
        "newreno-sack" => "congestion = \"newreno\"\nsack = true",
        "cubic-sack" => "congestion = \"cubic\"\nsack = true",
        "dctcp-sack" => "congestion = \"dctcp\"\necn = true\nsack = true",
        o => panic!(
            "--variant: unknown {o:?}; expected reno, newreno-sack, cubic-sack or dctcp-sack"
        ),
    }
}

/// The value at fraction `q` of sorted `xs` by the nearest-rank rule.
fn percentile(xs: &[f64], q: f64) -> f64 {
    let k = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[k - 1]
}

fn main() {
    let n = arg("--flows", 50.0) as usize;
    let sim = arg("--sim", 100.0);
    let seed = arg("--seed", 1.0) as u64;
    let args: Vec<String> = std::env::args().collect();
    let variant = args
        .iter()
        .position(|a| a == "--variant")
        .and_then(|i| args.get(i + 1))
        .map_or("reno", |v| v.as_str());
    let trace = args
        .iter()
        .position(|a| a == "--cwnd-trace")
        .and_then(|i| args.get(i + 1));
    let conn = arg("--cwnd-conn", 0.0) as usize;
    let opts = Options {
        rwnd: arg("--rwnd", 64.0) as u64,
        variant: variant_lines(variant),
        step_queue: variant == "dctcp-sack",
        cwnd_conn: trace.map(|_| conn),
    };
    let text = scenario_text(n, sim, seed, &opts);
    let t0 = std::time::Instant::now();
    let sc = qossim::parse(&text, "tcp-bench.toml", Path::new("."), &[])
        .unwrap_or_else(|d| panic!("{d:#?}"));
    let out = scenario::run(&sc, None, &mut |_| true).expect("run");
    let wall = t0.elapsed().as_secs_f64();
    if let Some(path) = trace {
        let name = format!("tcp.c{conn}.0.cwnd");
        let s = out
            .series
            .iter()
            .find(|s| s.name == name)
            .expect("the window series");
        let mut w = String::new();
        for (t, v) in s.t.iter().zip(&s.v) {
            writeln!(w, "{t:.9} {v:.4}").unwrap();
        }
        std::fs::write(path, w).unwrap_or_else(|e| panic!("--cwnd-trace: {path}: {e}"));
    }
    let num = |k: &str| out.summary.get(k).and_then(|v| v.as_f64()).unwrap_or(0.0);
    let goodputs: Vec<f64> = (0..n)
        .map(|i| num(&format!("agent.tcp.c{i}.0.rx.goodput_bps")) / 1e6)
        .collect();
    let delivered: f64 = (0..n)
        .map(|i| num(&format!("agent.tcp.c{i}.0.rx.delivered_bytes")) / 1460.0)
        .sum();
    let sum: f64 = goodputs.iter().sum();
    let mean = sum / n as f64;
    let jain = sum * sum / (n as f64 * goodputs.iter().map(|g| g * g).sum::<f64>());
    let mut sorted = goodputs.clone();
    sorted.sort_by(f64::total_cmp);
    let list: Vec<String> = goodputs.iter().map(|g| format!("{g:.4}")).collect();
    println!(
        "flows={n} sim={sim}s delivered_pkts={} wall={wall:.3}s pkts_per_wall_s={} \
         goodput_mean_mbps={mean:.4} goodput_min_mbps={:.4} goodput_p10_mbps={:.4} \
         goodput_median_mbps={:.4} goodput_p90_mbps={:.4} goodput_max_mbps={:.4} \
         goodput_jain={jain:.4} goodputs_mbps={}",
        delivered.round() as u64,
        (delivered / wall).round() as u64,
        sorted[0],
        percentile(&sorted, 0.1),
        percentile(&sorted, 0.5),
        percentile(&sorted, 0.9),
        sorted[n - 1],
        list.join(",")
    );
}
