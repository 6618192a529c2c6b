//! Packet traces: per-packet records of what happens at selected links, nodes and flows.
//!
//! A scenario's `[[trace]]` entries select links, nodes, flows and events; during the
//! run the [`Tracer`] streams one fixed-size little-endian record per selected event to
//! a raw file through a small buffer, so memory stays bounded however long the run.
//! The front end turns the raw file into Parquet (and pcap) in batches after the run.
//!
//! A record ([`RECORD_BYTES`] bytes) holds, in order: time (u64, picoseconds), sequence
//! and acknowledgement numbers (u64 each), flow, size in bytes, link and node where the
//! event happens, and the packet's source and destination nodes (u32 each; [`NONE`]
//! when not applicable), marks (u16), event, drop cause, class and packet kind (u8
//! each) and two bytes of padding.
//!
//! Records are written in the order the engine decides them. A FIFO port decides a
//! packet's transmission when the packet is accepted, and every transmission decides
//! the packet's arrival at the far end (the link is FIFO with a constant delay), so
//! `transmit`, `arrival` and `deliver` records carry their (later) times and may
//! precede records of earlier instants: sort by time when order matters (the front
//! end's readers do). Events decided for after the run's end are not recorded.
//!
//! Tracing off costs one boolean test per packet per port.

use crate::packet::{FlowId, LinkId, NodeId, Packet, PacketKind, NONE};
use crate::queue::{DropCause, DropObserver};
use crate::time::Time;
use std::cell::RefCell;
use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::rc::Rc;

/// Size of one raw record, bytes.
pub const RECORD_BYTES: usize = 56;

/// What happened to a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum TraceEvent {
    /// Offered to a link's output queue, after the port's meters and markers.
    Enqueue = 0,
    /// Dropped at a link's output port (see the record's cause).
    Drop = 1,
    /// A port's marker or meter changed the packet's mark bits (new marks recorded).
    Mark = 2,
    /// Its transmission on a link starts.
    Transmit = 3,
    /// It reached the far end of a link.
    Arrival = 4,
    /// It was handed to the agent it is addressed to at its destination node.
    Deliver = 5,
}

impl TraceEvent {
    /// Every event, in code order.
    pub const ALL: [TraceEvent; 6] = [
        TraceEvent::Enqueue,
        TraceEvent::Drop,
        TraceEvent::Mark,
        TraceEvent::Transmit,
        TraceEvent::Arrival,
        TraceEvent::Deliver,
    ];

    /// The name used in scenarios and trace files.
    pub fn name(self) -> &'static str {
        match self {
            TraceEvent::Enqueue => "enqueue",
            TraceEvent::Drop => "drop",
            TraceEvent::Mark => "mark",
            TraceEvent::Transmit => "transmit",
            TraceEvent::Arrival => "arrival",
            TraceEvent::Deliver => "deliver",
        }
    }

    /// The event called `name`, if any.
    pub fn from_name(name: &str) -> Option<TraceEvent> {
        TraceEvent::ALL.into_iter().find(|e| e.name() == name)
    }
}

/// Drop cause codes in records (0: not a drop).
pub fn cause_code(cause: DropCause) -> u8 {
    match cause {
        DropCause::Overflow => 1,
        DropCause::Early => 2,
        DropCause::Policed => 3,
        DropCause::PushedOut => 4,
    }
}

/// One validated `[[trace]]` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceSpec {
    /// Name of its output (`traces/NAME.parquet`).
    pub name: String,
    /// Selected links (indices); with `nodes`, empty both means every link and node.
    pub links: Vec<usize>,
    /// Selected nodes (indices): events at links leaving or entering them, and
    /// deliveries at them.
    pub nodes: Vec<usize>,
    /// Selected flows; empty means every flow.
    pub flows: Vec<FlowId>,
    /// Selected events.
    pub events: Vec<TraceEvent>,
    /// Also write a pcap file.
    pub pcap: bool,
}

/// A finished trace output: where its raw records are and how many.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceFile {
    /// The entry's name.
    pub name: String,
    /// The raw record file.
    pub path: PathBuf,
    /// Records written.
    pub records: u64,
    /// Whether a pcap file is wanted too.
    pub pcap: bool,
}

