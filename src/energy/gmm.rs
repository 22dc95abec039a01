//! Gaussian mixture colour model as in GrabCut: full-covariance components found by
//! Orchard–Bouman splitting, refined by a few hard-assignment EM steps. Deterministic
//! (no random initialisation), so the same seeds always give the same model.

/// Variance added to every covariance diagonal (in 8-bit colour units²): keeps flat
/// regions (JPEG-flat sky, saturated highlights) from giving singular components.
const COVARIANCE_FLOOR: f64 = 2.0;

/// Hard-assignment refinement steps after the initial split.
const REFINE_STEPS: usize = 2;

/// One Gaussian component, kept with what evaluating it needs.
#[derive(Clone, Debug, PartialEq)]
struct Component {
    /// ln(weight) − ½ ln det Σ − 3/2 ln 2π: the constant part of ln(πₖ N(x)).
    log_norm: f64,
    mean: [f64; 3],
    /// Upper triangle of Σ⁻¹: xx, xy, xz, yy, yz, zz.
    inverse: [f64; 6],
}

/// A Gaussian mixture over RGB (0–255 per channel).
#[derive(Clone, Debug, PartialEq)]
pub struct Gmm {
    components: Vec<Component>,
}

/// Running sums of a set of colours: count, Σx, Σxxᵀ.
#[derive(Clone, Copy, Debug, Default)]
struct Moments {
    n: f64,
    sum: [f64; 3],
    /// xx, xy, xz, yy, yz, zz.
    outer: [f64; 6],
}

impl Moments {
    fn add(&mut self, c: [u8; 3]) {
        let x = [c[0] as f64, c[1] as f64, c[2] as f64];
        self.n += 1.0;
        for (s, v) in self.sum.iter_mut().zip(x) {
            *s += v;
        }
        let o = &mut self.outer;
        o[0] += x[0] * x[0];
        o[1] += x[0] * x[1];
        o[2] += x[0] * x[2];
        o[3] += x[1] * x[1];
        o[4] += x[1] * x[2];
        o[5] += x[2] * x[2];
    }

    fn mean(&self) -> [f64; 3] {
        self.sum.map(|s| s / self.n)
    }

    /// Covariance (upper triangle) with the floor added to the diagonal.
    fn covariance(&self) -> [f64; 6] {
        let m = self.mean();
        let n = self.n;
        let o = &self.outer;
        [
            o[0] / n - m[0] * m[0] + COVARIANCE_FLOOR,
            o[1] / n - m[0] * m[1],
            o[2] / n - m[0] * m[2],
            o[3] / n - m[1] * m[1] + COVARIANCE_FLOOR,
            o[4] / n - m[1] * m[2],
            o[5] / n - m[2] * m[2] + COVARIANCE_FLOOR,
        ]
    }
}

fn determinant(c: &[f64; 6]) -> f64 {
    c[0] * (c[3] * c[5] - c[4] * c[4]) - c[1] * (c[1] * c[5] - c[4] * c[2])
        + c[2] * (c[1] * c[4] - c[3] * c[2])
}

fn inverse(c: &[f64; 6], det: f64) -> [f64; 6] {
    [
        (c[3] * c[5] - c[4] * c[4]) / det,
        (c[2] * c[4] - c[1] * c[5]) / det,
        (c[1] * c[4] - c[2] * c[3]) / det,
        (c[0] * c[5] - c[2] * c[2]) / det,
        (c[1] * c[2] - c[0] * c[4]) / det,
        (c[0] * c[3] - c[1] * c[1]) / det,
    ]
}

/// Principal eigenvector of a symmetric 3×3 matrix (upper triangle), by power iteration.
fn principal_axis(c: &[f64; 6]) -> [f64; 3] {
    let mul = |v: [f64; 3]| {
        [
            c[0] * v[0] + c[1] * v[1] + c[2] * v[2],
            c[1] * v[0] + c[3] * v[1] + c[4] * v[2],
            c[2] * v[0] + c[4] * v[1] + c[5] * v[2],
        ]
    };
    let mut v = [0.577, 0.578, 0.576];
    for _ in 0..32 {
        let w = mul(v);
        let norm = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
        if norm == 0.0 {
            break;
        }
        v = w.map(|x| x / norm);
    }
    v
}

impl Component {
    fn from_moments(m: &Moments, total: f64) -> Self {
        let cov = m.covariance();
        let det = determinant(&cov).max(f64::MIN_POSITIVE);
        let weight = m.n / total;
        Self {
            log_norm: weight.ln() - 0.5 * det.ln() - 1.5 * (2.0 * std::f64::consts::PI).ln(),
            mean: m.mean(),
            inverse: inverse(&cov, det),
        }
    }

    /// ln(πₖ N(x | μₖ, Σₖ)).
    fn log_density(&self, x: [f64; 3]) -> f64 {
        let d = [
            x[0] - self.mean[0],
            x[1] - self.mean[1],
            x[2] - self.mean[2],
        ];
        let i = &self.inverse;
        let q = d[0] * (i[0] * d[0] + 2.0 * (i[1] * d[1] + i[2] * d[2]))
            + d[1] * (i[3] * d[1] + 2.0 * i[4] * d[2])
            + d[2] * i[5] * d[2];
        self.log_norm - 0.5 * q
    }
}

