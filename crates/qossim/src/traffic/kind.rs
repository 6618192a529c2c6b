//! The traffic models as scenarios name them (`model = "cbr"` in a `[[traffic]]` entry or
//! a family's flow definition), each with its declared parameters ([`crate::decl`]), and
//! the declared keys of a traffic entry's call arrivals (`[traffic.calls]`).
//!
//! The open-loop source models are declared here beside [`super::SourceModel`]; TCP
//! declares its own in [`crate::transport::params`]. The named codecs and video models
//! ([`super::models`]) take no parameters.

use super::source::{Period, SizeDist, SourceModel};
use super::{FrameTrace, Holding};
use crate::decl::{Absent, Bounds, Param, Problem, Type, Values};
use crate::scenario::units::Dist;
use crate::scenario::TrafficModel;
use crate::time::to_secs;
use std::path::Path;
use std::sync::Arc;

/// One traffic model as scenarios name it (an entry of [`MODELS`]).
pub struct ModelKind {
    /// The `model` scenarios write.
    pub name: &'static str,
    /// Its name in prose.
    pub title: &'static str,
    /// One line saying what it sends.
    pub doc: &'static str,
    /// Its parameters (keys of the traffic entry besides `model` and the entry's own).
    pub params: &'static [Param],
    /// The relations between parameters, checked once every value is in its bounds.
    pub rules: fn(&Values) -> Vec<Problem>,
    /// The model of valid values; `base` is the folder a file the values name is read
    /// from. A value that cannot be used (a trace file that does not load) is a problem
    /// blamed on its key.
    pub make: fn(&Values, &Path) -> Result<TrafficModel, Problem>,
}

impl ModelKind {
    /// The name `describe` and the documentation use: `traffic.NAME`.
    pub fn qualified(&self) -> String {
        format!("traffic.{}", self.name)
    }
}

impl std::fmt::Debug for ModelKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ModelKind({})", self.name)
    }
}

/// The largest packet a source may send, bytes.
pub const MAX_PACKET: u64 = 65_535 * 16;

/// The packet size of a source that must be given.
const SIZE: Param = Param::new(
    "size",
    Type::Size,
    Absent::Required,
    "packet size on the wire, e.g. \"200B\"",
)
.unit("B")
.bounds(Bounds::Between(1.0, MAX_PACKET as f64));

/// The time between packets (while on).
const INTERVAL: Param = Param::new(
    "interval",
    Type::Time,
    Absent::Required,
    "time between packets (while on), e.g. \"20ms\"",
)
.unit("s")
.bounds(Bounds::Positive);

/// The size of valid values, bytes.
fn size(v: &Values) -> u32 {
    v.count("size") as u32
}

/// A random duration as a source's period.
fn period(d: Dist) -> Period {
    match d {
        Dist::Exp(m) => Period::Exp(m),
        Dist::Fixed(m) => Period::Fixed(m),
        Dist::Pareto(a, m) => Period::Pareto { shape: a, mean: m },
    }
}

/// Constant bit rate (`model = "cbr"`).
pub static CBR: ModelKind = ModelKind {
    name: "cbr",
    title: "constant bit rate",
    doc: "One packet of `size` every `interval`.",
    params: &[SIZE, INTERVAL],
    rules: crate::decl::no_rules,
    make: |v, _| {
        Ok(TrafficModel::Source(SourceModel::Cbr {
            size: size(v),
            interval: to_secs(v.time("interval")),
        }))
    },
};

/// On-off source (`model = "onoff"`).
pub static ONOFF: ModelKind = ModelKind {
    name: "onoff",
    title: "on-off source",
    doc: "CBR while on; on and off periods drawn from their distributions.",
    params: &[
        SIZE,
        INTERVAL,
        // An on period of zero length would never send (and its packet clock never
        // advances): refused. A zero off period is a CBR source.
        Param::new(
            "on",
            Type::Dist,
            Absent::Is("exp:500ms"),
            "on period, e.g. \"exp:340ms\" or \"pareto:1.5:340ms\"",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "off",
            Type::Dist,
            Absent::Is("exp:500ms"),
            "off period, e.g. \"exp:660ms\"",
        )
        .unit("s"),
    ],
    rules: crate::decl::no_rules,
    make: |v, _| {
        Ok(TrafficModel::Source(SourceModel::OnOff {
            size: size(v),
            interval: to_secs(v.time("interval")),
            on: period(v.dist("on")),
            off: period(v.dist("off")),
        }))
    },
};

