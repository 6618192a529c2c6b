//! The run summary: the world's own statistics (run, links, traffic entries, flows,
//! series), declared here beside the code that writes them.

use super::{World, FLOW_DETAIL_LIMIT};
use crate::metrics::batch_means;
use crate::metrics::declared::{stat, Stat, Window::*};
use crate::net::{Link, Packet, MARK_COUNTERS};
use crate::time::{to_secs, Time};
use serde_json::{json, Map, Value};

/// Statistics of the run as a whole.
pub const RUN_STATS: &[Stat] = &[
    stat("sim_time_s", "s", Run, "simulated time reached"),
    stat(
        "warmup_s",
        "s",
        Run,
        "the warm-up: statistics marked 'after warm-up' start here",
    ),
    stat("events", "events", Run, "events executed"),
    stat(
        "unroutable_pkts",
        "packets",
        Run,
        "packets discarded for want of a route",
    ),
];

/// Statistics of every link (`[links]`/`[topology]`), unless `link_metrics` leaves it out.
pub const LINK_STATS: &[Stat] = &[
    stat(
        "link.{link}.tx_pkts",
        "packets",
        Run,
        "packets whose transmission started",
    ),
    stat(
        "link.{link}.tx_pkts_after_warmup",
        "packets",
        AfterWarmup,
        "packets whose transmission started",
    ),
    stat(
        "link.{link}.offered_pkts_after_warmup",
        "packets",
        AfterWarmup,
        "packets offered to the output port",
    ),
    stat(
        "link.{link}.throughput_bps",
        "b/s",
        AfterWarmup,
        "bits put on the wire per second",
    ),
    stat(
        "link.{link}.utilization",
        "fraction",
        AfterWarmup,
        "throughput over the link's rate (at most 1)",
    ),
    stat(
        "link.{link}.{mark}_throughput_bps",
        "b/s",
        AfterWarmup,
        "throughput of the packets carrying a family's named mark (counted by transmission starts)",
    ),
    stat(
        "link.{link}.drops",
        "packets",
        Run,
        "packets dropped at the port, every cause",
    ),
    stat(
        "link.{link}.drops_overflow",
        "packets",
        Run,
        "drops of a full buffer (tail drops, and a discipline's own overflow)",
    ),
    stat(
        "link.{link}.drops_early",
        "packets",
        Run,
        "early (AQM) drops: RED's random and forced, CoDel's",
    ),
    stat(
        "link.{link}.drops_policed",
        "packets",
        Run,
        "packets discarded by a policer hook",
    ),
    stat(
        "link.{link}.drops_pushed_out",
        "packets",
        Run,
        "packets pushed out of a full priority buffer",
    ),
    stat(
        "link.{link}.drops_after_warmup",
        "packets",
        AfterWarmup,
        "packets dropped at the port, every cause",
    ),
    stat(
        "link.{link}.drops_overflow_after_warmup",
        "packets",
        AfterWarmup,
        "drops of a full buffer",
    ),
    stat(
        "link.{link}.drops_early_after_warmup",
        "packets",
        AfterWarmup,
        "early (AQM) drops",
    ),
    stat(
        "link.{link}.drops_policed_after_warmup",
        "packets",
        AfterWarmup,
        "packets discarded by a policer hook",
    ),
    stat(
        "link.{link}.drops_pushed_out_after_warmup",
        "packets",
        AfterWarmup,
        "packets pushed out of a full priority buffer",
    ),
    stat(
        "link.{link}.loss_ratio",
        "fraction",
        AfterWarmup,
        "drops over packets offered",
    ),
    stat(
        "link.{link}.queue_mean_pkts",
        "packets",
        AfterWarmup,
        "time-average of the packets waiting",
    ),
    stat(
        "link.{link}.queue_max_pkts",
        "packets",
        Run,
        "most packets waiting at once",
    ),
];

