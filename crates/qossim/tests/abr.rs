//! ABR with ERICA end to end: infinite sources on unicast parking-lot and fork
//! topologies converge to the max-min fair rates (computed here by water-filling), a
//! point-to-multipoint source follows its slowest branch under every consolidation
//! variant, no link carries more than its rate, a bursty source answers each 16-cell
//! request with one 6144-cell response, and the `[abr]` section's diagnostics.

mod common;

use common::{accepted_keys, described_keys, run};
use qossim::scenario::RunOutput;
use serde_json::{Map, Value};
use std::path::Path;

fn num(m: &Map<String, Value>, k: &str) -> f64 {
    m.get(k)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("missing summary key {k}"))
}

/// A switched network: `links` are (from, to, rate in Mb/s) between switches or from
/// a host to its switch; every connection (name, source host, destination hosts) gets
/// its own hosts on 1-km (5-µs) links.
fn network(
    switches: &[&str],
    trunks: &[(&str, &str, f64)],
    vcs: &[(&str, &str, &[&str])],
    extra: &str,
    duration_ms: f64,
    warmup_ms: f64,
) -> String {
    let mut nodes: Vec<String> = switches.iter().map(|s| s.to_string()).collect();
    let mut links = String::new();
    for (a, b, r) in trunks {
        links += &format!("[[topology.link]]\nfrom = \"{a}\"\nto = \"{b}\"\nrate = \"{r}Mbps\"\n");
    }
    let mut abr = String::new();
    for (name, at, dests) in vcs {
        let src = format!("H{name}");
        nodes.push(src.clone());
        links += &format!("[[topology.link]]\nfrom = \"{src}\"\nto = \"{at}\"\n");
        let mut ds = Vec::new();
        for (k, d) in dests.iter().enumerate() {
            let h = format!("D{name}{k}");
            nodes.push(h.clone());
            links += &format!("[[topology.link]]\nfrom = \"{d}\"\nto = \"{h}\"\n");
            ds.push(format!("\"{h}\""));
        }
        abr += &format!(
            "[[abr.vc]]\nname = \"{name}\"\nsource = \"{src}\"\ndestinations = [{}]\n",
            ds.join(", ")
        );
    }
    let nodes: Vec<String> = nodes.iter().map(|n| format!("\"{n}\"")).collect();
    format!(
        "[run]\nduration = \"{duration_ms}ms\"\nwarmup = \"{warmup_ms}ms\"\n\
         [topology]\nkind = \"graph\"\nnodes = [{}]\nrate = \"155.52Mbps\"\ndelay = \"5us\"\n\
         {links}[abr]\nnetwork = \"lan\"\n{extra}\n{abr}",
        nodes.join(", ")
    )
}

/// Max-min fair rates by water-filling: `paths[i]` lists the links session i crosses,
/// `cap[l]` is link l's capacity.
fn water_fill(paths: &[Vec<usize>], cap: &[f64]) -> Vec<f64> {
    let n = paths.len();
    let mut rate = vec![0.0; n];
    let mut fixed = vec![false; n];
    let mut left = cap.to_vec();
    while fixed.iter().any(|f| !f) {
        // The link whose remaining capacity per unfixed session is smallest.
        let mut best: Option<(usize, f64)> = None;
        for (l, &c) in left.iter().enumerate() {
            let k = (0..n)
                .filter(|&i| !fixed[i] && paths[i].contains(&l))
                .count();
            if k > 0 {
                let share = c / k as f64;
                if best.is_none_or(|b| share < b.1) {
                    best = Some((l, share));
                }
            }
        }
        let (l, share) = best.expect("every session crosses a link");
        for i in 0..n {
            if !fixed[i] && paths[i].contains(&l) {
                fixed[i] = true;
                rate[i] = share;
                for &m in &paths[i] {
                    left[m] -= share;
                }
            }
        }
    }
    rate
}

const U_LAN: f64 = 0.95;

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 0.05 * want,
        "{what}: {got:.3} Mb/s, max-min fair {want:.3} Mb/s"
    );
}