/// Poisson packet arrivals (`model = "poisson"`).
pub static POISSON: ModelKind = ModelKind {
    name: "poisson",
    title: "Poisson source",
    doc: "Packets at exponential intervals; sizes fixed or geometric.",
    params: &[
        Param::new(
            "rate",
            Type::PerSecond,
            Absent::Required,
            "packets per time, e.g. \"800/s\"",
        )
        .unit("1/s")
        .bounds(Bounds::Positive),
        Param::new(
            "size_dist",
            Type::Choice(&["fixed", "exponential", "geometric"]),
            Absent::Is("fixed"),
            "sizes: all `size`, or geometric with mean `size` (\"exponential\" is the same)",
        ),
        Param::new(
            "size",
            Type::Size,
            Absent::Required,
            "packet size (the mean when not fixed), e.g. \"500B\"",
        )
        .unit("B")
        .bounds(Bounds::Between(1.0, MAX_PACKET as f64)),
    ],
    rules: crate::decl::no_rules,
    make: |v, _| {
        let s = size(v);
        let size = match v.text("size_dist") {
            "fixed" => SizeDist::Fixed(s),
            _ => SizeDist::Geometric(s as f64),
        };
        Ok(TrafficModel::Source(SourceModel::Poisson {
            rate: v.number("rate"),
            size,
        }))
    },
};

/// The trace file that stands for the synthetic MPEG trace.
const SYNTHETIC_MPEG: &str = "synthetic-mpeg";

/// Video frames from a trace (`model = "trace"`).
pub static TRACE: ModelKind = ModelKind {
    name: "trace",
    title: "frame trace",
    doc: "Video frames from a `time size` file (or a synthetic MPEG trace), cut into packets.",
    params: &[
        Param::new(
            "trace",
            Type::Text,
            Absent::Required,
            "a `time size` file (relative to the scenario) or \"synthetic-mpeg\"",
        ),
        Param::new(
            "trace_mean",
            Type::Rate,
            Absent::Derived("769kbps (synthetic-mpeg only)"),
            "mean rate of the synthetic MPEG trace",
        )
        .unit("bit/s")
        .bounds(Bounds::Positive),
        Param::new(
            "size",
            Type::Size,
            Absent::Is("1500B"),
            "largest packet a frame is cut into",
        )
        .unit("B")
        .bounds(Bounds::Between(1.0, MAX_PACKET as f64)),
        Param::new(
            "spacing",
            Type::Time,
            Absent::Is("1ms"),
            "time between the packets of one frame",
        )
        .unit("s"),
    ],
    rules: |v| {
        if v.get("trace_mean").is_some() && v.text("trace") != SYNTHETIC_MPEG {
            vec![(
                "trace_mean",
                format!("only used with trace = {SYNTHETIC_MPEG:?}"),
            )]
        } else {
            Vec::new()
        }
    },
    make: |v, base| {
        let f = v.text("trace");
        let trace = if f == SYNTHETIC_MPEG {
            let mean = v
                .get("trace_mean")
                .map_or(769_000, |_| v.count("trace_mean"));
            FrameTrace::synthetic_mpeg(mean as f64, 600.0, 1)
        } else {
            FrameTrace::load(&base.join(f)).map_err(|e| ("trace", e))?
        };
        Ok(TrafficModel::Source(SourceModel::Trace {
            trace: Arc::new(trace),
            size: size(v),
            spacing: to_secs(v.time("spacing")),
        }))
    },
};

/// The registry of traffic models with parameters, in the order messages and the
/// documentation list them (the named models of [`super::models`] come after).
pub static MODELS: &[&ModelKind] = &[
    &CBR,
    &ONOFF,
    &POISSON,
    &TRACE,
    &crate::transport::params::TCP,
];

/// The model scenarios call `name`, if it has parameters.
pub fn model_kind(name: &str) -> Option<&'static ModelKind> {
    MODELS.iter().copied().find(|k| k.name == name)
}

/// The keys of every model (and `model` itself), each once, in registry order.
pub fn model_keys() -> Vec<&'static str> {
    let mut out = vec!["model"];
    for p in MODELS.iter().flat_map(|k| k.params) {
        if !out.contains(&p.key) {
            out.push(p.key);
        }
    }
    out
}