struct Output {
    spec: TraceSpec,
    all_places: bool,
    links: HashSet<LinkId>,
    nodes: HashSet<NodeId>,
    flows: HashSet<FlowId>,
    events: u8,
    path: PathBuf,
    out: BufWriter<File>,
    records: u64,
    error: Option<String>,
}

/// Writes the records of a run's `[[trace]]` entries.
pub struct Tracer {
    outputs: Vec<Output>,
    /// The run's end: events decided for later (arrivals of packets still on the way)
    /// are not recorded.
    end: Time,
    /// Time of the port operation in progress (drops are reported without one).
    now: Time,
}

/// A tracer shared by the network and the drop observers of traced ports.
pub type SharedTracer = Rc<RefCell<Tracer>>;

impl Tracer {
    /// Opens one raw file per entry in `dir` (created if missing) for a run that ends
    /// at `end`.
    pub fn create(specs: &[TraceSpec], dir: &std::path::Path, end: Time) -> Result<Tracer, String> {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("trace: cannot create {}: {e}", dir.display()))?;
        let mut outputs = Vec::new();
        for s in specs {
            let path = dir.join(format!("{}.raw", s.name));
            let file = File::create(&path)
                .map_err(|e| format!("trace {}: cannot create {}: {e}", s.name, path.display()))?;
            outputs.push(Output {
                all_places: s.links.is_empty() && s.nodes.is_empty(),
                links: s.links.iter().map(|&l| l as LinkId).collect(),
                nodes: s.nodes.iter().map(|&n| n as NodeId).collect(),
                flows: s.flows.iter().copied().collect(),
                events: s.events.iter().fold(0u8, |m, e| m | 1 << (*e as u8)),
                spec: s.clone(),
                path,
                out: BufWriter::with_capacity(1 << 16, file),
                records: 0,
                error: None,
            });
        }
        Ok(Tracer {
            outputs,
            end,
            now: 0,
        })
    }

    /// True if some entry may want events of the link `link` from `from` to `to`.
    pub fn wants_link(&self, link: LinkId, from: NodeId, to: NodeId) -> bool {
        self.outputs.iter().any(|o| {
            o.all_places
                || o.links.contains(&link)
                || o.nodes.contains(&from)
                || o.nodes.contains(&to)
        })
    }

    /// Sets the time of the port operation in progress.
    #[inline]
    pub fn set_now(&mut self, now: Time) {
        self.now = now;
    }

    /// Records `event` of `pkt` at time `t` on `link` (or [`NONE`]) at `node`.
    pub fn record(
        &mut self,
        t: Time,
        event: TraceEvent,
        pkt: &Packet,
        link: LinkId,
        node: NodeId,
        cause: u8,
    ) {
        if t > self.end {
            return;
        }
        let mut rec = [0u8; RECORD_BYTES];
        let mut built = false;
        for o in self.outputs.iter_mut() {
            if o.events & (1 << event as u8) == 0
                || (!o.flows.is_empty() && !o.flows.contains(&pkt.flow))
                || !(o.all_places
                    || (link != NONE && o.links.contains(&link))
                    || o.nodes.contains(&node))
                || o.error.is_some()
            {
                continue;
            }
            if !built {
                encode(&mut rec, t, event, pkt, link, node, cause);
                built = true;
            }
            if let Err(e) = o.out.write_all(&rec) {
                o.error = Some(format!(
                    "trace {}: cannot write {}: {e}",
                    o.spec.name,
                    o.path.display()
                ));
            } else {
                o.records += 1;
            }
        }
    }

    /// Records a drop at the current port operation's time.
    pub fn record_drop(&mut self, pkt: &Packet, link: LinkId, node: NodeId, cause: DropCause) {
        let t = self.now;
        self.record(t, TraceEvent::Drop, pkt, link, node, cause_code(cause));
    }

    /// Flushes every file and returns what was written, or the first write error.
    pub fn finish(&mut self) -> Result<Vec<TraceFile>, String> {
        let mut files = Vec::new();
        for o in self.outputs.iter_mut() {
            if let Some(e) = o.error.take() {
                return Err(e);
            }
            o.out.flush().map_err(|e| {
                format!(
                    "trace {}: cannot write {}: {e}",
                    o.spec.name,
                    o.path.display()
                )
            })?;
            files.push(TraceFile {
                name: o.spec.name.clone(),
                path: o.path.clone(),
                records: o.records,
                pcap: o.spec.pcap,
            });
        }
        Ok(files)
    }
}

