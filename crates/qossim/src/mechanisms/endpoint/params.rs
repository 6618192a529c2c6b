//! The declared keys of the endpoint admission family ([`crate::decl::Section`]).
//!
//! The `[endpoint]` table holds nothing but three arrays of tables, so what a scenario
//! sets is declared per entry, one section for each array: `[[endpoint.probe]]`
//! (probing admission on a traffic entry), `[[endpoint.mbac]]` (Measured Sum, one entry
//! per measured link of a traffic entry's path) and `[[endpoint.virtual_queue]]` (the
//! marking design's virtual queue on a link). Each entry is read on its own against its
//! section, so a section per array states exactly the keys one entry may have; a section
//! for `[endpoint]` itself would declare no key.
//!
//! The reader ([`super::scenario`]) reads every key through these declarations (type,
//! default, bounds) and keeps the rules between keys explicit: [`vq_rules`] relates a
//! virtual queue's own keys (probe and Measured Sum entries have no such rule); what
//! depends on the rest of the scenario — the traffic entry and link named, the defaults
//! taken from them (`rate`, `class`, `limit`), a trace's need for `rate`, and the rules
//! across entries (one policy per traffic entry, one estimator per link) — stays in the
//! reader, which knows the scenario's core.

use crate::decl::{Absent, Bounds, Param, Problem, Section, Type, Values};

/// The traffic entry an admission policy applies to.
const TRAFFIC: Param = Param::new(
    "traffic",
    Type::Text,
    Absent::Required,
    "the traffic entry whose calls are admitted (with [traffic.calls] and a cbr, onoff or trace model)",
);

/// The token rate a call asks for.
const RATE: Param = Param::new(
    "rate",
    Type::Rate,
    Absent::Derived("the traffic model's peak rate (required with a trace)"),
    "the rate each call asks for",
)
.unit("bit/s")
.bounds(Bounds::Positive);

/// The link a Measured Sum entry or a virtual queue is on.
const fn link(doc: &'static str) -> Param {
    Param::new("link", Type::Text, Absent::Required, doc)
}

/// The probing algorithms a scenario may name.
pub const ALGORITHMS: &[&str] = &["simple", "early_reject", "slow_start"];