#[test]
fn water_filling_by_hand() {
    // Two links of 10; a crosses both, b the first, c the second, d the second.
    let r = water_fill(&[vec![0, 1], vec![0], vec![1], vec![1]], &[10.0, 10.0]);
    let want = [10.0 / 3.0, 20.0 / 3.0, 10.0 / 3.0, 10.0 / 3.0];
    for (g, w) in r.iter().zip(want) {
        assert!((g - w).abs() < 1e-12);
    }
}

#[test]
fn parking_lot_converges_to_max_min_fair_rates() {
    let text = network(
        &["SW1", "SW2", "SW3", "SW4"],
        &[
            ("SW1", "SW2", 155.52),
            ("SW2", "SW3", 155.52),
            ("SW3", "SW4", 155.52),
        ],
        &[
            ("A", "SW1", &["SW4"]),
            ("B", "SW1", &["SW2"]),
            ("C", "SW2", &["SW3"]),
            ("D", "SW2", &["SW4"]),
            ("E", "SW3", &["SW4"]),
        ],
        "",
        30.0,
        20.0,
    );
    let out = run(&text, 1);
    let cap = vec![U_LAN * 155.52; 3];
    let paths = vec![vec![0, 1, 2], vec![0], vec![1], vec![1, 2], vec![2]];
    let want = water_fill(&paths, &cap);
    // Not all equal: B takes what A leaves on link 1.
    assert!(want[1] > 1.9 * want[0]);
    for (i, name) in ["A", "B", "C", "D", "E"].iter().enumerate() {
        let got = num(&out.summary, &format!("abr.vc.{name}.acr_mean_mbps"));
        close(got, want[i], name);
    }
    for l in ["SW1-SW2", "SW2-SW3", "SW3-SW4"] {
        let u = num(&out.summary, &format!("link.{l}.utilization"));
        assert!(u <= 1.0 && u > 0.9, "{l}: {u}");
    }
}

#[test]
fn fork_converges_to_max_min_fair_rates() {
    // SW0 -> SW1, then a fork: SW1 -> SW2 at full rate, SW1 -> SW3 at 50 Mb/s.
    let text = network(
        &["SW0", "SW1", "SW2", "SW3"],
        &[
            ("SW0", "SW1", 155.52),
            ("SW1", "SW2", 155.52),
            ("SW1", "SW3", 50.0),
        ],
        &[
            ("A", "SW0", &["SW2"]),
            ("B", "SW0", &["SW3"]),
            ("C", "SW0", &["SW3"]),
            ("F", "SW1", &["SW2"]),
        ],
        "",
        30.0,
        20.0,
    );
    let out = run(&text, 1);
    let cap = vec![U_LAN * 155.52, U_LAN * 155.52, U_LAN * 50.0];
    let paths = vec![vec![0, 1], vec![0, 2], vec![0, 2], vec![1]];
    let want = water_fill(&paths, &cap);
    assert!(want[0] > 2.0 * want[1]);
    for (i, name) in ["A", "B", "C", "F"].iter().enumerate() {
        let got = num(&out.summary, &format!("abr.vc.{name}.acr_mean_mbps"));
        close(got, want[i], name);
    }
}

fn p2mp(variant: &str) -> RunOutput {
    // P multicasts to a host behind SW1 (full rate) and one behind SW2, reached over a
    // 50 Mb/s link that a unicast connection U shares.
    let extra = format!("consolidation = \"{variant}\"\nbranch_timeout = \"2ms\"\n");
    run(
        &network(
            &["SW1", "SW2"],
            &[("SW1", "SW2", 50.0)],
            &[("P", "SW1", &["SW1", "SW2"]), ("U", "SW1", &["SW2"])],
            &extra,
            40.0,
            25.0,
        ),
        1,
    )
}

