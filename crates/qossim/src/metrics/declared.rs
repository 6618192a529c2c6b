//! Declared statistics: every summary key and series a run can write is declared once by
//! the component that records it, with its unit, the window it covers and a one-line
//! description.
//!
//! A declaration's name is a pattern: literal text with `{placeholders}` (`link.{link}.drops`)
//! that stand for the scenario's names (a link, a traffic entry, an agent). A placeholder
//! matches any non-empty text, dots included. The summary of a run is described by
//! [`describe`], which finds the declaration of a key; [`all`] lists every declaration
//! (the reference in `docs/statistics.md` is generated from it).

/// The part of a run a statistic covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum Window {
    /// The whole run, warm-up included.
    #[serde(rename = "run")]
    Run,
    /// From the end of the warm-up to the end of the run.
    #[serde(rename = "after warm-up")]
    AfterWarmup,
    /// The value at the end of the run (a state, not a count).
    #[serde(rename = "end of run")]
    End,
}

impl Window {
    /// The window's name as written in summaries and docs.
    pub fn name(self) -> &'static str {
        match self {
            Window::Run => "run",
            Window::AfterWarmup => "after warm-up",
            Window::End => "end of run",
        }
    }
}

/// The declaration of one statistic (or of one family of keys sharing a pattern).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Stat {
    /// Key pattern, e.g. `link.{link}.drops`.
    pub name: &'static str,
    /// Unit of the value (`packets`, `s`, `b/s`, `fraction`, ...).
    pub unit: &'static str,
    /// Window covered.
    pub window: Window,
    /// One-line description.
    pub doc: &'static str,
}

/// Declares a statistic (a `const` helper so tables stay one line per key).
pub const fn stat(
    name: &'static str,
    unit: &'static str,
    window: Window,
    doc: &'static str,
) -> Stat {
    Stat {
        name,
        unit,
        window,
        doc,
    }
}

/// A component's table of declarations, with the component's name (for the reference).
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Table {
    /// The component that records these statistics (`world`, `link`, `queue.red`, ...).
    pub component: &'static str,
    /// Its statistics.
    pub stats: &'static [Stat],
}

/// Every component's declarations, in reference order.
pub fn all() -> Vec<Table> {
    use crate::mechanisms::{abr, diffserv, endpoint, pcn, rpr};
    vec![
        Table {
            component: "run",
            stats: crate::world::RUN_STATS,
        },
        Table {
            component: "link",
            stats: crate::world::LINK_STATS,
        },
        Table {
            component: "traffic entry (group)",
            stats: crate::world::GROUP_STATS,
        },
        Table {
            component: "flow",
            stats: crate::world::FLOW_STATS,
        },
        Table {
            component: "metric series",
            stats: crate::world::METRIC_SERIES,
        },
        Table {
            component: "delay distributions",
            stats: crate::world::DELAY_SERIES,
        },
        Table {
            component: "series",
            stats: crate::world::SERIES_STATS,
        },
        Table {
            component: "queue disciplines",
            stats: QUEUE_STATS,
        },
        Table {
            component: "meters and markers",
            stats: crate::meter::STATS,
        },
        Table {
            component: "TCP",
            stats: crate::transport::tcp::STATS,
        },
        Table {
            component: "DCTCP",
            stats: crate::transport::dctcp::STATS,
        },
        Table {
            component: "flow generators (calls)",
            stats: crate::traffic::generator::STATS,
        },
        Table {
            component: "diffserv family",
            stats: diffserv::STATS,
        },
        Table {
            component: "ABR family",
            stats: abr::STATS,
        },
        Table {
            component: "PCN family",
            stats: pcn::STATS,
        },
        Table {
            component: "endpoint admission family",
            stats: endpoint::STATS,
        },
        Table {
            component: "RPR family",
            stats: rpr::STATS,
        },
    ]
}

use Window::{End, Run};

