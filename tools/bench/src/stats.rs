//! Order statistics and the Mann-Whitney U test used by the benchmarks and
//! the A/B runner. No distribution is assumed anywhere: scheduler latency
//! and run-time samples are skewed and heavy-tailed.

/// Percentile `p` (0..=100) of sorted data, linear interpolation between
/// closest ranks (Hyndman-Fan type 7: what numpy and R use by default).
/// NaN for empty input.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let h = (sorted.len() - 1) as f64 * (p / 100.0).clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Sorts a copy (NaNs are dropped) and returns it.
pub fn sorted(data: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = data.iter().copied().filter(|x| !x.is_nan()).collect();
    v.sort_by(|a, b| a.total_cmp(b));
    v
}

pub fn percentile(data: &[f64], p: f64) -> f64 {
    percentile_sorted(&sorted(data), p)
}

pub fn median(data: &[f64]) -> f64 {
    percentile(data, 50.0)
}

/// Interquartile range, q75 - q25 (type 7 quartiles).
pub fn iqr(data: &[f64]) -> f64 {
    let s = sorted(data);
    percentile_sorted(&s, 75.0) - percentile_sorted(&s, 25.0)
}

pub fn mean(data: &[f64]) -> f64 {
    if data.is_empty() {
        return f64::NAN;
    }
    data.iter().sum::<f64>() / data.len() as f64
}

/// Latency samples in nanoseconds, summarised in microseconds.
pub struct LatencySummary {
    pub n: usize,
    pub mean_us: f64,
    pub median_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl LatencySummary {
    /// Sorts `ns` in place.
    pub fn from_ns(ns: &mut [u64]) -> Self {
        ns.sort_unstable();
        let us: Vec<f64> = ns.iter().map(|&x| x as f64 / 1000.0).collect();
        LatencySummary {
            n: us.len(),
            mean_us: mean(&us),
            median_us: percentile_sorted(&us, 50.0),
            p90_us: percentile_sorted(&us, 90.0),
            p99_us: percentile_sorted(&us, 99.0),
            p999_us: percentile_sorted(&us, 99.9),
            max_us: us.last().copied().unwrap_or(f64::NAN),
        }
    }
}

/// Result of a two-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U of the first sample: the number of (a, b) pairs with a > b, ties
    /// counting one half.
    pub u1: f64,
    /// Standardised statistic (continuity-corrected, tie-corrected).
    pub z: f64,
    /// Two-sided p from the normal approximation.
    pub p: f64,
}

/// Two-sided Mann-Whitney U test, normal approximation with tie correction
/// and a 0.5 continuity correction (as scipy.stats.mannwhitneyu with
/// method="asymptotic"). None when either sample is empty. The
/// approximation is rough below ~8 per side; with 3 per side it can never
/// reach p < 0.05 (the exact test cannot either: its minimum is 0.1).
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (a.len(), b.len());
    if n1 == 0 || n2 == 0 {
        return None;
    }
    // Pool, sort, give tied values the mean of their ranks.
    let mut all: Vec<(f64, bool)> = a.iter().map(|&x| (x, true)).collect();
    all.extend(b.iter().map(|&x| (x, false)));
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = all.len();
    let mut r1 = 0.0;
    let mut tie_term = 0.0; // sum of t^3 - t over tie groups
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let rank = (i + j) as f64 / 2.0 + 1.0; // ranks are 1-based
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        r1 += all[i..=j].iter().filter(|e| e.1).count() as f64 * rank;
        i = j + 1;
    }
    let (n1f, n2f, nf) = (n1 as f64, n2 as f64, n as f64);
    let u1 = r1 - n1f * (n1f + 1.0) / 2.0;
    let mu = n1f * n2f / 2.0;
    let var = n1f * n2f / 12.0 * ((nf + 1.0) - tie_term / (nf * (nf - 1.0)));
    if var <= 0.0 {
        // Every value equal: no evidence of any difference.
        return Some(MannWhitney { u1, z: 0.0, p: 1.0 });
    }
    let z = ((u1 - mu).abs() - 0.5).max(0.0) / var.sqrt();
    let p = (2.0 * normal_sf(z)).min(1.0);
    Some(MannWhitney { u1, z, p })
}

