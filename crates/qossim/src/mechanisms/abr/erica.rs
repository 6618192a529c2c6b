//! ERICA (Explicit Rate Indication for Congestion Avoidance) at one output port: the
//! averaging interval, the load factor, the fair share and the explicit rate it stamps
//! on backward RM cells; with [`EricaPlus`], ERICA+'s queue term on top.

use crate::time::{to_secs, Time};

use super::cell::CELL_BITS;

/// ERICA's parameters at a port.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EricaParams {
    /// Target utilization U (0.95 in a LAN, 0.90 in a WAN).
    pub target: f64,
    /// An averaging interval ends after this many cells arrived at the port …
    pub cells: u32,
    /// … or after this long, whichever comes first.
    pub max_interval: Time,
    /// The overload band: above 1 + δ the MaxAllocPrevious term is left out.
    pub delta: f64,
    /// ERICA+'s queue term, if the port runs ERICA+ (then `target` is not used).
    pub plus: Option<EricaPlus>,
}

/// ERICA+'s queue control: the ABR capacity a port allocates is a fraction f(Tq) of what
/// VBR leaves of the link, where Tq is the time the ABR queue needs to drain at that
/// capacity. Below the target delay T0 the fraction is above 1 (the link is
/// over-allocated so a queue can form up to T0); above it, below 1 (the rest drains the
/// queue), never under the queue drain limit.
///
/// f(Tq) = a·T0 / ((a − 1)·Tq + T0) for Tq ≤ T0, and
/// max(QDLF, b·T0 / ((b − 1)·Tq + T0)) above: two hyperbolas through f(T0) = 1.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EricaPlus {
    /// The target queueing delay T0.
    pub target_delay: Time,
    /// The curve below T0 (f(0) = a).
    pub a: f64,
    /// The curve above T0.
    pub b: f64,
    /// The queue drain limit factor: the smallest fraction.
    pub qdlf: f64,
}

impl EricaPlus {
    /// LAN settings: T0 = 100 µs, a = 1.15, b = 1.05, QDLF = 0.5.
    pub fn lan() -> Self {
        EricaPlus {
            target_delay: 100 * crate::time::PS_PER_US,
            a: 1.15,
            b: 1.05,
            qdlf: 0.5,
        }
    }
    /// WAN settings: T0 = 500 µs, the rest as in a LAN.
    pub fn wan() -> Self {
        EricaPlus {
            target_delay: 500 * crate::time::PS_PER_US,
            ..Self::lan()
        }
    }
    /// The fraction f(Tq) for a queue that drains in `tq` seconds.
    pub fn fraction(&self, tq: f64) -> f64 {
        let t0 = to_secs(self.target_delay);
        if tq <= t0 {
            self.a * t0 / ((self.a - 1.0) * tq + t0)
        } else {
            (self.b * t0 / ((self.b - 1.0) * tq + t0)).max(self.qdlf)
        }
    }
}

impl EricaParams {
    /// LAN settings: N = 50 cells, U = 0.95, 1 ms, δ = 0.1.
    pub fn lan() -> Self {
        EricaParams {
            target: 0.95,
            cells: 50,
            max_interval: crate::time::millis(1.0),
            delta: 0.1,
            plus: None,
        }
    }
    /// WAN settings: N = 100 cells, U = 0.90, 1 ms, δ = 0.1.
    pub fn wan() -> Self {
        EricaParams {
            target: 0.90,
            cells: 100,
            max_interval: crate::time::millis(1.0),
            delta: 0.1,
            plus: None,
        }
    }
}

