//! The `[[traffic]]` entries: models, TCP settings, calls.

use super::*;

pub(super) fn node_ref(cx: &Cx, t: &Tbl, key: &str, topo: &Topology) -> Option<usize> {
    let name = t.req_str(cx, key)?;
    match topo.node(&name) {
        Some(i) => Some(i),
        None => {
            t.error(
                cx,
                key,
                format!("unknown node {name:?}; nodes are: {}", topo.node_list()),
            );
            None
        }
    }
}

pub(super) fn period(cx: &Cx, t: &Tbl, key: &str, default: f64) -> Option<Period> {
    if !t.has(key) {
        return Some(Period::Exp(default));
    }
    t.parsed(cx, key, units::parse_dist).map(|d| match d {
        units::Dist::Exp(m) => Period::Exp(m),
        units::Dist::Fixed(m) => Period::Fixed(m),
        units::Dist::Pareto(a, m) => Period::Pareto { shape: a, mean: m },
    })
}

pub(super) fn read_tcp(cx: &Cx, t: &Tbl) -> Option<TcpSpec> {
    let d = TcpSpec::default();
    let packet_size = if t.has("packet_size") {
        t.size(cx, "packet_size").and_then(|s| {
            if (41..=65_535).contains(&s) {
                Some(s as u32)
            } else {
                t.error(
                    cx,
                    "packet_size",
                    format!("must be between 41 B and 65535 B (40 B are header), got {s} B"),
                );
                None
            }
        })
    } else {
        Some(d.packet_size)
    };
    let wnd = if t.has("wnd") {
        t.uint(cx, "wnd").and_then(|w| {
            if (1..=u32::MAX as u64).contains(&w) {
                Some(w as u32)
            } else {
                t.error(cx, "wnd", "must be at least one packet");
                None
            }
        })
    } else {
        Some(d.wnd)
    };
    let delayed_ack = if t.has("delayed_ack") {
        t.bool(cx, "delayed_ack")
    } else {
        Some(d.delayed_ack)
    };
    let positive = |key: &str, default: Time| -> Option<Time> {
        if !t.has(key) {
            return Some(default);
        }
        let v = t.time(cx, key)?;
        if v == 0 {
            t.error(cx, key, "must be positive");
            return None;
        }
        Some(v)
    };
    let min_rto = positive("min_rto", d.min_rto);
    let init_rto = positive("init_rto", d.init_rto);
    let tick = positive("tick", d.tick);
    let start_spread = if t.has("start_spread") {
        t.time(cx, "start_spread")
    } else {
        Some(0)
    };
    let congestion = if t.has("congestion") {
        use crate::transport::{Congestion, CubicParams};
        match t.str(cx, "congestion").as_deref() {
            Some("reno") => Some(Congestion::Reno),
            Some("newreno") => Some(Congestion::NewReno),
            Some("cubic") => Some(Congestion::Cubic(CubicParams::default())),
            Some(o) => {
                t.error(
                    cx,
                    "congestion",
                    format!(
                        "unknown congestion control {:?}; expected \"reno\", \"newreno\" or \"cubic\"",
                        o
                    ),
                );
                None
            }
            None => None,
        }
    } else {
        Some(d.congestion)
    };
    let ecn = if t.has("ecn") {
        t.bool(cx, "ecn")
    } else {
        Some(d.ecn)
    };
    let sack = if t.has("sack") {
        t.bool(cx, "sack").and_then(|on| {
            if on && congestion == Some(crate::transport::Congestion::Reno) {
                t.error(
                    cx,
                    "sack",
                    "SACK recovery (RFC 6675) replaces Reno's fast recovery, so Reno with SACK would be NewReno with SACK; set congestion = \"newreno\" or \"cubic\"",
                );
                None
            } else {
                Some(on)
            }
        })
    } else {
        Some(d.sack)
    };
    for key in ["size", "interval", "stop", "jitter"] {
        if t.has(key) {
            t.error(
                cx,
                key,
                "not used by model \"tcp\" (connections send as fast as their window allows, for the whole run); use packet_size, wnd, delayed_ack, min_rto, init_rto, tick, start, start_spread, congestion, ecn, sack",
            );
        }
    }
    Some(TcpSpec {
        packet_size: packet_size?,
        wnd: wnd?,
        delayed_ack: delayed_ack?,
        min_rto: min_rto?,
        init_rto: init_rto?,
        tick: tick?,
        start_spread: start_spread?,
        congestion: congestion?,
        ecn: ecn?,
        sack: sack?,
    })
}

/// The keys of a TCP traffic entry's connection settings (`model = "tcp"` only).
pub(super) const TCP_KEYS: &[&str] = &[
    "packet_size",
    "wnd",
    "delayed_ack",
    "min_rto",
    "init_rto",
    "tick",
    "start_spread",
    "congestion",
    "ecn",
    "sack",
];

