//! A walker over a parsed TOML document that reads typed values, remembers which keys it
//! used, and collects every problem with its line instead of stopping at the first.

use super::units;
use crate::time::Time;
use std::cell::RefCell;
use std::collections::BTreeSet;
use toml_edit::{Item, TableLike, Value};

/// One problem found in a scenario.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Diagnostic {
    /// File name as given (or `--set` for command-line overrides).
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// Dotted key path, e.g. `traffic.0.rate`.
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

impl std::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file, self.line, self.path, self.reason
        )
    }
}

/// Collects diagnostics and maps byte offsets to lines.
pub struct Cx {
    file: String,
    line_starts: Vec<usize>,
    overridden: Vec<String>,
    diags: RefCell<Vec<Diagnostic>>,
    /// Set when `count` entries were expanded: lines of the expanded text back to the
    /// file's, and which entry each expanded entry came from.
    expansion: Option<(Vec<super::expand::LineAnchor>, super::expand::Origin)>,
}

impl Cx {
    /// A context for `text` read from `file`; keys in `overridden` came from `--set`.
    pub fn new(file: &str, text: &str, overridden: Vec<String>) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Cx {
            file: file.to_string(),
            line_starts,
            overridden,
            diags: RefCell::new(Vec::new()),
            expansion: None,
        }
    }

    /// Tells the context that its text is the file's with `count` entries expanded, so
    /// that diagnostics name the file's lines and entries.
    pub fn set_expansion(
        &mut self,
        anchors: Vec<super::expand::LineAnchor>,
        origin: super::expand::Origin,
    ) {
        self.expansion = Some((anchors, origin));
    }

    /// The 1-based line of a byte offset (a line of the file, also when `count` entries
    /// were expanded).
    pub fn line_of(&self, offset: usize) -> usize {
        let line = match self.line_starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        };
        match &self.expansion {
            Some((anchors, _)) => super::expand::file_line(anchors, line),
            None => line,
        }
    }

    /// Records a problem at `line` for `path`.
    pub fn error(&self, line: usize, path: &str, reason: impl Into<String>) {
        let (file, line) = match self.overridden.iter().position(|p| p == path) {
            Some(i) => ("--set".to_string(), i + 1),
            None => (self.file.clone(), line),
        };
        // Whatever a message echoes from the input reaches a terminal: printable only,
        // and never more than a line's worth.
        self.diags.borrow_mut().push(Diagnostic {
            file,
            line,
            path: shown_max(path, 512),
            reason: shown_max(&reason.into(), SHOWN_REASON_CHARS),
        });
    }

    /// True if a problem was recorded for `path` or anything inside it (`links.a-b`
    /// covers `links.a-b.queue.kind`): a later check that depends on it stays quiet.
    pub fn has_error_under(&self, path: &str) -> bool {
        let prefix = format!("{path}.");
        self.diags
            .borrow()
            .iter()
            .any(|d| d.path == path || d.path.starts_with(&prefix))
    }

    /// True if a problem was recorded for exactly `path`.
    pub fn has_error_at(&self, path: &str) -> bool {
        self.diags.borrow().iter().any(|d| d.path == path)
    }

    /// True if any problem was recorded.
    pub fn has_errors(&self) -> bool {
        !self.diags.borrow().is_empty()
    }

    /// All problems, in file order. A mistake in an entry with a `count` is reported
    /// once, under the entry's place in the file (`traffic.E`), not once per copy.
    pub fn into_diagnostics(self) -> Vec<Diagnostic> {
        let mut d = self.diags.into_inner();
        if let Some((_, origin)) = &self.expansion {
            let file = self.file.clone();
            for x in d.iter_mut().filter(|x| x.file == file) {
                let Some(rest) = x.path.strip_prefix("traffic.") else {
                    continue;
                };
                let (idx, tail) = rest.split_once('.').unwrap_or((rest, ""));
                let Some(&(e, copy)) = idx.parse::<usize>().ok().and_then(|k| origin.get(k)) else {
                    continue;
                };
                x.path = if tail.is_empty() {
                    format!("traffic.{e}")
                } else {
                    format!("traffic.{e}.{tail}")
                };
                if copy > 0 {
                    x.reason = format!("{} (in copy {copy} of the entry)", x.reason);
                }
            }
            // Stable: the first copy's message stays.
            d.sort_by(|a, b| (&a.file, a.line, &a.path).cmp(&(&b.file, b.line, &b.path)));
            d.dedup_by(|b, a| a.file == b.file && a.line == b.line && a.path == b.path);
            return d;
        }
        d.sort_by(|a, b| (&a.file, a.line, &a.path).cmp(&(&b.file, b.line, &b.path)));
        d.dedup();
        d
    }
}

