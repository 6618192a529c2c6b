//! What the registry of meters and markers holds about each kind: its name in
//! scenarios, its declared parameters and how to make its specification.

use crate::decl::{Absent, Bounds, Param, Problem, Type, Values};
use crate::scenario::MeterSpec;

/// One meter or marker as scenarios name it (an entry of [`METERS`]).
pub struct MeterKind {
    /// The `kind` scenarios write.
    pub name: &'static str,
    /// Its name in prose.
    pub title: &'static str,
    /// One line saying what it does.
    pub doc: &'static str,
    /// Its parameters (the keys of its table besides `kind`).
    pub params: &'static [Param],
    /// The relations between parameters, checked once every value is in its bounds.
    pub rules: fn(&Values) -> Vec<Problem>,
    /// Whether it may be a traffic entry's host profile (not only a link's meter).
    pub host_profile: bool,
    /// The specification of valid values (defaults filled in).
    pub spec: fn(Values) -> MeterSpec,
}

impl MeterKind {
    /// The name `describe` and the documentation use: `meter.NAME`.
    pub fn qualified(&self) -> String {
        format!("meter.{}", self.name)
    }
}

impl std::fmt::Debug for MeterKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MeterKind({})", self.name)
    }
}

/// A token rate.
const fn rate(doc: &'static str) -> Param {
    Param::new("rate", Type::Rate, Absent::Required, doc).unit("bit/s")
}

/// A bucket depth.
const DEPTH: Param = Param::new(
    "depth",
    Type::Size,
    Absent::Required,
    "bucket depth, e.g. \"20KB\"",
)
.unit("B")
.bounds(Bounds::Positive);

/// The policer (`kind = "policer"`): links only.
pub static POLICER: MeterKind = MeterKind {
    name: "policer",
    title: "policer",
    doc: "Token bucket on an aggregate: IN packets beyond it are demoted to OUT and counted.",
    params: &[rate("token rate of the contract, e.g. \"2Mbps\""), DEPTH],
    rules: crate::decl::no_rules,
    host_profile: false,
    spec: |v| MeterSpec::Policer {
        rate: v.count("rate"),
        depth: v.count("depth"),
    },
};

/// The token-bucket profiler (`kind = "token_bucket"`).
pub static TOKEN_BUCKET: MeterKind = MeterKind {
    name: "token_bucket",
    title: "token-bucket profiler",
    doc: "A packet finding enough tokens is IN, otherwise OUT (exact integer bucket).",
    params: &[rate("token rate, e.g. \"1Mbps\""), DEPTH],
    rules: crate::decl::no_rules,
    host_profile: true,
    spec: |v| MeterSpec::TokenBucket {
        rate: v.count("rate"),
        depth: v.count("depth"),
    },
};

/// The time-sliding-window marker (`kind = "tsw"`).
pub static TSW: MeterKind = MeterKind {
    name: "tsw",
    title: "time-sliding-window marker",
    doc:
        "Rate estimate over a sliding window; above the target a packet is OUT with a probability.",
    params: &[
        Param::new(
            "target",
            Type::Rate,
            Absent::Required,
            "the target rate, e.g. \"1Mbps\"",
        )
        .unit("bit/s"),
        Param::new(
            "win",
            Type::Time,
            Absent::Is("1s"),
            "Averaging window of the rate estimate.",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "rule",
            Type::Choice(&["over_target", "over_average"]),
            Absent::Is("over_target"),
            "OUT probability above the target: (avg - target)/target or (avg - target)/avg.",
        ),
    ],
    rules: crate::decl::no_rules,
    host_profile: true,
    spec: |v| MeterSpec::Tsw {
        target: v.count("target"),
        win: v.time("win"),
        rule: match v.text("rule") {
            "over_average" => super::OutRule::OverAverage,
            _ => super::OutRule::OverTarget,
        },
    },
};

/// The registry of meters and markers, in the order messages list them.
pub static METERS: &[&MeterKind] = &[&POLICER, &TOKEN_BUCKET, &TSW];
