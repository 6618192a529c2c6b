//! A policer demoting excess IN traffic of an aggregate to OUT.

use super::token_bucket::TokenBucket;
use crate::net::{marks, Packet, NONE};
use crate::time::Time;

/// IN packets a policer saw, and demoted, of one flow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlowPolicing {
    /// IN packets seen.
    pub in_seen: u64,
    /// IN packets demoted to OUT.
    pub demoted: u64,
}

/// A token bucket (`rate_bps`, `depth_bytes`, starting full) policing the IN traffic of an
/// aggregate, typically at a domain boundary.
///
/// An IN packet that finds at least its size in tokens takes them and stays IN; an IN
/// packet that does not is demoted: [`marks::IN_PROFILE`] is cleared, [`marks::DEMOTED`]
/// set, and it is counted. OUT packets (without the IN bit) pass untouched and take no
/// tokens. As a port hook it never discards a packet.
///
/// With [`Policer::track_flows`] it also counts IN packets seen and demoted per flow
/// ([`Policer::by_flow`]), for per-connection demotion figures.
#[derive(Clone, Debug)]
pub struct Policer {
    bucket: TokenBucket,
    track_flows: bool,
    by_flow: Vec<FlowPolicing>,
    /// IN packets seen.
    pub in_seen: u64,
    /// IN packets demoted to OUT.
    pub demoted: u64,
    /// OUT packets seen (passed untouched).
    pub out_seen: u64,
    /// Bytes of IN packets seen.
    pub in_seen_bytes: u64,
    /// Bytes of IN packets demoted.
    pub demoted_bytes: u64,
}

impl Policer {
    /// A policer for the contract (`rate_bps`, `depth_bytes`).
    pub fn new(rate_bps: u64, depth_bytes: u64) -> Self {
        Policer {
            bucket: TokenBucket::new(rate_bps, depth_bytes),
            track_flows: false,
            by_flow: Vec::new(),
            in_seen: 0,
            demoted: 0,
            out_seen: 0,
            in_seen_bytes: 0,
            demoted_bytes: 0,
        }
    }

    /// The bucket (rate, depth, tokens).
    pub fn bucket(&self) -> &TokenBucket {
        &self.bucket
    }

    /// Appends the policer's counters (IN packets seen, demoted, demoted fraction).
    pub fn report_counters(&self, out: &mut Vec<(String, f64)>) {
        out.push(("policer_in_pkts".into(), self.in_seen as f64));
        out.push(("policer_demoted_pkts".into(), self.demoted as f64));
        out.push(("policer_demoted_fraction".into(), self.demoted_fraction()));
    }

    /// Keeps per-flow counters ([`Policer::by_flow`]) from now on.
    pub fn track_flows(mut self, on: bool) -> Self {
        self.track_flows = on;
        self
    }

    /// Per-flow counters, indexed by flow id (empty unless tracking is on; flows never
    /// seen, or beyond the end, count zero).
    pub fn by_flow(&self) -> &[FlowPolicing] {
        &self.by_flow
    }

    /// The counters of one flow.
    pub fn flow(&self, flow: u32) -> FlowPolicing {
        self.by_flow.get(flow as usize).copied().unwrap_or_default()
    }

    /// Forgets the per-flow counters (at the end of a warm-up, say); the aggregate
    /// counters are kept.
    pub fn reset_flows(&mut self) {
        self.by_flow.clear();
    }

    /// Fraction of IN packets demoted (0 before any IN packet).
    pub fn demoted_fraction(&self) -> f64 {
        if self.in_seen == 0 {
            0.0
        } else {
            self.demoted as f64 / self.in_seen as f64
        }
    }