/// The queue disciplines' statistics (`link.{link}.` keys a discipline adds). Kept here
/// rather than beside each discipline while the disciplines' files are reorganised into a
/// registry; each line names the discipline.
pub const QUEUE_STATS: &[Stat] = &[
    stat("link.{link}.red_avg_queue_pkts", "packets", End, "RED: the average queue (EWMA) at the end"),
    stat("link.{link}.red_arrivals", "packets", Run, "RED: packets offered to the queue"),
    stat("link.{link}.red_early_drops", "packets", Run, "RED: early drops, random and forced (max_th) together"),
    stat("link.{link}.red_random_drops", "packets", Run, "RED: early drops at random (average between min_th and max_th)"),
    stat("link.{link}.red_forced_drops", "packets", Run, "RED: forced drops (average above max_th, or above 2 max_th when gentle)"),
    stat("link.{link}.red_overflow_drops", "packets", Run, "RED: drops of a full buffer (the physical limit)"),
    stat("link.{link}.red_arrivals_{in|out}", "packets", Run, "RED: packets offered, IN-profile or OUT (kept for old records; plain RED treats both alike)"),
    stat("link.{link}.red_early_drops_{in|out}", "packets", Run, "RED: early drops of IN or OUT packets"),
    stat("link.{link}.red_forced_drops_{in|out}", "packets", Run, "RED: forced drops of IN or OUT packets"),
    stat("link.{link}.red_overflow_drops_{in|out}", "packets", Run, "RED: overflow drops of IN or OUT packets"),
    stat("link.{link}.rio_avg_queue_pkts", "packets", End, "RIO: the average of the whole queue at the end"),
    stat("link.{link}.rio_avg_in_pkts", "packets", End, "RIO: the average of the IN packets at the end"),
    stat("link.{link}.rio_avg_out_pkts", "packets", End, "RIO: the average of the OUT packets at the end (decoupled RIO)"),
    stat("link.{link}.rio_arrivals_{in|out}", "packets", Run, "RIO: IN or OUT packets offered"),
    stat("link.{link}.rio_early_drops_{in|out}", "packets", Run, "RIO: early drops (random and forced) of IN or OUT packets"),
    stat("link.{link}.rio_forced_drops_{in|out}", "packets", Run, "RIO: forced drops of IN or OUT packets"),
    stat("link.{link}.rio_overflow_drops_{in|out}", "packets", Run, "RIO: overflow drops of IN or OUT packets"),
    stat("link.{link}.red_ecn_marks", "packets", Run, "RED with ecn = true: ECN-capable packets marked CE instead of dropped at random"),
    stat("link.{link}.pie_{early_drops|overflow_drops}", "packets", Window::AfterWarmup, "PIE: random early drops; drops of a full buffer"),
    stat("link.{link}.pie_updates", "times", Window::AfterWarmup, "PIE: updates of the drop probability (its timer)"),
    stat("link.{link}.pie_delay_mean_s", "s", Window::AfterWarmup, "PIE: the queue delay it measured, averaged over its updates"),
    stat("link.{link}.pie_drop_prob_mean", "fraction", Window::AfterWarmup, "PIE: the drop probability, averaged over its updates"),
    stat("link.{link}.fq_codel_{early_drops|overflow_drops}", "packets", Window::AfterWarmup, "FQ-CoDel: drops by the sub-queues' CoDel; head drops of the fattest flow when the buffer is full"),
    stat("link.{link}.fq_codel_new_flows", "flows", Window::AfterWarmup, "FQ-CoDel: sub-queues that entered the new-flows list"),
    stat("link.{link}.fq_codel_{sent_new|sent_old}", "packets", Window::AfterWarmup, "FQ-CoDel: packets sent from new and from old flows"),
    stat("link.{link}.codel_early_drops", "packets", Run, "CoDel: drops by the control law (head drops)"),
    stat("link.{link}.codel_overflow_drops", "packets", Run, "CoDel: drops of a full buffer"),
    stat("link.{link}.codel_dropping_entered", "times", Run, "CoDel: entries into the dropping state"),
    stat("link.{link}.codel_count_reused", "times", Run, "CoDel: entries that resumed the previous drop count"),
    stat("link.{link}.codel_max_count", "drops", Run, "CoDel: the largest drop count of a dropping state"),
    stat("link.{link}.codel_sojourn_mean_s", "s", Run, "CoDel: mean sojourn time of the packets dequeued"),
    stat("link.{link}.codel_ecn_marks", "packets", Run, "CoDel with ecn = true: ECN-capable packets marked CE where the law would drop"),
    stat("link.{link}.pie_ecn_marks", "packets", Window::AfterWarmup, "PIE with ecn = true: ECN-capable arrivals marked CE instead of dropped"),
    stat("link.{link}.fq_codel_ecn_marks", "packets", Window::AfterWarmup, "FQ-CoDel with ecn = true: ECN-capable packets marked CE by the sub-queues' CoDel"),
    stat("link.{link}.step_{arrivals|marks|overflow_drops}", "packets", Window::AfterWarmup, "step marking: arrivals; ECN-capable arrivals marked CE (queue above k); drops of a full buffer"),
];

