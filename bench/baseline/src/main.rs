//! Baseline ("floor") simulation of the qossim reference scenario, written
//! the obvious minimal way: one binary heap of timestamped events, integer
//! picosecond time, one repeating timer per flow, two FIFO links each with
//! serialization + propagation delay, and a sink that counts deliveries.
//!
//!   N CBR flows (160 B every 20 ms, first packet at U(0, 20 ms))
//!     -> 10 Gb/s link, 1 ms -> router -> 155.52 Mb/s link, 1 ms -> sink
//!
//! Prints one line on stdout:
//!   flows=N sim=Ts delivered_pkts=D wall=Ws pkts_per_wall_s=R
//!
//! Usage: qossim-baseline-bench [--flows N] [--sim SECONDS] [--seed S]
//!                             [--queue-pkts Q] [--verbose]
//! Q is the DropTail limit of each link's FIFO in packets waiting (not counting
//! the one being serialized); default 10000, 0 = unbounded.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::time::Instant;

const PS_PER_S: u64 = 1_000_000_000_000;
const PS_PER_MS: u64 = 1_000_000_000;
const PACKET_BYTES: u32 = 160;
const INTERVAL_PS: u64 = 20 * PS_PER_MS;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Packet {
    flow: u32,
    bytes: u32,
    created_ps: u64,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    /// Flow `f` emits a packet and re-arms its timer.
    FlowTimer(u32),
    /// Link `l` finished serializing the packet at its head.
    TxDone(usize),
    /// A packet reaches the far end of link `l`.
    Arrive(usize, Packet),
}

struct Link {
    rate_bps: u64,
    prop_ps: u64,
    queue: VecDeque<Packet>,
    in_tx: Option<Packet>,
    limit: usize,
    max_queue: usize,
    drops: u64,
}

impl Link {
    fn new(rate_bps: u64, prop_ps: u64, limit: usize) -> Self {
        Link {
            rate_bps,
            prop_ps,
            queue: VecDeque::new(),
            in_tx: None,
            limit,
            max_queue: 0,
            drops: 0,
        }
    }

    fn serialization_ps(&self, bytes: u32) -> u64 {
        (bytes as u128 * 8 * PS_PER_S as u128 / self.rate_bps as u128) as u64
    }
}

struct Sim {
    now_ps: u64,
    seq: u64,
    /// Min-heap on (time, seq): `seq` is unique, so ties at equal times pop
    /// in scheduling order and the event itself is never compared.
    heap: BinaryHeap<Reverse<(u64, u64, Event)>>,
    links: [Link; 2],
    delivered: u64,
    delay_sum_ps: u128,
    per_flow_rx: Vec<u32>,
}

impl Sim {
    fn schedule(&mut self, time_ps: u64, event: Event) {
        self.seq += 1;
        self.heap.push(Reverse((time_ps, self.seq, event)));
    }

    /// Offer `pkt` to link `l`: transmit at once if idle, else queue (FIFO,
    /// DropTail at `limit` waiting packets).
    fn enqueue(&mut self, l: usize, pkt: Packet) {
        let link = &mut self.links[l];
        if link.in_tx.is_none() {
            self.start_tx(l, pkt);
        } else if link.limit != 0 && link.queue.len() >= link.limit {
            link.drops += 1;
        } else {
            link.queue.push_back(pkt);
            link.max_queue = link.max_queue.max(link.queue.len());
        }
    }

    fn start_tx(&mut self, l: usize, pkt: Packet) {
        let done = self.now_ps + self.links[l].serialization_ps(pkt.bytes);
        self.links[l].in_tx = Some(pkt);
        self.schedule(done, Event::TxDone(l));
    }

