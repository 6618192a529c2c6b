//! Expected and optimal flow termination over a chain of bottlenecks (the beat-down
//! calculator).
//!
//! Under uniform termination marking, a bottleneck marks a fraction of *every* aggregate's
//! traffic still unmarked when it arrives; an aggregate crossing several bottlenecks is
//! "beaten down" by each in turn, so long aggregates lose more than the optimum.

/// Per-aggregate and per-bottleneck fractions of a termination calculation.
#[derive(Clone, Debug, PartialEq)]
pub struct TerminationFractions {
    /// Per ingress–egress aggregate: fraction of its load terminated.
    pub iea: Vec<f64>,
    /// Per bottleneck: fraction of its load (all aggregates crossing it) terminated.
    pub bottleneck: Vec<f64>,
    /// Per bottleneck: fraction of the still-unmarked traffic arriving at it that it
    /// marks (expected termination); the optimal fraction (optimal termination).
    pub marking: Vec<f64>,
}

fn check(loads: &[f64], paths: &[Vec<usize>], rt: &[f64]) {
    assert_eq!(loads.len(), paths.len(), "one path per aggregate");
    for p in paths {
        for w in p.windows(2) {
            assert!(w[0] < w[1], "paths must list bottlenecks in chain order");
        }
        for &b in p {
            assert!(b < rt.len(), "bottleneck {b} out of range");
        }
    }
}

fn per_bottleneck_termination(
    loads: &[f64],
    paths: &[Vec<usize>],
    nb: usize,
    iea: &[f64],
) -> Vec<f64> {
    (0..nb)
        .map(|b| {
            let (mut load, mut term) = (0.0, 0.0);
            for (i, p) in paths.iter().enumerate() {
                if p.contains(&b) {
                    load += loads[i];
                    term += loads[i] * iea[i];
                }
            }
            if load > 0.0 {
                term / load
            } else {
                0.0
            }
        })
        .collect()
}

/// Expected termination under uniform marking (beat-down).
///
/// `loads[i]` is the load (any rate unit) of aggregate `i` at failure, `paths[i]` the
/// bottlenecks it crosses, as indices into `rt` listed in the order the chain is walked
/// (increasing indices; a chain in path order, or any topological order of a tree), and
/// `rt[b]` the configured-termination-rate of bottleneck `b` in the same unit.
///
/// Walking the chain, a bottleneck with unmarked load `L` (the sum over the aggregates
/// crossing it of their still-unmarked traffic) marks a fraction `max(0, 1 − Rt/L)` of
/// every aggregate's still-unmarked traffic; an aggregate's expected termination is the
/// fraction of its load marked anywhere, and a bottleneck's is the load-weighted mean of
/// its aggregates' fractions.
pub fn expected_termination(
    loads: &[f64],
    paths: &[Vec<usize>],
    rt: &[f64],
) -> TerminationFractions {
    check(loads, paths, rt);
    let nb = rt.len();
    let mut unmarked: Vec<f64> = loads.to_vec();
    let mut marking = vec![0.0; nb];
    for (b, m) in marking.iter_mut().enumerate() {
        let l: f64 = paths
            .iter()
            .zip(&unmarked)
            .filter(|(p, _)| p.contains(&b))
            .map(|(_, u)| u)
            .sum();
        let f = if l > 0.0 {
            (1.0 - rt[b] / l).max(0.0)
        } else {
            0.0
        };
        *m = f;
        for (p, u) in paths.iter().zip(unmarked.iter_mut()) {
            if p.contains(&b) {
                *u *= 1.0 - f;
            }
        }
    }
    let iea: Vec<f64> = loads
        .iter()
        .zip(&unmarked)
        .map(|(&l, &u)| if l > 0.0 { 1.0 - u / l } else { 0.0 })
        .collect();
    let bottleneck = per_bottleneck_termination(loads, paths, nb, &iea);
    TerminationFractions {
        iea,
        bottleneck,
        marking,
    }
}

/// Optimal termination: a bottleneck with load `L` needs `max(0, 1 − Rt/L)` of it
/// terminated; an aggregate needs the largest such fraction over the bottlenecks on its
/// path. Arguments as in [`expected_termination`]. `bottleneck` holds `1 − Rt/L` per
/// bottleneck (the study's definition), and `marking` the same values.
pub fn optimal_termination(
    loads: &[f64],
    paths: &[Vec<usize>],
    rt: &[f64],
) -> TerminationFractions {
    check(loads, paths, rt);
    let nb = rt.len();
    let need: Vec<f64> = (0..nb)
        .map(|b| {
            let l: f64 = paths
                .iter()
                .zip(loads)
                .filter(|(p, _)| p.contains(&b))
                .map(|(_, l)| l)
                .sum();
            if l > 0.0 {
                (1.0 - rt[b] / l).max(0.0)
            } else {
                0.0
            }
        })
        .collect();
    let iea = paths
        .iter()
        .map(|p| p.iter().map(|&b| need[b]).fold(0.0, f64::max))
        .collect();
    TerminationFractions {
        iea,
        bottleneck: need.clone(),
        marking: need,
    }
}

/// The parking-lot paths: aggregate 0 is the long one crossing all `n` bottlenecks;
/// aggregate `i` (1..=n) is the short one crossing bottleneck `i − 1` only.
pub fn parking_lot_paths(n: usize) -> Vec<Vec<usize>> {
    let mut p = vec![(0..n).collect::<Vec<_>>()];
    p.extend((0..n).map(|b| vec![b]));
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plt2_example_of_the_study() {
        // Link = 1; each bottleneck loaded 3/4, long:short = 2:1; Rt = 1/2.
        let loads = [0.5, 0.25, 0.25];
        let paths = parking_lot_paths(2);
        let e = expected_termination(&loads, &paths, &[0.5, 0.5]);
        let want_iea = [3.0 / 7.0, 1.0 / 3.0, 1.0 / 7.0];
        for (g, w) in e.iea.iter().zip(want_iea) {
            assert!((g - w).abs() < 1e-12, "{g} vs {w}");
        }
        assert!((e.bottleneck[0] - 25.0 / 63.0).abs() < 1e-12);
        assert!((e.bottleneck[1] - 1.0 / 3.0).abs() < 1e-12);
        assert!((e.marking[0] - 1.0 / 3.0).abs() < 1e-12);
        assert!((e.marking[1] - 1.0 / 7.0).abs() < 1e-12);
        let o = optimal_termination(&loads, &paths, &[0.5, 0.5]);
        for g in o.iea.iter().chain(&o.bottleneck) {
            assert!((g - 1.0 / 3.0).abs() < 1e-12);
        }
    }

    #[test]
    fn single_bottleneck_equals_optimum_and_underload_marks_nothing() {
        let e = expected_termination(&[0.75], &[vec![0]], &[0.5]);
        assert!((e.iea[0] - 1.0 / 3.0).abs() < 1e-15);
        let e = expected_termination(&[0.3, 0.1], &[vec![0, 1], vec![1]], &[0.5, 0.5]);
        assert_eq!(e.iea, vec![0.0, 0.0]);
        assert_eq!(e.bottleneck, vec![0.0, 0.0]);
    }
}