/// A table being read: remembers used keys to report unknown ones.
pub struct Tbl<'a> {
    /// Dotted path of the table.
    pub path: String,
    t: &'a dyn TableLike,
    line: usize,
    used: RefCell<BTreeSet<String>>,
}

fn item_line(cx: &Cx, item: &Item, fallback: usize) -> usize {
    item.span().map(|s| cx.line_of(s.start)).unwrap_or(fallback)
}

impl<'a> Tbl<'a> {
    /// Wraps a table found at `path` (at `line`).
    pub fn new(t: &'a dyn TableLike, path: &str, line: usize) -> Self {
        Tbl {
            path: path.to_string(),
            t,
            line,
            used: RefCell::new(BTreeSet::new()),
        }
    }

    /// The line where the table starts.
    pub fn line(&self) -> usize {
        self.line
    }

    /// The dotted path of `key` in this table.
    pub fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{}", self.path, key)
        }
    }

    /// True if the table has `key` (marks it used).
    pub fn has(&self, key: &str) -> bool {
        let h = self.t.contains_key(key);
        if h {
            self.used.borrow_mut().insert(key.to_string());
        }
        h
    }

    /// The raw item and its line.
    pub fn raw(&self, cx: &Cx, key: &str) -> Option<(&'a Item, usize)> {
        let (k, item) = self.t.get_key_value(key)?;
        self.used.borrow_mut().insert(key.to_string());
        let line = k
            .span()
            .map(|s| cx.line_of(s.start))
            .unwrap_or_else(|| item_line(cx, item, self.line));
        Some((item, line))
    }

    /// Line of `key` (or of the table).
    pub fn line_of(&self, cx: &Cx, key: &str) -> usize {
        self.t
            .get_key_value(key)
            .map(|(k, i)| {
                k.span()
                    .map(|s| cx.line_of(s.start))
                    .unwrap_or_else(|| item_line(cx, i, self.line))
            })
            .unwrap_or(self.line)
    }

    /// Records a problem with `key`.
    pub fn error(&self, cx: &Cx, key: &str, reason: impl Into<String>) {
        cx.error(self.line_of(cx, key), &self.key_path(key), reason);
    }

    fn value(&self, cx: &Cx, key: &str) -> Option<(&'a Value, usize)> {
        let (item, line) = self.raw(cx, key)?;
        match item.as_value() {
            Some(v) => Some((v, line)),
            None => {
                cx.error(line, &self.key_path(key), "expected a value, found a table");
                None
            }
        }
    }

    /// A string value.
    pub fn str(&self, cx: &Cx, key: &str) -> Option<String> {
        let (v, line) = self.value(cx, key)?;
        match v.as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                cx.error(
                    line,
                    &self.key_path(key),
                    format!("expected a string, found {}", v.type_name()),
                );
                None
            }
        }
    }

    /// A required string value.
    pub fn req_str(&self, cx: &Cx, key: &str) -> Option<String> {
        if !self.t.contains_key(key) {
            cx.error(self.line, &self.key_path(key), "missing (required)");
            return None;
        }
        self.str(cx, key)
    }

    /// A name that reaches terminals, summaries and file names: 1 to 200 characters,
    /// none of them a control character (NUL, newline, escape) or a bidirectional
    /// override, which would forge lines or reorder what a terminal shows.
    pub fn name(&self, cx: &Cx, key: &str) -> Option<String> {
        let n = self.str(cx, key)?;
        match name_problem(&n) {
            None => Some(n),
            Some(reason) => {
                self.error(cx, key, reason);
                None
            }
        }
    }

    /// A required [`Tbl::name`].
    pub fn req_name(&self, cx: &Cx, key: &str) -> Option<String> {
        if !self.t.contains_key(key) {
            cx.error(self.line, &self.key_path(key), "missing (required)");
            return None;
        }
        self.name(cx, key)
    }

    /// A string parsed with `parse` (which returns the reason on failure).
    pub fn parsed<T>(
        &self,
        cx: &Cx,
        key: &str,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Option<T> {
        let (v, line) = self.value(cx, key)?;
        let Some(s) = v.as_str() else {
            cx.error(
                line,
                &self.key_path(key),
                format!(
                    "expected a string with a unit, found {} (quote it, e.g. \"10Mbps\")",
                    v.type_name()
                ),
            );
            return None;
        };
        match parse(s) {
            Ok(x) => Some(x),
            Err(e) => {
                cx.error(line, &self.key_path(key), e);
                None
            }
        }
    }

    /// A rate (bits per second).
    pub fn rate(&self, cx: &Cx, key: &str) -> Option<u64> {
        self.parsed(cx, key, units::parse_rate)
    }
    /// A time.
    pub fn time(&self, cx: &Cx, key: &str) -> Option<Time> {
        self.parsed(cx, key, units::parse_time)
    }
    /// A size in bytes.
    pub fn size(&self, cx: &Cx, key: &str) -> Option<u64> {
        self.parsed(cx, key, units::parse_size)
    }

    /// A number (integer or float).
    pub fn num(&self, cx: &Cx, key: &str) -> Option<f64> {
        let (v, line) = self.value(cx, key)?;
        match v {
            Value::Integer(i) => Some(*i.value() as f64),
            Value::Float(f) => Some(*f.value()),
            _ => {
                cx.error(
                    line,
                    &self.key_path(key),
                    format!("expected a number, found {}", v.type_name()),
                );
                None
            }
        }
    }

    /// A number within [lo, hi].
    pub fn num_in(&self, cx: &Cx, key: &str, lo: f64, hi: f64) -> Option<f64> {
        let x = self.num(cx, key)?;
        if !(x >= lo && x <= hi) {
            self.error(cx, key, format!("must be between {lo} and {hi}, got {x}"));
            return None;
        }
        Some(x)
    }

    /// The optional number `key` in (0, 1]: `Some(None)` when it is absent, `None` when
    /// it is there but wrong (reported).
    pub fn opt_unit_interval(&self, cx: &Cx, key: &str) -> Option<Option<f64>> {
        if !self.has(key) {
            return Some(None);
        }
        let x = self.num(cx, key)?;
        if x > 0.0 && x <= 1.0 {
            Some(Some(x))
        } else {
            self.error(cx, key, format!("must be in (0, 1], got {x}"));
            None
        }
    }

    /// Reads the optional fraction `key` (0 < v ≤ 1) into `slot`; false if it is there
    /// but wrong (reported).
    pub fn fraction_into(&self, cx: &Cx, key: &str, slot: &mut f64) -> bool {
        if !self.has(key) {
            return true;
        }
        match self.num_in(cx, key, 0.0, 1.0) {
            Some(v) if v > 0.0 => {
                *slot = v;
                true
            }
            Some(_) => {
                self.error(cx, key, "must be above 0");
                false
            }
            None => false,
        }
    }

    /// Reads the optional time `key` into `slot` (with `positive`, zero is refused);
    /// false if it is there but wrong (reported).
    pub fn time_into(&self, cx: &Cx, key: &str, positive: bool, slot: &mut Time) -> bool {
        if !self.has(key) {
            return true;
        }
        match self.time(cx, key) {
            Some(0) if positive => {
                self.error(cx, key, "must be positive");
                false
            }
            Some(v) => {
                *slot = v;
                true
            }
            None => false,
        }
    }

    /// An optional service class (0..=255): `Some(None)` when the key is absent, `None`
    /// after an error.
    pub fn class(&self, cx: &Cx, key: &str) -> Option<Option<u8>> {
        if !self.has(key) {
            return Some(None);
        }
        self.uint_in(cx, key, 0, 255).map(|c| Some(c as u8))
    }

    /// A non-negative integer between `lo` and `hi` (inclusive).
    pub fn uint_in(&self, cx: &Cx, key: &str, lo: u64, hi: u64) -> Option<u64> {
        let n = self.uint(cx, key)?;
        if n < lo || n > hi {
            self.error(cx, key, format!("must be between {lo} and {hi}, got {n}"));
            return None;
        }
        Some(n)
    }

    /// A non-negative integer.
    pub fn uint(&self, cx: &Cx, key: &str) -> Option<u64> {
        let (v, line) = self.value(cx, key)?;
        match v.as_integer() {
            Some(i) if i >= 0 => Some(i as u64),
            Some(i) => {
                cx.error(
                    line,
                    &self.key_path(key),
                    format!("must not be negative, got {i}"),
                );
                None
            }
            None => {
                cx.error(
                    line,
                    &self.key_path(key),
                    format!("expected an integer, found {}", v.type_name()),
                );
                None
            }
        }
    }

    /// A boolean.
    pub fn bool(&self, cx: &Cx, key: &str) -> Option<bool> {
        let (v, line) = self.value(cx, key)?;
        match v.as_bool() {
            Some(b) => Some(b),
            None => {
                cx.error(
                    line,
                    &self.key_path(key),
                    format!("expected true or false, found {}", v.type_name()),
                );
                None
            }
        }
    }

    /// An array of values.
    pub fn array(&self, cx: &Cx, key: &str) -> Option<Vec<(&'a Value, usize)>> {
        let (v, line) = self.value(cx, key)?;
        match v.as_array() {
            Some(a) => Some(
                a.iter()
                    .map(|x| (x, x.span().map(|s| cx.line_of(s.start)).unwrap_or(line)))
                    .collect(),
            ),
            None => {
                cx.error(
                    line,
                    &self.key_path(key),
                    format!("expected an array, found {}", v.type_name()),
                );
                None
            }
        }
    }

    /// A sub-table (standard or inline).
    pub fn table(&self, cx: &Cx, key: &str) -> Option<Tbl<'a>> {
        let (item, line) = self.raw(cx, key)?;
        match item.as_table_like() {
            Some(t) => Some(Tbl::new(t, &self.key_path(key), line)),
            None => {
                cx.error(
                    line,
                    &self.key_path(key),
                    format!("expected a table, found {}", item.type_name()),
                );
                None
            }
        }
    }

    /// An array of tables (`[[key]]`), each wrapped with path `key.N`.
    pub fn tables(&self, cx: &Cx, key: &str) -> Vec<Tbl<'a>> {
        let Some((item, line)) = self.raw(cx, key) else {
            return Vec::new();
        };
        if let Some(a) = item.as_array_of_tables() {
            return a
                .iter()
                .enumerate()
                .map(|(i, t)| {
                    let l = t.span().map(|s| cx.line_of(s.start)).unwrap_or(line);
                    Tbl::new(t, &format!("{}.{}", self.key_path(key), i), l)
                })
                .collect();
        }
        if let Some(a) = item.as_array() {
            let mut out = Vec::new();
            for (i, v) in a.iter().enumerate() {
                match v.as_inline_table() {
                    Some(t) => {
                        out.push(Tbl::new(t, &format!("{}.{}", self.key_path(key), i), line))
                    }
                    None => cx.error(
                        line,
                        &format!("{}.{}", self.key_path(key), i),
                        "expected a table",
                    ),
                }
            }
            return out;
        }
        cx.error(
            line,
            &self.key_path(key),
            format!(
                "expected an array of tables ([[{key}]]), found {}",
                item.type_name()
            ),
        );
        Vec::new()
    }

    /// The keys of the table, in order.
    pub fn keys(&self) -> Vec<String> {
        self.t.iter().map(|(k, _)| k.to_string()).collect()
    }

    /// Counts every key as read: after a mistake that makes the rest of the table
    /// meaningless (an unknown kind), so that its other keys are not reported as well.
    pub fn skip_rest(&self) {
        self.used
            .borrow_mut()
            .extend(self.t.iter().map(|(k, _)| k.to_string()));
    }

    /// Reports every key that was never read as unknown, suggesting the closest known one.
    pub fn finish(&self, cx: &Cx, known: &[&str]) {
        let used = self.used.borrow();
        // A known key left unread because reading this table stopped at an error is not
        // a second mistake.
        let failed = cx.has_error_under(&self.path);
        // With its kind (or model) unknown, the table's keys are those of a kind nobody
        // can name: the one mistake is the kind, not the keys of the kind meant.
        if cx.has_error_at(&self.key_path("kind")) || cx.has_error_at(&self.key_path("model")) {
            return;
        }
        for (k, _) in self.t.iter() {
            if !used.contains(k) {
                if known.contains(&k) {
                    if !failed {
                        self.error(
                            cx,
                            k,
                            "not used here: it applies to other kinds or models of this entry",
                        );
                    }
                    continue;
                }
                let hint = closest(k, known)
                    .map(|s| format!(" (did you mean {s:?}?)"))
                    .unwrap_or_default();
                let mut expected: Vec<&str> = known.to_vec();
                expected.sort_unstable();
                self.error(
                    cx,
                    k,
                    format!(
                        "unknown key{hint}; expected one of: {}",
                        expected.join(", ")
                    ),
                );
            }
        }
    }
}