#[test]
fn point_to_multipoint_follows_its_slowest_branch_under_every_variant() {
    let share = U_LAN * 50.0 / 2.0;
    for v in ["turnaround", "flag", "all_branches", "pass_through"] {
        let out = p2mp(v);
        let s = &out.summary;
        let p = num(s, "abr.vc.P.acr_mean_mbps");
        close(p, share, &format!("{v}: P2MP source"));
        close(
            num(s, "abr.vc.U.acr_mean_mbps"),
            share,
            &format!("{v}: unicast"),
        );
        // The branch point hands back only the smallest branch rate: every ER the
        // source received after convergence is at most the slow branch's share (5%).
        let er_max = num(s, "abr.vc.P.er_max_mbps");
        assert!(er_max <= 1.05 * share, "{v}: ER up to {er_max:.2} Mb/s");
        // Both destinations receive the same cells (no loss in unbounded queues).
        let d0 = num(s, "abr.vc.P.dest.DP0.cells");
        let d1 = num(s, "abr.vc.P.dest.DP1.cells");
        assert!(
            (d0 - d1).abs() <= 0.01 * d0.max(1.0) + 64.0,
            "{v}: {d0} vs {d1}"
        );
        // Never above the link's rate (up to the one cell in transmission when the
        // measurement starts; the queue from the start at ICR keeps the link busy).
        let u = num(s, "link.SW1-SW2.utilization");
        assert!(u <= 1.0 + 424.0 / (50e6 * 0.015), "{v}: {u}");
    }
}

#[test]
fn variants_differ_in_what_the_branch_point_returns() {
    let t = p2mp("turnaround");
    let f = p2mp("flag");
    let p = p2mp("pass_through");
    let ret = |o: &RunOutput| num(&o.summary, "abr.branch.SW1.P.returned");
    let frms = |o: &RunOutput| num(&o.summary, "abr.vc.P.cells_sent") / 32.0;
    // Turnaround answers every FRM; the flag variant only those that follow branch
    // feedback (not the first); pass-through forwards at most one branch BRM per FRM
    // and absorbs the others.
    assert!(
        (ret(&t) - frms(&t)).abs() <= 1.0,
        "{} vs {}",
        ret(&t),
        frms(&t)
    );
    assert!(ret(&f) < frms(&f), "{} vs {}", ret(&f), frms(&f));
    assert!(ret(&p) <= frms(&p) + 1.0);
    assert!(num(&p.summary, "abr.branch.SW1.P.absorbed") > 0.0);
    // The turnaround's BRMs reach the source a branch round trip before the others'.
    let first = |o: &RunOutput| {
        o.series
            .iter()
            .find(|s| s.name == "abr.acr.P")
            .map(|s| {
                s.v.iter()
                    .position(|&x| x > 0.0 && x < 100.0)
                    .unwrap_or(usize::MAX)
            })
            .unwrap()
    };
    assert!(first(&t) <= first(&f) && first(&t) <= first(&p));
}

#[test]
fn vbr_takes_priority_and_abr_uses_the_rest() {
    // A VBR connection at 124.416 Mb/s, always on, shares the trunk with one ABR source:
    // ERICA gives the ABR source U·C minus the VBR rate.
    let mut text = network(
        &["SW1", "SW2"],
        &[("SW1", "SW2", 155.52)],
        &[("A", "SW1", &["SW2"])],
        "",
        30.0,
        20.0,
    );
    text = text.replace("nodes = [", "nodes = [\"HV\", \"DV\", ");
    text = text.replace(
        "[abr]\n",
        "[[topology.link]]\nfrom = \"HV\"\nto = \"SW1\"\n[[topology.link]]\nfrom = \"SW2\"\nto = \"DV\"\n[abr]\n",
    );
    text += "[[abr.vc]]\nname = \"V\"\nsource = \"HV\"\ndestinations = [\"DV\"]\ntype = \"vbr\"\non = \"1s\"\noff = \"0s\"\n";
    let out = run(&text, 1);
    let want = U_LAN * 155.52 - 124.416;
    close(
        num(&out.summary, "abr.vc.A.acr_mean_mbps"),
        want,
        "ABR beside VBR",
    );
    let vbr = num(&out.summary, "abr.vc.V.dest.DV.rate_mbps");
    assert!((vbr - 124.416).abs() < 0.5, "{vbr}");
}