/// The keys [`read_model`] reads.
pub const MODEL_KEYS: &[&str] = &[
    "model",
    "size",
    "interval",
    "on",
    "off",
    "rate",
    "size_dist",
    "trace",
    "trace_mean",
    "spacing",
];

/// Reads a traffic model (the `model` key and its parameters) from `t`: the same reader
/// serves `[[traffic]]` entries and the families' own flow definitions.
pub fn read_model(cx: &Cx, t: &Tbl, base: &Path) -> Option<TrafficModel> {
    let name = t.req_str(cx, "model")?;
    if name == "tcp" {
        return read_tcp(cx, t).map(TrafficModel::Tcp);
    }
    let known_model = matches!(name.as_str(), "cbr" | "onoff" | "poisson" | "trace")
        || models::named_model(&name).is_some();
    for &key in TCP_KEYS {
        if known_model && t.has(key) {
            t.error(
                cx,
                key,
                format!("only used by model \"tcp\", not by model {name:?}"),
            );
        }
    }
    read_source_model(cx, t, &name, base).map(TrafficModel::Source)
}

pub(super) fn read_source_model(cx: &Cx, t: &Tbl, name: &str, base: &Path) -> Option<SourceModel> {
    let name = name.to_string();
    let size = |cx: &Cx, default: Option<u64>| -> Option<u32> {
        let s = if t.has("size") {
            t.size(cx, "size")
        } else if let Some(d) = default {
            Some(d)
        } else {
            cx.error(
                t.line(),
                &t.key_path("size"),
                format!("missing (required for model {name:?})"),
            );
            None
        }?;
        if s == 0 || s > 65_535 * 16 {
            t.error(
                cx,
                "size",
                format!("packet size must be between 1 B and 1 MiB, got {s} B"),
            );
            return None;
        }
        Some(s as u32)
    };
    let interval = |cx: &Cx| -> Option<f64> {
        if !t.has("interval") {
            cx.error(
                t.line(),
                &t.key_path("interval"),
                format!("missing (required for model {name:?})"),
            );
            return None;
        }
        let i = t.time(cx, "interval")?;
        if i == 0 {
            t.error(cx, "interval", "must be positive");
            return None;
        }
        Some(crate::time::to_secs(i))
    };
    match name.as_str() {
        "cbr" => Some(SourceModel::Cbr {
            size: size(cx, None)?,
            interval: interval(cx)?,
        }),
        "onoff" => {
            let (s, i) = (size(cx, None), interval(cx));
            // An on period of zero length would never send (and its packet clock never
            // advances): refused. A zero off period is a CBR source.
            let on = period(cx, t, "on", 0.5).and_then(|p| {
                if p.mean() > 0.0 {
                    Some(p)
                } else {
                    t.error(cx, "on", "the mean on period must be positive");
                    None
                }
            });
            let off = period(cx, t, "off", 0.5);
            Some(SourceModel::OnOff {
                size: s?,
                interval: i?,
                on: on?,
                off: off?,
            })
        }
        "poisson" => {
            let rate = if t.has("rate") {
                t.parsed(cx, "rate", units::parse_per_second)
            } else {
                cx.error(
                    t.line(),
                    &t.key_path("rate"),
                    "missing (required for model \"poisson\": packets per second, e.g. \"800/s\")",
                );
                None
            };
            let dist = if t.has("size_dist") {
                t.str(cx, "size_dist")
            } else {
                Some("fixed".into())
            };
            let s = size(cx, None);
            let sd = match dist.as_deref() {
                Some("fixed") => s.map(SizeDist::Fixed),
                Some("geometric") | Some("exponential") => s.map(|b| SizeDist::Geometric(b as f64)),
                Some(other) => {
                    t.error(
                        cx,
                        "size_dist",
                        format!(
                            "unknown size distribution {other:?}; use \"fixed\" or \"exponential\""
                        ),
                    );
                    None
                }
                None => None,
            };
            let rate = rate?;
            if rate <= 0.0 {
                t.error(cx, "rate", "must be positive");
                return None;
            }
            Some(SourceModel::Poisson { rate, size: sd? })
        }
        "trace" => {
            let s = size(cx, Some(1500));
            let spacing = if t.has("spacing") {
                t.time(cx, "spacing").map(crate::time::to_secs)
            } else {
                Some(0.001)
            };
            let trace = if t.has("trace") {
                let f = t.str(cx, "trace")?;
                if f == "synthetic-mpeg" {
                    let mean = if t.has("trace_mean") {
                        t.rate(cx, "trace_mean")?
                    } else {
                        769_000
                    };
                    Some(FrameTrace::synthetic_mpeg(mean as f64, 600.0, 1))
                } else {
                    let p = base.join(&f);
                    match FrameTrace::load(&p) {
                        Ok(tr) => Some(tr),
                        Err(e) => {
                            t.error(cx, "trace", e);
                            None
                        }
                    }
                }
            } else {
                cx.error(t.line(), &t.key_path("trace"), "missing (required for model \"trace\": a `time size` file or \"synthetic-mpeg\")");
                None
            };
            Some(SourceModel::Trace {
                trace: Arc::new(trace?),
                size: s?,
                spacing: spacing?,
            })
        }
        other => match models::named_model(other) {
            Some(m) => Some(m),
            None => {
                t.error(
                    cx,
                    "model",
                    {
                        let mut names = vec!["cbr", "onoff", "poisson", "trace", "tcp"];
                        let named = models::model_names();
                        names.extend(named.iter().copied());
                        format!(
                            "unknown model {other:?}{}; use cbr, onoff, poisson, trace, tcp or one of {}",
                            walk::did_you_mean(other, &names),
                            named.join(", ")
                        )
                    },
                );
                None
            }
        },
    }
}

