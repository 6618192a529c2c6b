//! The declared keys of the `[abr]` section ([`crate::decl::Section`]): ERICA's and
//! ERICA+'s parameters at every switch port, how branch points consolidate feedback, and
//! the TM 4.0 source parameters every connection starts from; and those of a
//! `[[abr.vc]]` entry ([`VC`], a section of its own since each entry is read on its own):
//! its nodes, source type and times, and the TM 4.0 parameters it overrides (declared
//! once, shared with `[abr]`). The reader ([`super::scenario`]) fills
//! [`super::EricaParams`] and [`super::SourceParams`], whose defaults depend on `network`
//! and on the fastest link; each key's type and bounds are stated here once. Which keys
//! a connection may have depends on its type ([`vc_keys`]); the rules naming nodes and
//! relating keys (stop after start, a VBR connection is unicast) stay in the reader.

use crate::decl::{Absent, Bounds, Param, Section, Type};

/// A rate of the TM 4.0 source parameters.
const fn rate(key: &'static str, default: Absent, doc: &'static str) -> Param {
    Param::new(key, Type::Rate, default, doc).unit("bit/s")
}

/// The TM 4.0 source parameters (the section's, overridden per connection).
pub const TM_KEYS: &[&str] = &["icr", "rif", "rdf", "pcr", "mcr", "nrm", "trm", "adtf"];

/// `icr` of the TM 4.0 source parameters.
const ICR: Param = rate(
    "icr",
    Absent::Derived("150Mbps, at most the fastest link's rate"),
    "initial cell rate",
)
.bounds(Bounds::Positive);

/// `rif` of the TM 4.0 source parameters.
const RIF: Param = Param::new(
    "rif",
    Type::Number,
    Absent::Is("1"),
    "rate increase factor: the fraction of PCR added per backward RM cell",
)
.bounds(Bounds::AboveUpTo(0.0, 1.0));

/// `rdf` of the TM 4.0 source parameters.
const RDF: Param = Param::new(
    "rdf",
    Type::Number,
    Absent::Is("0.0625"),
    "rate decrease factor on congestion indication",
)
.bounds(Bounds::AboveUpTo(0.0, 1.0));

/// `pcr` of the TM 4.0 source parameters.
const PCR: Param = rate(
    "pcr",
    Absent::Derived("the fastest link's rate"),
    "peak cell rate",
)
.bounds(Bounds::Positive);

/// `mcr` of the TM 4.0 source parameters.
const MCR: Param = rate("mcr", Absent::Derived("none (0)"), "minimum cell rate");

/// `nrm` of the TM 4.0 source parameters.
const NRM: Param = Param::new(
    "nrm",
    Type::Integer,
    Absent::Is("32"),
    "one forward RM cell every nrm cells",
)
.unit("cells")
.bounds(Bounds::Between(2.0, 256.0));

/// `trm` of the TM 4.0 source parameters.
const TRM: Param = Param::new(
    "trm",
    Type::Time,
    Absent::Is("100ms"),
    "… and at least one every trm while cells are sent",
)
.unit("s")
.bounds(Bounds::Positive);

/// `adtf` of the TM 4.0 source parameters.
const ADTF: Param = Param::new(
    "adtf",
    Type::Time,
    Absent::Is("500ms"),
    "ACR falls back to ICR when no forward RM cell was sent for this long",
)
.unit("s")
.bounds(Bounds::Positive);

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
ICR,
RIF,
RDF,
PCR,
MCR,
NRM,
TRM,
ADTF,
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

/// A TM 4.0 source parameter of a connection: the section's value unless it gives its
/// own (same type and bounds).
const fn per_vc(p: Param) -> Param {
    Param {
        default: Absent::Derived("the [abr] section's"),
        ..p
    }
}

/// A time of a connection.
const fn time(key: &'static str, default: Absent, doc: &'static str) -> Param {
    Param::new(key, Type::Time, default, doc).unit("s")
}

/// The source types of a connection.
pub const VC_TYPES: &[&str] = &["infinite", "bursty", "vbr"];

/// Keys every `[[abr.vc]]` entry may have, whatever its type.
const VC_COMMON: &[&str] = &["name", "source", "destinations", "type", "start", "stop"];