    /// Polices one packet at `now`; returns true if it leaves IN.
    #[inline]
    pub fn meter(&mut self, pkt: &mut Packet, now: Time) -> bool {
        if !pkt.has(marks::IN_PROFILE) {
            self.out_seen += 1;
            return false;
        }
        self.in_seen += 1;
        self.in_seen_bytes += pkt.size as u64;
        let keep = self.bucket.take(pkt.size, now);
        if !keep {
            pkt.clear(marks::IN_PROFILE);
            pkt.set(marks::DEMOTED);
            self.demoted += 1;
            self.demoted_bytes += pkt.size as u64;
        }
        if self.track_flows && pkt.flow != NONE {
            let f = pkt.flow as usize;
            if self.by_flow.len() <= f {
                self.by_flow.resize(f + 1, FlowPolicing::default());
            }
            let c = &mut self.by_flow[f];
            c.in_seen += 1;
            c.demoted += u64::from(!keep);
        }
        keep
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::Meter;
    use crate::net::{marks, PortHook, PortInfo};

    fn pkt(size: u32, m: u16) -> Packet {
        Packet {
            size,
            marks: m,
            ..Default::default()
        }
    }

    #[test]
    fn demotes_excess_in_and_leaves_out_alone() {
        // 8 Mb/s = 1 byte/us, depth 1000 B.
        let mut p = Policer::new(8_000_000, 1000);
        let mut a = pkt(1000, marks::IN_PROFILE);
        assert!(p.meter(&mut a, 0));
        assert_eq!(a.marks, marks::IN_PROFILE);
        // OUT packet with other marks: untouched, takes nothing.
        let mut o = pkt(1000, marks::ECN_CE);
        assert!(!p.meter(&mut o, 0));
        assert_eq!(o.marks, marks::ECN_CE);
        // No tokens: demoted.
        let mut b = pkt(1000, marks::IN_PROFILE | marks::ECN_CE);
        assert!(!p.meter(&mut b, 500_000_000));
        assert_eq!(b.marks, marks::DEMOTED | marks::ECN_CE);
        // 1000 us after the first packet the bucket is full again.
        let mut c = pkt(1000, marks::IN_PROFILE);
        assert!(p.meter(&mut c, 1_000_000_000));
        assert_eq!((p.in_seen, p.demoted, p.out_seen), (3, 1, 1));
        assert!((p.demoted_fraction() - 1.0 / 3.0).abs() < 1e-12);
        let mut out = Vec::new();
        Meter::report(&p, &mut out);
        let keys: Vec<&str> = out.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "policer_in_pkts",
                "policer_demoted_pkts",
                "policer_demoted_fraction"
            ]
        );
        assert_eq!(out[1].1, 1.0);
    }

    #[test]
    fn per_flow_counters() {
        // 8 Mb/s, depth 1000 B: every second back-to-back 1000-byte IN packet is demoted.
        let mut p = Policer::new(8_000_000, 1000).track_flows(true);
        for (i, flow) in [3u32, 1, 3, 1, 3].into_iter().enumerate() {
            let mut a = Packet {
                flow,
                ..pkt(1000, marks::IN_PROFILE)
            };
            p.meter(&mut a, i as Time * 500_000_000);
        }
        let mut o = Packet {
            flow: 1,
            ..pkt(1000, 0)
        };
        p.meter(&mut o, 0);
        assert_eq!(
            p.flow(3),
            FlowPolicing {
                in_seen: 3,
                demoted: 0
            }
        );
        assert_eq!(
            p.flow(1),
            FlowPolicing {
                in_seen: 2,
                demoted: 2
            }
        );
        assert_eq!(p.flow(7), FlowPolicing::default());
        assert_eq!((p.in_seen, p.demoted), (5, 2));
        p.reset_flows();
        assert!(p.by_flow().is_empty());
        assert_eq!(p.demoted, 2);
        // Without tracking nothing is kept per flow.
        let mut q = Policer::new(8_000_000, 1000);
        let mut a = pkt(1000, marks::IN_PROFILE);
        q.meter(&mut a, 0);
        assert!(q.by_flow().is_empty());
    }

    #[test]
    fn hook_passes_everything() {
        let mut p = Policer::new(1, 1);
        let info = PortInfo {
            rate_bps: 1,
            queue_pkts: 0,
            queue_bytes: 0,
        };
        let mut a = pkt(100, marks::IN_PROFILE);
        assert!(p.on_arrival(&mut a, 0, &info));
        assert!(a.has(marks::DEMOTED));
    }
}
