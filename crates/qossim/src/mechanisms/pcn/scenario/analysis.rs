//! After the run: the study's figures under `pcn.*` and the parking lots' short/long ratio.

use super::*;

pub(super) fn finish(sc: &Scenario, w: &mut World, run: &PcnRun, m: &mut Map<String, Value>) {
    let spec = &run.spec;
    let now = w.sched.now();
    let warm = to_secs(sc.run.warmup);
    let nb = run.links.len();
    let names: Vec<String> = run
        .links
        .iter()
        .map(|&l| w.net.links[l as usize].name.clone())
        .collect();
    // Admission accuracy per bottleneck.
    for (b, &l) in run.links.iter().enumerate() {
        let p = format!("pcn.bottleneck.{}.", names[b]);
        let link_bps = w.net.links[l as usize].rate_bps;
        m.insert(p.clone() + "link_bps", json!(link_bps));
        let Some(series) = run.handles.throughput(w, l) else {
            continue;
        };
        let ra = run.ra[b].unwrap_or(link_bps) as f64;
        let acc = admission_accuracy(series, warm, ra);
        m.insert(p.clone() + "mean_bps", num(acc.mean_bps));
        m.insert(p.clone() + "samples", json!(acc.samples));
        if let Some(ra) = run.ra[b] {
            m.insert(p.clone() + "ra_bps", json!(ra));
            m.insert(
                p.clone() + "over_admission_pct",
                num(acc.over_admission_pct),
            );
            m.insert(p.clone() + "sd_over_ra", num(acc.sd_over_ra));
        }
    }
    // Calls per aggregate.
    let mut tot = [0.0f64; 4];
    let mut rows: Vec<(String, Vec<(String, Value)>)> = Vec::new();
    for a in &run.ieas {
        let mut out = Vec::new();
        if let Some(ing) = w.agents.get_mut::<FlowGenerator>(a.agent) {
            ing.report(now, &mut out);
        }
        let get = |k: &str| {
            out.iter()
                .find(|(n, _)| n == k)
                .and_then(|(_, v)| v.as_f64())
                .unwrap_or(0.0)
        };
        let (offered, blocked) = (get("offered_calls"), get("blocked_calls"));
        let terminated = get("terminated_flows");
        tot[0] += offered;
        tot[1] += blocked;
        tot[2] += get("active_mean");
        tot[3] += terminated;
        rows.push((
            a.name.clone(),
            vec![
                ("offered".into(), json!(offered)),
                ("admitted".into(), json!(offered - blocked)),
                ("blocked".into(), json!(blocked)),
                (
                    "blocking".into(),
                    num(if offered > 0.0 {
                        blocked / offered
                    } else {
                        0.0
                    }),
                ),
                ("active_mean".into(), num(get("active_mean"))),
                ("rtt_s".into(), json!(to_secs(a.round_trip))),
            ],
        ));
    }
    m.insert("pcn.ieas".into(), json!(run.ieas.len()));
    m.insert("pcn.offered".into(), json!(tot[0]));
    m.insert("pcn.admitted".into(), json!(tot[0] - tot[1]));
    m.insert("pcn.blocked".into(), json!(tot[1]));
    m.insert(
        "pcn.blocking".into(),
        num(if tot[0] > 0.0 { tot[1] / tot[0] } else { 0.0 }),
    );
    m.insert("pcn.active_mean".into(), num(tot[2]));
    // Termination.
    if let (Some(t), Some(snap)) = (&spec.termination, run.snapshot.borrow().as_ref()) {
        let terms: Vec<Term> = snap
            .iter()
            .map(|flows| {
                let mut x = Term {
                    load_flows: flows.len(),
                    load_bps: flows.iter().map(|f| f.mean_bps).sum(),
                    ..Default::default()
                };
                for f in flows {
                    if w.flows.recs[f.flow as usize].stop < f.end {
                        x.terminated_flows += 1;
                        x.terminated_bps += f.mean_bps;
                    }
                }
                x
            })
            .collect();
        let rt: Vec<f64> = run.rt.iter().map(|r| r.unwrap_or(0) as f64).collect();
        let paths: Vec<Vec<usize>> = run.ieas.iter().map(|a| a.crosses.clone()).collect();
        let loads: Vec<f64> = terms.iter().map(|x| x.load_bps).collect();
        // Expected (beat-down) with the bottlenecks in chain order.
        let expected = chain_order(nb, &paths).map(|order| {
            let pos: Vec<usize> = (0..nb)
                .map(|b| order.iter().position(|&o| o == b).expect("in order"))
                .collect();
            let mut p2: Vec<Vec<usize>> = paths
                .iter()
                .map(|p| p.iter().map(|&b| pos[b]).collect())
                .collect();
            for p in p2.iter_mut() {
                p.sort_unstable();
            }
            let rt2: Vec<f64> = order.iter().map(|&b| rt[b]).collect();
            let e = expected_termination(&loads, &p2, &rt2);
            let per_b: Vec<f64> = (0..nb).map(|b| e.bottleneck[pos[b]]).collect();
            (e.iea, per_b)
        });
        let put =
            |m: &mut Map<String, Value>, p: &str, x: &Term, optimal: f64, expected: Option<f64>| {
                let actual = if x.load_bps > 0.0 {
                    x.terminated_bps / x.load_bps
                } else {
                    f64::NAN
                };
                m.insert(format!("{p}load_flows"), json!(x.load_flows));
                m.insert(format!("{p}load_bps"), num(x.load_bps));
                m.insert(format!("{p}terminated_flows"), json!(x.terminated_flows));
                m.insert(format!("{p}terminated_bps"), num(x.terminated_bps));
                m.insert(format!("{p}actual"), num(actual));
                m.insert(
                    format!("{p}actual_flows"),
                    num(if x.load_flows > 0 {
                        x.terminated_flows as f64 / x.load_flows as f64
                    } else {
                        f64::NAN
                    }),
                );
                m.insert(format!("{p}optimal"), num(optimal));
                m.insert(
                    format!("{p}over_termination_pct"),
                    num(if optimal > 0.0 {
                        over_termination_percent(actual, optimal)
                    } else {
                        f64::NAN
                    }),
                );
                m.insert(format!("{p}a_minus_o_pts"), num((actual - optimal) * 100.0));
                if let Some(e) = expected {
                    m.insert(format!("{p}expected"), num(e));
                    m.insert(format!("{p}a_minus_e_pts"), num((actual - e) * 100.0));
                }
            };
        let mut b_opt = vec![0.0; nb];
        for b in 0..nb {
            let mut x = Term::default();
            for (i, a) in run.ieas.iter().enumerate() {
                if a.crosses.contains(&b) {
                    x.load_flows += terms[i].load_flows;
                    x.load_bps += terms[i].load_bps;
                    x.terminated_flows += terms[i].terminated_flows;
                    x.terminated_bps += terms[i].terminated_bps;
                }
            }
            b_opt[b] = optimal_fraction(x.load_bps, rt[b]);
            let p = format!("pcn.bottleneck.{}.", names[b]);
            m.insert(p.clone() + "rt_bps", json!(rt[b]));
            m.insert(
                p.clone() + "threshold_flows",
                num(if x.load_flows > 0 {
                    rt[b] / (x.load_bps / x.load_flows as f64)
                } else {
                    f64::NAN
                }),
            );
            put(m, &p, &x, b_opt[b], expected.as_ref().map(|e| e.1[b]));
        }
        let mut all = Term::default();
        let mut first = f64::NAN;
        let mut last = f64::NAN;
        let mut rounds = 0usize;
        for (i, a) in run.ieas.iter().enumerate() {
            let x = &terms[i];
            all.load_flows += x.load_flows;
            all.load_bps += x.load_bps;
            all.terminated_flows += x.terminated_flows;
            all.terminated_bps += x.terminated_bps;
            let optimal = a.crosses.iter().map(|&b| b_opt[b]).fold(0.0, f64::max);
            let (mut f, mut l, mut r) = (f64::NAN, f64::NAN, 0usize);
            if let Some(ing) = PcnIngress::of(w, a.agent) {
                for ev in ing.terminations().iter().filter(|e| e.terminated > 0) {
                    let at = to_secs(ev.at);
                    // f64::min and max ignore a NaN operand.
                    f = f.min(at);
                    l = l.max(at);
                    r += 1;
                }
            }
            first = first.min(f);
            last = last.max(l);
            rounds += r;
            if spec.per_iea {
                let p = format!("pcn.iea.{}.", a.name);
                put(m, &p, x, optimal, expected.as_ref().map(|e| e.0[i]));
                m.insert(p.clone() + "first_termination_s", num(f));
                m.insert(p.clone() + "last_termination_s", num(l));
                m.insert(p + "termination_rounds", json!(r));
            }
        }
        m.insert("pcn.t_fail_s".into(), json!(to_secs(t.t_fail)));
        m.insert("pcn.load_flows".into(), json!(all.load_flows));
        m.insert("pcn.load_bps".into(), num(all.load_bps));
        m.insert("pcn.terminated_flows".into(), json!(all.terminated_flows));
        m.insert(
            "pcn.actual".into(),
            num(if all.load_bps > 0.0 {
                all.terminated_bps / all.load_bps
            } else {
                f64::NAN
            }),
        );
        m.insert("pcn.first_termination_s".into(), num(first));
        m.insert("pcn.last_termination_s".into(), num(last));
        m.insert("pcn.termination_rounds".into(), json!(rounds));
    }
    if spec.per_iea {
        for (name, kv) in rows {
            for (k, v) in kv {
                m.insert(format!("pcn.iea.{name}.{k}"), v);
            }
        }
    } else {
        // Totals only: leave out the aggregates' own agent keys and, on a PCN topology,
        // the access links.
        let prefixes: Vec<String> = run
            .ieas
            .iter()
            .map(|a| format!("agent.{}.", a.name))
            .collect();
        let access: Vec<String> = if sc.topology.kind.starts_with("pcn_") {
            w.net
                .links
                .iter()
                .filter(|l| !names.contains(&l.name))
                .map(|l| format!("link.{}.", l.name))
                .collect()
        } else {
            Vec::new()
        };
        m.retain(|k, _| {
            !(k.starts_with("agent.") && prefixes.iter().any(|p| k.starts_with(p.as_str()))
                || k.starts_with("link.") && access.iter().any(|p| k.starts_with(p.as_str())))
        });
    }
    short_long_ratio(w, run, m, warm);
}