/// Statistics of every traffic entry (a group of flows measured together).
pub const GROUP_STATS: &[Stat] = &[
    stat("group.{traffic}.sent_pkts", "packets", Run, "packets its sources sent"),
    stat("group.{traffic}.rx_pkts", "packets", Run, "packets delivered to its destinations"),
    stat("group.{traffic}.sent_pkts_after_warmup", "packets", AfterWarmup, "packets its sources sent"),
    stat("group.{traffic}.rx_pkts_after_warmup", "packets", AfterWarmup, "packets delivered (whenever sent)"),
    stat("group.{traffic}.lost_pkts", "packets", AfterWarmup, "packets sent after the warm-up neither delivered nor still in the network at the end"),
    stat("group.{traffic}.loss_ratio", "fraction", AfterWarmup, "lost_pkts over sent_pkts_after_warmup"),
    stat("group.{traffic}.throughput_bps", "b/s", AfterWarmup, "bits delivered per second"),
    stat("group.{traffic}.delay_mean_s", "s", AfterWarmup, "mean one-way delay of the packets delivered"),
    stat("group.{traffic}.delay_{p50|p95|p99}_s", "s", AfterWarmup, "one-way delay percentile (to 1/128 of its value)"),
    stat("group.{traffic}.delay_max_s", "s", AfterWarmup, "largest one-way delay"),
    stat("group.{traffic}.jitter_mean_s", "s", AfterWarmup, "mean |difference| of the delays of consecutive packets of one flow (flows with a record of their own among the run's first 1024)"),
];

/// Per-flow statistics: for entries of at most 32 flows (`FLOWS_LISTED`) with records of
/// their own (`per_flow = true`), among the run's first 1024 flows. `{k}` is the flow's
/// index within its entry (in the order the flows were opened).
pub const FLOW_STATS: &[Stat] = &[
    stat(
        "flow.{traffic}.{k}.sent_pkts",
        "packets",
        AfterWarmup,
        "packets the flow's source sent",
    ),
    stat(
        "flow.{traffic}.{k}.lost_pkts",
        "packets",
        AfterWarmup,
        "of those, neither delivered nor in the network at the end",
    ),
    stat(
        "flow.{traffic}.{k}.loss_ratio",
        "fraction",
        AfterWarmup,
        "lost_pkts over sent_pkts",
    ),
    stat(
        "flow.{traffic}.{k}.delay_mean_s",
        "s",
        AfterWarmup,
        "mean one-way delay",
    ),
    stat(
        "flow.{traffic}.{k}.jitter_mean_s",
        "s",
        AfterWarmup,
        "mean |difference| of the delays of consecutive packets",
    ),
];

/// The series of `[[metric]]` entries under their default names (a `name` given in the
/// entry replaces the default; such a series has the unit of its kind).
pub const METRIC_SERIES: &[Stat] = &[
    stat("{link or traffic}.throughput", "b/s", Run, "series: bits per second sent on a link (link_throughput) or delivered to a traffic entry (group_throughput) in each interval"),
    stat("{link}.queue", "packets", Run, "series: packets waiting at the sampling instant (queue_length)"),
    stat("{link}.{queue_avg|queue_avg_in}", "packets", Run, "series: a RED or RIO port's average queue (queue_average; _in: RIO's IN average)"),
];

/// Summary figures of every time series (`[[metric]]` and the families' series).
pub const SERIES_STATS: &[Stat] = &[
    stat(
        "series.{series}.mean",
        "the series' unit",
        AfterWarmup,
        "mean of the samples after the warm-up",
    ),
    stat(
        "series.{series}.ci_half_width",
        "the series' unit",
        AfterWarmup,
        "95% batch-means confidence half-width of that mean (10 batches)",
    ),
    stat(
        "series.{series}.samples",
        "samples",
        AfterWarmup,
        "samples after the warm-up",
    ),
];

/// Series of the delay distribution of every traffic entry (the first
/// 32 (`DELAY_CDF_GROUPS`) with deliveries after the warm-up).
pub const DELAY_SERIES: &[Stat] = &[stat(
    "group.{traffic}.delay_cdf",
    "fraction",
    AfterWarmup,
    "series: fraction of the packets delivered with a one-way delay at most t (t: the delay in s, at the histogram's bucket edges, within 1/128)",
)];

