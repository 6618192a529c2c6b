//! ABR end systems: the source with the TM 4.0 rate rules (and the VBR and bursty
//! sources beside it), and the destination that turns forward RM cells around.

use super::cell::{Cell, CellKind, CELL_BITS, CELL_BYTES, CLASS_ABR, CLASS_VBR};
use crate::engine::EventId;
use crate::packet::{AgentId, LinkId, NodeId, Packet};
use crate::time::{to_secs, Time};
use crate::world::{Agent, Ctx};

/// The TM 4.0 source parameters (rates in bits per second).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SourceParams {
    /// Initial cell rate.
    pub icr: f64,
    /// Rate increase factor (a fraction of PCR added per backward RM cell).
    pub rif: f64,
    /// Rate decrease factor (on congestion indication).
    pub rdf: f64,
    /// Peak cell rate.
    pub pcr: f64,
    /// Minimum cell rate.
    pub mcr: f64,
    /// One forward RM cell every `nrm` cells.
    pub nrm: u32,
    /// … and at least one every `trm` while cells are sent.
    pub trm: Time,
    /// ACR falls back to ICR when no FRM was sent for this long.
    pub adtf: Time,
}

/// The tagged cell rate: a source whose ACR fell below it still sends at it (TM 4.0's
/// out-of-rate RM cells), so a connection at ACR 0 can recover.
pub const TCR: f64 = 10.0 * CELL_BITS;

impl SourceParams {
    /// The study's defaults on a 155.52 Mb/s link: ICR 150 Mb/s, RIF 1, RDF 1/16,
    /// PCR = link rate, MCR 0, Nrm 32, Trm 100 ms, ADTF 0.5 s.
    pub fn defaults(link_rate: f64) -> Self {
        SourceParams {
            icr: 150e6_f64.min(link_rate),
            rif: 1.0,
            rdf: 1.0 / 16.0,
            pcr: link_rate,
            mcr: 0.0,
            nrm: 32,
            trm: crate::time::millis(100.0),
            adtf: crate::time::millis(500.0),
        }
    }

    /// The allowed cell rate after a backward RM cell: decrease by RDF on CI, else
    /// increase by RIF·PCR unless NI; then at most ER, at least MCR, at most PCR.
    pub fn on_brm(&self, acr: f64, brm: &Cell) -> f64 {
        let mut a = acr;
        if brm.ci {
            a -= a * self.rdf;
        } else if !brm.ni {
            a += self.rif * self.pcr;
        }
        a = a.min(brm.er);
        a.max(self.mcr).min(self.pcr)
    }

    /// Whether the next cell must be a forward RM cell: the first cell, `nrm - 1` data
    /// cells since the last FRM, or `trm` elapsed with at least one cell in between.
    pub fn frm_due(&self, sent_any: bool, data_since: u32, since_frm: Time) -> bool {
        !sent_any || data_since + 1 >= self.nrm || (since_frm >= self.trm && data_since >= 1)
    }
}

/// Time between cells at `rate` bits/s, in picoseconds (rounded up).
pub fn cell_interval(rate: f64) -> Time {
    (CELL_BITS * 1e12 / rate.max(TCR)).ceil() as Time
}

/// What a source sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SourceKind {
    /// Always has cells to send.
    Infinite,
    /// Closed-loop request/response: every destination (a client) sends a request of
    /// `request_cells` cells back to the source when the connection starts and again
    /// each time it has received a whole response; once the requests of every
    /// destination have arrived in full, the source sends a response of
    /// `response_cells` data cells.
    Bursty {
        /// Response size, data cells.
        response_cells: u32,
        /// Request size, cells.
        request_cells: u32,
    },
    /// Deterministic on/off at `rate` (strict priority over ABR, no RM cells).
    Vbr {
        /// Rate while on, bits/s.
        rate: f64,
        /// On period.
        on: Time,
        /// Off period.
        off: Time,
        /// Start of the first on period after the source's start.
        offset: Time,
    },
}

/// Where a connection's cells go from an end system or switch: the link and the agent
/// at its far end that handles this connection there.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hop {
    /// The output link.
    pub link: LinkId,
    /// The agent at the link's far end.
    pub agent: AgentId,
}