/// Whether `key` is an instance of the pattern `pattern` (placeholders match any non-empty
/// text; `{a|b}` matches one of the listed words).
pub fn matches(pattern: &str, key: &str) -> bool {
    fn go(p: &str, k: &str) -> bool {
        match p.find('{') {
            None => p == k,
            Some(i) => {
                let Some(k) = k.strip_prefix(&p[..i]) else {
                    return false;
                };
                let close = p[i..].find('}').map(|j| i + j).unwrap_or(p.len() - 1);
                let inner = &p[i + 1..close];
                let rest = &p[close + 1..];
                if inner.contains('|') {
                    return inner
                        .split('|')
                        .any(|w| k.strip_prefix(w).is_some_and(|k| go(rest, k)));
                }
                (1..=k.len()).any(|n| k.is_char_boundary(n) && go(rest, &k[n..]))
            }
        }
    }
    go(pattern, key)
}

/// The number of literal characters of a pattern (the more, the more specific).
fn literal_len(pattern: &str) -> usize {
    let mut n = 0;
    let mut depth = 0;
    for c in pattern.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            _ if depth == 0 => n += 1,
            _ => {}
        }
    }
    n
}

/// The declaration of a summary key or series name: the most specific pattern it matches.
pub fn describe(key: &str) -> Option<Stat> {
    all()
        .iter()
        .flat_map(|t| t.stats.iter())
        .filter(|s| matches(s.name, key))
        .max_by_key(|s| literal_len(s.name))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_match_names_with_dots() {
        assert!(matches("link.{link}.drops", "link.r0-r1.drops"));
        assert!(matches("agent.{agent}.cwnd", "agent.tcp.ftp.3.cwnd"));
        assert!(!matches("link.{link}.drops", "link.r0-r1.drops_early"));
        assert!(!matches("link.{link}.drops", "link..drops"));
        assert!(matches("x.{a|b}", "x.b"));
        assert!(!matches("x.{a|b}", "x.c"));
    }

    #[test]
    fn the_most_specific_declaration_wins() {
        let d = describe("link.a.red_early_drops_in").expect("declared");
        assert_eq!(d.name, "link.{link}.red_early_drops_{in|out}");
        let d = describe("link.a.drops").expect("declared");
        assert_eq!(d.window, Window::Run);
    }

    #[test]
    fn every_pattern_is_declared_once() {
        let mut seen = std::collections::HashSet::new();
        for t in all() {
            for s in t.stats {
                assert!(seen.insert(s.name), "{} declared twice", s.name);
                assert!(!s.unit.is_empty() && !s.doc.is_empty(), "{}", s.name);
            }
        }
    }
}