/// Upper tail of the standard normal, 1 - Phi(z).
pub fn normal_sf(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// Complementary error function, Chebyshev fit from Numerical Recipes
/// (erfcc): fractional error below 1.2e-7 everywhere, plenty for p-values.
pub fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 {
        r
    } else {
        2.0 - r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn percentiles_type7() {
        let d = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
        // sorted: 1 1 2 3 4 5 6 9
        assert_eq!(median(&d), 3.5);
        assert_eq!(percentile(&d, 0.0), 1.0);
        assert_eq!(percentile(&d, 100.0), 9.0);
        // q25: h = 7 * 0.25 = 1.75 -> 1 + 0.75 * (2 - 1) = 1.75
        // q75: h = 5.25 -> 5 + 0.25 * (6 - 5) = 5.25
        assert_eq!(percentile(&d, 25.0), 1.75);
        assert_eq!(percentile(&d, 75.0), 5.25);
        assert_eq!(iqr(&d), 3.5);
        assert_eq!(median(&[7.0]), 7.0);
        assert_eq!(iqr(&[7.0]), 0.0);
        assert!(median(&[]).is_nan());
        assert_eq!(median(&[1.0, f64::NAN, 3.0]), 2.0);
    }

    #[test]
    fn latency_summary() {
        let mut ns: Vec<u64> = (1..=1000).map(|i| i * 1000).collect();
        let s = LatencySummary::from_ns(&mut ns);
        assert_eq!(s.n, 1000);
        assert_eq!(s.max_us, 1000.0);
        assert!(close(s.median_us, 500.5, 1e-9));
        assert!(close(s.p99_us, 990.01, 1e-9));
        assert!(close(s.mean_us, 500.5, 1e-9));
    }

    #[test]
    fn erfc_known_values() {
        assert!(close(erfc(0.0), 1.0, 1e-7));
        assert!(close(erfc(1.0), 0.157_299_207, 1e-7));
        assert!(close(erfc(-1.0), 1.842_700_793, 1e-7));
        // Phi(1.959964) = 0.975
        assert!(close(normal_sf(1.959_964), 0.025, 1e-7));
    }

    #[test]
    fn mann_whitney_separated_samples() {
        // Textbook case, computed by hand: A = 1..5, B = 6..10, no ties.
        // R1 = 15, U1 = 15 - 5*6/2 = 0, mu = 12.5,
        // sigma = sqrt(5*5*11/12) = 4.787136,
        // z = (12.5 - 0.5) / 4.787136 = 2.506718,
        // p = 2 * (1 - Phi(2.506718)) = 0.012186.
        let a = [1.0, 2.0, 3.0, 4.0, 5.0];
        let b = [6.0, 7.0, 8.0, 9.0, 10.0];
        let r = mann_whitney(&a, &b).unwrap();
        assert_eq!(r.u1, 0.0);
        assert!(close(r.z, 2.506_718, 1e-5), "z {}", r.z);
        assert!(close(r.p, 0.012_186, 1e-5), "p {}", r.p);
        // Symmetric: swapping the samples gives U2 = n1*n2 - U1, same p.
        let s = mann_whitney(&b, &a).unwrap();
        assert_eq!(s.u1, 25.0);
        assert!(close(s.p, r.p, 1e-12));
    }

    #[test]
    fn mann_whitney_with_ties() {
        // A = {1,2,2,3}, B = {2,3,4,5}. Pooled ranks: 1 -> 1; the three 2s
        // share ranks 2,3,4 -> 3; the two 3s share 5,6 -> 5.5; 4 -> 7; 5 -> 8.
        // R1 = 1 + 3 + 3 + 5.5 = 12.5, U1 = 12.5 - 10 = 2.5, mu = 8.
        // Ties: t = 3 and t = 2 -> sum(t^3 - t) = 24 + 6 = 30.
        // var = 16/12 * (9 - 30/56) = 11.285714, sigma = 3.359422.
        // z = (5.5 - 0.5) / 3.359422 = 1.488351, p = 2 * (1 - Phi(z)) = 0.136658.
        let a = [1.0, 2.0, 2.0, 3.0];
        let b = [2.0, 3.0, 4.0, 5.0];
        let r = mann_whitney(&a, &b).unwrap();
        assert_eq!(r.u1, 2.5);
        assert!(close(r.z, 1.488_351, 1e-5), "z {}", r.z);
        assert!(close(r.p, 0.136_658, 1e-5), "p {}", r.p);
    }

    #[test]
    fn mann_whitney_degenerate() {
        assert!(mann_whitney(&[], &[1.0]).is_none());
        let r = mann_whitney(&[2.0, 2.0], &[2.0, 2.0]).unwrap();
        assert_eq!(r.p, 1.0);
        // Identical distributions: U at its mean, p = 1.
        let r = mann_whitney(&[1.0, 4.0], &[2.0, 3.0]).unwrap();
        assert_eq!(r.u1, 2.0);
        assert_eq!(r.p, 1.0);
    }
}