fn diagnostics(text: &str) -> Vec<String> {
    match qossim::parse(text, "s.toml", Path::new("."), &[]) {
        Ok(_) => panic!("accepted"),
        Err(d) => d.iter().map(|d| d.to_string()).collect(),
    }
}

#[test]
fn mistakes_in_the_abr_section_are_reported_once_at_their_line() {
    let good = network(&["SW1"], &[], &[("A", "SW1", &["SW1"])], "", 1.0, 0.0);
    for (from, to, want) in [
        (
            "network = \"lan\"",
            "network = \"man\"",
            "abr.network: unknown network \"man\"",
        ),
        (
            "network = \"lan\"",
            "network = \"lan\"\nconsolidation = \"vote\"",
            "abr.consolidation: unknown consolidation \"vote\"",
        ),
        ("network = \"lan\"", "network = \"lan\"\nrif = 2", "abr.rif"),
        (
            "network = \"lan\"",
            "network = \"lan\"\nnrm = 1",
            "abr.nrm: must be between 2 and 256",
        ),
        (
            "destinations = [\"DA0\"]",
            "destinations = [\"DX\"]",
            "unknown node \"DX\"",
        ),
        (
            "destinations = [\"DA0\"]",
            "destinations = []",
            "at least one destination",
        ),
        (
            "name = \"A\"",
            "name = \"A\"\ntype = \"cbr\"",
            "abr.vc.0.type: unknown type \"cbr\" (did you mean \"vbr\"?); use \"infinite\", \"bursty\" or \"vbr\"",
        ),
        (
            "name = \"A\"",
            "name = \"A\"\nspeed = 3",
            "speed: unknown key",
        ),
    ] {
        assert!(good.contains(from), "{from}");
        let d = diagnostics(&good.replacen(from, to, 1));
        assert_eq!(d.len(), 1, "{to}: {d:?}");
        assert!(d[0].contains(want), "{to}: {d:?}");
        assert!(d[0].starts_with("s.toml:"), "{d:?}");
    }
}

#[test]
fn bursty_source_answers_each_request_with_one_6144_cell_response() {
    // H -> SW1 -> SW2 -> D, every link 50 µs: the client D asks for a response with a
    // 16-cell request when the connection starts and again when a response has arrived
    // in full; the source answers once the request has reached it in full.
    let text = "[run]\nduration = \"60ms\"\nwarmup = \"1ms\"\n\
        [topology]\nkind = \"graph\"\nnodes = [\"SW1\", \"SW2\", \"H\", \"D\"]\n\
        rate = \"155.52Mbps\"\ndelay = \"50us\"\n\
        [[topology.link]]\nfrom = \"H\"\nto = \"SW1\"\n\
        [[topology.link]]\nfrom = \"SW1\"\nto = \"SW2\"\n\
        [[topology.link]]\nfrom = \"SW2\"\nto = \"D\"\n\
        [abr]\nnetwork = \"lan\"\nsample = \"1us\"\n\
        [[abr.vc]]\nname = \"B\"\nsource = \"H\"\ndestinations = [\"D\"]\ntype = \"bursty\"\n";
    let out = run(text, 1);
    let s = out
        .series
        .iter()
        .find(|s| s.name == "abr.cells.B.D")
        .expect("cells received");
    // One cell time and one propagation delay, µs.
    let tau = 424.0 / 155.52;
    let prop = 50.0;
    // The request's last cell leaves D 15 cell times after its first and is stored and
    // forwarded cell by cell: it reaches H after 16 + 1 + 1 cell times and three
    // propagation delays; the response's first cell reaches D after three more cell
    // times and delays (one more cell time if an FRM goes first).
    let gap = 21.0 * tau + 6.0 * prop;
    let step = 1.0; // sampling interval, µs
    let response = 6144.0;
    // The count of cells received stays constant for longer than a few cell times only
    // between responses, at a whole number of responses, for one request cycle.
    let mut plateaus = Vec::new();
    let mut i = 0;
    while i < s.v.len() {
        let mut j = i;
        while j + 1 < s.v.len() && s.v[j + 1] == s.v[i] {
            j += 1;
        }
        let len = (s.t[j] - s.t[i]) * 1e6;
        if len > 10.0 * tau && j + 1 < s.v.len() {
            plateaus.push((s.v[i], len));
        }
        i = j + 1;
    }
    assert!(plateaus.len() >= 3, "{plateaus:?}");
    for (k, &(cells, len)) in plateaus.iter().enumerate() {
        assert_eq!(cells, k as f64 * response, "plateau {k}: {plateaus:?}");
        assert!(
            len >= gap - 2.0 * step && len <= gap + tau + 2.0 * step,
            "plateau {k}: {len:.2} µs idle, want {gap:.2} (+ one cell time)"
        );
    }
    // Every response begun was requested in full: one per plateau, and the run may end
    // after the next request reached the source but before its response reached D.
    let begun = num(&out.summary, "abr.vc.B.bursts");
    let n = plateaus.len() as f64;
    assert!(
        begun == n || begun == n + 1.0,
        "{begun} begun, {plateaus:?}"
    );
}