/// Puts `pkt` on `hop` towards the agent at its far end.
#[inline]
pub fn emit(ctx: &mut Ctx, hop: Hop, mut pkt: Packet) {
    pkt.dst = ctx.net.links[hop.link as usize].to;
    pkt.dst_agent = hop.agent;
    pkt.route = crate::packet::NONE;
    ctx.net.enqueue(hop.link, pkt, ctx.sched);
}

const SEND: u32 = 1;
const SAMPLE: u32 = 2;
const STOP: u32 = 3;
const REQUEST: u32 = 4;

/// Running statistics of the ER values a source receives (consolidation noise).
#[derive(Clone, Copy, Debug, Default)]
pub struct ErStats {
    /// Backward RM cells received after the warm-up.
    pub n: u64,
    /// Mean ER, bits/s.
    pub mean: f64,
    m2: f64,
    /// Smallest ER.
    pub min: f64,
    /// Largest ER.
    pub max: f64,
}

impl ErStats {
    fn add(&mut self, x: f64) {
        if self.n == 0 {
            self.min = x;
            self.max = x;
        }
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }
    /// Standard deviation of the ER values, bits/s.
    pub fn sd(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            (self.m2 / (self.n - 1) as f64).sqrt()
        }
    }
}

/// An ABR (or VBR) source of one virtual connection.
pub struct AbrSource {
    vc: u16,
    name: String,
    kind: SourceKind,
    p: SourceParams,
    node: NodeId,
    flow: u32,
    out: Hop,
    start: Time,
    stop: Time,
    /// Allowed cell rate, bits/s.
    pub acr: f64,
    timer: Option<EventId>,
    next_at: Time,
    last_sent: Option<Time>,
    sent_any: bool,
    data_since: u32,
    last_frm: Time,
    pending: u64,
    /// Index of the next response to be requested (bursty sources).
    burst: u64,
    /// Index of the response being sent (bursty sources).
    sending: u64,
    /// Request cells received for response `burst`.
    requests: u64,
    destinations: u32,
    sample: Time,
    warmup: Time,
    acr_series: usize,
    acr_area: f64,
    acr_since: Time,
    stopped: bool,
    /// Cells sent (data and RM).
    pub cells_sent: u64,
    /// Data cells sent.
    pub data_sent: u64,
    /// ER values received after the warm-up.
    pub er: ErStats,
    /// Responses begun (bursty sources): one per round of requests received in full.
    pub bursts: u64,
}