fn encode(
    rec: &mut [u8; RECORD_BYTES],
    t: Time,
    event: TraceEvent,
    pkt: &Packet,
    link: LinkId,
    node: NodeId,
    cause: u8,
) {
    rec[0..8].copy_from_slice(&t.to_le_bytes());
    rec[8..16].copy_from_slice(&pkt.seq.to_le_bytes());
    rec[16..24].copy_from_slice(&pkt.ack.to_le_bytes());
    rec[24..28].copy_from_slice(&pkt.flow.to_le_bytes());
    rec[28..32].copy_from_slice(&pkt.size.to_le_bytes());
    rec[32..36].copy_from_slice(&link.to_le_bytes());
    rec[36..40].copy_from_slice(&node.to_le_bytes());
    rec[40..44].copy_from_slice(&pkt.src.to_le_bytes());
    rec[44..48].copy_from_slice(&pkt.dst.to_le_bytes());
    rec[48..50].copy_from_slice(&pkt.marks.to_le_bytes());
    rec[50] = event as u8;
    rec[51] = cause;
    rec[52] = pkt.class;
    rec[53] = kind_code(pkt.kind);
}

/// Packet kind codes in records.
pub fn kind_code(kind: PacketKind) -> u8 {
    kind as u8
}

/// Tells the tracer of every drop at one traced port.
pub struct TraceDrops {
    /// The port's link.
    pub link: LinkId,
    /// The node the link leaves.
    pub node: NodeId,
    /// The run's tracer.
    pub tracer: SharedTracer,
}

impl DropObserver for TraceDrops {
    fn on_drop(&mut self, pkt: &Packet, cause: DropCause) {
        self.tracer
            .borrow_mut()
            .record_drop(pkt, self.link, self.node, cause);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(events: &[TraceEvent], flows: &[FlowId], links: &[usize]) -> TraceSpec {
        TraceSpec {
            name: "t".into(),
            links: links.to_vec(),
            nodes: vec![],
            flows: flows.to_vec(),
            events: events.to_vec(),
            pcap: false,
        }
    }

    #[test]
    fn records_only_the_selection_in_the_documented_layout() {
        let dir = std::env::temp_dir().join(format!("qossim-trace-unit-{}", std::process::id()));
        let mut t = Tracer::create(
            &[spec(&[TraceEvent::Enqueue, TraceEvent::Drop], &[7], &[2])],
            &dir,
            100,
        )
        .unwrap();
        t.record(101, TraceEvent::Enqueue, &Packet::of_size(1), 2, 1, 0); // after the end
        let mut p = Packet::of_size(1500);
        p.flow = 7;
        p.seq = 42;
        p.marks = 0x0102;
        p.class = 3;
        p.dst = 4;
        t.record(5, TraceEvent::Enqueue, &p, 2, 1, 0);
        t.record(6, TraceEvent::Transmit, &p, 2, 1, 0); // event not selected
        t.record(7, TraceEvent::Enqueue, &p, 3, 1, 0); // link not selected
        let mut other = p;
        other.flow = 8;
        t.record(8, TraceEvent::Enqueue, &other, 2, 1, 0); // flow not selected
        t.set_now(9);
        t.record_drop(&p, 2, 1, DropCause::Early);
        let files = t.finish().unwrap();
        assert_eq!(files[0].records, 2);
        let bytes = std::fs::read(&files[0].path).unwrap();
        assert_eq!(bytes.len(), 2 * RECORD_BYTES);
        let r = &bytes[RECORD_BYTES..];
        assert_eq!(u64::from_le_bytes(r[0..8].try_into().unwrap()), 9);
        assert_eq!(u64::from_le_bytes(r[8..16].try_into().unwrap()), 42);
        assert_eq!(u32::from_le_bytes(r[24..28].try_into().unwrap()), 7);
        assert_eq!(u32::from_le_bytes(r[28..32].try_into().unwrap()), 1500);
        assert_eq!(u32::from_le_bytes(r[32..36].try_into().unwrap()), 2);
        assert_eq!(u32::from_le_bytes(r[44..48].try_into().unwrap()), 4);
        assert_eq!(u16::from_le_bytes(r[48..50].try_into().unwrap()), 0x0102);
        assert_eq!(r[50], TraceEvent::Drop as u8);
        assert_eq!(r[51], cause_code(DropCause::Early));
        assert_eq!(r[52], 3);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
