//! `count` in a `[[traffic]]` entry: one entry stands for several similar ones.
//!
//! An entry with `count = N` becomes N entries in its place; in each copy `k`
//! (0..N) every `{i}` in a string value (names, nodes, routes, nested tables) reads `k`:
//!
//! ```toml
//! [[traffic]]
//! name = "ftp{i}"      # ftp0, ftp1, ftp2
//! count = 3
//! from = "s{i}"
//! to = "d{i}"
//! model = "tcp"
//! ```
//!
//! The copies are ordinary entries afterwards: named in `--set` and grids
//! (`traffic.ftp1.flows`), measured as `group.ftp1.*`.

use toml_edit::{DocumentMut, Item, Value};

/// The largest `count` accepted.
pub const MAX_COUNT: i64 = 10_000;

/// Replaces every `[[traffic]]` entry with a `count` by its copies. Returns whether
/// anything was expanded; an invalid `count` is an error naming the entry.
pub fn expand_counts(doc: &mut DocumentMut) -> Result<bool, String> {
    expand_counts_traced(doc).map(|o| o.is_some())
}

/// Where each entry after expansion came from: `origin[k] = (entry, copy)` for the k-th
/// `[[traffic]]` entry of the expanded document.
pub type Origin = Vec<(usize, usize)>;

/// [`expand_counts`], returning where each entry came from when anything was expanded.
pub fn expand_counts_traced(doc: &mut DocumentMut) -> Result<Option<Origin>, String> {
    let Some(aot) = doc
        .get_mut("traffic")
        .and_then(Item::as_array_of_tables_mut)
    else {
        return Ok(None);
    };
    if !aot.iter().any(|t| t.contains_key("count")) {
        return Ok(None);
    }
    let mut out = toml_edit::ArrayOfTables::new();
    let mut origin = Vec::new();
    for (e, t) in aot.iter().enumerate() {
        let Some(count) = t.get("count") else {
            out.push(t.clone());
            origin.push((e, 0));
            continue;
        };
        let n = match count.as_integer() {
            Some(n) if (1..=MAX_COUNT).contains(&n) => n,
            _ => {
                return Err(format!(
                    "traffic.{e}.count: a whole number from 1 to {MAX_COUNT}, got {}",
                    count.to_string().trim()
                ))
            }
        };
        let name = t.get("name").and_then(Item::as_str).unwrap_or("");
        if n > 1 && !name.contains("{i}") {
            return Err(format!(
                "traffic.{e}.count: the name {name:?} must hold {{i}} so that the {n} copies \
                 have names of their own"
            ));
        }
        for k in 0..n {
            let mut copy = t.clone();
            copy.remove("count");
            let idx = k.to_string();
            for (_, item) in copy.iter_mut() {
                substitute(item, &idx);
            }
            out.push(copy);
            origin.push((e, k as usize));
        }
    }
    *aot = out;
    Ok(Some(origin))
}

/// One table's place in the expanded text and in the file: `(expanded line, file line,
/// line of a removed `count` key in that table or 0)`.
pub type LineAnchor = (usize, usize, usize);

fn lines_of(text: &str) -> Vec<usize> {
    let mut starts = vec![0];
    starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
    starts
}

fn line_in(starts: &[usize], offset: usize) -> usize {
    match starts.binary_search(&offset) {
        Ok(i) => i + 1,
        Err(i) => i,
    }
}

/// Anchors that carry a line of the expanded text back to the file: every table with a
/// header in `expanded` paired with the table of the file it was copied from. A copy
/// of an entry keeps the entry's text but for its `count` line, so the lines between
/// two headers follow their header.
pub fn line_anchors(original: &str, expanded: &str, origin: &[(usize, usize)]) -> Vec<LineAnchor> {
    let (Ok(o), Ok(x)) = (
        toml_edit::ImDocument::parse(original.to_string()),
        toml_edit::ImDocument::parse(expanded.to_string()),
    ) else {
        return Vec::new();
    };
    let (so, sx) = (lines_of(original), lines_of(expanded));
    let mut out = Vec::new();
    pair_tables(o.as_table(), x.as_table(), &so, &sx, Some(origin), &mut out);
    out.sort_unstable();
    out
}