/// The most static flows one traffic entry may open (each costs memory for the whole
/// run; more is almost surely a typing mistake).
pub const MAX_FLOWS_PER_ENTRY: u64 = 10_000_000;

pub(super) fn read_traffic(cx: &Cx, t: &Tbl, topo: &Topology, base: &Path) -> Option<TrafficSpec> {
    let name = t.req_name(cx, "name");
    let from = node_ref(cx, t, "from", topo);
    let to = node_ref(cx, t, "to", topo);
    let model = read_model(cx, t, base);
    let flows = if t.has("flows") {
        t.uint(cx, "flows").and_then(|n| {
            if n > MAX_FLOWS_PER_ENTRY {
                t.error(
                    cx,
                    "flows",
                    format!(
                        "{n} flows in one entry is more than {MAX_FLOWS_PER_ENTRY}; \
                         use [traffic.calls] for flow arrivals"
                    ),
                );
                None
            } else {
                Some(n)
            }
        })
    } else {
        Some(1)
    };
    let start = if t.has("start") {
        t.time(cx, "start")
    } else {
        Some(0)
    };
    let stop = if t.has("stop") {
        t.time(cx, "stop").and_then(|s| match start {
            Some(b) if s <= b => {
                t.error(
                    cx,
                    "stop",
                    format!(
                        "must be after start ({} s); the entry would send nothing",
                        crate::time::to_secs(b)
                    ),
                );
                None
            }
            _ => Some(Some(s)),
        })
    } else {
        Some(None)
    };
    let jitter = if t.has("jitter") {
        t.num_in(cx, "jitter", 0.0, 1.0)
    } else {
        Some(0.0)
    };
    let class = t.class(cx, "class").map(|c| c.unwrap_or(0));
    let route = if t.has("route") {
        t.array(cx, "route")
            .and_then(|a| {
                let mut out = Vec::new();
                let mut seen = std::collections::HashSet::new();
                for (v, line) in a {
                    match v.as_str().and_then(|n| topo.node(n)) {
                        Some(i) if !seen.insert(i) => {
                            cx.error(
                                line,
                                &t.key_path("route"),
                                format!("{v} appears twice: a route is a path and may not loop"),
                            );
                            return None;
                        }
                        Some(i) => out.push(i),
                        None => {
                            cx.error(
                                line,
                                &t.key_path("route"),
                                format!("unknown node {v}; nodes are: {}", topo.node_list()),
                            );
                            return None;
                        }
                    }
                }
                Some(out)
            })
            .map(Some)
    } else {
        Some(None)
    };
    let calls = if t.has("calls") {
        if matches!(model, Some(TrafficModel::Tcp(_))) {
            t.error(
                cx,
                "calls",
                "model \"tcp\" runs `flows` long-lived connections; it has no call arrivals",
            );
            None
        } else {
            t.table(cx, "calls")
                .and_then(|c| read_calls(cx, &c, model.as_ref().and_then(TrafficModel::source)))
                .map(Some)
        }
    } else {
        Some(None)
    };
    let profile = if t.has("profile") {
        if t.has("calls") {
            t.error(
                cx,
                "profile",
                "a host profile applies to static flows or TCP connections, not to flows created by `calls`",
            );
            None
        } else {
            t.table(cx, "profile")
                .and_then(|p| meters::read_meter(cx, &p, false, "a host profile"))
                .map(Some)
        }
    } else {
        Some(None)
    };
    let per_flow = if t.has("per_flow") {
        t.bool(cx, "per_flow").and_then(|p| {
            if !p && matches!(model, Some(TrafficModel::Tcp(_))) {
                t.error(
                    cx,
                    "per_flow",
                    "TCP connections always keep their own records",
                );
                None
            } else if !p && t.has("profile") {
                t.error(
                    cx,
                    "per_flow",
                    "a host profile meters each flow: its flows keep their own records",
                );
                None
            } else {
                Some(p)
            }
        })
    } else {
        Some(true)
    };
    let mut known: Vec<&str> = ["name", "from", "to"].to_vec();
    known.extend_from_slice(MODEL_KEYS);
    known.extend_from_slice(&[
        "start", "stop", "jitter", "class", "route", "calls", "profile", "per_flow",
    ]);
    known.extend_from_slice(TCP_KEYS);
    t.finish(cx, &known);
    let (from, to, route) = (from?, to?, route?);
    // Connectivity.
    match &route {
        Some(r) => {
            if r.first() != Some(&from) || r.last() != Some(&to) {
                t.error(cx, "route", "must start at `from` and end at `to`");
                return None;
            }
            for w in r.windows(2) {
                if topo.link_between(w[0], w[1]).is_none() {
                    t.error(
                        cx,
                        "route",
                        format!(
                            "route does not connect: no link from {} to {}",
                            topo.nodes[w[0]], topo.nodes[w[1]]
                        ),
                    );
                    return None;
                }
            }
        }
        None => {
            let same = "source and destination are the same node";
            if !check_reachable(cx, t, "to", topo, (from, to), same) {
                return None;
            }
        }
    }
    Some(TrafficSpec {
        name: name?,
        from,
        to,
        model: model?,
        flows: flows?,
        start: start?,
        stop: stop?,
        jitter: jitter?,
        class: class?,
        calls: calls?,
        route,
        profile: profile?,
        per_flow: per_flow?,
    })
}