/// How many traffic entries get a delay-distribution series.
pub const DELAY_CDF_GROUPS: usize = 32;

/// Entries of at most this many flows list them one by one (`flow.*`).
pub const FLOWS_LISTED: usize = 32;

/// A link's counters at the end of the warm-up.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct LinkMark {
    bits: f64,
    tx_pkts: u64,
    offered: u64,
    drops: u64,
    overflow: u64,
    early: u64,
    policed: u64,
    pushed_out: u64,
}

impl LinkMark {
    /// The counters of `l` at `now` (settled).
    pub(super) fn of(l: &Link, now: Time) -> Self {
        let d = &l.stats.drops;
        LinkMark {
            bits: l.bits_sent_by(now),
            tx_pkts: l.stats.tx_pkts,
            offered: l.stats.arrivals,
            drops: d.pkts,
            overflow: d.overflow_total(),
            early: d.early_total(),
            policed: d.policed,
            pushed_out: d.pushed_out.iter().sum(),
        }
    }
}

fn ratio(part: u64, whole: u64) -> Value {
    if whole == 0 {
        Value::Null
    } else {
        json!(part as f64 / whole as f64)
    }
}

impl World {
    /// The delay distribution of each traffic entry as a series `group.NAME.delay_cdf`:
    /// `t` the delay (s), `v` the fraction of packets delivered after the warm-up with at
    /// most that delay.
    pub fn delay_cdf_series(&self) -> Vec<crate::metrics::Series> {
        self.flows
            .groups
            .iter()
            .filter(|g| g.delay.count() > 0)
            .take(DELAY_CDF_GROUPS)
            .map(|g| {
                let (t, v) = g
                    .delay
                    .cdf()
                    .into_iter()
                    .map(|(d, f)| (d as f64 / 1e12, f))
                    .unzip();
                crate::metrics::Series {
                    name: format!("group.{}.delay_cdf", g.name),
                    t,
                    v,
                    unit: "fraction",
                }
            })
            .collect()
    }

    /// Packets still in the network (queues, wires, ports, agents) that were sent after
    /// the warm-up: per group, and per flow for the flows with a detail.
    fn held_fresh(&self) -> (Vec<u64>, Vec<u64>) {
        let mut groups = vec![0u64; self.flows.groups.len()];
        let mut flows = vec![0u64; self.flows.detail.len()];
        let warm = self.warmup;
        let recs = &self.flows.recs;
        let mut count = |p: &Packet| {
            if p.created < warm {
                return;
            }
            if let Some(r) = recs.get(p.flow as usize) {
                if r.sent_pkts == 0 {
                    return; // not counted as sent by a source (acknowledgements, cells)
                }
                groups[r.group as usize] += 1;
                if let Some(f) = flows.get_mut(p.flow as usize) {
                    *f += 1;
                }
            }
        };
        for l in &self.net.links {
            l.for_each_held(&mut count);
        }
        for (_, p) in &self.net.deferred {
            count(p);
        }
        for a in self.agents.slots.iter().flatten() {
            a.held(&mut count);
        }
        (groups, flows)
    }

