//! Packet traces: what the records say must agree with the run's counters, with the
//! link's rate and delay, and tracing must not change the run.

mod common;

use common::{num, parse};
use qossim::scenario::{self, RunOptions, RunOutput};
use qossim::time::tx_time;
use qossim::trace::{TraceEvent, RECORD_BYTES};
use std::path::PathBuf;

#[derive(Clone, Copy, Debug, PartialEq)]
struct Rec {
    t: u64,
    seq: u64,
    flow: u32,
    size: u32,
    link: u32,
    node: u32,
    marks: u16,
    event: u8,
    cause: u8,
}

fn records(bytes: &[u8]) -> Vec<Rec> {
    assert_eq!(bytes.len() % RECORD_BYTES, 0);
    bytes
        .chunks(RECORD_BYTES)
        .map(|r| Rec {
            t: u64::from_le_bytes(r[0..8].try_into().unwrap()),
            seq: u64::from_le_bytes(r[8..16].try_into().unwrap()),
            flow: u32::from_le_bytes(r[24..28].try_into().unwrap()),
            size: u32::from_le_bytes(r[28..32].try_into().unwrap()),
            link: u32::from_le_bytes(r[32..36].try_into().unwrap()),
            node: u32::from_le_bytes(r[36..40].try_into().unwrap()),
            marks: u16::from_le_bytes(r[48..50].try_into().unwrap()),
            event: r[50],
            cause: r[51],
        })
        .collect()
}

fn dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("qossim-trace-test-{}-{tag}", std::process::id()))
}

fn run_traced(text: &str, tag: &str) -> (RunOutput, Vec<Vec<Rec>>) {
    let sc = parse(text).unwrap_or_else(|d| panic!("{d:#?}"));
    let d = dir(tag);
    let opts = RunOptions {
        trace_dir: Some(d.clone()),
        ..Default::default()
    };
    let out = scenario::run_with(&sc, Some(3), &mut |_| true, &opts).unwrap();
    let recs = out
        .traces
        .iter()
        .map(|t| {
            let r = records(&std::fs::read(&t.path).unwrap());
            assert_eq!(r.len() as u64, t.records);
            r
        })
        .collect();
    std::fs::remove_dir_all(d).unwrap();
    (out, recs)
}

/// 20 CBR flows of 64 kb/s into a 1 Mb/s bottleneck: about 22% must be dropped.
fn overloaded(queue: &str, traces: &str) -> String {
    format!(
        r#"
[run]
duration = "4s"
warmup = "1s"

[topology]
kind = "chain"
length = 2
rate = "10Mbps"
delay = "1ms"
queue = {{ kind = "droptail", limit = "100p" }}

[links."n1-n2"]
rate = "1Mbps"
delay = "3ms"
queue = {queue}

[[traffic]]
name = "voice"
from = "n0"
to = "n2"
model = "CBR"
flows = 20
{traces}
"#
    )
}

const FIFO: &str = r#"{ kind = "droptail", limit = "5p" }"#;
const RED: &str = r#"{ kind = "red", limit = "30p", min_th = 5, max_th = 15, max_p = 0.1, w_q = 0.02, mean_pkt_size = "160B" }"#;