pub(super) fn read_calls(cx: &Cx, c: &Tbl, model: Option<&SourceModel>) -> Option<CallsSpec> {
    let kind = if c.has("arrivals") {
        c.str(cx, "arrivals")
    } else {
        Some("poisson".into())
    };
    let holding = if c.has("holding") {
        c.parsed(cx, "holding", units::parse_dist)
            .and_then(|d| match d {
                units::Dist::Exp(m) => Some(Holding::Exp(m)),
                units::Dist::Fixed(m) => Some(Holding::Fixed(m)),
                units::Dist::Pareto(..) => {
                    c.error(cx, "holding", "holding times are exponential or fixed");
                    None
                }
            })
    } else {
        cx.error(
            c.line(),
            &c.key_path("holding"),
            "missing (required: e.g. \"exp:60s\")",
        );
        None
    };
    let batch_mean = if c.has("batch_mean") {
        c.num_in(cx, "batch_mean", 1.0, 1e9)
    } else {
        Some(5.0)
    };
    // Call rate: `rate` (calls per time) or `offered` (mean offered bit rate).
    let rate = match (c.has("rate"), c.has("offered")) {
        (true, false) => c.parsed(cx, "rate", units::parse_per_second),
        (false, true) => {
            let off = c.rate(cx, "offered");
            match (off, &holding, model) {
                (Some(o), Some(h), Some(m)) => Some(o as f64 / (m.mean_bps() * h.mean())),
                _ => None,
            }
        }
        (true, true) => {
            c.error(cx, "offered", "give either `rate` or `offered`, not both");
            None
        }
        (false, false) => {
            cx.error(
                c.line(),
                &c.key_path("rate"),
                "missing: give `rate` (calls per second, e.g. \"2/s\") or `offered` (a bit rate)",
            );
            None
        }
    };
    let max_active = if c.has("max_active") {
        c.uint(cx, "max_active").map(Some)
    } else {
        Some(None)
    };
    let stop = if c.has("stop") {
        c.time(cx, "stop").map(Some)
    } else {
        Some(None)
    };
    c.finish(
        cx,
        &[
            "arrivals",
            "holding",
            "rate",
            "offered",
            "batch_mean",
            "max_active",
            "stop",
        ],
    );
    let (rate, mean) = (rate?, batch_mean?);
    let arrivals = match kind?.as_str() {
        "poisson" => Arrivals::Poisson { rate },
        "batch" => Arrivals::Batch {
            rate: rate / mean,
            mean,
        },
        other => {
            c.error(
                cx,
                "arrivals",
                format!("unknown arrival process {other:?}; use \"poisson\" or \"batch\""),
            );
            return None;
        }
    };
    Some(CallsSpec {
        arrivals,
        holding: holding?,
        max_active: max_active?,
        stop: stop?,
    })
}
