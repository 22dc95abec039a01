//! Grid problems for the solver tests: random capacities, perturbations that stand for
//! the next video frame, and image-like energies. Each draws its values in one fixed
//! order, so a seed always names the same instance.

use super::rng::{Rng, XorShift};
use livecut::grid::{Connectivity, Direction, GridProblem};

/// 8-connected when `eight`, else 4-connected.
pub fn connectivity(eight: bool) -> Connectivity {
    if eight {
        Connectivity::Eight
    } else {
        Connectivity::Four
    }
}

/// The neighbour of pixel `i` of a `w`×`h` grid in direction `dir`, if inside the grid.
pub fn neighbour(w: u32, h: u32, i: usize, dir: Direction) -> Option<usize> {
    let (x, y) = ((i % w as usize) as i64, (i / w as usize) as i64);
    let (dx, dy) = dir.offset();
    let (nx, ny) = (x + dx as i64, y + dy as i64);
    let inside = nx >= 0 && ny >= 0 && nx < w as i64 && ny < h as i64;
    inside.then(|| (ny * w as i64 + nx) as usize)
}

/// Neighbour capacities of a `w`×`h` grid, one array per direction of `c`:
/// `capacity(i, j, dir)` for the arc from pixel `i` in direction `dir` to pixel `j`,
/// `None` where it would leave the grid (that arc stays zero whatever is returned).
/// Called direction by direction, each in raster order.
pub fn neighbour_capacities(
    w: u32,
    h: u32,
    c: Connectivity,
    mut capacity: impl FnMut(usize, Option<usize>, Direction) -> i32,
) -> Vec<Vec<i32>> {
    let n = (w * h) as usize;
    c.directions()
        .iter()
        .map(|&dir| {
            (0..n)
                .map(|i| {
                    let j = neighbour(w, h, i, dir);
                    let cap = capacity(i, j, dir);
                    if j.is_some() { cap } else { 0 }
                })
                .collect()
        })
        .collect()
}

/// A random `w`×`h` problem drawn from `rng` (capacities from [`Rng::capacity`], arcs
/// leaving the grid zero).
pub fn random_problem(rng: &mut Rng, w: u32, h: u32, c: Connectivity) -> GridProblem {
    let n = (w * h) as usize;
    let source = (0..n).map(|_| rng.capacity()).collect();
    let sink = (0..n).map(|_| rng.capacity()).collect();
    let edges = neighbour_capacities(w, h, c, |_, _, _| rng.capacity());
    GridProblem::from_arrays(w, h, c, source, sink, edges).expect("valid random problem")
}

/// A copy of `p` with random changes: some terminal capacities raised, lowered to
/// zero or swapped between s and t, some neighbour arcs raised, lowered or zeroed.
/// `rate` is the chance (in 1/100) that any one value changes.
pub fn perturb(rng: &mut Rng, p: &GridProblem, rate: u64) -> GridProblem {
    let (w, h, c) = (p.width(), p.height(), p.connectivity());
    let mut source = p.source().to_vec();
    let mut sink = p.sink().to_vec();
    for i in 0..source.len() {
        if rng.below(100) >= rate {
            continue;
        }
        match rng.below(5) {
            0 => std::mem::swap(&mut source[i], &mut sink[i]),
            1 => source[i] = 0,
            2 => sink[i] = 0,
            3 => source[i] = rng.capacity(),
            _ => sink[i] = sink[i].saturating_add(rng.below(50) as i32),
        }
    }
    let edges = c
        .directions()
        .iter()
        .map(|&dir| {
            let mut e = p.edges(dir).to_vec();
            for (i, v) in e.iter_mut().enumerate() {
                if neighbour(w, h, i, dir).is_none() || rng.below(100) >= rate {
                    continue;
                }
                *v = match rng.below(4) {
                    0 => 0,
                    1 => *v / 2,
                    2 => v.saturating_add(1 + rng.below(100) as i32),
                    _ => rng.capacity(),
                };
            }
            e
        })
        .collect();
    GridProblem::from_arrays(w, h, c, source, sink, edges).expect("valid perturbed problem")
}

/// `p` with each pair's backward capacity (odd direction) set to its forward one, as
/// smoothness terms are.
pub fn symmetrise(p: &GridProblem) -> GridProblem {
    let (w, h, c) = (p.width(), p.height(), p.connectivity());
    let dirs = c.directions();
    let mut edges: Vec<Vec<i32>> = dirs.iter().map(|&d| p.edges(d).to_vec()).collect();
    for fwd in (0..dirs.len()).step_by(2) {
        for i in 0..(w * h) as usize {
            if let Some(j) = neighbour(w, h, i, dirs[fwd]) {
                edges[fwd + 1][j] = edges[fwd][i];
            }
        }
    }
    let (source, sink) = (p.source().to_vec(), p.sink().to_vec());
    GridProblem::from_arrays(w, h, c, source, sink, edges).expect("valid symmetric problem")
}