fn check_port(out: &RunOutput, recs: &[Rec], link: u32, name: &str, rate: u64, delay: u64) {
    let count = |e: TraceEvent| {
        recs.iter()
            .filter(|r| r.link == link && r.event == e as u8)
            .count()
    };
    let (enq, tx, drops) = (
        count(TraceEvent::Enqueue),
        count(TraceEvent::Transmit),
        count(TraceEvent::Drop),
    );
    assert!(drops > 0, "{name}: the scenario must overflow");
    assert_eq!(
        drops as f64,
        num(out, &format!("link.{name}.drops")),
        "{name}: drop records against the counter"
    );
    // Conservation at the port: every offered packet is transmitted, dropped or still
    // queued at the end (at most the buffer).
    let queued = enq as i64 - tx as i64 - drops as i64;
    assert!(
        (0..=30).contains(&queued),
        "{name}: {enq} in, {tx} out, {drops} dropped"
    );
    assert!(tx as f64 >= num(out, &format!("link.{name}.tx_pkts")));
    // Transmissions never overlap (the rate is never exceeded), and each packet arrives
    // exactly one transmission time plus the propagation delay after its start.
    let mut starts: Vec<&Rec> = recs
        .iter()
        .filter(|r| r.link == link && r.event == TraceEvent::Transmit as u8)
        .collect();
    starts.sort_by_key(|r| r.t);
    for w in starts.windows(2) {
        assert!(
            w[1].t >= w[0].t + tx_time(w[0].size, rate),
            "{name}: overlap at {w:?}"
        );
    }
    let arrivals: std::collections::HashMap<(u32, u64), u64> = recs
        .iter()
        .filter(|r| r.link == link && r.event == TraceEvent::Arrival as u8)
        .map(|r| ((r.flow, r.seq), r.t))
        .collect();
    let mut matched = 0;
    for s in &starts {
        if let Some(&t) = arrivals.get(&(s.flow, s.seq)) {
            assert_eq!(t, s.t + tx_time(s.size, rate) + delay, "{name}: {s:?}");
            matched += 1;
        }
    }
    assert_eq!(matched, arrivals.len());
    // Only the packets still on the way at the end have no arrival.
    let end = 4_000_000_000_000;
    for s in &starts {
        if !arrivals.contains_key(&(s.flow, s.seq)) {
            assert!(
                s.t + tx_time(s.size, rate) + delay > end,
                "{name}: {s:?} never arrived"
            );
        }
    }
}

#[test]
fn records_agree_with_counters_rate_and_delay_on_both_port_paths() {
    for (tag, queue) in [("fifo", FIFO), ("red", RED)] {
        let (out, recs) = run_traced(&overloaded(queue, "[[trace]]\n"), tag);
        let recs = &recs[0];
        let bottleneck = 2; // links: n0-n1, n1-n0, n1-n2, n2-n1
        check_port(&out, recs, bottleneck, "n1-n2", 1_000_000, 3_000_000_000);
        let delivered = recs
            .iter()
            .filter(|r| r.event == TraceEvent::Deliver as u8)
            .count();
        assert!(
            recs.iter().all(|r| r.t <= 4_000_000_000_000),
            "nothing after the end"
        );
        assert_eq!(delivered as f64, num(&out, "group.voice.rx_pkts"), "{tag}");
        let causes: std::collections::BTreeSet<u8> = recs
            .iter()
            .filter(|r| r.event == TraceEvent::Drop as u8)
            .map(|r| r.cause)
            .collect();
        if tag == "fifo" {
            assert_eq!(
                causes.into_iter().collect::<Vec<_>>(),
                vec![1],
                "overflow only"
            );
        } else {
            assert!(causes.contains(&2), "RED drops early: {causes:?}");
        }
        assert!(
            recs.iter().all(|r| r.node != u32::MAX),
            "every event happens at a node"
        );
    }
}

#[test]
fn tracing_does_not_change_the_run() {
    for queue in [FIFO, RED] {
        let plain = common::run(&overloaded(queue, ""), 3);
        let (traced, _) = run_traced(&overloaded(queue, "[[trace]]\n"), "same");
        assert_eq!(plain.summary, traced.summary);
        assert_eq!(plain.events, traced.events);
    }
}

#[test]
fn selection_keeps_exactly_the_selected_records() {
    let both = "[[trace]]\nname = \"all\"\n\n[[trace]]\nname = \"one\"\nflows = [3]\nlinks = [\"n1-n2\"]\nevents = [\"drop\", \"transmit\"]\n";
    let (_, recs) = run_traced(&overloaded(FIFO, both), "select");
    let want: Vec<Rec> = recs[0]
        .iter()
        .copied()
        .filter(|r| {
            r.flow == 3
                && r.link == 2
                && (r.event == TraceEvent::Drop as u8 || r.event == TraceEvent::Transmit as u8)
        })
        .collect();
    assert!(!want.is_empty());
    assert_eq!(recs[1], want);
}

