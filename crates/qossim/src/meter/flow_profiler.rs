//! A host profiler for some flows only, as a port hook.

use super::Meter;
use crate::net::{marks, FlowId, Packet, PacketKind, PortHook, PortInfo};
use crate::time::Time;

/// Applies one meter per flow to the data packets of the flows `first..first + n` (and to
/// nothing else) on the port it sits on: the way a host's profiler is modelled when the
/// host's source is not an agent that marks its own packets (a CBR or UDP source). Put it
/// on the first link of the flows' path, so it sees their packets as they leave the host.
///
/// It counts, from `measure_from` on, the packets it left IN and OUT. As a port hook it
/// never discards a packet.
pub struct FlowProfiler {
    label: String,
    first: FlowId,
    meters: Vec<Box<dyn Meter>>,
    measure_from: Time,
    /// Packets marked IN (from the measurement start on).
    pub in_pkts: u64,
    /// Packets marked OUT (from the measurement start on).
    pub out_pkts: u64,
}

impl FlowProfiler {
    /// Meters the data packets of flow `first + k` with `meters[k]`; `label` names its
    /// counters in the report (`profile.LABEL.in_pkts`, `profile.LABEL.out_pkts`).
    pub fn new(label: &str, first: FlowId, meters: Vec<Box<dyn Meter>>) -> Self {
        FlowProfiler {
            label: label.to_string(),
            first,
            meters,
            measure_from: 0,
            in_pkts: 0,
            out_pkts: 0,
        }
    }

    /// Counts packets from `t` on only.
    pub fn measure_from(mut self, t: Time) -> Self {
        self.measure_from = t;
        self
    }

    /// The flows it meters.
    pub fn flows(&self) -> std::ops::Range<FlowId> {
        self.first..self.first + self.meters.len() as FlowId
    }

    /// The label of its counters.
    pub fn label(&self) -> &str {
        &self.label
    }
}

impl PortHook for FlowProfiler {
    fn on_arrival(&mut self, pkt: &mut Packet, now: Time, _port: &PortInfo) -> bool {
        let k = pkt.flow.wrapping_sub(self.first) as usize;
        if pkt.kind == PacketKind::Data && k < self.meters.len() {
            let is_in = self.meters[k].meter(pkt, now);
            debug_assert_eq!(is_in, pkt.has(marks::IN_PROFILE));
            if now >= self.measure_from {
                if is_in {
                    self.in_pkts += 1;
                } else {
                    self.out_pkts += 1;
                }
            }
        }
        true
    }
    fn wants_departures(&self) -> bool {
        false
    }
    fn report(&self, out: &mut Vec<(String, f64)>) {
        let p = format!("profile.{}.", self.label);
        out.push((p.clone() + "in_pkts", self.in_pkts as f64));
        out.push((p + "out_pkts", self.out_pkts as f64));
    }
    fn on_warmup(&mut self, now: Time) {
        self.measure_from = now;
        self.in_pkts = 0;
        self.out_pkts = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meter::TokenBucketProfiler;

    #[test]
    fn meters_only_its_flows_and_data() {
        // 8 Mb/s = 1 byte/us, depth 1000 B: a second back-to-back packet of the same flow
        // is OUT; each flow has its own bucket.
        let tb = || -> Box<dyn Meter> { Box::new(TokenBucketProfiler::new(8_000_000, 1000)) };
        let mut h = FlowProfiler::new("x", 2, vec![tb(), tb()]).measure_from(10);
        assert_eq!(h.flows(), 2..4);
        let info = PortInfo {
            rate_bps: 1,
            queue_pkts: 0,
            queue_bytes: 0,
        };
        let mut mine = [2u32, 3].map(|flow| Packet {
            size: 1000,
            flow,
            ..Default::default()
        });
        let mut other = Packet {
            size: 1000,
            flow: 4,
            marks: marks::IN_PROFILE,
            ..Default::default()
        };
        let mut ack = Packet {
            size: 1000,
            flow: 2,
            kind: PacketKind::Ack,
            ..Default::default()
        };
        assert!(h.on_arrival(&mut other, 10, &info));
        assert!(h.on_arrival(&mut ack, 10, &info));
        assert!(h.on_arrival(&mut mine[0], 10, &info));
        assert!(h.on_arrival(&mut mine[1], 10, &info));
        let mut again = mine[0];
        assert!(h.on_arrival(&mut again, 10, &info));
        assert!(other.has(marks::IN_PROFILE));
        assert!(!ack.has(marks::IN_PROFILE));
        assert!(mine[0].has(marks::IN_PROFILE));
        assert!(mine[1].has(marks::IN_PROFILE));
        assert!(!again.has(marks::IN_PROFILE));
        assert_eq!((h.in_pkts, h.out_pkts), (2, 1));
        // Before the measurement start nothing is counted (but packets are still marked).
        let mut early = Packet {
            size: 10,
            flow: 3,
            ..Default::default()
        };
        let mut h2 = FlowProfiler::new("y", 3, vec![Box::new(TokenBucketProfiler::new(8, 100))])
            .measure_from(10);
        h2.on_arrival(&mut early, 5, &info);
        assert!(early.has(marks::IN_PROFILE));
        assert_eq!((h2.in_pkts, h2.out_pkts), (0, 0));
        let mut out = Vec::new();
        h.report(&mut out);
        assert_eq!(out[0], ("profile.x.in_pkts".to_string(), 2.0));
    }
}
