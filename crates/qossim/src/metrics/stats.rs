//! Summary statistics with confidence intervals.

/// Running mean and variance (Welford).
#[derive(Clone, Copy, Debug, Default)]
pub struct Welford {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Welford {
    /// Adds an observation.
    pub fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }
    /// Number of observations.
    pub fn count(&self) -> u64 {
        self.n
    }
    /// Sample mean (0 when empty).
    pub fn mean(&self) -> f64 {
        self.mean
    }
    /// Unbiased sample variance (0 with fewer than two observations).
    pub fn variance(&self) -> f64 {
        if self.n < 2 {
            0.0
        } else {
            self.m2 / (self.n - 1) as f64
        }
    }
    /// Sample standard deviation.
    pub fn sd(&self) -> f64 {
        self.variance().sqrt()
    }
}

/// Two-sided 97.5% quantile of Student's t with `df` degrees of freedom (for 95%
/// confidence intervals). Exact table values for df <= 30, then the Cornish-Fisher
/// expansion, whose error is below 1e-4 there.
pub fn t975(df: u64) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042,
    ];
    if df == 0 {
        return f64::INFINITY;
    }
    if df as usize <= TABLE.len() {
        return TABLE[df as usize - 1];
    }
    let z: f64 = 1.959_963_984_540_054;
    let v = df as f64;
    let z3 = z.powi(3);
    let z5 = z.powi(5);
    let z7 = z.powi(7);
    z + (z3 + z) / (4.0 * v)
        + (5.0 * z5 + 16.0 * z3 + 3.0 * z) / (96.0 * v * v)
        + (3.0 * z7 + 19.0 * z5 + 17.0 * z3 - 15.0 * z) / (384.0 * v * v * v)
}

/// A mean with its 95% confidence interval.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Estimate {
    /// Point estimate.
    pub mean: f64,
    /// Half-width of the 95% confidence interval (NaN when it cannot be estimated).
    pub half_width: f64,
    /// Number of independent observations (seeds or batches) behind it.
    pub n: u64,
}

impl Estimate {
    /// Lower end of the interval.
    pub fn low(&self) -> f64 {
        self.mean - self.half_width
    }
    /// Upper end of the interval.
    pub fn high(&self) -> f64 {
        self.mean + self.half_width
    }
    /// True if `x` lies in the interval.
    pub fn contains(&self, x: f64) -> bool {
        x >= self.low() && x <= self.high()
    }
}

/// Student-t interval over independent observations (e.g. one value per seed).
pub fn t_interval(xs: &[f64]) -> Estimate {
    let mut w = Welford::default();
    xs.iter().for_each(|&x| w.add(x));
    let n = w.count();
    let hw = if n >= 2 {
        t975(n - 1) * w.sd() / (n as f64).sqrt()
    } else {
        f64::NAN
    };
    Estimate {
        mean: w.mean(),
        half_width: hw,
        n,
    }
}

/// Batch-means interval for a correlated series from one run: the series is cut into
/// `batches` consecutive batches of equal length whose means are treated as independent.
pub fn batch_means(xs: &[f64], batches: usize) -> Estimate {
    let b = batches.max(2);
    if xs.len() < b {
        return t_interval(xs);
    }
    let per = xs.len() / b;
    let means: Vec<f64> = (0..b)
        .map(|i| xs[i * per..(i + 1) * per].iter().sum::<f64>() / per as f64)
        .collect();
    t_interval(&means)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_quantiles() {
        assert_eq!(t975(9), 2.262);
        assert!((t975(60) - 2.000).abs() < 1e-3);
        assert!((t975(120) - 1.980).abs() < 1e-3);
        assert!((t975(100_000) - 1.960).abs() < 1e-3);
    }

    #[test]
    fn interval_of_known_sample() {
        let e = t_interval(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!(e.mean, 3.0);
        // sd = sqrt(2.5), t(4) = 2.776
        assert!((e.half_width - 2.776 * 2.5f64.sqrt() / 5f64.sqrt()).abs() < 1e-12);
    }
}
