//! The output-queued ATM switch of the study: ERICA on every output port and, where a
//! point-to-multipoint connection branches, cell replication and one of four ways of
//! consolidating the branches' feedback.

use super::cell::{Cell, CellKind, CLASS_ABR, CLASS_VBR};
use super::erica::{EricaParams, EricaPort};
use super::source::{emit, Hop};
use crate::packet::{AgentId, LinkId, NodeId, Packet};
use crate::time::Time;
use crate::world::{Agent, Ctx};

/// How a branch point consolidates the feedback of its branches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Consolidation {
    /// Return a BRM for every FRM, with the minimum of the branches' ERICA rates and of
    /// the branch BRMs received since the last one; absorb branch BRMs.
    Turnaround,
    /// As turnaround, but return a BRM only if a branch BRM arrived since the last one.
    Flag,
    /// Return the consolidated BRM only when every branch has reported since the last
    /// one, or when `timeout` passed since the last one (a silent branch).
    AllBranches {
        /// How long a silent branch may hold feedback back.
        timeout: Time,
    },
    /// No turnaround: pass one branch BRM upstream (with the minimum ER seen since the
    /// last one) when an FRM has raised the flag since, then clear flag and minimum.
    PassThrough,
}

impl Consolidation {
    /// The name used in scenarios.
    pub fn name(&self) -> &'static str {
        match self {
            Consolidation::Turnaround => "turnaround",
            Consolidation::Flag => "flag",
            Consolidation::AllBranches { .. } => "all_branches",
            Consolidation::PassThrough => "pass_through",
        }
    }
}

/// The largest ABR queue of a port over two spans of a run: after the warm-up, and in
/// the steady state (from `steady_from` on, the second half of the run), where a queue
/// built only by the sources' initial rate has been drained or is draining.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueMax {
    /// Largest queue after the warm-up, cells.
    pub warm: usize,
    /// Largest queue from `steady_from` on, cells.
    pub steady: usize,
    /// Start of the steady state.
    pub steady_from: Time,
}

impl QueueMax {
    /// A tracker whose steady state starts at `steady_from`.
    pub fn new(steady_from: Time) -> Self {
        QueueMax {
            warm: 0,
            steady: 0,
            steady_from,
        }
    }

    /// Notes a queue of `n` cells at `now` (after the warm-up).
    #[inline]
    pub fn observe(&mut self, now: Time, n: usize) {
        self.warm = self.warm.max(n);
        if now >= self.steady_from {
            self.steady = self.steady.max(n);
        }
    }
}

/// One output port of a switch.
pub struct SwitchPort {
    /// The output link.
    pub link: LinkId,
    /// ERICA's state at the port.
    pub erica: EricaPort,
    /// Largest ABR queue seen, cells, after the warm-up and in the steady state.
    pub max_queue: QueueMax,
    /// Whether its utilization is sampled (a trunk link carrying forward cells).
    pub trunk: bool,
    queue_series: usize,
    util_series: usize,
    last_tx: u64,
}

/// A connection as a switch sees it: the way back towards its source and its branches.
#[derive(Clone, Debug)]
pub struct VcAtSwitch {
    /// Towards the source (backward cells).
    pub up: Hop,
    /// Forward branches: (port index, agent at the far end).
    pub branches: Vec<(usize, AgentId)>,
    /// A VBR connection (no RM cells, strict priority).
    pub vbr: bool,
    mer: f64,
    mxr: f64,
    ci: bool,
    ni: bool,
    any_brm: bool,
    reported: u64,
    last_sent: Time,
    flag: bool,
}

impl VcAtSwitch {
    /// A connection coming from `up`, leaving on `branches`, with peak rate `pcr`.
    pub fn new(up: Hop, branches: Vec<(usize, AgentId)>, vbr: bool, pcr: f64) -> Self {
        VcAtSwitch {
            up,
            branches,
            vbr,
            mer: pcr,
            mxr: pcr,
            ci: false,
            ni: false,
            any_brm: false,
            reported: 0,
            last_sent: 0,
            flag: false,
        }
    }
}

