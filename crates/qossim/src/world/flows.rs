//! Flow and group bookkeeping: what every flow sent and delivered, per group.

use super::*;

/// Per-flow counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowRecord {
    /// Group the flow is counted in.
    pub group: u32,
    /// Packets sent by the source.
    pub sent_pkts: u64,
    /// Bytes sent by the source.
    pub sent_bytes: u64,
    /// Packets delivered.
    pub rx_pkts: u64,
    /// Bytes delivered.
    pub rx_bytes: u64,
    /// When the flow started.
    pub start: Time,
    /// When it stopped sending ([`crate::time::NEVER`] while active).
    pub stop: Time,
}

/// Per-group counters: a group is a set of flows measured together (a traffic class, an
/// ingress-egress aggregate, all flows of a generator).
#[derive(Clone, Debug, Default)]
pub struct GroupStats {
    /// Group name.
    pub name: String,
    /// Packets sent (all time).
    pub sent_pkts: u64,
    /// Bytes sent (all time).
    pub sent_bytes: u64,
    /// Packets delivered (all time).
    pub rx_pkts: u64,
    /// Bytes delivered (all time).
    pub rx_bytes: u64,
    /// Bytes delivered after the warm-up.
    pub rx_bytes_measured: u64,
    /// Packets sent after the warm-up.
    pub sent_pkts_measured: u64,
    /// Packets delivered after the warm-up.
    pub rx_pkts_measured: u64,
    /// One-way delay of packets delivered after the warm-up, picoseconds.
    pub delay: Histogram,
    /// The one record its flows without their own share ([`Flows::open_shared`]).
    pub shared_flow: Option<FlowId>,
    /// Packets delivered that were sent after the warm-up (with `sent_pkts_measured` and
    /// the packets still in the network, this gives the packets lost after the warm-up).
    pub rx_fresh_pkts: u64,
}

/// Per-flow delay and loss counters, kept for the first [`FLOW_DETAIL_LIMIT`] flow records
/// of a run (all counted after the warm-up).
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowDetail {
    /// False for a group's shared record (its packets are several flows').
    pub own: bool,
    /// Packets sent after the warm-up.
    pub sent_pkts: u64,
    /// Packets sent after the warm-up and delivered.
    pub rx_pkts: u64,
    /// Packets delivered after the warm-up (whenever sent), whose delays are summed.
    pub delayed_pkts: u64,
    /// Sum of their one-way delays, picoseconds.
    pub delay_sum: u128,
    /// The one-way delay of the last packet delivered, picoseconds.
    pub last_delay: Option<Time>,
    /// Sum of |delay - previous delay| over consecutive deliveries, picoseconds.
    pub jitter_sum: u128,
    /// Number of such differences.
    pub jitter_n: u64,
}

/// How many flow records (the first opened) keep a [`FlowDetail`].
pub const FLOW_DETAIL_LIMIT: usize = 1024;

impl FlowDetail {
    /// Counts a delivery after the warm-up of a packet delayed `delay` (sent after the
    /// warm-up if `fresh`).
    #[inline]
    pub(super) fn note(&mut self, delay: Time, fresh: bool) {
        self.rx_pkts += u64::from(fresh);
        self.delayed_pkts += 1;
        self.delay_sum += u128::from(delay);
        if self.own {
            if let Some(last) = self.last_delay {
                self.jitter_sum += u128::from(delay.abs_diff(last));
                self.jitter_n += 1;
            }
            self.last_delay = Some(delay);
        }
    }
}

/// The flow table and per-group statistics.
#[derive(Default)]
pub struct Flows {
    /// Flow records, indexed by [`FlowId`].
    pub recs: Vec<FlowRecord>,
    /// Group statistics.
    pub groups: Vec<GroupStats>,
    /// Group name -> the first group of that name.
    pub(super) group_ids: HashMap<String, u32>,
    pub(super) warmup: Time,
    /// Packets taken out of the network undelivered, per flow; kept only while run
    /// invariants are checked ([`World::check_flows`]).
    pub(super) ledger: Option<SharedLedger>,
    /// Delay and loss detail of the first flow records (index: flow id).
    pub detail: Vec<FlowDetail>,
    /// How many records get a detail (0: none; [`World::new`] sets
    /// [`FLOW_DETAIL_LIMIT`]).
    pub detail_limit: usize,
}