    fn run(&mut self, end_ps: u64) {
        while let Some(Reverse((time_ps, _, event))) = self.heap.pop() {
            if time_ps > end_ps {
                break;
            }
            self.now_ps = time_ps;
            match event {
                Event::FlowTimer(flow) => {
                    let pkt = Packet {
                        flow,
                        bytes: PACKET_BYTES,
                        created_ps: time_ps,
                    };
                    self.enqueue(0, pkt);
                    self.schedule(time_ps + INTERVAL_PS, Event::FlowTimer(flow));
                }
                Event::TxDone(l) => {
                    let pkt = self.links[l].in_tx.take().expect("TxDone on idle link");
                    let arrive = time_ps + self.links[l].prop_ps;
                    self.schedule(arrive, Event::Arrive(l, pkt));
                    if let Some(next) = self.links[l].queue.pop_front() {
                        self.start_tx(l, next);
                    }
                }
                // End of the access link: the router forwards to the bottleneck.
                Event::Arrive(0, pkt) => self.enqueue(1, pkt),
                // End of the bottleneck: the sink.
                Event::Arrive(_, pkt) => {
                    self.delivered += 1;
                    self.per_flow_rx[pkt.flow as usize] += 1;
                    self.delay_sum_ps += (time_ps - pkt.created_ps) as u128;
                }
            }
        }
    }
}

/// splitmix64: small, fast, good enough for start phases.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform integer in [0, n) (multiply-high; bias is negligible here).
    fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

fn usage() -> ! {
    eprintln!("usage: qossim-baseline-bench [--flows N] [--sim SECONDS] [--seed S] [--queue-pkts Q] [--verbose]");
    std::process::exit(2);
}

fn parse<T: std::str::FromStr>(v: Option<String>) -> T {
    v.and_then(|s| s.parse().ok()).unwrap_or_else(|| usage())
}

fn format_seconds(s: f64) -> String {
    if s.fract() == 0.0 {
        format!("{}", s as u64)
    } else {
        format!("{}", s)
    }
}

fn main() {
    let (mut flows, mut sim_s, mut seed, mut verbose) = (1000u32, 20.0f64, 1u64, false);
    let mut queue_pkts = 10_000usize;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) => (k.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        match key.as_str() {
            "--flows" => flows = parse(inline.or_else(|| args.next())),
            "--sim" => sim_s = parse(inline.or_else(|| args.next())),
            "--seed" => seed = parse(inline.or_else(|| args.next())),
            "--queue-pkts" => queue_pkts = parse(inline.or_else(|| args.next())),
            "--verbose" => verbose = true,
            _ => usage(),
        }
    }
    if flows == 0 || sim_s.is_nan() || sim_s <= 0.0 {
        usage();
    }
    let end_ps = (sim_s * PS_PER_S as f64).round() as u64;

    let t0 = Instant::now();
    let mut sim = Sim {
        now_ps: 0,
        seq: 0,
        heap: BinaryHeap::with_capacity(2 * flows as usize + 16),
        links: [
            Link::new(10_000_000_000, PS_PER_MS, queue_pkts),
            Link::new(155_520_000, PS_PER_MS, queue_pkts),
        ],
        delivered: 0,
        delay_sum_ps: 0,
        per_flow_rx: vec![0; flows as usize],
    };
    let mut rng = SplitMix64(seed);
    for f in 0..flows {
        let phase = rng.below(INTERVAL_PS);
        sim.schedule(phase, Event::FlowTimer(f));
    }
    sim.run(end_ps);
    let wall = t0.elapsed().as_secs_f64();

    let rate = sim.delivered as f64 / wall.max(1e-9);
    println!(
        "flows={} sim={}s delivered_pkts={} wall={:.3}s pkts_per_wall_s={:.0}",
        flows,
        format_seconds(sim_s),
        sim.delivered,
        wall,
        rate
    );
    if verbose {
        let mean_us = sim.delay_sum_ps as f64 / sim.delivered.max(1) as f64 / 1e6;
        let min_rx = sim.per_flow_rx.iter().min().copied().unwrap_or(0);
        let max_rx = sim.per_flow_rx.iter().max().copied().unwrap_or(0);
        eprintln!(
            "mean_delay={:.3}us per_flow_rx=[{}, {}] max_queue={}/{} drops={}/{} events={}",
            mean_us,
            min_rx,
            max_rx,
            sim.links[0].max_queue,
            sim.links[1].max_queue,
            sim.links[0].drops,
            sim.links[1].drops,
            sim.seq
        );
    }
}