/// The names of the models that declare `key`.
pub fn models_with(key: &str) -> Vec<&'static str> {
    MODELS
        .iter()
        .filter(|k| k.params.iter().any(|p| p.key == key))
        .map(|k| k.name)
        .collect()
}

/// The declared keys of a traffic entry's call arrivals (`[traffic.calls]`).
pub static CALLS: &[Param] = &[
    Param::new(
        "arrivals",
        Type::Choice(&["poisson", "batch"]),
        Absent::Is("poisson"),
        "calls one at a time, or in batches of geometric size (mean `batch_mean`)",
    ),
    Param::new(
        "holding",
        Type::Dist,
        Absent::Required,
        "holding time, exponential or fixed, e.g. \"exp:60s\"",
    )
    .unit("s"),
    Param::new(
        "rate",
        Type::PerSecond,
        Absent::Derived("from `offered`"),
        "calls per time, e.g. \"2/s\" (or give `offered`)",
    )
    .unit("1/s"),
    Param::new(
        "offered",
        Type::Rate,
        Absent::Derived("from `rate`"),
        "mean offered bit rate: rate = offered / (model's mean rate × mean holding time)",
    )
    .unit("bit/s"),
    Param::new(
        "batch_mean",
        Type::Number,
        Absent::Is("5"),
        "mean calls per batch (arrivals = \"batch\")",
    )
    .unit("calls")
    .bounds(Bounds::Between(1.0, 1e9)),
    Param::new(
        "max_active",
        Type::Integer,
        Absent::Derived("no limit"),
        "trunk limit: calls arriving with this many in progress are blocked",
    )
    .unit("calls"),
    Param::new(
        "stop",
        Type::Time,
        Absent::Derived("the run's end"),
        "no arrivals after this time",
    )
    .unit("s"),
];

/// The relations between the keys of [`CALLS`]: a call rate given one way, holding times
/// exponential or fixed.
pub fn calls_rules(v: &Values) -> Vec<Problem> {
    let mut out = Vec::new();
    if let Dist::Pareto(..) = v.dist("holding") {
        out.push(("holding", "holding times are exponential or fixed".into()));
    }
    match (v.get("rate").is_some(), v.get("offered").is_some()) {
        (true, true) => out.push((
            "offered",
            "give either `rate` or `offered`, not both".into(),
        )),
        (false, false) => out.push((
            "rate",
            "missing: give `rate` (calls per second, e.g. \"2/s\") or `offered` (a bit rate)"
                .into(),
        )),
        _ => {}
    }
    out
}

/// The holding times of valid values of [`CALLS`].
pub fn holding(v: &Values) -> Holding {
    match v.dist("holding") {
        Dist::Fixed(m) => Holding::Fixed(m),
        Dist::Exp(m) | Dist::Pareto(_, m) => Holding::Exp(m),
    }
}

/// Every traffic model with its declared parameters (the named models without), then the
/// call arrivals, as JSON entries of [`crate::decl::catalogue`] (group `traffic`).
pub fn describe() -> Vec<serde_json::Value> {
    use crate::decl::describe_written;
    let mut out: Vec<serde_json::Value> = MODELS
        .iter()
        .map(|k| {
            let written = format!("model = {:?}", k.name);
            describe_written("traffic", k.name, &[], k.title, k.doc, k.params, &written)
        })
        .collect();
    for (name, doc) in super::models::named_docs() {
        let written = format!("model = {name:?}");
        out.push(describe_written(
            "traffic",
            name,
            &[],
            name,
            &doc,
            &[],
            &written,
        ));
    }
    out.push(describe_written(
        "traffic",
        "calls",
        &[],
        "call arrivals",
        "Flows created by call arrivals, each running the entry's model for its holding time.",
        CALLS,
        "[traffic.calls]",
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fixed_default_reads_and_is_in_bounds() {
        let tables = MODELS.iter().map(|k| k.params).chain([CALLS]);
        for params in tables {
            let d = crate::decl::defaults(params);
            for p in params {
                if let Some(v) = d.get(p.key) {
                    assert_eq!(p.check(v), None, "{}", p.key);
                }
            }
        }
    }

    #[test]
    fn a_key_declared_twice_has_one_type() {
        for key in model_keys() {
            let types: Vec<Type> = MODELS
                .iter()
                .flat_map(|k| k.params)
                .filter(|p| p.key == key)
                .map(|p| p.ty)
                .collect();
            assert!(types.windows(2).all(|w| w[0] == w[1]), "{key}: {types:?}");
        }
    }
}
