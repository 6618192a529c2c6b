//! TCP's declared parameters ([`crate::decl`]): the keys of a `[[traffic]]` entry with
//! `model = "tcp"`, read into a [`TcpSpec`]. Kept in their own file beside the sender so
//! that the reader, `qossim describe` and the documentation share one statement of them.

use crate::decl::{Absent, Bounds, Param, Problem, Type, Values};
use crate::scenario::{TcpSpec, TrafficModel};
use crate::traffic::ModelKind;

use super::{dctcp, Congestion, CubicParams, DctcpParams};

/// The congestion controls a scenario may name.
pub const CONGESTION: &[&str] = &["reno", "newreno", "cubic", "dctcp"];

/// The congestion control called `name` (one of [`CONGESTION`]), DCTCP with gain `g`.
fn congestion(name: &str, g: f64) -> Congestion {
    match name {
        "newreno" => Congestion::NewReno,
        "cubic" => Congestion::Cubic(CubicParams::default()),
        "dctcp" => Congestion::Dctcp(DctcpParams { g }),
        _ => Congestion::Reno,
    }
}

/// DCTCP needs ECN; its gain means nothing to the other congestion controls; SACK
/// recovery goes with NewReno's window rules, not Reno's.
fn tcp_rules(v: &Values) -> Vec<Problem> {
    let mut out = Vec::new();
    let dctcp = v.text("congestion") == "dctcp";
    if dctcp && !v.bool("ecn") {
        out.push(("congestion", "\"dctcp\" needs ecn = true".to_string()));
    }
    if !dctcp && v.number("dctcp_g") != DctcpParams::default().g {
        out.push(("dctcp_g", "only with congestion = \"dctcp\"".to_string()));
    }
    if v.bool("sack") && v.text("congestion") == "reno" {
        out.push((
            "sack",
            "SACK recovery (RFC 6675) replaces Reno's fast recovery, so Reno with SACK would \
             be NewReno with SACK; set congestion = \"newreno\" or \"cubic\""
                .to_string(),
        ));
    }
    out
}

/// TCP connections with an infinite backlog (`model = "tcp"`).
pub static TCP: ModelKind = ModelKind {
    name: "tcp",
    title: "TCP",
    doc: "Long-lived TCP connections (`flows` of them) sending as fast as their window allows.",
    params: &[
        Param::new(
            "packet_size",
            Type::Size,
            Absent::Is("576B"),
            "segment size on the wire, 40 B of it header",
        )
        .unit("B")
        .bounds(Bounds::Between(41.0, 65_535.0)),
        Param::new(
            "wnd",
            Type::Integer,
            Absent::Is("1000000"),
            "advertised window",
        )
        .unit("segments")
        .bounds(Bounds::Between(1.0, u32::MAX as f64)),
        Param::new(
            "delayed_ack",
            Type::Bool,
            Absent::Is("false"),
            "delayed ACKs at the receivers (100 ms timer), or an ACK per segment",
        ),
        Param::new(
            "min_rto",
            Type::Time,
            Absent::Is("200ms"),
            "minimum retransmission timeout",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "init_rto",
            Type::Time,
            Absent::Is("3s"),
            "retransmission timeout before the first RTT sample",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "tick",
            Type::Time,
            Absent::Is("10ms"),
            "clock granularity of RTT measurement",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "start_spread",
            Type::Time,
            Absent::Is("0s"),
            "connection starts are uniform in [start, start + start_spread]",
        )
        .unit("s"),
        Param::new(
            "congestion",
            Type::Choice(CONGESTION),
            Absent::Is("reno"),
            "congestion control",
        ),
        Param::new(
            "ecn",
            Type::Bool,
            Absent::Is("false"),
            "ECN-capable connections (RFC 3168)",
        ),
        dctcp::G,
        Param::new(
            "sack",
            Type::Bool,
            Absent::Is("false"),
            "SACK loss recovery (RFC 2018 blocks, RFC 6675 scoreboard); not with reno",
        ),
        Param::new(
            "timestamps",
            Type::Bool,
            Absent::Is("false"),
            "timestamp option (RFC 7323): an RTT sample from every ACK of new data, \
             retransmissions' included; 12 B more on every segment and ACK",
        ),
    ],
    rules: tcp_rules,
    make: |v, _| Ok(TrafficModel::Tcp(spec(v))),
};

/// The connection settings of valid values.
fn spec(v: &Values) -> TcpSpec {
    TcpSpec {
        packet_size: v.count("packet_size") as u32,
        wnd: v.count("wnd") as u32,
        delayed_ack: v.bool("delayed_ack"),
        min_rto: v.time("min_rto"),
        init_rto: v.time("init_rto"),
        tick: v.time("tick"),
        start_spread: v.time("start_spread"),
        congestion: congestion(v.text("congestion"), v.number("dctcp_g")),
        ecn: v.bool("ecn"),
        sack: v.bool("sack"),
        timestamps: v.bool("timestamps"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declared_defaults_are_the_default_settings() {
        assert_eq!(spec(&crate::decl::defaults(TCP.params)), TcpSpec::default());
    }

    #[test]
    fn every_congestion_control_keeps_its_name() {
        for name in CONGESTION {
            assert_eq!(congestion(name, 0.0625).name(), *name);
        }
    }
}