    /// The summary of the run so far: flat keys (`link.NAME.x`, `group.NAME.x`,
    /// `flow.NAME.K.x`, `series.NAME.mean`, `agent.NAME.x`) mapped to numbers. Every key is
    /// declared ([`crate::metrics::declared`]).
    pub fn summary(&mut self) -> Map<String, Value> {
        let now = self.sched.now();
        self.net.settle_all(now, self.sched.key());
        let measured = to_secs(now.saturating_sub(self.warmup)).max(1e-12);
        let mut m = Map::new();
        m.insert("sim_time_s".into(), json!(to_secs(now)));
        m.insert("warmup_s".into(), json!(to_secs(self.warmup)));
        m.insert("events".into(), json!(self.sched.processed()));
        m.insert("unroutable_pkts".into(), json!(self.net.unroutable));
        self.link_summary(now, measured, &mut m);
        self.group_summary(measured, &mut m);
        let warm = to_secs(self.warmup);
        for s in self
            .samplers
            .iter()
            .map(|s| &s.series)
            .chain(self.rec.series.iter())
        {
            let vals: Vec<f64> =
                s.t.iter()
                    .zip(&s.v)
                    .filter(|(t, _)| **t > warm)
                    .map(|(_, v)| *v)
                    .collect();
            if vals.is_empty() {
                continue;
            }
            let e = batch_means(&vals, 10);
            let p = format!("series.{}.", s.name);
            m.insert(p.clone() + "mean", json!(e.mean));
            m.insert(p.clone() + "ci_half_width", json!(e.half_width));
            m.insert(p.clone() + "samples", json!(vals.len()));
        }
        for (i, slot) in self.agents.slots.iter().enumerate() {
            if let Some(a) = slot {
                let mut out = Vec::new();
                a.report(now, &mut out);
                let name = self.agents.name(i as super::AgentId);
                let name = if name.is_empty() {
                    format!("#{i}")
                } else {
                    name.to_string()
                };
                for (k, v) in out {
                    m.insert(format!("agent.{name}.{k}"), v);
                }
            }
        }
        m
    }

    fn link_summary(&self, now: Time, measured: f64, m: &mut Map<String, Value>) {
        for (i, l) in self.net.links.iter().enumerate() {
            if !self.link_in_summary.is_empty() && !self.link_in_summary[i] {
                continue;
            }
            let base = self
                .link_tx_at_warmup
                .get(i)
                .copied()
                .unwrap_or((0, [0; MARK_COUNTERS]));
            let mark = self.link_at_warmup.get(i).copied().unwrap_or_default();
            let p = format!("link.{}.", l.name);
            let st = &l.stats;
            let d = &st.drops;
            // Bits on the wire in the window, the packet under way at either end counted
            // for its part sent (never more than the rate allows).
            let bits = (l.bits_sent_by(now) - mark.bits).max(0.0);
            m.insert(p.clone() + "tx_pkts", json!(st.tx_pkts));
            m.insert(
                p.clone() + "tx_pkts_after_warmup",
                json!(st.tx_pkts - mark.tx_pkts),
            );
            let offered = st.arrivals - mark.offered;
            m.insert(p.clone() + "offered_pkts_after_warmup", json!(offered));
            m.insert(p.clone() + "throughput_bps", json!(bits / measured));
            m.insert(
                p.clone() + "utilization",
                json!(bits / measured / l.rate_bps as f64),
            );
            for (slot, name, _) in l.counted_marks() {
                m.insert(
                    format!("{p}{name}_throughput_bps"),
                    json!((st.tx_bytes_marked[slot] - base.1[slot]) as f64 * 8.0 / measured),
                );
            }
            let pushed_out: u64 = d.pushed_out.iter().sum();
            m.insert(p.clone() + "drops", json!(d.pkts));
            m.insert(p.clone() + "drops_overflow", json!(d.overflow_total()));
            m.insert(p.clone() + "drops_early", json!(d.early_total()));
            m.insert(p.clone() + "drops_policed", json!(d.policed));
            m.insert(p.clone() + "drops_pushed_out", json!(pushed_out));
            let after = [
                ("drops_after_warmup", d.pkts - mark.drops),
                (
                    "drops_overflow_after_warmup",
                    d.overflow_total() - mark.overflow,
                ),
                ("drops_early_after_warmup", d.early_total() - mark.early),
                ("drops_policed_after_warmup", d.policed - mark.policed),
                (
                    "drops_pushed_out_after_warmup",
                    pushed_out - mark.pushed_out,
                ),
            ];
            for (k, v) in after {
                m.insert(p.clone() + k, json!(v));
            }
            m.insert(
                p.clone() + "loss_ratio",
                ratio(d.pkts - mark.drops, offered),
            );
            m.insert(p.clone() + "queue_mean_pkts", json!(st.queue_avg.mean(now)));
            m.insert(p.clone() + "queue_max_pkts", json!(st.queue_max));
            let mut extra = Vec::new();
            l.qdisc.report(&mut extra);
            for h in &l.hooks {
                h.report(&mut extra);
            }
            for (k, v) in extra {
                m.insert(p.clone() + &k, json!(v));
            }
        }
    }

