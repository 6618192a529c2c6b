//! The declared keys of the `[abr]` section ([`crate::decl::Section`]): ERICA's and
//! ERICA+'s parameters at every switch port, how branch points consolidate feedback, and
//! the TM 4.0 source parameters every connection starts from (a `[[abr.vc]]` entry may
//! override the latter). The reader ([`super::scenario`]) fills [`super::EricaParams`]
//! and [`super::SourceParams`], whose defaults depend on `network` and on the fastest
//! link; each key's type and bounds are stated here once.

use crate::decl::{Absent, Bounds, Param, Section, Type};

/// A rate of the TM 4.0 source parameters.
const fn rate(key: &'static str, default: Absent, doc: &'static str) -> Param {
    Param::new(key, Type::Rate, default, doc).unit("bit/s")
}

/// The TM 4.0 source parameters (the section's, overridden per connection).
pub const TM_KEYS: &[&str] = &["icr", "rif", "rdf", "pcr", "mcr", "nrm", "trm", "adtf"];

/// The `[abr]` section.
pub static SECTION: Section = Section {
    name: "abr",
    written: "[abr]",
    title: "ABR network",
    doc: "ERICA switches on every node that is not an end system; connections are [[abr.vc]] entries.",
    params: &[
        Param::new(
            "network",
            Type::Choice(&["lan", "wan"]),
            Absent::Is("lan"),
            "ERICA's defaults: LAN (N = 50 cells, U = 0.95) or WAN (N = 100 cells, U = 0.90)",
        ),
        Param::new(
            "algorithm",
            Type::Choice(&["erica", "erica_plus"]),
            Absent::Is("erica"),
            "ERICA, or ERICA+ (targets the whole link, fraction from the queue delay)",
        ),
        Param::new(
            "target_delay",
            Type::Time,
            Absent::Derived("100us (LAN), 500us (WAN)"),
            "ERICA+ only: the target queueing delay T0",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "queue_drain_limit",
            Type::Number,
            Absent::Is("0.5"),
            "ERICA+ only: least fraction of the capacity given while a queue drains",
        )
        .bounds(Bounds::Between(0.01, 1.0)),
        Param::new(
            "curve_a",
            Type::Number,
            Absent::Is("1.15"),
            "ERICA+ only: the queue-control curve's a (below T0)",
        )
        .bounds(Bounds::AboveUpTo(1.0, 10.0)),
        Param::new(
            "curve_b",
            Type::Number,
            Absent::Is("1.05"),
            "ERICA+ only: the queue-control curve's b (above T0)",
        )
        .bounds(Bounds::AboveUpTo(1.0, 10.0)),
        Param::new(
            "target_utilization",
            Type::Number,
            Absent::Derived("0.95 (LAN), 0.90 (WAN)"),
            "ERICA only: target utilization U",
        )
        .unit("fraction")
        .bounds(Bounds::AboveUpTo(0.0, 1.0)),
        Param::new(
            "averaging_cells",
            Type::Integer,
            Absent::Derived("50 (LAN), 100 (WAN)"),
            "an averaging interval ends after this many cells arrived at the port",
        )
        .unit("cells")
        .bounds(Bounds::Between(1.0, 1e6)),
        Param::new(
            "averaging_time",
            Type::Time,
            Absent::Is("1ms"),
            "… or after this long, whichever comes first",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "delta",
            Type::Number,
            Absent::Is("0.1"),
            "the overload band δ: above 1 + δ the MaxAllocPrevious term is left out",
        )
        .bounds(Bounds::Between(0.0, 10.0)),
        Param::new(
            "consolidation",
            Type::Choice(&["turnaround", "flag", "all_branches", "pass_through"]),
            Absent::Is("turnaround"),
            "how a branch point consolidates its branches' feedback",
        ),
        Param::new(
            "branch_timeout",
            Type::Time,
            Absent::Is("10ms"),
            "all_branches: a silent branch is waited for this long",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        rate(
            "icr",
            Absent::Derived("150Mbps, at most the fastest link's rate"),
            "initial cell rate",
        )
        .bounds(Bounds::Positive),
        Param::new(
            "rif",
            Type::Number,
            Absent::Is("1"),
            "rate increase factor: the fraction of PCR added per backward RM cell",
        )
        .bounds(Bounds::AboveUpTo(0.0, 1.0)),
        Param::new(
            "rdf",
            Type::Number,
            Absent::Is("0.0625"),
            "rate decrease factor on congestion indication",
        )
        .bounds(Bounds::AboveUpTo(0.0, 1.0)),
        rate(
            "pcr",
            Absent::Derived("the fastest link's rate"),
            "peak cell rate",
        )
        .bounds(Bounds::Positive),
        rate("mcr", Absent::Derived("none (0)"), "minimum cell rate"),
        Param::new(
            "nrm",
            Type::Integer,
            Absent::Is("32"),
            "one forward RM cell every nrm cells",
        )
        .unit("cells")
        .bounds(Bounds::Between(2.0, 256.0)),
        Param::new(
            "trm",
            Type::Time,
            Absent::Is("100ms"),
            "… and at least one every trm while cells are sent",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "adtf",
            Type::Time,
            Absent::Is("500ms"),
            "ACR falls back to ICR when no forward RM cell was sent for this long",
        )
        .unit("s")
        .bounds(Bounds::Positive),
        Param::new(
            "sample",
            Type::Time,
            Absent::Is("100us"),
            "interval of the ACR, queue, utilization and cells-received series",
        )
        .unit("s")
        .bounds(Bounds::Positive),
    ],
};

/// The family's declared sections.
pub static DECLARED: &[&Section] = &[&SECTION];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decl::{Value, Values};
    use crate::mechanisms::abr::erica::EricaPlus;
    use crate::mechanisms::abr::{EricaParams, SourceParams};

    fn defaults() -> Values {
        crate::decl::defaults(SECTION.params)
    }

    #[test]
    fn the_fixed_defaults_are_the_models_defaults() {
        let d = defaults();
        let lan = EricaParams::lan();
        let plus = EricaPlus::lan();
        assert_eq!(d.number("queue_drain_limit"), plus.qdlf);
        assert_eq!(d.number("curve_a"), plus.a);
        assert_eq!(d.number("curve_b"), plus.b);
        assert_eq!(d.time("averaging_time"), lan.max_interval);
        assert_eq!(d.time("averaging_time"), EricaParams::wan().max_interval);
        assert_eq!(d.number("delta"), lan.delta);
        let src = SourceParams::defaults(155_520_000.0);
        assert_eq!(d.number("rif"), src.rif);
        assert_eq!(d.number("rdf"), src.rdf);
        assert_eq!(src.mcr, 0.0);
        assert_eq!(d.count("nrm"), src.nrm as u64);
        assert_eq!(d.time("trm"), src.trm);
        assert_eq!(d.time("adtf"), src.adtf);
        assert_eq!(d.time("sample"), crate::time::millis(0.1));
        assert_eq!(d.time("branch_timeout"), crate::time::millis(10.0));
        assert_eq!(d.get("network"), Some(&Value::Text("lan".into())));
    }

    #[test]
    fn every_tm_key_is_declared() {
        for k in TM_KEYS {
            SECTION.param(k);
        }
    }
}