/// Two sources sharing one trunk under ERICA+ with a 100-µs target delay: the queue term
/// over-allocates an empty link (f(0) = 1.15), so a queue forms, and holds it near T0.
/// ERICA, with U = 0.95 and no queue term, leaves 5 % of the link idle and no queue.
#[test]
fn erica_plus_fills_the_link_and_holds_its_queue_near_the_target_delay() {
    let sc = |extra: &str| {
        network(
            &["SW1", "SW2"],
            &[("SW1", "SW2", 155.52)],
            &[("A", "SW1", &["SW2"]), ("B", "SW1", &["SW2"])],
            extra,
            60.0,
            30.0,
        )
    };
    let erica = run(&sc(""), 1);
    let plus = run(&sc("algorithm = \"erica_plus\""), 1);
    let util = |o: &RunOutput| num(&o.summary, "link.SW1-SW2.utilization");
    let steady = |o: &RunOutput| num(&o.summary, "abr.steady_max_queue_cells");
    // ERICA: the two sources share 0.95 C; nothing queues for long.
    close(util(&erica), U_LAN, "ERICA utilization");
    // ERICA+: the link is full (the sources together are offered up to 1.15 C).
    // (Utilization counts whole cells, so one cell at the window's edge may add
    // 424 b / (155.52 Mb/s x 30 ms) = 9.1e-5.)
    let u = util(&plus);
    let edge = 424.0 / (155.52e6 * 0.03);
    assert!(u > 0.99 && u <= 1.0 + edge, "ERICA+ utilization {u}");
    // T0 at the link rate is 100 µs x 155.52 Mb/s / 424 b = 36.7 cells. In equilibrium
    // f(Tq) = 1 at Tq = T0; the queue's swing around it is bounded by one loop's
    // over-allocation (≤ 15 % of the link for a loop of well under 1 ms), so the steady
    // maximum lies above 0 and below T0 plus one 1-ms interval of 15 % of the link
    // (55 cells).
    let t0_cells = 100e-6 * 155.52e6 / 424.0;
    let q = steady(&plus);
    assert!(
        q > 0.0 && q < t0_cells + 0.15 * 1e-3 * 155.52e6 / 424.0,
        "ERICA+ steady max queue {q} (T0 = {t0_cells} cells)"
    );
}

