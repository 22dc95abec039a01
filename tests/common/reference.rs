//! A deliberately simple reference max-flow for the engine tests: Dinic's algorithm on
//! an adjacency list built straight from a `GridProblem` (or from any list of arcs, as
//! the volume tests do), in u64 arithmetic, with no folding, no layout tricks and no
//! shared code with the engines.

use livecut::grid::{GridProblem, VolumeProblem};
use std::collections::VecDeque;

/// Max-flow value and the pixels (or voxels) reachable from s in the final residual
/// graph.
pub struct Reference {
    /// Maximum flow value.
    pub flow: u64,
    /// Row-major: true where the pixel is reachable from s (the canonical cut).
    pub reachable: Vec<bool>,
    /// Row-major: true where the pixel can reach t (the complement is the largest
    /// source side of a minimum cut, what push-relabel engines report).
    pub reaches_sink: Vec<bool>,
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

    /// The nodes that reach `t` over arcs with residual capacity.
    fn reaching(&self, t: usize) -> Vec<bool> {
        let mut seen = vec![false; self.adj.len()];
        seen[t] = true;
        let mut queue = VecDeque::from([t]);
        while let Some(v) = queue.pop_front() {
            for &a in &self.adj[v] {
                // arc a goes v -> u; its reverse u -> v is what u would use
                let u = self.arcs[a].to;
                if self.arcs[a ^ 1].cap > 0 && !seen[u] {
                    seen[u] = true;
                    queue.push_back(u);
                }
            }
        }
        seen
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
    let mut arcs = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as usize;
            for &dir in p.connectivity().directions() {
                if let Some(j) = p.neighbour(x, y, dir) {
                    arcs.push((i, j, p.edges(dir)[i] as u64));
                }
            }
        }
    }
    let terminals = p.source().iter().zip(p.sink());
    max_flow_arcs(terminals.map(|(&s, &t)| (s as u64, t as u64)), arcs)
}

/// Solves, with Dinic's algorithm, the network of one node per entry of `terminals`
/// (its capacities from s and to t) and the neighbour `arcs` (from, to, capacity).
pub fn max_flow_arcs(
    terminals: impl ExactSizeIterator<Item = (u64, u64)>,
    arcs: impl IntoIterator<Item = (usize, usize, u64)>,
) -> Reference {
    let n = terminals.len();
    let (s, t) = (n, n + 1);
    let mut g = Graph::new(n + 2);
    for (i, (cs, ct)) in terminals.enumerate() {
        g.add(s, i, cs);
        g.add(i, t, ct);
    }
    for (i, j, c) in arcs {
        g.add(i, j, c);
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
    let mut reaches_sink = g.reaching(t);
    reaches_sink.truncate(n);
    Reference {
        flow,
        reachable: (0..n).map(|i| level[i].is_some()).collect(),
        reaches_sink,
    }
}

/// Solves the volume `p` exactly with Dinic's algorithm.
pub fn volume_max_flow(p: &VolumeProblem) -> Reference {
    let k = p.connectivity().number() as usize;
    let arcs = (0..p.voxels()).flat_map(|i| {
        (0..k).filter_map(move |d| p.step(i, d).map(|j| (i, j, p.edges(d)[i] as u64)))
    });
    let terminals = p.source().iter().zip(p.sink());
    max_flow_arcs(
        terminals.map(|(&s, &t)| (s as u64, t as u64)),
        arcs.collect::<Vec<_>>(),
    )
}

/// The maximum flow of `p`, for tests that compare flows only.
pub fn reference_flow(p: &GridProblem) -> u64 {
    max_flow(p).flow
}
