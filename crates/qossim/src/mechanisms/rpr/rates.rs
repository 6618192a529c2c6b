//! The station's rate counters: bytes added and forwarded, aged every aging interval and
//! low-pass filtered.
//!
//! Each aging interval, with Δ the bytes counted during it,
//! `x ← x·(ageCoef−1)/ageCoef + Δ` (for `addRate` and `fwRate`), then
//! `lp ← ((lpCoef−1)·lp + x/ageCoef)/lpCoef` (for `lpAddRate` and `lpFwRate`). Under a
//! steady Δ per interval, `x → ageCoef·Δ` and `lp → Δ`: the low-pass rates are in bytes
//! per aging interval.

/// `addRate`, `fwRate` and their low-pass filtered values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateCounters {
    /// The aging coefficient (ageCoef).
    pub age_coef: f64,
    /// The low-pass coefficient (lpCoef).
    pub lp_coef: f64,
    /// Aged count of bytes added by the station (addRate).
    pub add_rate: f64,
    /// Aged count of bytes forwarded (transit) by the station (fwRate).
    pub fw_rate: f64,
    /// Low-pass filtered add rate, bytes per aging interval (lpAddRate).
    pub lp_add_rate: f64,
    /// Low-pass filtered forward rate, bytes per aging interval (lpFwRate).
    pub lp_fw_rate: f64,
}

impl RateCounters {
    /// Counters at zero with the given coefficients (both at least 1).
    pub fn new(age_coef: f64, lp_coef: f64) -> Self {
        assert!(
            age_coef >= 1.0 && lp_coef >= 1.0,
            "coefficients must be >= 1"
        );
        RateCounters {
            age_coef,
            lp_coef,
            add_rate: 0.0,
            fw_rate: 0.0,
            lp_add_rate: 0.0,
            lp_fw_rate: 0.0,
        }
    }

    /// Ages the counters at the end of an interval in which `added` and `forwarded`
    /// bytes were counted.
    pub fn age(&mut self, added: u64, forwarded: u64) {
        let a = self.age_coef;
        let c = self.lp_coef;
        self.add_rate = self.add_rate * (a - 1.0) / a + added as f64;
        self.fw_rate = self.fw_rate * (a - 1.0) / a + forwarded as f64;
        self.lp_add_rate = ((c - 1.0) * self.lp_add_rate + self.add_rate / a) / c;
        self.lp_fw_rate = ((c - 1.0) * self.lp_fw_rate + self.fw_rate / a) / c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recurrences, written out independently with exact rationals (numerator,
    /// denominator as i128), for a scripted byte sequence.
    #[test]
    fn aging_and_low_pass_follow_the_recurrences_exactly() {
        // The exact values are compared with the f64 ones to a relative 1e-12 (a few
        // roundings of 2^-53 each per step).
        let (a, c) = (4i128, 64i128);
        let seq: [u64; 8] = [1500, 0, 3000, 64, 9000, 9000, 0, 12345];
        let mut rc = RateCounters::new(a as f64, c as f64);
        // x = xn / xd, lp = ln / ld, tracked exactly.
        let (mut xn, mut xd) = (0i128, 1i128);
        let (mut ln, mut ld) = (0i128, 1i128);
        for &d in &seq {
            rc.age(d, 2 * d);
            // x ← x·(a−1)/a + Δ
            xn = xn * (a - 1) + d as i128 * xd * a;
            xd *= a;
            // lp ← ((c−1)·lp + x/a)/c
            ln = (c - 1) * ln * xd * a + xn * ld;
            ld = ld * xd * a * c;
            let g = gcd(ln, ld);
            (ln, ld) = (ln / g, ld / g);
            let g = gcd(xn, xd);
            (xn, xd) = (xn / g, xd / g);
            let close = |got: f64, n: i128, d: i128| {
                let want = n as f64 / d as f64;
                (got - want).abs() <= 1e-12 * want.abs().max(1.0)
            };
            assert!(close(rc.add_rate, xn, xd), "{} vs {xn}/{xd}", rc.add_rate);
            assert!(
                close(rc.lp_add_rate, ln, ld),
                "{} vs {ln}/{ld}",
                rc.lp_add_rate
            );
            assert_eq!(rc.fw_rate, 2.0 * rc.add_rate);
            assert_eq!(rc.lp_fw_rate, 2.0 * rc.lp_add_rate);
        }
        // Hand-computed first steps: Δ = 1500 → addRate 1500, lp = (1500/4)/64.
        let mut h = RateCounters::new(4.0, 64.0);
        h.age(1500, 0);
        assert_eq!(h.add_rate, 1500.0);
        assert_eq!(h.lp_add_rate, 375.0 / 64.0);
        h.age(0, 0);
        assert_eq!(h.add_rate, 1125.0);
        assert_eq!(h.lp_add_rate, (63.0 * 375.0 / 64.0 + 1125.0 / 4.0) / 64.0);
    }

    fn gcd(a: i128, b: i128) -> i128 {
        if b == 0 {
            a.abs().max(1)
        } else {
            gcd(b, a % b)
        }
    }

    #[test]
    fn steady_input_converges_to_bytes_per_interval() {
        let mut rc = RateCounters::new(4.0, 64.0);
        for _ in 0..5000 {
            rc.age(7775, 100);
        }
        // x → ageCoef·Δ and lp → Δ; the error decays geometrically, (63/64)^5000 ≈ 0.
        assert!((rc.add_rate - 4.0 * 7775.0).abs() < 1e-6);
        assert!((rc.lp_add_rate - 7775.0).abs() < 1e-6);
        assert!((rc.lp_fw_rate - 100.0).abs() < 1e-6);
    }
}