    fn group_summary(&self, measured: f64, m: &mut Map<String, Value>) {
        let (held_groups, held_flows) = self.held_fresh();
        let ngroups = self.flows.groups.len();
        // Per group: its detailed flows (own records), and the jitter over them.
        let mut listed: Vec<Vec<usize>> = vec![Vec::new(); ngroups];
        let mut own = vec![0usize; ngroups];
        let mut jitter = vec![(0u128, 0u64); ngroups];
        for (f, r) in self.flows.recs.iter().enumerate() {
            let g = r.group as usize;
            match self.flows.detail.get(f) {
                Some(d) if d.own => {
                    own[g] += 1;
                    listed[g].push(f);
                    jitter[g].0 += d.jitter_sum;
                    jitter[g].1 += d.jitter_n;
                }
                Some(_) => {}
                None => own[g] = usize::MAX, // some flows have no detail: not listed
            }
        }
        for (gi, g) in self.flows.groups.iter().enumerate() {
            let p = format!("group.{}.", g.name);
            m.insert(p.clone() + "sent_pkts", json!(g.sent_pkts));
            m.insert(p.clone() + "rx_pkts", json!(g.rx_pkts));
            m.insert(
                p.clone() + "sent_pkts_after_warmup",
                json!(g.sent_pkts_measured),
            );
            m.insert(
                p.clone() + "rx_pkts_after_warmup",
                json!(g.rx_pkts_measured),
            );
            let lost = g
                .sent_pkts_measured
                .saturating_sub(g.rx_fresh_pkts + held_groups[gi]);
            m.insert(p.clone() + "lost_pkts", json!(lost));
            m.insert(p.clone() + "loss_ratio", ratio(lost, g.sent_pkts_measured));
            m.insert(
                p.clone() + "throughput_bps",
                json!(g.rx_bytes_measured as f64 * 8.0 / measured),
            );
            if g.delay.count() > 0 {
                m.insert(p.clone() + "delay_mean_s", json!(g.delay.mean() / 1e12));
                for (q, k) in [(0.5, "p50"), (0.95, "p95"), (0.99, "p99")] {
                    m.insert(
                        format!("{p}delay_{k}_s"),
                        json!(g.delay.quantile(q) as f64 / 1e12),
                    );
                }
                m.insert(
                    p.clone() + "delay_max_s",
                    json!(g.delay.max() as f64 / 1e12),
                );
            }
            let (js, jn) = jitter[gi];
            if jn > 0 {
                m.insert(
                    p.clone() + "jitter_mean_s",
                    json!(js as f64 / jn as f64 / 1e12),
                );
            }
            if own[gi] == 0 || own[gi] > FLOWS_LISTED {
                continue;
            }
            for (k, &f) in listed[gi].iter().enumerate() {
                let d = &self.flows.detail[f];
                let q = format!("flow.{}.{k}.", g.name);
                let lost = d.sent_pkts.saturating_sub(d.rx_pkts + held_flows[f]);
                m.insert(q.clone() + "sent_pkts", json!(d.sent_pkts));
                m.insert(q.clone() + "lost_pkts", json!(lost));
                m.insert(q.clone() + "loss_ratio", ratio(lost, d.sent_pkts));
                if d.delayed_pkts > 0 {
                    m.insert(
                        q.clone() + "delay_mean_s",
                        json!(d.delay_sum as f64 / d.delayed_pkts as f64 / 1e12),
                    );
                }
                if d.jitter_n > 0 {
                    m.insert(
                        q + "jitter_mean_s",
                        json!(d.jitter_sum as f64 / d.jitter_n as f64 / 1e12),
                    );
                }
            }
        }
        debug_assert!(self.flows.detail.len() <= FLOW_DETAIL_LIMIT);
    }
}
