//! A deliberately simple reference max-flow for the engine tests: Dinic's algorithm on
//! an adjacency list built straight from a `GridProblem`, in u64 arithmetic, with no
//! folding, no layout tricks and no shared code with the engines.

#![allow(dead_code)]

use livecut::grid::{Connectivity, GridProblem};
use std::collections::VecDeque;

/// Max-flow value and the pixels reachable from s in the final residual graph.
pub struct Reference {
    /// Maximum flow value.
    pub flow: u64,
    /// Row-major: true where the pixel is reachable from s (the canonical cut).
    pub reachable: Vec<bool>,
}

/// One directed arc; its reverse is the arc at index `i ^ 1`.
struct Arc {
    to: usize,
    cap: u64,
}

struct Graph {
    arcs: Vec<Arc>,
    adj: Vec<Vec<usize>>,
}

impl Graph {
    fn new(n: usize) -> Self {
        Self {
            arcs: Vec::new(),
            adj: vec![Vec::new(); n],
        }
    }

    fn add(&mut self, from: usize, to: usize, cap: u64) {
        if cap == 0 {
            return;
        }
        self.adj[from].push(self.arcs.len());
        self.arcs.push(Arc { to, cap });
        self.adj[to].push(self.arcs.len());
        self.arcs.push(Arc { to: from, cap: 0 });
    }

    /// Breadth-first levels over arcs with residual capacity.
    fn levels(&self, s: usize) -> Vec<Option<u32>> {
        let mut level = vec![None; self.adj.len()];
        level[s] = Some(0);
        let mut queue = VecDeque::from([s]);
        while let Some(u) = queue.pop_front() {
            for &a in &self.adj[u] {
                let v = self.arcs[a].to;
                if self.arcs[a].cap > 0 && level[v].is_none() {
                    level[v] = Some(level[u].unwrap() + 1);
                    queue.push_back(v);
                }
            }
        }
        level
    }

    fn push(
        &mut self,
        u: usize,
        t: usize,
        limit: u64,
        level: &[Option<u32>],
        next: &mut [usize],
    ) -> u64 {
        if u == t {
            return limit;
        }
        while next[u] < self.adj[u].len() {
            let a = self.adj[u][next[u]];
            let v = self.arcs[a].to;
            let cap = self.arcs[a].cap;
            if cap > 0 && level[v].is_some() && level[v] == level[u].map(|l| l + 1) {
                let got = self.push(v, t, limit.min(cap), level, next);
                if got > 0 {
                    self.arcs[a].cap -= got;
                    self.arcs[a ^ 1].cap += got;
                    return got;
                }
            }
            next[u] += 1;
        }
        0
    }
}

/// Solves `p` exactly with Dinic's algorithm.
pub fn max_flow(p: &GridProblem) -> Reference {
    let (w, h) = (p.width(), p.height());
    let n = p.pixels();
    let (s, t) = (n, n + 1);
    let mut g = Graph::new(n + 2);
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as usize;
            g.add(s, i, p.source()[i] as u64);
            g.add(i, t, p.sink()[i] as u64);
            for &dir in p.connectivity().directions() {
                if let Some(j) = p.neighbour(x, y, dir) {
                    g.add(i, j, p.edges(dir)[i] as u64);
                }
            }
        }
    }
    let mut flow = 0u64;
    loop {
        let level = g.levels(s);
        if level[t].is_none() {
            break;
        }
        let mut next = vec![0; n + 2];
        loop {
            let got = g.push(s, t, u64::MAX, &level, &mut next);
            if got == 0 {
                break;
            }
            flow += got;
        }
    }
    let level = g.levels(s);
    Reference {
        flow,
        reachable: (0..n).map(|i| level[i].is_some()).collect(),
    }
}

/// A tiny deterministic random generator (splitmix64) for building test cases.
pub struct Rng(pub u64);

impl Rng {
    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A capacity from a mix that stresses solvers: many zeros, small values,
    /// medium values and values near `i32::MAX`.
    pub fn capacity(&mut self) -> i32 {
        match self.below(10) {
            0..=3 => 0,
            4..=6 => 1 + self.below(9) as i32,
            7..=8 => self.below(1000) as i32,
            _ => i32::MAX - self.below(4) as i32,
        }
    }
}

/// A random `w`×`h` problem drawn from `rng` (capacities from [`Rng::capacity`], arcs
/// leaving the grid zero).
pub fn random_problem(rng: &mut Rng, w: u32, h: u32, c: Connectivity) -> GridProblem {
    let n = (w * h) as usize;
    let source = (0..n).map(|_| rng.capacity()).collect();
    let sink = (0..n).map(|_| rng.capacity()).collect();
    let edges = grid_edges(rng, w, h, c, Rng::capacity);
    GridProblem::from_arrays(w, h, c, source, sink, edges).expect("valid random problem")
}

/// Neighbour capacities of a `w`×`h` grid, one array per direction of `c`, each drawn by
/// `capacity` (arcs leaving the grid zero).
pub fn grid_edges(
    rng: &mut Rng,
    w: u32,
    h: u32,
    c: Connectivity,
    mut capacity: impl FnMut(&mut Rng) -> i32,
) -> Vec<Vec<i32>> {
    let n = (w * h) as usize;
    c.directions()
        .iter()
        .map(|&dir| {
            (0..n)
                .map(|i| {
                    let (x, y) = (i as u32 % w, i as u32 / w);
                    let cap = capacity(rng);
                    if probe_neighbour(w, h, x, y, dir) {
                        cap
                    } else {
                        0
                    }
                })
                .collect()
        })
        .collect()
}

fn probe_neighbour(w: u32, h: u32, x: u32, y: u32, dir: livecut::grid::Direction) -> bool {
    let (dx, dy) = dir.offset();
    let (nx, ny) = (x as i64 + dx as i64, y as i64 + dy as i64);
    nx >= 0 && ny >= 0 && nx < w as i64 && ny < h as i64
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
                let (x, y) = (i as u32 % w, i as u32 / w);
                if !probe_neighbour(w, h, x, y, dir) || rng.below(100) >= rate {
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
            let (x, y) = (i as u32 % w, i as u32 / w);
            if probe_neighbour(w, h, x, y, dirs[fwd]) {
                let (dx, dy) = dirs[fwd].offset();
                let j = (i as i64 + dy as i64 * w as i64 + dx as i64) as usize;
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
    /// Every capacity of a rectangle drops to zero (apply again to the original to go back).
    Zeroed,
    /// A stroke of hard seeds: a disk of pixels tied to s or to t with a large capacity.
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
            let rate = if kind == Change::Few {
                3
            } else if kind == Change::Every {
                100
            } else {
                10
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
            if probe_neighbour(w, h, i as u32 % w, i as u32 / w, c.directions()[d]) {
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
