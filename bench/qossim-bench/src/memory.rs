//! Peak memory of one run: `memory SCENARIO.toml DURATION_S [KEY=VALUE ...]`.
//!
//! Reads the scenario with the overrides, sets `run.duration`, runs it and prints one
//! line: `duration=Ds events=E peak_rss_kb=K`, the peak resident set size read from the
//! kernel (`VmHWM`) after the run, and `peak_heap_kb=H`, the largest live heap the run's
//! allocations reached (counted by this program's allocator, so free of the allocator's
//! own caching and fragmentation).

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

/// The system allocator, counting live and peak live bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(n: usize) {
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            grew(l.size());
        }
        p
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            LIVE.fetch_sub(l.size(), Relaxed);
            grew(new);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

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
    let timeline = std::env::var_os("QOSSIM_MEMORY_TIMELINE").is_some();
    let mut next = 0.0;
    let out = qossim::scenario::run(&sc, None, &mut |f| {
        if timeline && f >= next {
            eprintln!("{f:.2} live_kb={}", LIVE.load(Relaxed) / 1024);
            next += 0.05;
        }
        true
    })
    .unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    println!(
        "duration={}s events={} peak_heap_kb={} peak_rss_kb={}",
        args[1],
        out.events,
        PEAK.load(Relaxed) / 1024,
        peak_rss_kb()
    );
}