impl AbrSource {
    /// A source of connection `vc` at `node`, sending on `out`, from `start` to `stop`,
    /// to `destinations` destinations.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        vc: u16,
        name: &str,
        kind: SourceKind,
        p: SourceParams,
        node: NodeId,
        flow: u32,
        out: Hop,
        start: Time,
        stop: Time,
        destinations: u32,
        sample: Time,
        warmup: Time,
    ) -> Self {
        AbrSource {
            vc,
            name: name.to_string(),
            kind,
            p,
            node,
            flow,
            out,
            start,
            stop,
            acr: p.icr,
            timer: None,
            next_at: 0,
            last_sent: None,
            sent_any: false,
            data_since: 0,
            last_frm: 0,
            pending: 0,
            burst: 0,
            sending: 0,
            requests: 0,
            destinations,
            sample,
            warmup,
            acr_series: usize::MAX,
            acr_area: 0.0,
            acr_since: 0,
            stopped: false,
            cells_sent: 0,
            data_sent: 0,
            er: ErStats::default(),
            bursts: 0,
        }
    }

    fn is_vbr(&self) -> bool {
        matches!(self.kind, SourceKind::Vbr { .. })
    }

    fn response_cells(&self) -> u64 {
        match self.kind {
            SourceKind::Bursty { response_cells, .. } => response_cells as u64,
            _ => 0,
        }
    }

    /// The mean ACR while the source is on (from its start, or the warm-up if later,
    /// until its stop or `now`), bits/s; the ACR at `now` if that span is empty.
    pub fn acr_mean(&self, now: Time) -> f64 {
        let from = self.warmup.max(self.start);
        let to = now.min(self.stop);
        if to <= from {
            return self.acr;
        }
        let mut area = self.acr_area;
        let since = self.acr_since.max(from);
        if !self.stopped && to > since {
            area += self.acr * to_secs(to - since);
        }
        area / to_secs(to - from)
    }

    fn live_acr(&self) -> f64 {
        if self.stopped {
            0.0
        } else {
            self.acr
        }
    }

    /// Changes the ACR at `now`, closing the segment of the old one in the mean.
    fn set_acr(&mut self, now: Time, acr: f64) {
        let from = self.warmup.max(self.start);
        let t = now.min(self.stop);
        if t > from {
            let since = self.acr_since.max(from);
            if t > since && !self.stopped {
                self.acr_area += self.acr * to_secs(t - since);
            }
            self.acr_since = t;
        }
        self.acr = acr;
    }

    fn rate(&self) -> f64 {
        match self.kind {
            SourceKind::Vbr { rate, .. } => rate,
            _ => self.acr,
        }
    }

    fn has_data(&self) -> bool {
        match self.kind {
            SourceKind::Infinite => true,
            SourceKind::Bursty { .. } => self.pending > 0,
            SourceKind::Vbr { .. } => true,
        }
    }

    /// Schedules the next cell at the earliest time the rate allows (not before `now`).
    fn schedule(&mut self, ctx: &mut Ctx) {
        if self.stopped {
            return;
        }
        let mut at = match self.last_sent {
            Some(t) => t + cell_interval(self.rate()),
            None => self.start,
        }
        .max(ctx.now());
        if let SourceKind::Vbr {
            on, off, offset, ..
        } = self.kind
        {
            // Move `at` into an on period.
            let first = self.start + offset;
            if at < first {
                at = first;
            } else {
                let period = on + off;
                let into = (at - first) % period;
                if into >= on {
                    at += period - into;
                }
            }
        }
        if let Some(id) = self.timer.take() {
            if at == self.next_at {
                self.timer = Some(id);
                return;
            }
            ctx.cancel(id);
        }
        if at >= self.stop {
            return;
        }
        self.next_at = at;
        self.timer = Some(ctx.timer_at(at, SEND));
    }

    fn send_one(&mut self, ctx: &mut Ctx) {
        let now = ctx.now();
        if self.is_vbr() {
            let mut pkt = Cell::data(self.vc).packet(CELL_BYTES, CLASS_VBR);
            self.finish_packet(&mut pkt, now);
            self.data_sent += 1;
            emit(ctx, self.out, pkt);
            self.last_sent = Some(now);
            self.schedule(ctx);
            return;
        }
        let since = now.saturating_sub(self.last_frm);
        let frm = self.p.frm_due(self.sent_any, self.data_since, since);
        if !frm && !self.has_data() {
            return; // idle until the next response is requested
        }
        let mut pkt = if frm {
            if self.sent_any && since > self.p.adtf && self.acr > self.p.icr {
                self.set_acr(now, self.p.icr);
            }
            self.sent_any = true;
            self.data_since = 0;
            self.last_frm = now;
            Cell::rm(CellKind::Frm, self.vc, self.p.pcr, self.acr).packet(CELL_BYTES, CLASS_ABR)
        } else {
            self.data_since += 1;
            self.data_sent += 1;
            let mut p = Cell::data(self.vc).packet(CELL_BYTES, CLASS_ABR);
            if let SourceKind::Bursty { .. } = self.kind {
                self.pending -= 1;
                p.seq = self.sending;
                p.ack = (self.pending == 0) as u64;
            }
            p
        };
        self.finish_packet(&mut pkt, now);
        emit(ctx, self.out, pkt);
        self.last_sent = Some(now);
        if self.has_data() {
            self.schedule(ctx);
        }
    }

    fn finish_packet(&mut self, pkt: &mut Packet, now: Time) {
        pkt.src = self.node;
        pkt.flow = self.flow;
        pkt.created = now;
        self.cells_sent += 1;
    }

    fn new_burst(&mut self, ctx: &mut Ctx) {
        self.pending += self.response_cells();
        let idle = self.timer.is_none();
        if idle {
            self.schedule(ctx);
        }
    }
}