impl Gmm {
    /// Fits up to `components` components to `samples` (at least one sample). Fewer
    /// components result when the samples cannot be split further.
    pub fn fit(samples: &[[u8; 3]], components: usize) -> Self {
        let mut assignment = vec![0u8; samples.len()];
        let count = split_clusters(samples, &mut assignment, components.clamp(1, 255));
        let mut gmm = Self::from_assignment(samples, &assignment, count);
        for _ in 0..REFINE_STEPS {
            for (a, &c) in assignment.iter_mut().zip(samples) {
                *a = gmm.best_component(c) as u8;
            }
            gmm = Self::from_assignment(samples, &assignment, gmm.components.len());
        }
        gmm
    }

    fn from_assignment(samples: &[[u8; 3]], assignment: &[u8], count: usize) -> Self {
        let mut moments = vec![Moments::default(); count];
        for (&a, &c) in assignment.iter().zip(samples) {
            moments[a as usize].add(c);
        }
        let total = samples.len() as f64;
        let components = moments
            .iter()
            .filter(|m| m.n > 0.0)
            .map(|m| Component::from_moments(m, total))
            .collect();
        Self { components }
    }

    fn best_component(&self, c: [u8; 3]) -> usize {
        let x = [c[0] as f64, c[1] as f64, c[2] as f64];
        let mut best = (0, f64::NEG_INFINITY);
        for (k, comp) in self.components.iter().enumerate() {
            let l = comp.log_density(x);
            if l > best.1 {
                best = (k, l);
            }
        }
        best.0
    }

    /// Number of components.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.components.len()
    }

    /// −ln p(x): the mixture's negative log-density at colour `x`.
    pub fn cost(&self, x: [f64; 3]) -> f64 {
        let logs = self.components.iter().map(|c| c.log_density(x));
        let max = logs.clone().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = logs.map(|l| (l - max).exp()).sum();
        -(max + sum.ln())
    }
}

/// Orchard–Bouman: start with one cluster, repeatedly split the cluster with the
/// largest variance along its principal axis at its mean. Returns the cluster count.
fn split_clusters(samples: &[[u8; 3]], assignment: &mut [u8], wanted: usize) -> usize {
    let mut count = 1;
    while count < wanted {
        let mut moments = vec![Moments::default(); count];
        for (&a, &c) in assignment.iter().zip(samples) {
            moments[a as usize].add(c);
        }
        let spread = |m: &Moments| {
            if m.n < 2.0 {
                return (0.0, [0.0; 3]);
            }
            let cov = m.covariance();
            let axis = principal_axis(&cov);
            let var = axis[0] * (cov[0] * axis[0] + cov[1] * axis[1] + cov[2] * axis[2])
                + axis[1] * (cov[1] * axis[0] + cov[3] * axis[1] + cov[4] * axis[2])
                + axis[2] * (cov[2] * axis[0] + cov[4] * axis[1] + cov[5] * axis[2]);
            (var - COVARIANCE_FLOOR, axis)
        };
        let (target, (var, axis)) = moments
            .iter()
            .map(spread)
            .enumerate()
            .max_by(|a, b| a.1.0.total_cmp(&b.1.0))
            .expect("at least one cluster");
        if var <= 1e-6 {
            break;
        }
        let mean = moments[target].mean();
        let threshold = axis[0] * mean[0] + axis[1] * mean[1] + axis[2] * mean[2];
        let mut moved = 0usize;
        for (a, &c) in assignment.iter_mut().zip(samples) {
            let proj = axis[0] * c[0] as f64 + axis[1] * c[1] as f64 + axis[2] * c[2] as f64;
            if *a as usize == target && proj > threshold {
                *a = count as u8;
                moved += 1;
            }
        }
        if moved == 0 || moved as f64 == moments[target].n {
            break;
        }
        count += 1;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_clusters_are_separated() {
        let mut samples = vec![[10u8, 20, 30]; 50];
        samples.extend(vec![[200u8, 180, 160]; 50]);
        samples.push([12, 21, 29]);
        let gmm = Gmm::fit(&samples, 2);
        assert_eq!(gmm.len(), 2);
        // Cheap near either cluster, expensive in between.
        let near = gmm.cost([11.0, 20.0, 30.0]);
        let far = gmm.cost([100.0, 100.0, 100.0]);
        assert!(near + 10.0 < far, "near {near}, far {far}");
    }

    #[test]
    fn flat_colour_gives_one_finite_component() {
        let samples = vec![[7u8, 7, 7]; 20];
        let gmm = Gmm::fit(&samples, 5);
        assert_eq!(gmm.len(), 1);
        assert!(gmm.cost([7.0, 7.0, 7.0]).is_finite());
    }

    #[test]
    fn density_integrates_to_about_one() {
        // A Gaussian with a wide covariance; sum exp(-cost) over a fine grid ≈ 1.
        let samples: Vec<[u8; 3]> = (0..1000u32)
            .map(|i| {
                [
                    (100 + i % 21) as u8,
                    (100 + (i / 21) % 21) as u8,
                    (100 + i % 17) as u8,
                ]
            })
            .collect();
        let gmm = Gmm::fit(&samples, 1);
        let mut total = 0.0;
        for r in 60..160 {
            for g in 60..160 {
                for b in 60..160 {
                    total += (-gmm.cost([r as f64, g as f64, b as f64])).exp();
                }
            }
        }
        assert!((total - 1.0).abs() < 0.02, "total {total}");
    }
}
