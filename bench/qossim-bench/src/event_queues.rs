//! Event-queue microbenchmark, the classic "hold" model: N events pending; repeatedly pop
//! the earliest and push one at its time plus a random increment. Reports nanoseconds per
//! hold for each implementation and N, one line each:
//! `queue=NAME pending=N holds=H wall=Ws ns_per_hold=X`.

use qossim::engine::{
    BinaryHeapQueue, Entry, Event, EventQueue, RadixHeapQueue, Target, WheelQueue,
};
use qossim::Rng;

fn hold<Q: EventQueue>(mut q: Q, name: &str, n: usize, holds: usize, increments: &[u64]) {
    let mut seq = 0u64;
    for (i, &inc) in increments.iter().take(n).enumerate() {
        q.push(Entry {
            time: inc,
            seq,
            event: Event::new(Target::Agent(i as u32), 0),
        });
        seq += 1;
    }
    let t0 = std::time::Instant::now();
    let mut check = 0u64;
    for k in 0..holds {
        let e = q.pop().expect("never empty");
        check = check.wrapping_add(e.time);
        q.push(Entry {
            time: e.time + increments[k % increments.len()],
            seq,
            event: e.event,
        });
        seq += 1;
    }
    let wall = t0.elapsed().as_secs_f64();
    println!(
        "queue={name} pending={n} holds={holds} wall={wall:.3}s ns_per_hold={:.1} check={}",
        wall * 1e9 / holds as f64,
        check % 1000
    );
}

fn main() {
    let mut r = Rng::from_seed(1);
    // Exponential increments with mean 20 ms in picoseconds, like CBR timers with jitter.
    let incs: Vec<u64> = (0..1 << 20).map(|_| (r.exp(20e9)) as u64 + 1).collect();
    for n in [1_000, 10_000, 100_000, 1_000_000] {
        let holds = 5_000_000;
        hold(BinaryHeapQueue::new(), "binary-heap", n, holds, &incs);
        hold(RadixHeapQueue::new(), "radix-heap", n, holds, &incs);
        hold(WheelQueue::default(), "wheel", n, holds, &incs);
    }
}