impl Agent for AbrSource {
    fn start(&mut self, ctx: &mut Ctx) {
        if !self.is_vbr() {
            self.acr_series = ctx.rec.id(&format!("abr.acr.{}", self.name), "Mb/s");
            ctx.timer(0, SAMPLE);
        }
        if self.stop != Time::MAX {
            ctx.timer_at(self.stop, STOP);
        }
        // A bursty source waits for its clients' first requests.
        // The first cell leaves at the start time (a VBR source's first on period).
        self.last_sent = None;
        self.schedule(ctx);
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        match kind {
            SEND => {
                self.timer = None;
                if !self.stopped {
                    self.send_one(ctx);
                }
            }
            SAMPLE => {
                let now = ctx.now();
                let v = if now < self.start {
                    0.0
                } else {
                    self.live_acr() / 1e6
                };
                ctx.rec.push(self.acr_series, now, v);
                ctx.timer(self.sample, SAMPLE);
            }
            STOP => {
                let now = ctx.now();
                self.set_acr(now, self.acr);
                self.stopped = true;
                if let Some(id) = self.timer.take() {
                    ctx.cancel(id);
                }
            }
            _ => {}
        }
    }

    fn on_packet(&mut self, pkt: Packet, ctx: &mut Ctx) {
        let Some(c) = pkt.header::<Cell>() else {
            return;
        };
        let now = ctx.now();
        match c.kind {
            CellKind::Brm if !self.is_vbr() => {
                if now >= self.warmup && !self.stopped {
                    self.er.add(c.er);
                }
                let old = self.acr;
                let new = self.p.on_brm(old, &c);
                self.set_acr(now, new);
                // A faster rate may move the next cell earlier (TM 4.0 rescheduling).
                if new > old && self.timer.is_some() {
                    self.schedule(ctx);
                }
            }
            CellKind::Request if pkt.seq == self.burst => {
                // Every destination sends `request_cells` cells per request, in order:
                // the round is complete when all of them have arrived.
                let SourceKind::Bursty { request_cells, .. } = self.kind else {
                    return;
                };
                self.requests += 1;
                if self.requests >= self.destinations as u64 * request_cells as u64 {
                    self.requests = 0;
                    self.sending = self.burst;
                    self.burst += 1;
                    if !self.stopped && now >= self.start && now < self.stop {
                        self.bursts += 1;
                        self.new_burst(ctx);
                    }
                }
            }
            _ => {}
        }
    }
}

/// A bursty connection as its destination (a client) sees it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Client {
    /// Cells of one request.
    pub request_cells: u32,
    /// When the connection starts: the first request leaves then.
    pub start: Time,
}

/// The destination of one connection at one node: counts cells, turns FRMs around as
/// BRMs and, for a bursty connection, asks for the first response when the connection
/// starts and for the next one each time a response has arrived in full.
pub struct AbrDestination {
    name: String,
    up: Hop,
    node: NodeId,
    bursty: Option<Client>,
    flow: u32,
    sample: Time,
    warmup: Time,
    series: usize,
    /// Data cells received.
    pub cells: u64,
    /// Data cells received after the warm-up.
    pub cells_measured: u64,
    /// FRMs turned around.
    pub turned: u64,
    /// Requests sent (bursty connections).
    pub requests: u64,
    vc: u16,
}

impl AbrDestination {
    /// The destination of connection `vc` called `name` (series `abr.cells.NAME`) at
    /// `node`, returning cells on `up`; `bursty` describes the client of a bursty
    /// connection, whose requests are counted in `flow`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        vc: u16,
        name: &str,
        node: NodeId,
        up: Hop,
        bursty: Option<Client>,
        flow: u32,
        sample: Time,
        warmup: Time,
    ) -> Self {
        AbrDestination {
            name: name.to_string(),
            up,
            node,
            bursty,
            flow,
            sample,
            warmup,
            series: usize::MAX,
            cells: 0,
            cells_measured: 0,
            turned: 0,
            requests: 0,
            vc,
        }
    }
}

