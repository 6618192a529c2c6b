//! Reading and building a scenario is linear in each of its dimensions: hosts, TCP
//! connections, links, traffic entries and flows.
//!
//! Each test reads and runs (for one microsecond of simulated time, so that the run is
//! building plus the summary) a scenario at three sizes n, 2n and 4n of one dimension,
//! and fits the exponent `k` of `cost ~ size^k` by least squares on the logarithms. The
//! cost is the CPU time of the test's thread (not wall time: other work on the machine
//! does not count), the least of several repetitions taken in turn. Linear work gives
//! k = 1 (an n log n part a little more: 1.1 from n to 4n at these sizes); work that
//! grows with the square of the size gives k = 2. The bound is the midpoint, 1.5: a
//! quadratic part fails it as soon as it is half the cost at the largest size. (Before
//! building was made linear, the release build measured, for a whole run of this kind:
//! dumbbells of 2 000, 4 000 and 8 000 hosts 0.045, 0.52 and 3.2 s, k = 3.1; chains of
//! 4 000, 8 000 and 16 000 links 0.11, 0.52 and 2.3 s, k = 2.2; 1 000 and 4 000 TCP
//! connections 0.74 and 27 s.)

use qossim::scenario;
use std::fmt::Write;
use std::path::Path;

/// CPU time used by the calling thread, seconds.
fn thread_cpu() -> f64 {
    #[cfg(target_os = "linux")]
    {
        #[repr(C)]
        struct Timespec {
            sec: i64,
            nsec: i64,
        }
        extern "C" {
            fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
        }
        const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
        let mut ts = Timespec { sec: 0, nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec; the call only writes into it.
        let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        assert_eq!(rc, 0, "clock_gettime failed");
        ts.sec as f64 + ts.nsec as f64 * 1e-9
    }
    #[cfg(not(target_os = "linux"))]
    {
        use std::sync::OnceLock;
        static T0: OnceLock<std::time::Instant> = OnceLock::new();
        T0.get_or_init(std::time::Instant::now)
            .elapsed()
            .as_secs_f64()
    }
}

/// The scenario text of size `n` in dimension `dim` (as `bench/qossim-bench`'s
/// `build_scaling` program makes them).
fn scenario_text(dim: &str, n: usize) -> String {
    let mut t = String::from("[run]\nduration = \"1us\"\nwarmup = \"0s\"\nseed = 1\n\n");
    match dim {
        "hosts" => write!(
            t,
            "[topology]\nkind = \"dumbbell\"\nhosts = {n}\nrate = \"100Mbps\"\n\n\
             [[traffic]]\nname = \"v\"\nfrom = \"s0\"\nto = \"d0\"\nmodel = \"CBR\"\n"
        )
        .unwrap(),
        "tcp" => {
            write!(
                t,
                "[topology]\nkind = \"dumbbell\"\nhosts = {n}\naccess_rate = \"100Mbps\"\n\
                 bottleneck_rate = \"10Mbps\"\nbottleneck_delay = \"5ms\"\n\n"
            )
            .unwrap();
            for i in 0..n {
                write!(
                    t,
                    "[[traffic]]\nname = \"c{i}\"\nfrom = \"s{i}\"\nto = \"d{i}\"\n\
                     model = \"tcp\"\npacket_size = \"1500B\"\nwnd = 64\nstart_spread = \"1s\"\n\n"
                )
                .unwrap();
            }
        }
        "links" => write!(
            t,
            "[topology]\nkind = \"chain\"\nlength = {n}\nrate = \"1Gbps\"\n\n\
             [[traffic]]\nname = \"v\"\nfrom = \"n0\"\nto = \"n{n}\"\nmodel = \"CBR\"\n"
        )
        .unwrap(),
        "entries" => {
            write!(
                t,
                "[topology]\nkind = \"single_link\"\nrate = \"1Gbps\"\n\n"
            )
            .unwrap();
            for i in 0..n {
                write!(
                    t,
                    "[[traffic]]\nname = \"v{i}\"\nfrom = \"a\"\nto = \"b\"\nmodel = \"CBR\"\n\n"
                )
                .unwrap();
            }
        }
        "flows" => write!(
            t,
            "[topology]\nkind = \"single_link\"\nrate = \"1Gbps\"\n\n\
             [[traffic]]\nname = \"v\"\nfrom = \"a\"\nto = \"b\"\nmodel = \"CBR\"\nflows = {n}\n"
        )
        .unwrap(),
        other => panic!("unknown dimension {other}"),
    }
    t
}

/// CPU seconds to read `text` and run it (building included).
fn cost(text: &str) -> f64 {
    let t0 = thread_cpu();
    let sc = qossim::parse(text, "scaling.toml", Path::new("."), &[])
        .unwrap_or_else(|d| panic!("{d:#?}"));
    let out = scenario::run(&sc, None, &mut |_| true).expect("run");
    let t = thread_cpu() - t0;
    drop(out);
    t
}

/// The least-squares exponent of `cost ~ size^k` over the three sizes n, 2n, 4n, each
/// cost the least of `reps` repetitions taken in turn.
fn exponent(dim: &str, n: usize, reps: usize) -> (f64, [f64; 3]) {
    let sizes = [n, 2 * n, 4 * n];
    let texts: Vec<String> = sizes.iter().map(|&s| scenario_text(dim, s)).collect();
    let mut best = [f64::INFINITY; 3];
    for _ in 0..reps {
        for (b, text) in best.iter_mut().zip(&texts) {
            *b = b.min(cost(text));
        }
    }
    let xs: Vec<f64> = sizes.iter().map(|&s| (s as f64).ln()).collect();
    let ys: Vec<f64> = best.iter().map(|&c| c.max(1e-6).ln()).collect();
    let (mx, my) = (xs.iter().sum::<f64>() / 3.0, ys.iter().sum::<f64>() / 3.0);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    (sxy / sxx, best)
}

/// Half-way between linear (1) and quadratic (2).
const BOUND: f64 = 1.5;

fn check(dim: &str, n: usize) {
    let (k, costs) = exponent(dim, n, 4);
    eprintln!("{dim}: n={n} costs {costs:?} s, exponent {k:.2}");
    assert!(
        k < BOUND,
        "{dim}: cost grows as size^{k:.2} over n={n}, 2n, 4n (CPU s {costs:?}); \
         linear is 1, quadratic 2"
    );
}

#[test]
fn dumbbell_hosts() {
    check("hosts", 2000);
}

#[test]
fn tcp_connections() {
    check("tcp", 500);
}

#[test]
fn chain_links() {
    check("links", 4000);
}

#[test]
fn traffic_entries() {
    check("entries", 2000);
}

#[test]
fn flows_of_one_entry() {
    check("flows", 50000);
}
