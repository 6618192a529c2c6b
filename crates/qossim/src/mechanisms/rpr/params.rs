//! The declared keys of the `[rpr]` section ([`crate::decl::Section`]): the fairness
//! algorithm and the stations' settings ([`super::RprConfig`]) with the statistics it
//! asks for (`watch`, a list of traffic entry names, and `trace_tcp`). The reader
//! ([`super::scenario`]) fills an [`super::RprConfig`] from them; each key's type,
//! default and bounds are stated here once, and the reader checks the names against the
//! scenario's traffic entries.

use crate::decl::{Absent, Bounds, Param, Section, Type};

/// A coefficient of the fairness algorithm (at least 1).
const fn coef(key: &'static str, default: &'static str, doc: &'static str) -> Param {
    Param::new(key, Type::Number, Absent::Is(default), doc).bounds(Bounds::AtLeast(1.0))
}

/// A threshold as a fraction.
const fn fraction(key: &'static str, default: Absent, doc: &'static str) -> Param {
    Param::new(key, Type::Number, default, doc)
        .unit("fraction")
        .bounds(Bounds::AboveUpTo(0.0, 1.0))
}

/// The `[rpr]` section.
pub static SECTION: Section = Section {
    name: "rpr",
    written: "[rpr]",
    title: "RPR ring",
    doc:
        "Fairness on a resilient packet ring (topology kind = \"rpr_ring\"): one station per node.",
    params: &[
        Param::new(
            "mode",
            Type::Choice(&["aggressive", "conservative"]),
            Absent::Is("aggressive"),
            "the fairness algorithm",
        ),
        Param::new(
            "design",
            Type::Choice(&["dual", "single"]),
            Absent::Is("dual"),
            "transit buffer: a primary and a secondary transit queue, or one",
        ),
        Param::new(
            "aging_interval",
            Type::Time,
            Absent::Is("100us"),
            "aging interval (also the interval between fairness messages)",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        coef("age_coef", "4", "ageCoef"),
        coef("lp_coef", "64", "lpCoef"),
        coef(
            "ramp_coef",
            "64",
            "rampCoef: allowed += (line - allowed)/rampCoef on a full-rate message",
        ),
        coef(
            "ramp_down_coef",
            "16",
            "conservative: the head's fair rate falls by rate/coef per fairness round trip",
        ),
        coef(
            "ramp_up_coef",
            "4",
            "conservative: it rises by (line - rate)/coef per round trip once uncongested",
        ),
        Param::new(
            "stq_size",
            Type::Size,
            Absent::Is("262144B"),
            "secondary transit queue size (at least one 1500-byte frame)",
        )
        .unit("B")
        .bounds(Bounds::AtLeast(1500.0)),
        fraction(
            "stq_low",
            Absent::Is("0.125"),
            "STQ low threshold, fraction of its size",
        ),
        fraction(
            "stq_medium",
            Absent::Is("0.1875"),
            "STQ medium threshold (low <= medium <= high)",
        ),
        fraction("stq_high", Absent::Is("0.25"), "STQ high threshold"),
        fraction(
            "rate_low_threshold",
            Absent::Derived("0.9 × 0.95"),
            "rateLowThreshold: congested above this fraction of the line rate",
        ),
        Param::new(
            "aggressive_on_rates",
            Type::Bool,
            Absent::Is("true"),
            "aggressive, dual queue: congested on the transmit rate as well as on the STQ",
        ),
        Param::new(
            "add_credit",
            Type::Size,
            Absent::Is("1500B"),
            "credit limit of the add shaper (hiLimit); 0 spaces frames strictly",
        )
        .unit("B"),
        Param::new(
            "client_buffer",
            Type::Integer,
            Absent::Is("100000"),
            "client buffer of a station",
        )
        .unit("packets")
        .bounds(Bounds::AtLeast(1.0)),
        Param::new(
            "fairness_size",
            Type::Size,
            Absent::Is("16B"),
            "size of a fairness message",
        )
        .unit("B")
        .bounds(Bounds::Between(1.0, 9216.0)),
        Param::new(
            "sample_interval",
            Type::Time,
            Absent::Is("1ms"),
            "interval of the stations' time series",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "watch",
            Type::Names,
            Absent::Is("[]"),
            "traffic entries whose flows get throughput series (rpr.flow.NAME.K.bps)",
        ),
        Param::new(
            "trace_tcp",
            Type::Text,
            Absent::Derived("none"),
            "a TCP traffic entry whose first connection is traced",
        ),
        Param::new(
            "trace_from",
            Type::Time,
            Absent::Is("0s"),
            "start of the per-aging-interval trace (rpr.S{i}.iv.* series)",
        )
        .unit("s"),
        Param::new(
            "trace_until",
            Type::Time,
            Absent::Is("0s"),
            "end of that trace (none unless after trace_from)",
        )
        .unit("s"),
    ],
};

/// The family's declared sections.
pub static DECLARED: &[&Section] = &[&SECTION];

/// The family's topology, `[topology] kind = "rpr_ring"`: its keys besides `kind`.
pub static RING: Section = Section {
    name: "rpr_ring",
    written: "kind = \"rpr_ring\"",
    title: "RPR ring",
    doc: "Stations S0..S{N-1} on two ringlets: data from S{i} to S{i+1}, fairness messages back.",
    params: &[
        Param::new(
            "stations",
            Type::Integer,
            Absent::Is("6"),
            "stations on the ring (N)",
        )
        .bounds(Bounds::Between(2.0, 256.0)),
        Param::new(
            "rate",
            Type::Rate,
            Absent::Is("622Mbps"),
            "the rate of every span",
        )
        .unit("bit/s")
        .bounds(Bounds::Positive),
        Param::new(
            "delay",
            Type::Time,
            Absent::Is("100us"),
            "the propagation delay of every span",
        )
        .unit("s"),
    ],
};

/// The family's declared topology kinds.
pub static TOPOLOGIES: &[&Section] = &[&RING];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::rpr::RprConfig;

    #[test]
    fn the_fixed_defaults_are_the_models_defaults() {
        let d = crate::decl::defaults(SECTION.params);
        let c = RprConfig::default();
        assert_eq!(d.time("aging_interval"), c.aging_interval);
        assert_eq!(d.number("age_coef"), c.age_coef);
        assert_eq!(d.number("lp_coef"), c.lp_coef);
        assert_eq!(d.number("ramp_coef"), c.ramp_coef);
        assert_eq!(d.number("ramp_down_coef"), c.ramp_down_coef);
        assert_eq!(d.number("ramp_up_coef"), c.ramp_up_coef);
        assert_eq!(d.count("stq_size"), c.stq_size);
        assert_eq!(d.number("stq_low"), c.stq_low);
        assert_eq!(d.number("stq_medium"), c.stq_medium);
        assert_eq!(d.number("stq_high"), c.stq_high);
        assert_eq!(d.bool("aggressive_on_rates"), c.aggressive_on_rates);
        assert_eq!(d.count("add_credit"), c.add_credit);
        assert_eq!(d.count("client_buffer"), c.client_buffer as u64);
        assert_eq!(d.count("fairness_size"), c.fairness_size as u64);
        assert_eq!(d.time("sample_interval"), c.sample_interval);
        assert_eq!(d.time("trace_from"), c.trace_from);
        assert_eq!(d.time("trace_until"), c.trace_until);
        assert!(d.names("watch").is_empty());
    }
}