/// ERICA's measurement and allocation state at one output port, for `vcs` virtual
/// connections. Rates are bits per second.
#[derive(Clone, Debug)]
pub struct EricaPort {
    p: EricaParams,
    rate: f64,
    start: Time,
    /// Cells of every class arrived in the current interval.
    cells: u32,
    abr_cells: u64,
    vbr_cells: u64,
    /// Interval number in which each VC last sent a forward cell here (+1; 0: never).
    seen: Vec<u32>,
    interval: u32,
    active: u32,
    ccr: Vec<f64>,
    /// ABR capacity of the last interval.
    pub capacity: f64,
    /// Load factor z of the last interval.
    pub z: f64,
    /// Fair share of the last interval.
    pub fair_share: f64,
    max_alloc_prev: f64,
    max_alloc_cur: f64,
    /// Intervals ended so far.
    pub intervals: u64,
    /// The port's ABR queue (cells), kept current by the switch when the port runs
    /// ERICA+ (read when an interval ends).
    pub queue_cells: usize,
}

impl EricaPort {
    /// A port of `rate_bps` serving `vcs` connections, its first interval starting at
    /// `now`. Until an interval has ended, the whole target capacity is offered.
    pub fn new(p: EricaParams, rate_bps: f64, vcs: usize, now: Time) -> Self {
        let capacity = match p.plus {
            None => p.target * rate_bps,
            Some(q) => q.fraction(0.0) * rate_bps,
        };
        EricaPort {
            p,
            rate: rate_bps,
            start: now,
            cells: 0,
            abr_cells: 0,
            vbr_cells: 0,
            seen: vec![0; vcs],
            interval: 1,
            active: 0,
            ccr: vec![0.0; vcs],
            capacity,
            z: 1.0,
            fair_share: capacity,
            max_alloc_prev: 0.0,
            max_alloc_cur: 0.0,
            intervals: 0,
            queue_cells: 0,
        }
    }

    /// True if the port runs ERICA+ (and so needs its queue length).
    #[inline]
    pub fn needs_queue(&self) -> bool {
        self.p.plus.is_some()
    }

    /// When the current interval ends at the latest (the time limit).
    pub fn deadline(&self) -> Time {
        self.start + self.p.max_interval
    }

    /// A cell arrived at the port: `vbr` for VBR cells; `forward` is the connection
    /// whose forward cell (data or FRM) it is, if any, and `ccr` the CCR of an FRM.
    /// Returns true if this cell ended the interval (N cells).
    pub fn on_cell(
        &mut self,
        now: Time,
        vbr: bool,
        forward: Option<u16>,
        ccr: Option<f64>,
    ) -> bool {
        if vbr {
            self.vbr_cells += 1;
        } else {
            self.abr_cells += 1;
        }
        if let Some(v) = forward {
            let v = v as usize;
            if self.seen[v] != self.interval {
                self.seen[v] = self.interval;
                self.active += 1;
            }
            if let Some(c) = ccr {
                self.ccr[v] = c;
            }
        }
        self.cells += 1;
        if self.cells >= self.p.cells {
            self.end_interval(now);
            true
        } else {
            false
        }
    }

    /// Ends the current interval at `now`: capacity, load factor, fair share and the
    /// MaxAlloc hand-over, then starts the next.
    pub fn end_interval(&mut self, now: Time) {
        let dt = to_secs(now.saturating_sub(self.start));
        if dt > 0.0 {
            let vbr_rate = self.vbr_cells as f64 * CELL_BITS / dt;
            let abr_rate = self.abr_cells as f64 * CELL_BITS / dt;
            self.capacity = match self.p.plus {
                None => (self.p.target * self.rate - vbr_rate).max(0.0),
                Some(q) => {
                    let left = (self.rate - vbr_rate).max(0.0);
                    let tq = if left > 0.0 {
                        self.queue_cells as f64 * CELL_BITS / left
                    } else {
                        f64::INFINITY
                    };
                    q.fraction(tq) * left
                }
            };
            self.z = if self.capacity > 0.0 {
                abr_rate / self.capacity
            } else {
                f64::INFINITY
            };
            self.fair_share = self.capacity / self.active.max(1) as f64;
        }
        self.max_alloc_prev = self.max_alloc_cur;
        self.max_alloc_cur = 0.0;
        self.start = now;
        self.cells = 0;
        self.abr_cells = 0;
        self.vbr_cells = 0;
        self.active = 0;
        self.interval = self.interval.wrapping_add(1).max(1);
        self.intervals += 1;
    }