fn pair_tables(
    o: &toml_edit::Table,
    x: &toml_edit::Table,
    so: &[usize],
    sx: &[usize],
    origin: Option<&[(usize, usize)]>,
    out: &mut Vec<LineAnchor>,
) {
    for (key, xi) in x.iter() {
        let Some(oi) = o.get(key) else { continue };
        match (oi, xi) {
            (Item::Table(ot), Item::Table(xt)) => pair_one(ot, xt, so, sx, 0, out),
            (Item::ArrayOfTables(oa), Item::ArrayOfTables(xa)) => {
                let map = if key == "traffic" { origin } else { None };
                for (k, xt) in xa.iter().enumerate() {
                    let e = map.map_or(Some(k), |m| m.get(k).map(|&(e, _)| e));
                    let Some(ot) = e.and_then(|e| oa.get(e)) else {
                        continue;
                    };
                    let count_line = if map.is_some() {
                        ot.key("count")
                            .and_then(|k| k.span())
                            .map_or(0, |s| line_in(so, s.start))
                    } else {
                        0
                    };
                    pair_one(ot, xt, so, sx, count_line, out);
                }
            }
            _ => {}
        }
    }
}

fn pair_one(
    ot: &toml_edit::Table,
    xt: &toml_edit::Table,
    so: &[usize],
    sx: &[usize],
    count_line: usize,
    out: &mut Vec<LineAnchor>,
) {
    if let (Some(a), Some(b)) = (xt.span(), ot.span()) {
        if !xt.is_implicit() {
            out.push((line_in(sx, a.start), line_in(so, b.start), count_line));
        }
    }
    pair_tables(ot, xt, so, sx, None, out);
}

/// The file's line for `line` of the expanded text.
pub fn file_line(anchors: &[LineAnchor], line: usize) -> usize {
    let i = anchors.partition_point(|a| a.0 <= line);
    if i == 0 {
        return line;
    }
    let (x, o, count) = anchors[i - 1];
    let l = o + (line - x);
    if count != 0 && l >= count && o < count {
        l + 1
    } else {
        l
    }
}

fn substitute(item: &mut Item, idx: &str) {
    match item {
        Item::Value(v) => substitute_value(v, idx),
        Item::Table(t) => {
            for (_, i) in t.iter_mut() {
                substitute(i, idx);
            }
        }
        Item::ArrayOfTables(a) => {
            for t in a.iter_mut() {
                for (_, i) in t.iter_mut() {
                    substitute(i, idx);
                }
            }
        }
        Item::None => {}
    }
}

fn substitute_value(v: &mut Value, idx: &str) {
    match v {
        Value::String(s) if s.value().contains("{i}") => {
            let decor = s.decor().clone();
            let mut new = toml_edit::Formatted::new(s.value().replace("{i}", idx));
            *new.decor_mut() = decor;
            *s = new;
        }
        Value::Array(a) => a.iter_mut().for_each(|x| substitute_value(x, idx)),
        Value::InlineTable(t) => t.iter_mut().for_each(|(_, x)| substitute_value(x, idx)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_replace_the_entry_in_place() {
        let mut doc: DocumentMut = r#"
[[traffic]]
name = "a"
[[traffic]]
name = "t{i}"
count = 2
route = ["s{i}", "r"]
profile = { kind = "tsw", target = "{i}Mbps" }
[[traffic]]
name = "z"
"#
        .parse()
        .unwrap();
        assert!(expand_counts(&mut doc).unwrap());
        let t = doc["traffic"].as_array_of_tables().unwrap();
        let names: Vec<&str> = t.iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(names, ["a", "t0", "t1", "z"]);
        assert_eq!(
            t.get(2).unwrap()["route"]
                .as_array()
                .unwrap()
                .get(0)
                .unwrap()
                .as_str(),
            Some("s1")
        );
        assert!(!t.get(1).unwrap().contains_key("count"));
        assert!(doc.to_string().contains("target = \"1Mbps\""));
    }

    #[test]
    fn a_count_needs_indexed_names_and_a_sane_number() {
        for (body, why) in [
            ("name = \"t\"\ncount = 2", "must hold {i}"),
            ("name = \"t{i}\"\ncount = 0", "from 1 to"),
            ("name = \"t{i}\"\ncount = \"3\"", "from 1 to"),
        ] {
            let mut doc: DocumentMut = format!("[[traffic]]\n{body}\n").parse().unwrap();
            let e = expand_counts(&mut doc).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }
}
