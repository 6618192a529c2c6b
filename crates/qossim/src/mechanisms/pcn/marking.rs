//! Admission marking: the virtual-queue marker of a PCN bottleneck link.

use super::marks;
use crate::meter::Meter;
use crate::net::Packet;
use crate::rng::Rng;
use crate::time::{Time, PS_PER_S};

/// How the admission-marking probability grows with the virtual queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MarkingCurve {
    /// Linear between the min- and max-marking-thresholds (0 below min, 1 from max).
    #[default]
    Ramp,
    /// 0 below the max-marking-threshold, 1 from it (min and max collapsed at max).
    Step,
}

/// The virtual-queue thresholds, given as times at the configured-admissible-rate `Ra`
/// (`bytes = seconds × Ra / 8`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VqThresholds {
    /// min-marking-threshold, seconds at `Ra`.
    pub min_s: f64,
    /// max-marking-threshold, seconds at `Ra`.
    pub max_s: f64,
    /// virtual-queue-upper-limit `Lmax`, seconds at `Ra`.
    pub limit_s: f64,
}

impl Default for VqThresholds {
    /// The study's defaults: 5 ms, 15 ms, 20 ms.
    fn default() -> Self {
        VqThresholds {
            min_s: 0.005,
            max_s: 0.015,
            limit_s: 0.020,
        }
    }
}

impl VqThresholds {
    /// Thresholds from milliseconds (min, max, limit).
    pub fn from_ms(min_ms: f64, max_ms: f64, limit_ms: f64) -> Self {
        VqThresholds {
            min_s: min_ms / 1e3,
            max_s: max_ms / 1e3,
            limit_s: limit_ms / 1e3,
        }
    }
}

/// The admission-marking probability for a virtual queue of `vq` bytes, with thresholds
/// `min` and `max` in bytes, under `curve` (the study's pseudo-code). A ramp whose min and
/// max coincide is the step.
pub fn admission_marking_probability(curve: MarkingCurve, vq: f64, min: f64, max: f64) -> f64 {
    match curve {
        MarkingCurve::Ramp => {
            // "vq >= max" is tested first so that a ramp with min = max is the step.
            if vq >= max {
                1.0
            } else if vq <= min {
                0.0
            } else {
                (vq - min) / (max - min)
            }
        }
        MarkingCurve::Step => {
            if vq >= max {
                1.0
            } else {
                0.0
            }
        }
    }
}

/// Bytes a rate of `rate_bps` drains in `dt` picoseconds, as `rate × dt / (8·10¹²)` in
/// one floating-point division (exact whenever the true value is a representable number).
#[inline]
fn drained_bytes(rate_bps: u64, dt: Time) -> f64 {
    rate_bps as f64 * dt as f64 / (8.0 * PS_PER_S as f64)
}

/// The admission marker of a PCN bottleneck link: a virtual queue (VQ) drained
/// continuously at the configured-admissible-rate `Ra` and capped at the
/// virtual-queue-upper-limit `Lmax`.
///
/// On every arriving PCN packet (one carrying [`marks::PCN`]) of `s` bytes:
/// `vq ← max(0, vq − Ra·(now − last)/8)`; the packet is admission-marked
/// ([`marks::PCN_ADMISSION`]) with probability `p(vq)` (see
/// [`admission_marking_probability`]), drawn from the marker's own random stream; then
/// `vq ← min(Lmax, vq + s)`. Other packets pass untouched and do not enter the VQ.
/// The VQ is kept in `f64` bytes. As a port hook it never discards a packet and needs no
/// departure calls.
#[derive(Clone, Debug)]
pub struct VirtualQueueMarker {
    ra_bps: u64,
    curve: MarkingCurve,
    min: f64,
    max: f64,
    limit: f64,
    vq: f64,
    last: Time,
    rng: Rng,
    /// PCN packets seen.
    pub pcn_pkts: u64,
    /// PCN bytes seen.
    pub pcn_bytes: u64,
    /// PCN packets this marker admission-marked (whether or not already marked upstream).
    pub admission_marked_pkts: u64,
    /// Bytes of the packets this marker admission-marked.
    pub admission_marked_bytes: u64,
}

impl VirtualQueueMarker {
    /// A marker for the configured-admissible-rate `ra_bps` with thresholds `th` (times at
    /// `Ra`), marking `curve`, drawing from `rng`. The VQ starts empty at time 0.
    pub fn new(ra_bps: u64, th: VqThresholds, curve: MarkingCurve, rng: Rng) -> Self {
        assert!(ra_bps > 0, "configured-admissible-rate must be positive");
        let bytes = |s: f64| s * ra_bps as f64 / 8.0;
        let (min, max, limit) = (bytes(th.min_s), bytes(th.max_s), bytes(th.limit_s));
        assert!(
            min <= max && max <= limit,
            "VQ thresholds must satisfy min <= max <= limit"
        );
        VirtualQueueMarker {
            ra_bps,
            curve,
            min,
            max,
            limit,
            vq: 0.0,
            last: 0,
            rng,
            pcn_pkts: 0,
            pcn_bytes: 0,
            admission_marked_pkts: 0,
            admission_marked_bytes: 0,
        }
    }