    /// The CCR of `vc` from its latest FRM at this port.
    pub fn ccr(&self, vc: u16) -> f64 {
        self.ccr[vc as usize]
    }

    /// The explicit rate ERICA gives `vc` now (for a backward RM cell), updating
    /// MaxAllocCurrent.
    pub fn explicit_rate(&mut self, vc: u16) -> f64 {
        let ccr = self.ccr[vc as usize];
        let vc_share = if self.z > 0.0 {
            ccr / self.z
        } else {
            f64::INFINITY
        };
        let mut er = if self.z > 1.0 + self.p.delta {
            self.fair_share.max(vc_share)
        } else {
            self.fair_share.max(vc_share).max(self.max_alloc_prev)
        };
        // Fair share first: a connection below the fair share is brought to it, no more.
        if er > self.fair_share && ccr < self.fair_share {
            er = self.fair_share;
        }
        er = er.min(self.capacity);
        self.max_alloc_cur = self.max_alloc_cur.max(er);
        er
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn micros(us: f64) -> Time {
        (us * 1e6).round() as Time
    }

    const C: f64 = 155.52e6;

    fn port(vcs: usize) -> EricaPort {
        EricaPort::new(EricaParams::lan(), C, vcs, 0)
    }

    /// Feeds `abr` ABR cells of the VCs in `who` (round robin, FRMs carrying `ccr`)
    /// and `vbr` VBR cells, then ends the interval at `t`.
    fn interval(p: &mut EricaPort, t: Time, who: &[(u16, f64)], abr: u32, vbr: u32) {
        for i in 0..abr {
            let (v, c) = who[i as usize % who.len()];
            p.cells = 0; // keep the N-cell rule out of the way: the test ends the interval
            p.on_cell(0, false, Some(v), Some(c));
        }
        for _ in 0..vbr {
            p.cells = 0;
            p.on_cell(0, true, None, None);
        }
        p.end_interval(t);
    }

    #[test]
    fn overload_branch_by_hand() {
        // 1 ms interval, 400 ABR cells (169.6 Mb/s) from two VCs, 50 VBR cells (21.2 Mb/s).
        let mut p = port(2);
        interval(&mut p, micros(1000.0), &[(0, 100e6), (1, 40e6)], 400, 50);
        let cap = 0.95 * C - 50.0 * 424.0 / 1e-3;
        assert!((p.capacity - cap).abs() < 1e-3);
        let z = 400.0 * 424.0 / 1e-3 / cap;
        assert!((p.z - z).abs() < 1e-9 && z > 1.1);
        assert!((p.fair_share - cap / 2.0).abs() < 1e-3);
        // VC 0: max(FS, CCR/z), no MaxAllocPrevious in overload.
        let er0 = p.explicit_rate(0);
        assert!((er0 - (cap / 2.0).max(100e6 / z)).abs() < 1e-3, "{er0}");
        // VC 1 is below the fair share: fair share first.
        let er1 = p.explicit_rate(1);
        assert!((er1 - cap / 2.0).abs() < 1e-3, "{er1}");
    }

    #[test]
    fn underload_branch_uses_max_alloc_previous() {
        let mut p = port(3);
        let cap = 0.95 * C;
        // Interval 1: 330 cells in 1 ms (139.92 Mb/s), z = 0.947: underload.
        interval(&mut p, micros(1000.0), &[(0, 120e6), (1, 10e6)], 330, 0);
        let z = 330.0 * 424.0 / 1e-3 / cap;
        assert!((p.z - z).abs() < 1e-9 && z < 1.1);
        // VC 0 is above the fair share: max(FS, CCR/z, MaxAllocPrevious = 0).
        let er0 = p.explicit_rate(0);
        assert!((er0 - 120e6 / z).abs() < 1e-3, "{er0}");
        // Interval 2, the same load: MaxAllocPrevious is er0 now.
        interval(&mut p, micros(2000.0), &[(0, 120e6), (1, 10e6)], 330, 0);
        // VC 1 is below the fair share: the fair share, not MaxAllocPrevious.
        let er1 = p.explicit_rate(1);
        assert!((er1 - cap / 2.0).abs() < 1e-3, "{er1}");
        // VC 2 (CCR 80 Mb/s, above the fair share, VCShare 84.5 Mb/s) gets
        // MaxAllocPrevious, the largest of the three.
        p.ccr[2] = 80e6;
        let er2 = p.explicit_rate(2);
        assert!(80e6 / z < er0 && cap / 2.0 < er0);
        assert!((er2 - er0).abs() < 1e-3, "{er2} vs {er0}");
    }

    #[test]
    fn n_cells_end_an_interval_and_active_counts_once() {
        let mut p = port(2);
        let mut ended = 0;
        for i in 0..100u32 {
            if p.on_cell(micros(i as f64), false, Some((i % 2) as u16), None) {
                ended += 1;
                // Two VCs were active in the interval that just ended.
                assert!((p.fair_share - p.capacity / 2.0).abs() < 1e-6);
            }
        }
        assert_eq!(ended, 2);
        assert_eq!(p.intervals, 2);
    }

    #[test]
    fn erica_plus_fraction_has_its_fixed_points() {
        let q = EricaPlus::wan();
        let t0 = 500e-6;
        assert!((q.fraction(0.0) - 1.15).abs() < 1e-12);
        assert!((q.fraction(t0) - 1.0).abs() < 1e-12);
        // Strictly decreasing on both sides of T0 and continuous at it.
        assert!(q.fraction(0.5 * t0) > 1.0 && q.fraction(0.5 * t0) < 1.15);
        assert!(q.fraction(2.0 * t0) < 1.0);
        assert!((q.fraction(t0 * (1.0 + 1e-9)) - 1.0).abs() < 1e-6);
        // b·T0 / ((b − 1)·Tq + T0) = 0.5 at Tq = (2b − 1)·T0 / (b − 1) = 22 T0: the floor
        // takes over beyond.
        assert!((q.fraction(22.0 * t0) - 0.5).abs() < 1e-9);
        assert_eq!(q.fraction(1e3 * t0), 0.5);
    }

    #[test]
    fn erica_plus_capacity_follows_the_queue() {
        let mut p = EricaParams::lan();
        p.plus = Some(EricaPlus::lan());
        let mut port = EricaPort::new(p, C, 2, 0);
        assert!((port.capacity - 1.15 * C).abs() < 1e-3);
        // 50 VBR cells in 1 ms leave C − 21.2 Mb/s; a queue of exactly T0 at that rate
        // gives the fraction 1.
        let left = C - 50.0 * CELL_BITS / 1e-3;
        port.queue_cells = 0;
        interval(&mut port, micros(1000.0), &[(0, 100e6)], 300, 50);
        assert!(
            (port.capacity - 1.15 * left).abs() < 1e-3,
            "{}",
            port.capacity
        );
        let cells_t0 = 100e-6 * left / CELL_BITS;
        port.queue_cells = cells_t0.round() as usize;
        interval(&mut port, micros(2000.0), &[(0, 100e6)], 300, 50);
        let want = EricaPlus::lan().fraction(port.queue_cells as f64 * CELL_BITS / left) * left;
        assert!((port.capacity - want).abs() < 1e-3);
        assert!((port.capacity / left - 1.0).abs() < 0.01);
        // A long queue: the drain limit.
        port.queue_cells = 1_000_000;
        interval(&mut port, micros(3000.0), &[(0, 100e6)], 300, 50);
        assert!((port.capacity - 0.5 * left).abs() < 1e-3);
    }
}