/// The keys a `[[abr.vc]]` entry of source type `ty` (one of [`VC_TYPES`]) may have:
/// the common ones, the TM 4.0 source parameters unless it is VBR (a VBR source sends at
/// its own rate, not under ABR control), and its type's own. A key of another type is
/// reported unknown.
pub fn vc_keys(ty: &str) -> Vec<&'static str> {
    let own: &[&str] = match ty {
        "bursty" => &["response_cells", "request_cells"],
        "vbr" => &["rate", "on", "off", "offset"],
        _ => &[],
    };
    let tm: &[&str] = if ty == "vbr" { &[] } else { TM_KEYS };
    [VC_COMMON, tm, own].concat()
}

/// A `[[abr.vc]]` entry: one connection. Which keys apply depends on its `type`
/// ([`vc_keys`]).
pub static VC: Section = Section {
    name: "abr.vc",
    written: "[[abr.vc]]",
    title: "ABR connection",
    doc: "One virtual connection: a source node, one or more destinations, what it sends and its TM 4.0 parameters.",
    params: &[
        Param::new(
            "name",
            Type::Text,
            Absent::Required,
            "the connection's name (series abr.acr.NAME, summary abr.vc.NAME.*)",
        ),
        Param::new("source", Type::Text, Absent::Required, "the source node"),
        Param::new(
            "destinations",
            Type::Names,
            Absent::Required,
            "the destination nodes: one for unicast, more for point-to-multipoint",
        ),
        Param::new(
            "type",
            Type::Choice(VC_TYPES),
            Absent::Is("infinite"),
            "what the source sends: always, 6144-cell responses to requests, or VBR on-off",
        ),
        time("start", Absent::Is("0s"), "when it starts sending"),
        time("stop", Absent::Derived("never"), "when it stops (after start)")
            .bounds(Bounds::Positive),
        per_vc(ICR),
        per_vc(RIF),
        per_vc(RDF),
        per_vc(PCR),
        per_vc(MCR),
        per_vc(NRM),
        per_vc(TRM),
        per_vc(ADTF),
        Param::new(
            "response_cells",
            Type::Integer,
            Absent::Is("6144"),
            "bursty: cells of a response",
        )
        .unit("cells")
        .bounds(Bounds::Between(1.0, 16_777_216.0)),
        Param::new(
            "request_cells",
            Type::Integer,
            Absent::Is("16"),
            "bursty: cells of a request (sent by the destination)",
        )
        .unit("cells")
        .bounds(Bounds::Between(1.0, 1000.0)),
        rate("rate", Absent::Is("124.416Mbps"), "vbr: rate while on").bounds(Bounds::Positive),
        time("on", Absent::Is("3ms"), "vbr: on period").bounds(Bounds::Positive),
        time("off", Absent::Is("3ms"), "vbr: off period"),
        time(
            "offset",
            Absent::Is("0s"),
            "vbr: the first on period begins this long after start",
        ),
    ],
};

/// The family's declared sections.
pub static DECLARED: &[&Section] = &[&SECTION, &VC];

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
    fn the_connections_keys_are_those_of_its_types() {
        let mut all: Vec<&str> = VC_TYPES.iter().flat_map(|t| vc_keys(t)).collect();
        all.sort_unstable();
        all.dedup();
        let mut declared = VC.keys();
        declared.sort_unstable();
        assert_eq!(all, declared);
        for k in TM_KEYS {
            let (a, v) = (SECTION.param(k), VC.param(k));
            assert_eq!((a.ty, a.unit, a.bounds), (v.ty, v.unit, v.bounds), "{k}");
        }
    }

    #[test]
    fn the_connections_fixed_defaults_are_the_readers_former_defaults() {
        let d = crate::decl::defaults(VC.params);
        assert_eq!(d.text("type"), "infinite");
        assert_eq!(d.time("start"), 0);
        assert_eq!(d.count("response_cells"), 6144);
        assert_eq!(d.count("request_cells"), 16);
        assert_eq!(d.count("rate") as f64, 124.416e6);
        assert_eq!(d.time("on"), crate::time::millis(3.0));
        assert_eq!(d.time("off"), crate::time::millis(3.0));
        assert_eq!(d.time("offset"), 0);
    }

    #[test]
    fn every_tm_key_is_declared() {
        for k in TM_KEYS {
            SECTION.param(k);
        }
    }
}