/// The ratio of the mean short-haul to the mean long-haul aggregate throughput (short:
/// crossing one bottleneck, long: more than one), per sample, as the series
/// `pcn.short_long_ratio`, and its post-warm-up mean in the summary.
pub(super) fn short_long_ratio(w: &mut World, run: &PcnRun, m: &mut Map<String, Value>, warm: f64) {
    if run.iea_throughput.is_empty() {
        return;
    }
    let series: Vec<Series> = run
        .iea_throughput
        .iter()
        .map(|&id| w.sampler_series(id).clone())
        .collect();
    let short: Vec<usize> = (0..run.ieas.len())
        .filter(|&i| run.ieas[i].crosses.len() == 1)
        .collect();
    let long: Vec<usize> = (0..run.ieas.len())
        .filter(|&i| run.ieas[i].crosses.len() > 1)
        .collect();
    if short.is_empty() || long.is_empty() {
        return;
    }
    let id = w.rec.id("pcn.short_long_ratio", "fraction");
    let n = series.iter().map(|s| s.v.len()).min().unwrap_or(0);
    let mean = |set: &[usize], k: usize| {
        set.iter().map(|&i| series[i].v[k]).sum::<f64>() / set.len() as f64
    };
    let (mut s_sum, mut l_sum) = (0.0, 0.0);
    for k in 0..n {
        let (s, l) = (mean(&short, k), mean(&long, k));
        let t = series[0].t[k];
        w.rec.push(
            id,
            crate::time::secs(t),
            if l > 0.0 { s / l } else { f64::NAN },
        );
        if t > warm {
            s_sum += s;
            l_sum += l;
        }
    }
    m.insert(
        "pcn.short_long_ratio".into(),
        num(if l_sum > 0.0 { s_sum / l_sum } else { f64::NAN }),
    );
}

// ---------------------------------------------------------------------------------------
// The family