    /// The configured-admissible-rate, bits per second.
    pub fn ra_bps(&self) -> u64 {
        self.ra_bps
    }

    /// The marking curve.
    pub fn curve(&self) -> MarkingCurve {
        self.curve
    }

    /// (min-marking-threshold, max-marking-threshold, upper limit), bytes.
    pub fn thresholds_bytes(&self) -> (f64, f64, f64) {
        (self.min, self.max, self.limit)
    }

    /// The VQ in bytes as of the last PCN arrival (after adding it).
    pub fn vq_bytes(&self) -> f64 {
        self.vq
    }

    /// The VQ in bytes at `now` (drained since the last arrival), without changing it.
    pub fn vq_at(&self, now: Time) -> f64 {
        (self.vq - drained_bytes(self.ra_bps, now.saturating_sub(self.last))).max(0.0)
    }

    /// The marking probability a PCN packet arriving at `now` would see.
    pub fn probability_at(&self, now: Time) -> f64 {
        admission_marking_probability(self.curve, self.vq_at(now), self.min, self.max)
    }

    /// Meters one packet at `now` (calls in non-decreasing time order); returns true if
    /// this marker admission-marked it.
    #[inline]
    pub fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        if !pkt.has(marks::PCN) {
            return false;
        }
        if now > self.last {
            self.vq = (self.vq - drained_bytes(self.ra_bps, now - self.last)).max(0.0);
            self.last = now;
        }
        let p = admission_marking_probability(self.curve, self.vq, self.min, self.max);
        let marked = self.rng.bernoulli(p);
        if marked {
            pkt.set(marks::PCN_ADMISSION);
            self.admission_marked_pkts += 1;
            self.admission_marked_bytes += pkt.size as u64;
        }
        self.pcn_pkts += 1;
        self.pcn_bytes += pkt.size as u64;
        self.vq = (self.vq + pkt.size as f64).min(self.limit);
        marked
    }
}

impl Meter for VirtualQueueMarker {
    #[inline]
    fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        VirtualQueueMarker::meter(self, pkt, now)
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        out.push(("pcn_vq.pcn_pkts".into(), self.pcn_pkts as f64));
        out.push((
            "pcn_vq.admission_marked_pkts".into(),
            self.admission_marked_pkts as f64,
        ));
        out.push((
            "pcn_vq.admission_marked_fraction".into(),
            if self.pcn_pkts > 0 {
                self.admission_marked_pkts as f64 / self.pcn_pkts as f64
            } else {
                0.0
            },
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pcn(size: u32) -> Packet {
        Packet {
            size,
            marks: marks::PCN,
            ..Default::default()
        }
    }

    #[test]
    fn thresholds_are_times_at_ra() {
        // 10 Mb/s: 5 ms = 6250 B, 15 ms = 18750 B, 20 ms = 25000 B.
        let m = VirtualQueueMarker::new(
            10_000_000,
            VqThresholds::default(),
            MarkingCurve::Ramp,
            Rng::from_seed(1),
        );
        assert_eq!(m.thresholds_bytes(), (6250.0, 18750.0, 25000.0));
    }

    #[test]
    fn probability_follows_the_pseudo_code() {
        use MarkingCurve::*;
        let f = admission_marking_probability;
        assert_eq!(f(Ramp, 100.0, 100.0, 300.0), 0.0);
        assert_eq!(f(Ramp, 150.0, 100.0, 300.0), 0.25);
        assert_eq!(f(Ramp, 300.0, 100.0, 300.0), 1.0);
        assert_eq!(f(Ramp, 1e9, 100.0, 300.0), 1.0);
        assert_eq!(f(Step, 299.9, 100.0, 300.0), 0.0);
        assert_eq!(f(Step, 300.0, 100.0, 300.0), 1.0);
        // Collapsed thresholds under the ramp behave as a step at max.
        assert_eq!(f(Ramp, 299.0, 300.0, 300.0), 0.0);
        assert_eq!(f(Ramp, 300.0, 300.0, 300.0), 1.0);
    }

    #[test]
    fn non_pcn_packets_are_ignored() {
        let mut m = VirtualQueueMarker::new(
            1_000_000,
            VqThresholds::from_ms(0.0, 0.0, 20.0),
            MarkingCurve::Ramp,
            Rng::from_seed(1),
        );
        let mut p = Packet {
            size: 1000,
            ..Default::default()
        };
        for _ in 0..10 {
            assert!(!m.meter(&mut p, 0));
        }
        assert_eq!(p.marks, 0);
        assert_eq!(m.vq_bytes(), 0.0);
        assert_eq!(m.pcn_pkts, 0);
        // With min = max = 0 every PCN packet finds vq >= max and is marked.
        let mut q = pcn(1000);
        assert!(m.meter(&mut q, 0));
        assert_eq!(m.vq_bytes(), 1000.0);
        assert!(q.has(marks::PCN_ADMISSION | marks::PCN));
    }
}