/// A copy of `p` in which only backward (odd-direction) neighbour capacities changed,
/// as [`perturb`] changes them.
pub fn perturb_backward(rng: &mut Rng, p: &GridProblem, rate: u64) -> GridProblem {
    let q = perturb(rng, p, rate);
    let c = p.connectivity();
    let edges = c
        .directions()
        .iter()
        .enumerate()
        .map(|(d, &dir)| {
            if d % 2 == 0 {
                p.edges(dir)
            } else {
                q.edges(dir)
            }
            .to_vec()
        })
        .collect();
    let (source, sink) = (p.source().to_vec(), p.sink().to_vec());
    GridProblem::from_arrays(p.width(), p.height(), c, source, sink, edges)
        .expect("valid perturbed problem")
}

/// A random grid: `density` percent of pixels get each terminal arc, four neighbour
/// arcs in five are non-zero, all capacities below `max_cap`.
pub fn random_grid(
    rng: &mut XorShift,
    w: u32,
    h: u32,
    eight: bool,
    max_cap: u64,
    density: u64,
) -> GridProblem {
    let c = connectivity(eight);
    let n = (w * h) as usize;
    let mut src = vec![0i32; n];
    let mut sink = vec![0i32; n];
    for i in 0..n {
        if rng.below(100) < density {
            src[i] = rng.below(max_cap) as i32;
        }
        if rng.below(100) < density {
            sink[i] = rng.below(max_cap) as i32;
        }
    }
    let edges = neighbour_capacities(w, h, c, |_, j, _| {
        if j.is_some() && rng.below(10) < 8 {
            rng.below(max_cap) as i32
        } else {
            0
        }
    });
    GridProblem::from_arrays(w, h, c, src, sink, edges).expect("valid grid")
}

/// Seed-only "disk" instance following the data's FORMAT.md recipe (noisy bright disk on
/// a textured background, source seeds at the centre, sink seeds on the frame).
pub fn seeds_disk(rng: &mut XorShift, w: u32, h: u32, eight: bool) -> GridProblem {
    let n = (w * h) as usize;
    let (cx, cy) = (w as f64 / 2.0, h as f64 / 2.0);
    let m = w.min(h) as f64;
    let mut img = vec![0f64; n];
    for y in 0..h {
        for x in 0..w {
            let r = ((x as f64 - cx).powi(2) + (y as f64 - cy).powi(2)).sqrt();
            let base = if r < 0.35 * m {
                170.0
            } else {
                70.0 + 20.0 * ((x / 7 + y / 5) % 3) as f64
            };
            img[(y * w + x) as usize] = base + rng.below(31) as f64 - 15.0;
        }
    }
    let mut src = vec![0i32; n];
    let mut sink = vec![0i32; n];
    let seed_r = (0.03 * m).max(3.0);
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as usize;
            let r = ((x as f64 - cx).powi(2) + (y as f64 - cy).powi(2)).sqrt();
            if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
                sink[i] = 1_000_000_000;
            } else if r < seed_r {
                src[i] = 1_000_000_000;
            }
        }
    }
    let c = connectivity(eight);
    let edges = contrast_edges(&img, w, h, c, 100.0, 1800.0);
    GridProblem::from_arrays(w, h, c, src, sink, edges).expect("valid grid")
}

/// Segmentation-like energy: smooth blobs plus noise, t-links from two Gaussian intensity
/// models (reparametrised: one t-link per pixel), contrast-sensitive n-links.
pub fn image_like(rng: &mut XorShift, w: u32, h: u32, eight: bool) -> GridProblem {
    let n = (w * h) as usize;
    let mut img = vec![0f64; n];
    for y in 0..h {
        for x in 0..w {
            let (fx, fy) = (x as f64 / w as f64, y as f64 / h as f64);
            let blob = ((fx * 9.0).sin() * (fy * 7.0).cos() + (fx * 3.0 + fy * 5.0).sin()) * 0.5;
            let base = if blob > 0.1 { 150.0 } else { 100.0 };
            img[(y * w + x) as usize] = base + 20.0 * blob + rng.below(61) as f64 - 30.0;
        }
    }
    image_energy(img, w, h, eight)
}

/// An image energy of a small object (a disk over ~5 % of the pixels) on a large
/// background, as rocket's: the sink pulls far more pixels than s feeds.
pub fn object_like(rng: &mut XorShift, w: u32, h: u32, eight: bool) -> GridProblem {
    let (cx, cy, r) = (w as f64 * 0.4, h as f64 * 0.55, 0.15 * w.min(h) as f64);
    let mut img = vec![0f64; (w * h) as usize];
    for y in 0..h {
        for x in 0..w {
            let inside = (x as f64 - cx).hypot(y as f64 - cy) < r;
            let base = if inside { 150.0 } else { 100.0 };
            img[(y * w + x) as usize] = base + rng.below(51) as f64 - 25.0;
        }
    }
    image_energy(img, w, h, eight)
}

