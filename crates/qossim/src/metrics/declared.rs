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
            stats: queue_stats(),
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

/// The queue disciplines' statistics (`link.{link}.` keys a discipline adds), each
/// discipline's declared beside its model ([`crate::queue::QueueKind::stats`]), in the
/// order of the registry ([`crate::queue::DISCIPLINES`]).
fn queue_stats() -> &'static [Stat] {
    static ALL: std::sync::OnceLock<Vec<Stat>> = std::sync::OnceLock::new();
    ALL.get_or_init(|| {
        crate::queue::DISCIPLINES
            .iter()
            .flat_map(|k| k.stats.iter().copied())
            .collect()
    })
}

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