/// The most characters of a name a message echoes.
pub const SHOWN_NAME_CHARS: usize = 80;
/// The most characters of one diagnostic's reason (longer ones are cut with "…").
pub const SHOWN_REASON_CHARS: usize = 480;

/// `s` made safe to print: control, bidirectional-override and other non-printing
/// characters escaped (`\u{1b}`), cut to `max` characters with "…".
pub fn shown_max(s: &str, max: usize) -> String {
    let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n >= max {
            out.push('…');
            break;
        }
        if c.is_control() || bidi(c) || matches!(c, '\u{200b}'..='\u{200f}' | '\u{feff}') {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// A name as messages echo it: [`shown_max`] with [`SHOWN_NAME_CHARS`].
pub fn shown(s: &str) -> String {
    shown_max(s, SHOWN_NAME_CHARS)
}

/// The longest name a scenario may give (it may become part of a file name).
pub const MAX_NAME_CHARS: usize = 200;

/// Why `n` cannot be a name, or None.
pub fn name_problem(n: &str) -> Option<String> {
    if n.is_empty() {
        return Some("a name may not be empty".into());
    }
    let count = n.chars().count();
    if count > MAX_NAME_CHARS {
        return Some(format!(
            "a name has at most {MAX_NAME_CHARS} characters, this one {count}"
        ));
    }
    let bidi = |c: char| matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}');
    if let Some(c) = n.chars().find(|&c| c.is_control() || bidi(c)) {
        return Some(format!(
            "a name may not hold control or bidirectional-override characters (U+{:04X})",
            c as u32
        ));
    }
    None
}

/// " (did you mean \"X\"?)" for the known name closest to `k`, or "" when none is close.
pub fn did_you_mean(k: &str, known: &[&str]) -> String {
    closest(k, known)
        .map(|s| format!(" (did you mean {s:?}?)"))
        .unwrap_or_default()
}

fn closest<'k>(k: &str, known: &[&'k str]) -> Option<&'k str> {
    known
        .iter()
        .map(|c| (edit_distance(k, c), *c))
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min()
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let c = if a[i - 1] == b[j - 1] { 0 } else { 1 };
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + c);
        }
        prev = cur;
    }
    prev[b.len()]
}