#[test]
fn each_mistake_in_a_trace_entry_is_one_diagnostic() {
    let cases = [
        (
            "[[trace]]\nlinks = [\"n1-n9\"]\n",
            "trace.0.links.0",
            "unknown link",
        ),
        (
            "[[trace]]\nnodes = [\"x\"]\n",
            "trace.0.nodes.0",
            "unknown node",
        ),
        (
            "[[trace]]\nevents = [\"enqueue\", \"sent\"]\n",
            "trace.0.events.1",
            "unknown event",
        ),
        ("[[trace]]\nevents = []\n", "trace.0.events", "empty"),
        ("[[trace]]\nflows = [-1]\n", "trace.0.flows.0", "flow id"),
        (
            "[[trace]]\nname = \"a/b\"\n",
            "trace.0.name",
            "names a file",
        ),
        ("[[trace]]\npcap = 1\n", "trace.0.pcap", "true or false"),
        (
            "[[trace]]\nlink = [\"n1-n2\"]\n",
            "trace.0.link",
            "unknown key",
        ),
        (
            "[[trace]]\n\n[[trace]]\nname = \"trace\"\n",
            "trace.1.name",
            "duplicate",
        ),
    ];
    for (entry, path, reason) in cases {
        let text = overloaded(FIFO, entry);
        let d = parse(&text).expect_err(entry);
        assert_eq!(d.len(), 1, "{entry}: {d:#?}");
        assert_eq!(d[0].path, path, "{entry}");
        assert!(d[0].reason.contains(reason), "{entry}: {}", d[0].reason);
        // The entry is at the end of the text: its key's last occurrence is the line.
        let key = path
            .rsplit('.')
            .find(|s| s.parse::<usize>().is_err())
            .unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let line = lines.iter().rposition(|l| l.starts_with(key)).unwrap() + 1;
        assert_eq!(d[0].line, line, "{entry}");
    }
}

/// A token-bucket marker on the bottleneck: the packets it marks IN are exactly the
/// `mark` records, each carrying the IN bit; a node selection keeps the links touching
/// the node and the deliveries there, nothing else.
#[test]
fn marks_and_node_selection() {
    let marker = "[links.\"n1-n2\"]\nmeters = [{ kind = \"token_bucket\", rate = \"500kbps\", \
                  depth = \"2KB\" }]\n";
    let text = overloaded(
        FIFO,
        "[[trace]]\n\n[[trace]]\nname = \"at_n2\"\nnodes = [\"n2\"]\n",
    )
    .replace("[links.\"n1-n2\"]\n", marker);
    let (out, recs) = run_traced(&text, "marks");
    let marks: Vec<&Rec> = recs[0]
        .iter()
        .filter(|r| r.event == TraceEvent::Mark as u8)
        .collect();
    assert!(!marks.is_empty(), "the marker must mark some packets IN");
    assert!(
        marks.iter().all(|r| r.link == 2),
        "marks happen at the metered port only"
    );
    let in_profile = qossim::packet::marks::IN_PROFILE;
    assert!(
        marks.iter().all(|r| r.marks & in_profile != 0),
        "the new marks carry IN"
    );
    let enq = recs[0]
        .iter()
        .filter(|r| r.link == 2 && r.event == TraceEvent::Enqueue as u8)
        .count();
    assert!(
        marks.len() < enq,
        "500 kb/s of 1.28 Mb/s offered is marked, not all"
    );
    // Node n2: the links into and out of it (n1-n2 is 2, n2-n1 is 3) and deliveries.
    assert!(recs[1]
        .iter()
        .all(|r| r.link == 2 || r.link == 3 || r.event == TraceEvent::Deliver as u8));
    let delivered = recs[1]
        .iter()
        .filter(|r| r.event == TraceEvent::Deliver as u8)
        .count();
    assert_eq!(delivered as f64, num(&out, "group.voice.rx_pkts"));
    assert!(
        !recs[1].iter().any(|r| r.link == 0),
        "n0-n1 does not touch n2"
    );
}