/// Counts of a branch point's consolidation, per connection.
#[derive(Clone, Copy, Debug, Default)]
pub struct BranchCounts {
    /// BRMs returned (or passed) upstream.
    pub returned: u64,
    /// Branch BRMs absorbed.
    pub absorbed: u64,
    /// BRMs returned although no branch BRM had arrived since the previous one (their ER
    /// holds only the branch point's own ERICA rates: the source of consolidation noise).
    pub returned_blind: u64,
}

const SAMPLE: u32 = u32::MAX - 1;
const STEADY: u32 = u32::MAX - 2;

/// An output-queued switch: an agent every cell of a connection through this node is
/// addressed to, which accounts it at its output ports (ERICA), replicates it onto the
/// connection's branches and stamps or consolidates backward RM cells.
pub struct AbrSwitch {
    name: String,
    node: NodeId,
    /// Output ports.
    pub ports: Vec<SwitchPort>,
    vcs: Vec<Option<VcAtSwitch>>,
    mode: Consolidation,
    pcr: f64,
    sample: Time,
    warmup: Time,
    /// Per connection: what the branch point did.
    pub counts: Vec<BranchCounts>,
}

impl AbrSwitch {
    /// The switch called `name` at `node`, with one ERICA port per output link in
    /// `ports` (link, rate, trunk), for `vcs` connections; queue maxima count after
    /// `warmup` and, for the steady state, from `steady_from`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        name: &str,
        node: NodeId,
        ports: &[(LinkId, f64, bool)],
        erica: EricaParams,
        vcs: usize,
        mode: Consolidation,
        pcr: f64,
        sample: Time,
        warmup: Time,
        steady_from: Time,
    ) -> Self {
        AbrSwitch {
            name: name.to_string(),
            node,
            ports: ports
                .iter()
                .map(|&(link, rate, trunk)| SwitchPort {
                    link,
                    erica: EricaPort::new(erica, rate, vcs, 0),
                    max_queue: QueueMax::new(steady_from),
                    trunk,
                    queue_series: usize::MAX,
                    util_series: usize::MAX,
                    last_tx: 0,
                })
                .collect(),
            vcs: vec![None; vcs],
            mode,
            pcr,
            sample,
            warmup,
            counts: vec![BranchCounts::default(); vcs],
        }
    }

    /// Index of the port on `link`.
    pub fn port_of(&self, link: LinkId) -> Option<usize> {
        self.ports.iter().position(|p| p.link == link)
    }

    /// Declares connection `vc` through this switch.
    pub fn set_vc(&mut self, vc: u16, at: VcAtSwitch) {
        self.vcs[vc as usize] = Some(at);
    }

    /// Puts a cell on port `i` towards `agent`, accounting it at the port first.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn put(
        &mut self,
        ctx: &mut Ctx,
        i: usize,
        agent: AgentId,
        pkt: Packet,
        vbr: bool,
        forward: Option<u16>,
        ccr: Option<f64>,
    ) {
        let now = ctx.now();
        let port = &mut self.ports[i];
        if port.erica.needs_queue() {
            port.erica.queue_cells = abr_queue(ctx, port.link);
        }
        port.erica.on_cell(now, vbr, forward, ccr);
        let link = port.link;
        emit(ctx, Hop { link, agent }, pkt);
        if !vbr && now >= self.warmup {
            let q = &ctx.net.links[link as usize].qdisc;
            let n = q.class_len(CLASS_ABR).unwrap_or_else(|| q.len());
            self.ports[i].max_queue.observe(now, n);
        }
    }

    /// Sends a backward cell towards the source of `vc`.
    fn upstream(&mut self, ctx: &mut Ctx, vc: u16, mut pkt: Packet) {
        let up = self.vcs[vc as usize].as_ref().expect("connection").up;
        pkt.src = self.node;
        match self.port_of(up.link) {
            Some(i) => self.put(ctx, i, up.agent, pkt, false, None, None),
            None => emit(ctx, up, pkt),
        }
    }

    fn forward(&mut self, ctx: &mut Ctx, pkt: Packet, c: Cell) {
        let v = c.vc as usize;
        let Some(at) = self.vcs[v].as_ref() else {
            return;
        };
        let vbr = at.vbr;
        let n = at.branches.len();
        let ccr = (c.kind == CellKind::Frm).then_some(c.ccr);
        for k in 0..n {
            let (i, agent) = self.vcs[v].as_ref().expect("connection").branches[k];
            self.put(ctx, i, agent, pkt, vbr, (!vbr).then_some(c.vc), ccr);
        }
        if c.kind != CellKind::Frm || n < 2 {
            return;
        }
        // A branch point: consolidate.
        let now = ctx.now();
        let mode = self.mode;
        if mode == Consolidation::PassThrough {
            self.vcs[v].as_mut().expect("connection").flag = true;
            return;
        }
        let mut mer = f64::INFINITY;
        for k in 0..n {
            let i = self.vcs[v].as_ref().expect("connection").branches[k].0;
            mer = mer.min(self.ports[i].erica.explicit_rate(c.vc));
        }
        let at = self.vcs[v].as_mut().expect("connection");
        at.mxr = c.er;
        at.mer = at.mer.min(c.er).min(mer);
        at.ci |= c.ci;
        at.ni |= c.ni;
        let all = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        let send = match mode {
            Consolidation::Turnaround => true,
            Consolidation::Flag => at.any_brm,
            Consolidation::AllBranches { timeout } => {
                at.reported & all == all || now.saturating_sub(at.last_sent) >= timeout
            }
            Consolidation::PassThrough => false,
        };
        if !send {
            return;
        }
        if !at.any_brm {
            self.counts[v].returned_blind += 1;
        }
        let mut b = Cell::rm(CellKind::Brm, c.vc, at.mer, c.ccr);
        b.ci = at.ci;
        b.ni = at.ni;
        at.mer = at.mxr;
        at.ci = false;
        at.ni = false;
        at.any_brm = false;
        at.reported = 0;
        at.last_sent = now;
        self.counts[v].returned += 1;
        let mut out = pkt;
        out.set_header(b);
        self.upstream(ctx, c.vc, out);
    }

    fn backward_rm(&mut self, ctx: &mut Ctx, mut pkt: Packet, mut c: Cell) {
        let v = c.vc as usize;
        let Some(at) = self.vcs[v].as_ref() else {
            return;
        };
        let n = at.branches.len();
        // The branch it came from: the one whose far end sent it.
        let from = pkt.src;
        let k = at
            .branches
            .iter()
            .position(|&(i, _)| ctx.net.links[self.ports[i].link as usize].to == from)
            .unwrap_or(0);
        let port = at.branches.get(k).map(|b| b.0);
        if n < 2 {
            if let Some(i) = port {
                c.er = c.er.min(self.ports[i].erica.explicit_rate(c.vc));
            }
            pkt.set_header(c);
            self.upstream(ctx, c.vc, pkt);
            return;
        }
        if self.mode == Consolidation::PassThrough {
            let er = match port {
                Some(i) => c.er.min(self.ports[i].erica.explicit_rate(c.vc)),
                None => c.er,
            };
            let pcr = self.pcr;
            let at = self.vcs[v].as_mut().expect("connection");
            at.mer = at.mer.min(er);
            at.ci |= c.ci;
            at.ni |= c.ni;
            if !at.flag {
                self.counts[v].absorbed += 1;
                return;
            }
            c.er = at.mer;
            c.ci = at.ci;
            c.ni = at.ni;
            at.flag = false;
            at.mer = pcr;
            at.ci = false;
            at.ni = false;
            self.counts[v].returned += 1;
            pkt.set_header(c);
            self.upstream(ctx, c.vc, pkt);
            return;
        }
        let at = self.vcs[v].as_mut().expect("connection");
        at.mer = at.mer.min(c.er);
        at.ci |= c.ci;
        at.ni |= c.ni;
        at.any_brm = true;
        if k < 64 {
            at.reported |= 1 << k;
        }
        self.counts[v].absorbed += 1;
    }

    fn arm(&self, ctx: &mut Ctx, i: usize) {
        ctx.timer_at(self.ports[i].erica.deadline(), i as u32);
    }
}