#[test]
fn erica_plus_keys_need_the_algorithm_and_exclude_target_utilization() {
    let good = network(&["SW1"], &[], &[("A", "SW1", &["SW1"])], "", 1.0, 0.0);
    for (to, want) in [
        (
            "network = \"lan\"\ntarget_delay = \"1ms\"",
            "abr.target_delay: only ERICA+ has a queue term",
        ),
        (
            "network = \"lan\"\nalgorithm = \"erica_plus\"\ntarget_utilization = 0.9",
            "abr.target_utilization: ERICA+ targets the whole link",
        ),
        (
            "network = \"lan\"\nalgorithm = \"erica+\"",
            "abr.algorithm: unknown algorithm \"erica+\"",
        ),
        (
            "network = \"lan\"\nalgorithm = \"erica_plus\"\ncurve_a = 1",
            "abr.curve_a: must be in (1, 10], got 1",
        ),
    ] {
        let d = diagnostics(&good.replacen("network = \"lan\"", to, 1));
        assert_eq!(d.len(), 1, "{to}: {d:?}");
        assert!(d[0].contains(want), "{to}: {d:?}");
    }
}

#[test]
fn describe_lists_every_key_the_abr_reader_accepts() {
    let good = network(&["SW1"], &[], &[("A", "SW1", &["SW1"])], "", 1.0, 0.0);
    // [abr]: its declared keys, and the array of connections (a declared section).
    let text = good.replace("network = \"lan\"", "network = \"lan\"\nzz_unknown = 1");
    let mut abr = described_keys("abr");
    abr.push("vc".to_string());
    abr.sort();
    assert_eq!(accepted_keys(&text, "abr"), abr);
    // [[abr.vc]]: the union over its source types is what describe lists.
    let mut union: Vec<String> = Vec::new();
    for ty in qossim::mechanisms::abr::params::VC_TYPES {
        let text = good.replace(
            "name = \"A\"",
            &format!("name = \"A\"\ntype = \"{ty}\"\nzz_unknown = 1"),
        );
        union.extend(accepted_keys(&text, "abr.vc.0"));
    }
    union.sort();
    union.dedup();
    assert_eq!(union, described_keys("abr.vc"));
}

#[test]
fn a_connections_keys_are_checked_against_their_declaration() {
    let good = network(&["SW1"], &[], &[("A", "SW1", &["SW1"])], "", 1.0, 0.0);
    let vc = &qossim::mechanisms::abr::params::VC;
    for (line, key, bad) in [
        (
            "type = \"bursty\"\nrequest_cells = 1001",
            "request_cells",
            "1001",
        ),
        ("type = \"vbr\"\non = \"0s\"", "on", "0s"),
        ("nrm = 300", "nrm", "300"),
    ] {
        let text = good.replace("name = \"A\"", &format!("name = \"A\"\n{line}"));
        let at = text
            .lines()
            .position(|l| l.starts_with(&format!("{key} =")))
            .unwrap()
            + 1;
        let p = vc.param(key);
        let want = p.check(&p.parse(bad).unwrap()).expect("out of bounds");
        let d = qossim::parse(&text, "s.toml", Path::new("."), &[]).expect_err(key);
        let d: Vec<String> = d.iter().map(|d| d.to_string()).collect();
        assert!(
            d.contains(&format!("s.toml:{at}: abr.vc.0.{key}: {want}")),
            "{key}: {d:?}"
        );
    }
    // A key of another source type is unknown to this one.
    let text = good.replace("name = \"A\"", "name = \"A\"\ntype = \"vbr\"\nnrm = 32");
    let d = diagnostics(&text);
    assert_eq!(d.len(), 1, "{d:?}");
    assert!(d[0].contains("abr.vc.0.nrm: unknown key"), "{d:?}");
    // A destination that is not a string is reported at its line.
    let text = good.replace(
        "destinations = [\"DA0\"]",
        "destinations = [\n  \"DA0\",\n  7,\n]",
    );
    let at = text.lines().position(|l| l.trim() == "7,").unwrap() + 1;
    assert_eq!(
        diagnostics(&text),
        vec![format!(
            "s.toml:{at}: abr.vc.0.destinations: expected a string, found integer"
        )]
    );
}
