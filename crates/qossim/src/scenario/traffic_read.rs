//! The `[[traffic]]` entries: models, TCP settings, calls.

use super::sections::TRAFFIC;
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

/// Reads a traffic model (the `model` key and its declared parameters,
/// [`crate::traffic::MODELS`]) from `t`: the same reader serves `[[traffic]]` entries and
/// the families' own flow definitions. A key of another model is reported here; the
/// caller's [`Tbl::finish`] (with [`crate::traffic::model_keys`] among its keys) reports
/// the rest.
pub fn read_model(cx: &Cx, t: &Tbl, base: &Path) -> Option<TrafficModel> {
    let name = t.req_str(cx, "model")?;
    let kind = crate::traffic::model_kind(&name);
    let named = models::named_model(&name);
    let params: &[crate::decl::Param] = match (kind, &named) {
        (Some(k), _) => k.params,
        (None, Some(_)) => &[],
        (None, None) => {
            let mut names: Vec<&str> = crate::traffic::MODELS.iter().map(|k| k.name).collect();
            let with_params = names.join(", ");
            let named = models::model_names();
            names.extend(named.iter().copied());
            t.error(
                cx,
                "model",
                format!(
                    "unknown model {name:?}{}; use {with_params} or one of {}",
                    walk::did_you_mean(&name, &names),
                    named.join(", ")
                ),
            );
            return None;
        }
    };
    for key in crate::traffic::model_keys() {
        if key != "model" && !params.iter().any(|p| p.key == key) && t.has(key) {
            let users: Vec<String> = crate::traffic::kind::models_with(key)
                .iter()
                .map(|m| format!("{m:?}"))
                .collect();
            let own: Vec<&str> = params.iter().map(|p| p.key).collect();
            let takes = if own.is_empty() {
                " (it takes no parameters)".to_string()
            } else {
                format!("; model {name:?} takes {}", own.join(", "))
            };
            t.error(
                cx,
                key,
                format!(
                    "not used by model {name:?}; only used by model{} {}{takes}",
                    if users.len() > 1 { "s" } else { "" },
                    crate::decl::or_list(&users)
                ),
            );
        }
    }
    let title = kind.map_or(name.as_str(), |k| k.title);
    let values = super::declared::read_params(cx, t, title, params)?;
    let Some(kind) = kind else {
        return named.map(TrafficModel::Source);
    };
    let mut problems = (kind.rules)(&values);
    if problems.is_empty() {
        match (kind.make)(&values, base) {
            Ok(m) => return Some(m),
            Err(p) => problems.push(p),
        }
    }
    for (key, reason) in problems {
        t.error(cx, key, reason);
    }
    None
}

/// The most static flows one traffic entry may open (each costs memory for the whole
/// run; more is almost surely a typing mistake).
pub const MAX_FLOWS_PER_ENTRY: u64 = 10_000_000;

/// Every key a `[[traffic]]` entry may hold: its own, declared in
/// [`super::sections::TRAFFIC`], and those of the traffic models.
pub fn entry_keys() -> Vec<&'static str> {
    let mut known = TRAFFIC.keys();
    for key in crate::traffic::model_keys() {
        if !known.contains(&key) {
            known.push(key);
        }
    }
    known
}

pub(super) fn read_traffic(cx: &Cx, t: &Tbl, topo: &Topology, base: &Path) -> Option<TrafficSpec> {
    let name = t.req_name(cx, "name");
    let from = node_ref(cx, t, "from", topo);
    let to = node_ref(cx, t, "to", topo);
    let model = read_model(cx, t, base);
    // TCP connections run for the whole run at the pace of their window: the entry keys
    // that shape an open-loop source's sending are refused.
    let tcp = t.raw(cx, "model").and_then(|(m, _)| m.as_str()) == Some("tcp");
    for key in ["stop", "jitter"] {
        if tcp && t.has(key) {
            t.error(
                cx,
                key,
                "not used by model \"tcp\" (connections send as fast as their window allows, for the whole run)",
            );
        }
    }
    // The entry's scalar keys, read through their declaration: absent ones take the
    // declared default.
    let declared = |key: &str| {
        super::declared::key_or_default(cx, t, &TRAFFIC, key)
            .map(|v| v.unwrap_or_else(|| panic!("{key} has a fixed default")))
    };
    let flows = declared("flows").map(|v| v.as_u64());
    let start = declared("start").map(|v| v.as_time());
    let stop = if tcp {
        Some(None)
    } else {
        match super::declared::read_key(cx, t, &TRAFFIC, "stop") {
            Some(Some(s)) => {
                let s = s.as_time();
                match start {
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
                }
            }
            Some(None) => Some(None),
            None => None,
        }
    };
    let jitter = if tcp {
        Some(0.0)
    } else {
        declared("jitter").map(|v| v.as_f64())
    };
    let class = declared("class").map(|v| v.as_u64() as u8);
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
    let per_flow = declared("per_flow").and_then(|v| {
        let p = v == crate::decl::Value::Bool(true);
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
    });
    t.finish(cx, &entry_keys());
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

/// Reads a traffic entry's call arrivals (the declared keys of
/// [`crate::traffic::kind::CALLS`]); `model` is the entry's source model, whose mean rate
/// turns an `offered` bit rate into a call rate.
pub(super) fn read_calls(cx: &Cx, c: &Tbl, model: Option<&SourceModel>) -> Option<CallsSpec> {
    use crate::traffic::kind::{calls_rules, holding, CALLS};
    let values = super::declared::read_params(cx, c, "call arrivals", CALLS);
    let names: Vec<&str> = CALLS.iter().map(|p| p.key).collect();
    c.finish(cx, &names);
    let v = values?;
    let problems = calls_rules(&v);
    for (key, reason) in &problems {
        c.error(cx, key, reason.clone());
    }
    if !problems.is_empty() {
        return None;
    }
    let holding = holding(&v);
    let rate = match v.get("rate") {
        Some(_) => v.number("rate"),
        None => v.count("offered") as f64 / (model?.mean_bps() * holding.mean()),
    };
    let arrivals = match v.text("arrivals") {
        "batch" => {
            let mean = v.number("batch_mean");
            Arrivals::Batch {
                rate: rate / mean,
                mean,
            }
        }
        _ => Arrivals::Poisson { rate },
    };
    Some(CallsSpec {
        arrivals,
        holding,
        max_active: v.get("max_active").map(|_| v.count("max_active")),
        stop: v.get("stop").map(|_| v.time("stop")),
    })
}