/// The ABR queue (cells) waiting at `link`.
fn abr_queue(ctx: &Ctx, link: LinkId) -> usize {
    let q = &ctx.net.links[link as usize].qdisc;
    q.class_len(CLASS_ABR).unwrap_or_else(|| q.len())
}

impl Agent for AbrSwitch {
    fn start(&mut self, ctx: &mut Ctx) {
        for i in 0..self.ports.len() {
            let name = ctx.net.links[self.ports[i].link as usize].name.clone();
            self.ports[i].queue_series = ctx.rec.id(&format!("abr.queue.{name}"), "cells");
            if self.ports[i].trunk {
                self.ports[i].util_series = ctx.rec.id(&format!("abr.util.{name}"), "%");
            }
            self.arm(ctx, i);
        }
        ctx.timer(0, SAMPLE);
        if let Some(p) = self.ports.first() {
            ctx.timer_at(p.max_queue.steady_from, STEADY);
        }
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        let now = ctx.now();
        if kind == SAMPLE {
            for p in &mut self.ports {
                let link = &ctx.net.links[p.link as usize];
                let q = link.qdisc.class_len(CLASS_ABR).unwrap_or(link.qdisc.len());
                let tx = link.stats.tx_bytes;
                let rate = link.rate_bps as f64;
                ctx.rec.push(p.queue_series, now, q as f64);
                if p.trunk {
                    let util = if now > 0 {
                        (tx - p.last_tx) as f64 * 8.0 / (rate * crate::time::to_secs(self.sample))
                            * 100.0
                    } else {
                        0.0
                    };
                    ctx.rec.push(p.util_series, now, util);
                }
                p.last_tx = tx;
            }
            ctx.timer(self.sample, SAMPLE);
            return;
        }
        if kind == STEADY {
            // The queue standing when the steady state starts counts in its maximum.
            for p in &mut self.ports {
                let q = &ctx.net.links[p.link as usize].qdisc;
                p.max_queue
                    .observe(now, q.class_len(CLASS_ABR).unwrap_or_else(|| q.len()));
            }
            return;
        }
        let i = kind as usize;
        if i < self.ports.len() {
            if now >= self.ports[i].erica.deadline() {
                if self.ports[i].erica.needs_queue() {
                    self.ports[i].erica.queue_cells = abr_queue(ctx, self.ports[i].link);
                }
                self.ports[i].erica.end_interval(now);
            }
            self.arm(ctx, i);
        }
    }

    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        let Some(c) = pkt.header::<Cell>() else {
            return;
        };
        match c.kind {
            CellKind::Data | CellKind::Frm => self.forward(ctx, pkt, c),
            CellKind::Brm => self.backward_rm(ctx, pkt, c),
            CellKind::Request => self.upstream(ctx, c.vc, pkt),
        }
    }

    fn on_warmup(&mut self, _now: Time) {
        for p in &mut self.ports {
            p.max_queue = QueueMax::new(p.max_queue.steady_from);
        }
    }
}

impl AbrSwitch {
    /// The switch's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The VBR class cells use (strict priority over [`CLASS_ABR`]).
    pub const VBR_CLASS: u8 = CLASS_VBR;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steady_maximum_leaves_out_the_queue_of_the_first_half() {
        // A queue of 5 000 cells built by the initial rate drains in the first half; the
        // steady state from 50 holds at most 300 cells.
        let mut m = QueueMax::new(50);
        let trace = [
            (10, 1200),
            (20, 5000),
            (30, 2500),
            (49, 400),
            (50, 300),
            (70, 120),
            (90, 280),
        ];
        for (t, n) in trace {
            m.observe(t, n);
        }
        assert_eq!(m.warm, 5000);
        assert_eq!(m.steady, 300);
        // A peak inside the second half is the steady maximum.
        m.observe(95, 700);
        assert_eq!((m.warm, m.steady), (5000, 700));
    }
}