impl AbrDestination {
    /// Sends the request for response `seq`: `request_cells` cells back to back
    /// towards the source (they travel hop by hop like backward RM cells).
    fn request(&mut self, ctx: &mut Ctx, vc: u16, seq: u64) {
        let Some(client) = self.bursty else {
            return;
        };
        for _ in 0..client.request_cells {
            let mut r = Cell::rm(CellKind::Request, vc, 0.0, 0.0).packet(CELL_BYTES, CLASS_ABR);
            r.seq = seq;
            r.src = self.node;
            r.flow = self.flow;
            r.created = ctx.now();
            emit(ctx, self.up, r);
        }
        self.requests += 1;
    }
}

impl Agent for AbrDestination {
    fn start(&mut self, ctx: &mut Ctx) {
        self.series = ctx.rec.id(&format!("abr.cells.{}", self.name), "cells");
        ctx.timer(0, SAMPLE);
        if let Some(c) = self.bursty {
            ctx.timer_at(c.start, REQUEST);
        }
    }

    fn on_timer(&mut self, kind: u32, ctx: &mut Ctx) {
        if kind == SAMPLE {
            let now = ctx.now();
            ctx.rec.push(self.series, now, self.cells as f64);
            ctx.timer(self.sample, SAMPLE);
        } else if kind == REQUEST {
            self.request(ctx, self.vc, 0);
        }
    }

    fn on_packet(&mut self, mut pkt: Packet, ctx: &mut Ctx) {
        let Some(mut c) = pkt.header::<Cell>() else {
            return;
        };
        match c.kind {
            CellKind::Data => {
                self.cells += 1;
                if ctx.now() >= self.warmup {
                    self.cells_measured += 1;
                }
                if self.bursty.is_some() && pkt.ack == 1 {
                    // The last cell of response `seq`: ask for the next one.
                    self.request(ctx, c.vc, pkt.seq + 1);
                }
            }
            CellKind::Frm => {
                self.turned += 1;
                c.kind = CellKind::Brm;
                pkt.set_header(c);
                pkt.src = self.node;
                emit(ctx, self.up, pkt);
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brm(er: f64, ci: bool, ni: bool) -> Cell {
        let mut c = Cell::rm(CellKind::Brm, 0, er, 0.0);
        c.ci = ci;
        c.ni = ni;
        c
    }

    #[test]
    fn increase_decrease_and_clamps() {
        let mut p = SourceParams::defaults(155.52e6);
        p.rif = 1.0 / 32.0;
        p.rdf = 1.0 / 16.0;
        p.mcr = 1e6;
        // Increase by RIF·PCR.
        let a = p.on_brm(12e6, &brm(155.52e6, false, false));
        assert!((a - (12e6 + 155.52e6 / 32.0)).abs() < 1e-6);
        // NI: no increase.
        assert_eq!(p.on_brm(12e6, &brm(155.52e6, false, true)), 12e6);
        // CI: decrease by RDF.
        assert!((p.on_brm(16e6, &brm(155.52e6, true, false)) - 15e6).abs() < 1e-6);
        // Clamped to ER …
        assert_eq!(p.on_brm(100e6, &brm(40e6, false, false)), 40e6);
        // … floored at MCR …
        assert_eq!(p.on_brm(100e6, &brm(0.0, false, false)), 1e6);
        // … capped at PCR.
        p.rif = 1.0;
        assert_eq!(p.on_brm(150e6, &brm(1e9, false, false)), 155.52e6);
    }

    #[test]
    fn frm_every_nrm_cells_and_at_least_every_trm() {
        let p = SourceParams::defaults(155.52e6);
        assert!(p.frm_due(false, 0, 0));
        // 31 data cells between FRMs: one cell in 32 is an FRM.
        assert!(!p.frm_due(true, 30, 0));
        assert!(p.frm_due(true, 31, 0));
        // Trm elapsed with a cell in between.
        assert!(p.frm_due(true, 1, p.trm));
        assert!(!p.frm_due(true, 0, p.trm));
    }

    #[test]
    fn cell_interval_rounds_up() {
        let t = cell_interval(155.52e6);
        assert_eq!(t, (424e12_f64 / 155.52e6).ceil() as Time);
        assert!(t as f64 * 155.52e6 / 1e12 >= 424.0);
    }
}