/// `[[endpoint.probe]]`: probing admission on one traffic entry.
pub static PROBE: Section = Section {
    name: "endpoint.probe",
    written: "[[endpoint.probe]]",
    title: "Endpoint admission by probing",
    doc: "Each call of a traffic entry probes its path first and starts only if the probes' loss or mark fraction is at most epsilon.",
    params: &[
        TRAFFIC,
        Param::new(
            "algorithm",
            Type::Choice(ALGORITHMS),
            Absent::Is("slow_start"),
            "simple (rate r throughout), early_reject (at r, rejects after a bad interval) or slow_start (r/16 up to r in five levels, likewise)",
        ),
        Param::new(
            "epsilon",
            Type::Number,
            Absent::Is("0"),
            "the largest loss (or mark) fraction of the probes that admits the call",
        )
        .unit("fraction")
        .bounds(Bounds::Between(0.0, 1.0)),
        Param::new(
            "probe_time",
            Type::Time,
            Absent::Is("5s"),
            "how long a call probes",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "interval",
            Type::Time,
            Absent::Is("1s"),
            "decision interval: early_reject and slow_start judge each interval's loss fraction",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        RATE,
        Param::new(
            "class",
            Type::Integer,
            Absent::Derived("the traffic entry's class"),
            "service class of the probe packets",
        )
        .bounds(Bounds::Between(0.0, 255.0)),
        Param::new(
            "grace",
            Type::Time,
            Absent::Derived("min(one-way delay + longest queueing wait of the path, 2s) + 1ms"),
            "how long after an interval's end the receiver waits for its last probes",
        )
        .unit("s"),
    ],
};

/// `[[endpoint.mbac]]`: Measured Sum admission of one traffic entry at one link.
pub static MBAC: Section = Section {
    name: "endpoint.mbac",
    written: "[[endpoint.mbac]]",
    title: "Measured Sum admission",
    doc: "A call of a traffic entry is admitted if its rate fits under the utilization target at every measured link of its path (one entry per link).",
    params: &[
        TRAFFIC,
        link("the measured link"),
        Param::new(
            "target",
            Type::Number,
            Absent::Is("0.9"),
            "utilization target υ: admit while measured load + rate <= υ × link rate",
        )
        .unit("fraction")
        .bounds(Bounds::Between(0.0, 10.0)),
        Param::new(
            "sample",
            Type::Time,
            Absent::Is("500ms"),
            "sampling period S of the link's arrivals",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "window",
            Type::Integer,
            Absent::Is("3"),
            "samples in the measurement window T",
        )
        .unit("samples")
        .bounds(Bounds::Between(1.0, 1000.0)),
        RATE,
    ],
};

/// `[[endpoint.virtual_queue]]`: a virtual queue beside a link's real queue.
pub static VIRTUAL_QUEUE: Section = Section {
    name: "endpoint.virtual_queue",
    written: "[[endpoint.virtual_queue]]",
    title: "Virtual queue",
    doc: "A virtual queue served slower than the link marks (ECN CE) the packets it would have dropped.",
    params: &[
        link("the link whose packets the virtual queue sees"),
        Param::new(
            "fraction",
            Type::Number,
            Absent::Is("0.9"),
            "the virtual queue's service rate, fraction of the link rate",
        )
        .unit("fraction")
        .bounds(Bounds::AboveUpTo(0.0, 1.0)),
        Param::new(
            "limit",
            Type::Integer,
            Absent::Derived("the link queue's packet limit"),
            "its limit",
        )
        .unit("packets"),
        Param::new(
            "per_class",
            Type::Bool,
            Absent::Is("false"),
            "one counter per priority level (strict priority) instead of one FIFO counter",
        ),
        Param::new(
            "shared",
            Type::Bool,
            Absent::Is("false"),
            "per_class: the levels share the limit; a higher level's packet pushes out a lower one",
        ),
        Param::new(
            "mark_pushed_out",
            Type::Bool,
            Absent::Is("false"),
            "shared: a pushed-out virtual packet marks its real copy if that is still queued",
        ),
    ],
};

/// The family's declared sections.
pub static DECLARED: &[&Section] = &[&PROBE, &MBAC, &VIRTUAL_QUEUE];

/// A shared virtual buffer needs per-class counters; only a shared one pushes packets
/// out, so only it can mark them.
pub fn vq_rules(v: &Values) -> Vec<Problem> {
    let mut out = Vec::new();
    if v.bool("shared") && !v.bool("per_class") {
        out.push((
            "shared",
            "needs per_class = true (the levels share one buffer)".to_string(),
        ));
    }
    if v.bool("mark_pushed_out") && !v.bool("shared") {
        out.push((
            "mark_pushed_out",
            "needs shared = true (only a shared virtual buffer pushes packets out)".to_string(),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::{defaults, Value};
    use crate::mechanisms::endpoint::Algorithm;

    #[test]
    fn the_fixed_defaults_are_the_readers_former_defaults() {
        let p = defaults(PROBE.params);
        assert_eq!(p.text("algorithm"), "slow_start");
        assert_eq!(p.number("epsilon"), 0.0);
        assert_eq!(p.time("probe_time"), crate::time::secs(5.0));
        assert_eq!(p.time("interval"), crate::time::secs(1.0));
        let m = defaults(MBAC.params);
        assert_eq!(m.number("target"), 0.9);
        assert_eq!(m.time("sample"), crate::time::millis(500.0));
        assert_eq!(m.count("window"), 3);
        let v = defaults(VIRTUAL_QUEUE.params);
        assert_eq!(v.number("fraction"), 0.9);
        for k in ["per_class", "shared", "mark_pushed_out"] {
            assert_eq!(v.get(k), Some(&Value::Bool(false)), "{k}");
        }
    }

    #[test]
    fn every_algorithm_is_named_and_has_a_model() {
        for a in ALGORITHMS {
            assert!(super::super::scenario::algorithm(a).is_some(), "{a}");
        }
        assert_eq!(
            super::super::scenario::algorithm("slow_start"),
            Some(Algorithm::SlowStart)
        );
    }

    #[test]
    fn the_virtual_queue_rules_name_the_key_that_needs_another() {
        let d = defaults(VIRTUAL_QUEUE.params);
        assert!(vq_rules(&d).is_empty());
        let shared = d.clone().with("shared", Value::Bool(true));
        assert_eq!(vq_rules(&shared)[0].0, "shared");
        let pushed = d
            .with("per_class", Value::Bool(true))
            .with("mark_pushed_out", Value::Bool(true));
        assert_eq!(vq_rules(&pushed)[0].0, "mark_pushed_out");
    }
}