impl Flows {
    /// Counts a data packet of a flow that an agent took out of the network without
    /// delivering it (a duplicate at a receiver, a drop inside a station). Only the
    /// conservation check reads it; without that check it costs a branch.
    #[inline]
    pub fn discarded(&mut self, pkt: &Packet) {
        if let Some(l) = &self.ledger {
            ledger_add(l, pkt);
        }
    }

    /// Registers a flow in `group` starting at `now`.
    pub fn open(&mut self, group: u32, now: Time) -> FlowId {
        self.recs.push(FlowRecord {
            group,
            start: now,
            stop: crate::time::NEVER,
            ..Default::default()
        });
        if self.recs.len() <= self.detail_limit {
            self.detail.push(FlowDetail {
                own: true,
                ..Default::default()
            });
        }
        (self.recs.len() - 1) as FlowId
    }
    /// Opens a flow of `group` without a record of its own: it shares the group's one
    /// aggregate record (created on first use), so its packets are counted in the group
    /// and in that record only. For flows nobody measures individually: they cost no
    /// per-flow memory. The shared record's `start` is its first flow's start and it is
    /// never closed.
    pub fn open_shared(&mut self, group: u32, now: Time) -> FlowId {
        if let Some(f) = self.groups[group as usize].shared_flow {
            return f;
        }
        let f = self.open(group, now);
        self.groups[group as usize].shared_flow = Some(f);
        if let Some(d) = self.detail.get_mut(f as usize) {
            d.own = false;
        }
        f
    }
    /// Marks a flow as stopped (a shared record stays open).
    pub fn close(&mut self, flow: FlowId, now: Time) {
        if let Some(r) = self.recs.get_mut(flow as usize) {
            if self.groups[r.group as usize].shared_flow != Some(flow) {
                r.stop = r.stop.min(now);
            }
        }
    }
    /// Counts a packet sent by a flow's source.
    #[inline]
    pub fn sent(&mut self, pkt: &Packet, now: Time) {
        let r = &mut self.recs[pkt.flow as usize];
        r.sent_pkts += 1;
        r.sent_bytes += pkt.size as u64;
        let g = &mut self.groups[r.group as usize];
        g.sent_pkts += 1;
        g.sent_bytes += pkt.size as u64;
        if now >= self.warmup {
            g.sent_pkts_measured += 1;
            if let Some(d) = self.detail.get_mut(pkt.flow as usize) {
                d.sent_pkts += 1;
            }
        }
    }
    /// Counts a packet delivered to its destination agent.
    #[inline(always)]
    pub fn delivered(&mut self, pkt: &Packet, now: Time) {
        let r = &mut self.recs[pkt.flow as usize];
        r.rx_pkts += 1;
        r.rx_bytes += pkt.size as u64;
        let g = &mut self.groups[r.group as usize];
        g.rx_pkts += 1;
        g.rx_bytes += pkt.size as u64;
        if now >= self.warmup {
            let delay = now - pkt.created;
            let fresh = pkt.created >= self.warmup;
            g.rx_bytes_measured += pkt.size as u64;
            g.rx_pkts_measured += 1;
            g.rx_fresh_pkts += u64::from(fresh);
            g.delay.record(delay);
            if let Some(d) = self.detail.get_mut(pkt.flow as usize) {
                d.note(delay, fresh);
            }
        }
    }
    /// Adds a group and returns its id.
    pub fn add_group(&mut self, name: &str) -> u32 {
        self.groups.push(GroupStats {
            name: name.to_string(),
            ..Default::default()
        });
        let id = (self.groups.len() - 1) as u32;
        self.group_ids.entry(name.to_string()).or_insert(id);
        id
    }
    /// Looks a group up by name (the first added, if several share it).
    pub fn group_id(&self, name: &str) -> Option<u32> {
        self.group_ids.get(name).copied()
    }
}
