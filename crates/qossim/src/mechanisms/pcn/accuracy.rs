//! The study's accuracy figures: over-admission from sampled PCN throughput, and
//! over-termination.

use crate::metrics::{Series, Welford};

/// Accuracy of admission control on one bottleneck.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdmissionAccuracy {
    /// Mean of the throughput samples after warm-up, bit/s.
    pub mean_bps: f64,
    /// over-admission % = (mean − Ra) / Ra × 100.
    pub over_admission_pct: f64,
    /// Standard deviation of the samples (n − 1 denominator) divided by Ra.
    pub sd_over_ra: f64,
    /// Samples used.
    pub samples: usize,
}

/// over-admission % = (mean − Ra) / Ra × 100.
pub fn over_admission_percent(mean_bps: f64, ra_bps: f64) -> f64 {
    (mean_bps - ra_bps) / ra_bps * 100.0
}

/// Admission accuracy from a series of PCN throughput samples (bit/s, one per 50 ms),
/// using the samples taken strictly after `warmup_s` seconds.
pub fn admission_accuracy(series: &Series, warmup_s: f64, ra_bps: f64) -> AdmissionAccuracy {
    let mut w = Welford::default();
    for (&t, &v) in series.t.iter().zip(&series.v) {
        if t > warmup_s {
            w.add(v);
        }
    }
    let n = w.count() as usize;
    let mean = if n > 0 { w.mean() } else { f64::NAN };
    AdmissionAccuracy {
        mean_bps: mean,
        over_admission_pct: over_admission_percent(mean, ra_bps),
        sd_over_ra: if n > 1 { w.sd() / ra_bps } else { f64::NAN },
        samples: n,
    }
}

/// over-termination % of the single-bottleneck tables: (actual − optimal) / optimal × 100.
pub fn over_termination_percent(actual: f64, optimal: f64) -> f64 {
    (actual - optimal) / optimal * 100.0
}

/// The study's optimal termination of one bottleneck: `max(0, 1 − Rt/load)`.
pub fn optimal_fraction(load: f64, rt: f64) -> f64 {
    if load > 0.0 {
        (1.0 - rt / load).max(0.0)
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accuracy_of_a_known_series() {
        let s = Series {
            name: "x".into(),
            t: vec![0.05, 0.10, 0.15, 0.20, 0.25],
            v: vec![0.0, 9.0, 11.0, 12.0, 8.0],
            unit: "b/s",
        };
        let a = admission_accuracy(&s, 0.05, 10.0);
        assert_eq!(a.samples, 4);
        assert_eq!(a.mean_bps, 10.0);
        assert_eq!(a.over_admission_pct, 0.0);
        // sd of 9, 11, 12, 8 = sqrt(10/3).
        assert!((a.sd_over_ra - (10.0f64 / 3.0).sqrt() / 10.0).abs() < 1e-12);
        assert!((over_termination_percent(0.36, 0.3) - 20.0).abs() < 1e-9);
        assert_eq!(optimal_fraction(0.75, 0.5), 1.0 - 0.5 / 0.75);
        assert_eq!(optimal_fraction(0.25, 0.5), 0.0);
    }
}