/// Segmentation energy of grey image `img`: terminals from two Gaussian likelihoods
/// (background 100, foreground 150), contrast-sensitive edges.
fn image_energy(img: Vec<f64>, w: u32, h: u32, eight: bool) -> GridProblem {
    let c = connectivity(eight);
    let n = (w * h) as usize;
    let nll = |v: f64, mean: f64| ((v - mean) / 40.0).powi(2) / 2.0 + 0.5;
    let mut src = vec![0i32; n];
    let mut sink = vec![0i32; n];
    for i in 0..n {
        let s = (10.0 * nll(img[i], 100.0)).round() as i32; // background cost
        let t = (10.0 * nll(img[i], 150.0)).round() as i32; // foreground cost
        let m = s.min(t);
        src[i] = s - m;
        sink[i] = t - m;
    }
    let (mut sum, mut count) = (0f64, 0f64);
    for i in 0..n {
        if let Some(j) = neighbour(w, h, i, Direction::East) {
            sum += (img[i] - img[j]).powi(2);
            count += 1.0;
        }
    }
    let edges = contrast_edges(&img, w, h, c, 500.0, 2.0 * sum / count.max(1.0));
    GridProblem::from_arrays(w, h, c, src, sink, edges).expect("valid grid")
}

/// Contrast-sensitive neighbour capacities of grey image `img`:
/// `weight · exp(−Δ² / two_sigma2)`, divided by the step length on diagonals.
fn contrast_edges(
    img: &[f64],
    w: u32,
    h: u32,
    c: Connectivity,
    weight: f64,
    two_sigma2: f64,
) -> Vec<Vec<i32>> {
    neighbour_capacities(w, h, c, |i, j, dir| {
        let Some(j) = j else { return 0 };
        let dist = if dir.is_diagonal() {
            std::f64::consts::SQRT_2
        } else {
            1.0
        };
        let diff = img[i] - img[j];
        (weight * (-diff * diff / two_sigma2).exp() / dist).round() as i32
    })
}

/// Kinds of change between two frames' problems, for the dynamic-update tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// One neighbour arc gets a new capacity.
    OneArc,
    /// A few percent of all values change.
    Few,
    /// Every value may change.
    Every,
    /// Only terminal capacities change.
    Terminals,
    /// Only neighbour capacities change.
    Neighbours,
    /// Every capacity of a rectangle drops to zero (the original frame brings them back).
    Zeroed,
    /// A stroke of hard seeds: a rectangle of pixels tied to s or to t with a large capacity.
    Scribble,
}

impl Change {
    /// Every kind, for strategies that pick one.
    pub const ALL: [Change; 7] = [
        Change::OneArc,
        Change::Few,
        Change::Every,
        Change::Terminals,
        Change::Neighbours,
        Change::Zeroed,
        Change::Scribble,
    ];
}

/// A copy of `p` changed as `kind` says, drawn from `rng`.
pub fn change(rng: &mut Rng, p: &GridProblem, kind: Change) -> GridProblem {
    let (w, h, c) = (p.width(), p.height(), p.connectivity());
    let mut source = p.source().to_vec();
    let mut sink = p.sink().to_vec();
    let mut edges: Vec<Vec<i32>> = c
        .directions()
        .iter()
        .map(|&d| p.edges(d).to_vec())
        .collect();
    let n = source.len();
    let (cx, cy) = (rng.below(w as u64) as i64, rng.below(h as u64) as i64);
    let (rx, ry) = (
        1 + rng.below(1 + w as u64 / 3) as i64,
        1 + rng.below(1 + h as u64 / 3) as i64,
    );
    let near = |i: usize| {
        let (x, y) = ((i as u32 % w) as i64, (i as u32 / w) as i64);
        (x - cx).abs() <= rx && (y - cy).abs() <= ry
    };
    match kind {
        Change::Few | Change::Every | Change::Terminals | Change::Neighbours => {
            let rate = match kind {
                Change::Few => 3,
                Change::Every => 100,
                _ => 10,
            };
            let q = perturb(rng, p, rate);
            if kind != Change::Neighbours {
                source = q.source().to_vec();
                sink = q.sink().to_vec();
            }
            if kind != Change::Terminals {
                edges = c
                    .directions()
                    .iter()
                    .map(|&d| q.edges(d).to_vec())
                    .collect();
            }
        }
        Change::OneArc => {
            let (d, i) = (
                rng.below(edges.len() as u64) as usize,
                rng.below(n as u64) as usize,
            );
            if neighbour(w, h, i, c.directions()[d]).is_some() {
                edges[d][i] = rng.capacity();
            }
        }
        Change::Zeroed => {
            for i in (0..n).filter(|&i| near(i)) {
                source[i] = 0;
                sink[i] = 0;
                for e in edges.iter_mut() {
                    e[i] = 0;
                }
            }
        }
        Change::Scribble => {
            let foreground = rng.below(2) == 0;
            for i in (0..n).filter(|&i| near(i)) {
                (source[i], sink[i]) = if foreground {
                    (1 << 30, 0)
                } else {
                    (0, 1 << 30)
                };
            }
        }
    }
    GridProblem::from_arrays(w, h, c, source, sink, edges).expect("valid changed problem")
}
