//! Assembles one frame's energy into an integer [`GridProblem`]: data costs from the
//! colour models, the learned background and the temporal prior; hard constraints on
//! seeded pixels; contrast-sensitive smoothness on the arcs.
//!
//! Quantisation: every term is in nats (negative log-probabilities; λ too) and becomes
//! a capacity of `round(CAPACITY_SCALE · nats)`, each term rounded on its own (the
//! colour models per pixel, the background and temporal terms through integer
//! tables), so a term that did not change leaves its capacities exactly as they
//! were. Terminal arcs are reparameterised (the
//! smaller of a pixel's two data costs is subtracted from both, which changes the
//! energy by a constant only), so each pixel has at most one non-zero terminal arc.
//! A seeded pixel's terminal arc is one more than the sum of its neighbour arcs: the
//! smallest capacity that no cut can afford, which keeps capacities (and the work of
//! push-relabel engines) small. Arcs between two seeded pixels are dropped (constant
//! energy), so the engines only see the unknown pixels and their seeded rim.

use super::background::{BackgroundModel, CostTable};
use super::color::ColorModels;
use super::seeds::{SeedLabel, Seeds};
use super::smoothness::{Smoothness, WeightTables};
use super::temporal::{
    RampTable, TemporalPrior, add_ramp, boundary_distance, boundary_distance_in,
};
use crate::bands;
use crate::grid::{
    ARC_WORD, ChangedArcs, ChangedTiles, Connectivity, Direction, GridError, GridProblem, Mask,
    PixelRect, ProblemChanges, TILE, copy_marking,
};
use crate::huge_pages;
use std::ops::Range;

/// Capacity units per nat of energy.
pub const CAPACITY_SCALE: f32 = 10.0;

/// Largest data-cost difference (nats) a pixel may have; keeps capacities well inside
/// `i32` when a model gives a colour an absurd cost.
const MAX_DATA_NATS: f32 = 1.0e5;

/// The signed data capacity of a pixel whose colour costs `fg` and `bg` nats (positive:
/// towards the source), quantised; the device energy's colour table uses it too.
pub(crate) fn data_capacity(fg: f32, bg: f32) -> i32 {
    let diff = (bg - fg).clamp(-MAX_DATA_NATS, MAX_DATA_NATS) * CAPACITY_SCALE;
    diff.round() as i32
}

/// Everything one frame's energy is made of.
pub struct EnergyInputs<'a> {
    /// Frame width.
    pub width: u32,
    /// Frame height.
    pub height: u32,
    /// `width·height·3` bytes of RGB.
    pub rgb: &'a [u8],
    /// Smoothness term.
    pub smoothness: Smoothness,
    /// Colour models (data term), if learned.
    pub colors: Option<&'a mut ColorModels>,
    /// Hard constraints for this frame.
    pub seeds: Option<&'a Seeds>,
    /// Previous frame's mask and the prior's parameters.
    pub temporal: Option<(&'a Mask, TemporalPrior)>,
    /// Learned static background (observed on this frame) and its weight.
    pub background: Option<(&'a BackgroundModel, f32)>,
    /// Where `rgb` differs from the last build's frame, where the caller knows it (the
    /// noise gate's moves between two frames it held, [`crate::pipeline::GateMoves`]):
    /// per band of rows, each row's differing stretch per tile of [`TILE`] pixels as
    /// `[y, x0, x1]`, in row then column order; none: the frames are compared.
    pub rgb_moves: Option<&'a [Vec<[u32; 3]>]>,
}

/// The arrays of a `GridProblem` (source, sink, per-direction edges), kept for reuse.
type ProblemArrays = (Vec<i32>, Vec<i32>, Vec<Vec<i32>>);

/// Builds grid problems frame after frame, reusing all its arrays; where a frame
/// differs from the last one in a few tiles only, only those are recomputed
/// ([`Self::changed`]).
#[derive(Debug)]
pub struct EnergyBuilder {
    arrays: Option<ProblemArrays>,
    /// Per pixel, the data capacity before the temporal prior, kept from build to
    /// build: where only the previous mask moved nearby, a pixel adds the new prior to
    /// it instead of asking the colour models again.
    base: Vec<i32>,
    background_table: CostTable,
    /// The previous mask's boundary distances, whole frame, kept from build to build
    /// and redone around where the mask moved.
    distance: Vec<u32>,
    /// Per band of rows, the terminal pass's scratch.
    scratch: Vec<BandScratch>,
    /// Per band of rows, the stretches where an input changed (scratch).
    marks: Vec<Vec<[u32; 3]>>,
    /// The one-row rectangles of the pairs with an end where the colours changed.
    pair_rows: Vec<PixelRect>,
    /// The one-row rectangles of the pixels whose colour changed.
    colour_rows: Vec<PixelRect>,
    /// The one-row rectangles of the pixels whose colour or background distance changed.
    base_rows: Vec<PixelRect>,
    /// The one-row rectangles of the pixels whose terminals may have changed.
    terminal_rows: Vec<PixelRect>,
    /// Boxes of the pixels where the previous mask moved since the last build.
    moves: Vec<PixelRect>,
    fixed: Vec<bool>,
    sigma: f32,
    weights: WeightTables,
    /// What the last build read.
    last: LastInputs,
    /// The tiles whose capacities the last build may have changed.
    changed: ChangedTiles,
    /// Scratch for the tiles whose colours changed.
    rgb_changed: ChangedTiles,
    /// Scratch for the tiles whose data before the prior changed.
    base_changed: ChangedTiles,
    /// Which arcs the last build changed, where it recomputed only its changed tiles.
    arcs: ChangedArcs,
    /// Whether `arcs` holds the last build's changes (not after a whole rebuild).
    arcs_known: bool,
    /// Recompute only what changed (on by default).
    incremental: bool,
}

/// What the last build read, to find the tiles the next one changes.
#[derive(Debug, Default)]
struct LastInputs {
    /// Everything frame-wide the capacities depend on: another key changes every arc.
    key: Option<FrameKey>,
    rgb: Vec<u8>,
    z2: Vec<u16>,
    previous: Vec<u8>,
    seeds: Vec<SeedLabel>,
}

/// The frame-wide inputs of an energy.
#[derive(Clone, Debug, PartialEq)]
struct FrameKey {
    width: u32,
    height: u32,
    connectivity: Connectivity,
    /// λ, σ and the scale, as bits.
    smoothness: [u32; 3],
    /// The colour models' generation.
    models: Option<u64>,
    /// The background term's weight, as bits.
    background: Option<u32>,
    /// The temporal prior's weight and ramp, as bits.
    temporal: Option<[u32; 2]>,
    seeded: bool,
}

impl Default for EnergyBuilder {
    fn default() -> Self {
        Self {
            arrays: None,
            base: Vec::new(),
            background_table: CostTable::default(),
            distance: Vec::new(),
            scratch: Vec::new(),
            marks: Vec::new(),
            pair_rows: Vec::new(),
            colour_rows: Vec::new(),
            base_rows: Vec::new(),
            terminal_rows: Vec::new(),
            moves: Vec::new(),
            fixed: Vec::new(),
            sigma: 0.0,
            weights: WeightTables::default(),
            last: LastInputs::default(),
            changed: ChangedTiles::none(0, 0),
            rgb_changed: ChangedTiles::none(0, 0),
            base_changed: ChangedTiles::none(0, 0),
            arcs: ChangedArcs::default(),
            arcs_known: false,
            incremental: true,
        }
    }
}

impl EnergyBuilder {
    /// A builder with no buffers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether frames recompute only their changed tiles (the default) or every
    /// capacity: both give identical problems; the full path is there to check that.
    pub fn set_incremental(&mut self, on: bool) {
        self.incremental = on;
    }

    /// Forgets what the last build read: the next one recomputes every capacity (the
    /// problem its changes would be told against is no longer the one in use).
    pub fn forget(&mut self) {
        self.last.key = None;
    }

    /// The σ of the last frame's smoothness term (estimated or given).
    pub fn last_sigma(&self) -> f32 {
        self.sigma
    }

    /// The tiles whose capacities the last build may have changed from the build
    /// before it (all of them where the arrays were not handed back with
    /// [`Self::recycle`], or something frame-wide changed).
    pub fn changed(&self) -> &ChangedTiles {
        &self.changed
    }

    /// [`Self::changed`], within it where the neighbour capacities may have changed,
    /// and which arcs did (unless everything was rebuilt): what the engine is told.
    pub fn changes(&self) -> ProblemChanges<'_> {
        ProblemChanges {
            any: &self.changed,
            edges: &self.rgb_changed,
            arcs: self.arcs_known.then_some(&self.arcs),
        }
    }

    /// Hands the last built problem's arrays back for the next frame, which then
    /// recomputes only what changed from it (a problem not handed back makes the next
    /// build recompute everything).
    pub fn recycle(&mut self, problem: GridProblem) {
        self.arrays = Some(problem.into_arrays());
    }

    /// Builds the frame's grid problem.
    pub fn build(&mut self, mut inputs: EnergyInputs<'_>) -> Result<GridProblem, GridError> {
        let (width, height) = (inputs.width, inputs.height);
        let n = width as usize * height as usize;
        let dirs = inputs.smoothness.connectivity.number() as usize;
        if inputs.rgb.len() != 3 * n {
            return Err(GridError::BadLength {
                what: "RGB frame",
                got: inputs.rgb.len(),
                expected: 3 * n,
            });
        }
        let (mut source, mut sink, mut edges) = self.arrays.take().unwrap_or_default();
        let kept = source.len() == n
            && sink.len() == n
            && edges.len() == dirs
            && edges.iter().all(|e| e.len() == n);
        if !kept {
            huge_pages::resize(&mut source, n, 0);
            huge_pages::resize(&mut sink, n, 0);
            edges.resize_with(dirs, Vec::new);
            for e in &mut edges {
                huge_pages::resize(e, n, 0);
            }
        }
        self.sigma = inputs
            .smoothness
            .sigma_of(inputs.rgb, width as usize, height as usize);
        let key = frame_key(&inputs, self.sigma);
        let whole = !(self.incremental && kept && self.last.key.as_ref() == Some(&key))
            || inputs.seeds.is_some_and(|s| s.labels != self.last.seeds);
        self.find_changes(&inputs, whole);
        if !(whole || self.changed.is_whole()) {
            let reach = inputs.temporal.map(|(_, prior)| prior.reach());
            self.terminal_rows(reach, inputs.seeds.is_some(), width, height);
        }
        self.last.key = Some(key);
        // a rebuilt problem is compared with nothing: its engine reloads or compares
        self.arcs_known = !whole;
        if self.arcs_known {
            let connectivity = inputs.smoothness.connectivity;
            self.arcs.reset(width, height, connectivity);
        }
        if whole {
            self.rebuild_fixed(inputs.seeds);
        }
        let fixed = inputs.seeds.map(|_| self.fixed.as_slice());
        let tables = inputs.smoothness.tables(self.sigma, &mut self.weights);
        let tile_rects;
        let edge_rects: &[PixelRect] = if whole {
            clear_off_grid(&mut edges, width as usize, height as usize);
            tile_rects = self.changed.rects(0);
            &tile_rects
        } else if self.rgb_changed.is_whole() {
            tile_rects = self.rgb_changed.rects(1);
            &tile_rects
        } else {
            &self.pair_rows
        };
        let tile_data;
        let data_rects: &[PixelRect] = if whole || self.changed.is_whole() {
            tile_data = self.changed.rects(u32::from(!whole));
            &tile_data
        } else {
            &self.terminal_rows
        };
        if self.arcs_known {
            for rect in edge_rects.iter().chain(data_rects) {
                self.arcs.mark_live(rect.ys.clone());
            }
        }
        inputs.smoothness.fill_edges_in(
            inputs.rgb,
            width as usize,
            edge_rects,
            fixed,
            &mut edges,
            tables,
            self.arcs_known.then(|| self.arcs.pairs_mut()),
        );
        if let Some((previous, _)) = inputs.temporal
            && (whole || self.distance.len() != n)
        {
            boundary_distance(previous, &mut self.distance);
            self.moves.clear();
        }
        if let Some((_, weight)) = inputs.background {
            CostTable::ensure(&mut self.background_table, weight, CAPACITY_SCALE);
        }
        let ramp = inputs
            .temporal
            .map(|(_, prior)| prior.ramp_table(CAPACITY_SCALE));
        self.base.resize(n, 0);
        let base_tiles;
        let work = TerminalWork {
            width: width as usize,
            rgb: inputs.rgb,
            seeds: inputs.seeds,
            background: inputs.background.map(|(b, _)| (b, &self.background_table)),
            temporal: inputs.temporal.map(|(mask, prior)| (mask, prior.reach())),
            ramp: ramp.as_ref(),
            moves: &self.moves,
            base_rects: if self.base_changed.is_whole() {
                base_tiles = self.base_changed.rects(0);
                &base_tiles
            } else {
                &self.base_rows
            },
            data_rects,
        };
        let mut bands = TerminalBand::split(
            &mut self.scratch,
            (width as usize, height as usize),
            [&mut self.base, &mut source, &mut sink],
            &mut self.distance,
            self.arcs_known.then(|| self.arcs.terminals_mut()),
        );
        work.redo_base(&mut bands, inputs.colors.as_deref());
        if let Some(models) = inputs.colors.as_deref_mut() {
            work.add_misses(&mut bands, models);
        }
        work.write_terminals(&mut bands, &edges);
        let problem = GridProblem::from_built_arrays(
            width,
            height,
            inputs.smoothness.connectivity,
            source,
            sink,
            edges,
        )?;
        debug_assert_eq!(problem.validate(), Ok(()));
        Ok(problem)
    }

    /// Finds the tiles whose inputs differ from the last build's (all of them where
    /// `whole`) and keeps this build's inputs for the next one.
    fn find_changes(&mut self, inputs: &EnergyInputs<'_>, whole: bool) {
        let (width, height) = (inputs.width, inputs.height);
        if (self.changed.width(), self.changed.height()) != (width, height) {
            self.changed = ChangedTiles::none(width, height);
            self.rgb_changed = ChangedTiles::none(width, height);
            self.base_changed = ChangedTiles::none(width, height);
        }
        self.changed.clear();
        self.rgb_changed.clear();
        self.base_changed.clear();
        let last = &mut self.last;
        let rows = RowDiff {
            width: width as usize,
            whole,
        };
        let marks = &mut self.marks;
        match inputs.rgb_moves {
            Some(moves)
                if !whole
                    && last.rgb.len() == inputs.rgb.len()
                    && moves_fit(moves, width, height) =>
            {
                take_moves(moves, inputs.rgb, &mut last.rgb, width, marks);
                for &[y, x0, x1] in marks.iter().flatten() {
                    self.rgb_changed.mark_pixels(y, x0..x1);
                }
            }
            _ => rows.diff(inputs.rgb, &mut last.rgb, 3, &mut self.rgb_changed, marks),
        }
        let stretches = marks.iter().flatten().copied();
        pair_rows(stretches, width, &mut self.pair_rows);
        self.colour_rows.clear();
        self.colour_rows
            .extend(marks.iter().flatten().map(stretch_rect));
        self.base_rows.clone_from(&self.colour_rows);
        self.changed.mark_all_of(&self.rgb_changed);
        if let Some((model, _)) = inputs.background {
            rows.diff(
                model.observed_z2(),
                &mut last.z2,
                1,
                &mut self.changed,
                marks,
            );
            self.base_rows
                .extend(marks.iter().flatten().map(stretch_rect));
        }
        merge_rows(&mut self.base_rows);
        self.base_changed.mark_all_of(&self.changed);
        self.moves.clear();
        if let Some((previous, prior)) = inputs.temporal {
            rows.mark_near_moves(
                &previous.data,
                &mut last.previous,
                prior.reach(),
                &mut self.changed,
                &mut self.moves,
            );
        }
        last.seeds.clear();
        if let Some(seeds) = inputs.seeds {
            last.seeds.extend_from_slice(&seeds.labels);
        }
        if whole {
            self.changed.mark_whole();
            self.rgb_changed.mark_whole();
            self.base_changed.mark_whole();
        }
    }

    /// Into `terminal_rows`, one-row rectangles holding every pixel whose terminals may
    /// differ from the last build's: where its data changed, within the prior's `reach`
    /// of where the previous mask moved, and, when `seeded`, next to a colour change
    /// (a seeded pixel's capacity bounds its arcs).
    fn terminal_rows(&mut self, reach: Option<u32>, seeded: bool, width: u32, height: u32) {
        let rows = &mut self.terminal_rows;
        rows.clone_from(&self.base_rows);
        let one_row = |xs: &Range<u32>, y: u32| PixelRect {
            xs: xs.clone(),
            ys: y..y + 1,
        };
        if let Some(reach) = reach {
            for near in self.moves.iter().map(|m| m.grown(reach, width, height)) {
                rows.extend(near.ys.clone().map(|y| one_row(&near.xs, y)));
            }
        }
        if seeded {
            // the rows above, on and below the colour rows: three runs in order
            for dy in [-1, 0, 1] {
                rows.extend(self.colour_rows.iter().filter_map(|r| {
                    let y = r.ys.start.checked_add_signed(dy).filter(|&y| y < height)?;
                    Some(one_row(&r.grown(1, width, height).xs, y))
                }));
            }
        }
        merge_rows(rows);
    }

    /// Marks the seeded pixels, whose arcs to each other are dropped.
    fn rebuild_fixed(&mut self, seeds: Option<&Seeds>) {
        self.fixed.clear();
        if let Some(s) = seeds {
            self.fixed
                .extend(s.labels.iter().map(|&l| l != SeedLabel::Unknown));
        }
    }
}

/// What a frame's terminal capacities are made of, shared by the bands of rows that
/// compute them on every core.
struct TerminalWork<'a> {
    width: usize,
    rgb: &'a [u8],
    seeds: Option<&'a Seeds>,
    background: Option<(&'a BackgroundModel, &'a CostTable)>,
    /// The previous mask and the prior's reach.
    temporal: Option<(&'a Mask, u32)>,
    ramp: Option<&'a RampTable>,
    /// Where the previous mask moved: the distances are redone around these (none
    /// where they were found for the whole frame).
    moves: &'a [PixelRect],
    /// Where the data before the prior is recomputed (no pixel twice).
    base_rects: &'a [PixelRect],
    /// Where the terminal capacities are written.
    data_rects: &'a [PixelRect],
}

/// One band of rows of a frame, with its rows of the arrays the terminal pass writes.
struct TerminalBand<'a> {
    rows: Range<u32>,
    /// Index of the band's first pixel.
    first: usize,
    base: &'a mut [i32],
    source: &'a mut [i32],
    sink: &'a mut [i32],
    /// The boundary distances (empty without a temporal prior).
    distance: &'a mut [u32],
    /// The band's rows of the terminal bits of [`ChangedArcs`] (empty where the
    /// changes are not tracked).
    changed: &'a mut [u64],
    scratch: &'a mut BandScratch,
}

/// A band's scratch, kept from frame to frame.
#[derive(Debug, Default)]
struct BandScratch {
    /// The distances of a window around a move.
    window: Vec<u32>,
    /// A row's signed data capacities.
    data: Vec<i32>,
    /// The pixels whose colour cell was not evaluated yet.
    misses: Vec<u32>,
    /// A row's new source and sink capacities.
    terminals: [Vec<i32>; 2],
}

impl<'a> TerminalBand<'a> {
    /// Cuts the frame's arrays (`base`, `source`, `sink`, and `distance` and the
    /// terminal bits `changed` where given) into bands of rows.
    fn split(
        scratch: &'a mut Vec<BandScratch>,
        (width, height): (usize, usize),
        [mut base, mut source, mut sink]: [&'a mut [i32]; 3],
        mut distance: &'a mut [u32],
        changed: Option<&'a mut [u64]>,
    ) -> Vec<Self> {
        let rows = bands::band_rows(height);
        let count = height.div_ceil(rows);
        if scratch.len() < count {
            scratch.resize_with(count, BandScratch::default);
        }
        let words = width.div_ceil(ARC_WORD as usize);
        let mut changed = changed.unwrap_or_default();
        let mut cut_bits = |rows: usize| {
            let len = (rows * words).min(changed.len());
            let (c, rest) = std::mem::take(&mut changed).split_at_mut(len);
            changed = rest;
            c
        };
        let mut cut = |len: usize| {
            let (b, rest) = std::mem::take(&mut base).split_at_mut(len);
            base = rest;
            let (s, rest) = std::mem::take(&mut source).split_at_mut(len);
            source = rest;
            let (t, rest) = std::mem::take(&mut sink).split_at_mut(len);
            sink = rest;
            let kept = len.min(distance.len());
            let (d, rest) = std::mem::take(&mut distance).split_at_mut(kept);
            distance = rest;
            (b, s, t, d)
        };
        scratch
            .iter_mut()
            .take(count)
            .enumerate()
            .map(|(i, scratch)| {
                let ys = i * rows..((i + 1) * rows).min(height);
                let (base, source, sink, distance) = cut(ys.len() * width);
                TerminalBand {
                    rows: ys.start as u32..ys.end as u32,
                    first: ys.start * width,
                    base,
                    source,
                    sink,
                    distance,
                    changed: cut_bits(ys.len()),
                    scratch,
                }
            })
            .collect()
    }
}

impl TerminalWork<'_> {
    /// On every band: the boundary distances around the moves, and the data before
    /// the prior in `base_rects` from the colour cells `colors` evaluated already (the
    /// others are left to [`Self::add_misses`]).
    fn redo_base(&self, bands: &mut [TerminalBand<'_>], colors: Option<&ColorModels>) {
        bands::for_each_part(bands.iter_mut().collect(), |band: &mut TerminalBand<'_>| {
            band.scratch.misses.clear();
            if let Some((previous, reach)) = self.temporal {
                self.redo_distances(band, previous, reach);
            }
            for rect in self.base_rects {
                for y in bands::rows_within(&rect.ys, &band.rows) {
                    self.row_base(band, colors, y, &rect.xs);
                }
            }
        });
    }

    /// Brings the band's boundary distances up to date with `previous` where it
    /// moved: a distance within the prior's `reach` depends only on the mask within
    /// `reach` of the pixel, so the band's pixels within `reach` of a move are redone
    /// from a window `reach` wider again ([`boundary_distance_in`]).
    fn redo_distances(&self, band: &mut TerminalBand<'_>, previous: &Mask, reach: u32) {
        let (width, height) = (previous.width, previous.height);
        for moved in self.moves {
            let near = moved.grown(reach, width, height);
            let near = PixelRect {
                ys: bands::rows_within(&near.ys, &band.rows),
                xs: near.xs,
            };
            if near.ys.is_empty() {
                continue;
            }
            let window = near.grown(reach, width, height);
            boundary_distance_in(previous, &window, &mut band.scratch.window);
            let (w, n) = (window.xs.len(), near.xs.len());
            for y in near.ys.clone() {
                let from =
                    (y - window.ys.start) as usize * w + (near.xs.start - window.xs.start) as usize;
                let to = y as usize * width as usize + near.xs.start as usize - band.first;
                band.distance[to..to + n].copy_from_slice(&band.scratch.window[from..from + n]);
            }
        }
    }

    /// The signed data capacities before the prior of columns `xs` of row `y`, into
    /// the band's `base`.
    fn row_base(
        &self,
        band: &mut TerminalBand<'_>,
        colors: Option<&ColorModels>,
        y: u32,
        xs: &Range<u32>,
    ) {
        let start = y as usize * self.width + xs.start as usize;
        let range = start..start + xs.len();
        let data = &mut band.base[range.start - band.first..range.end - band.first];
        match colors {
            Some(models) => {
                let labels = self.seeds.map(|s| &s.labels[range.clone()]);
                let unseeded = |j: usize| labels.is_none_or(|l| l[j] == SeedLabel::Unknown);
                let rgb = &self.rgb[3 * range.start..3 * range.end];
                let misses = &mut band.scratch.misses;
                models.known_data_capacities(rgb, unseeded, range.start, data, misses);
            }
            None => data.fill(0),
        }
        if let Some((model, table)) = self.background {
            model.add_capacities_from(table, range.start, data);
        }
    }

    /// Adds the colour capacities of the pixels whose cells [`Self::redo_base`] met
    /// unevaluated (evaluating them: the models' table is filled once).
    fn add_misses(&self, bands: &mut [TerminalBand<'_>], models: &mut ColorModels) {
        for band in bands {
            for &i in &band.scratch.misses {
                let i = i as usize;
                let px = &self.rgb[3 * i..3 * i + 3];
                band.base[i - band.first] += models.data_capacity([px[0], px[1], px[2]]);
            }
        }
    }

    /// On every band: the terminal capacities of the pixels in `data_rects`, their
    /// kept data before the prior plus the prior, each seeded pixel's bounded by the
    /// arcs of `edges`.
    fn write_terminals(&self, bands: &mut [TerminalBand<'_>], edges: &[Vec<i32>]) {
        bands::for_each_part(bands.iter_mut().collect(), |band: &mut TerminalBand<'_>| {
            for rect in self.data_rects {
                for y in bands::rows_within(&rect.ys, &band.rows) {
                    self.row_terminals(band, y, &rect.xs, edges);
                }
            }
        });
    }

    /// [`Self::write_terminals`] for columns `xs` of row `y`, where changes are tracked
    /// each pixel whose terminals changed marked.
    fn row_terminals(
        &self,
        band: &mut TerminalBand<'_>,
        y: u32,
        xs: &Range<u32>,
        edges: &[Vec<i32>],
    ) {
        let start = y as usize * self.width + xs.start as usize;
        let range = start..start + xs.len();
        let local = range.start - band.first..range.end - band.first;
        let data = &mut band.scratch.data;
        data.clear();
        data.extend_from_slice(&band.base[local.clone()]);
        if let (Some((previous, _)), Some(ramp)) = (self.temporal, self.ramp) {
            add_ramp(
                previous,
                ramp,
                &band.distance[local.clone()],
                range.start,
                data,
            );
        }
        if band.changed.is_empty() {
            let (source, sink) = (&mut band.source[local.clone()], &mut band.sink[local]);
            self.split_terminals(data, range.start, edges, source, sink);
            return;
        }
        // tracked: into a scratch row first, then compared as they are copied in
        let [source, sink] = &mut band.scratch.terminals;
        source.resize(data.len(), 0);
        sink.resize(data.len(), 0);
        self.split_terminals(data, range.start, edges, source, sink);
        let words = self.width.div_ceil(ARC_WORD as usize);
        let at = (y - band.rows.start) as usize * words;
        let row = &mut band.changed[at..at + words];
        let arrays = [&mut band.source[local.clone()], &mut band.sink[local]];
        for (to, from) in arrays.into_iter().zip([&*source, &*sink]) {
            copy_marking(row, xs.start as usize, to, from);
        }
    }

    /// The source and sink capacities of the pixels from `first` on, from their signed
    /// capacities `data`; a seeded pixel gets one more than the sum of its neighbour
    /// arcs (arcs are symmetric, so the out-sum also bounds the arcs into it).
    fn split_terminals(
        &self,
        data: &[i32],
        first: usize,
        edges: &[Vec<i32>],
        source: &mut [i32],
        sink: &mut [i32],
    ) {
        for ((s, t), &d) in source.iter_mut().zip(sink.iter_mut()).zip(data) {
            (*s, *t) = if d > 0 { (d, 0) } else { (0, -d) };
        }
        let Some(seeds) = self.seeds else {
            return;
        };
        for (j, label) in seeds.labels[first..first + data.len()].iter().enumerate() {
            let hard = || 1 + edges.iter().map(|e| e[first + j]).sum::<i32>();
            match label {
                SeedLabel::Foreground => (source[j], sink[j]) = (hard(), 0),
                SeedLabel::Background => (source[j], sink[j]) = (0, hard()),
                SeedLabel::Unknown => {}
            }
        }
    }
}

/// Compares a frame's per-pixel input with the last one's, row by row, and marks the
/// tiles that differ.
struct RowDiff {
    width: usize,
    /// Everything counts as changed: the input is only kept.
    whole: bool,
}

impl RowDiff {
    /// Marks in `tiles` where `now` (`per_pixel` values a pixel) differs from `kept`,
    /// then makes `kept` equal to it: rows compared in bands on every core, each
    /// band's differing stretches (a row's pixels from the first to the last that
    /// differ within a tile) listed in `marks`, then marked in order.
    fn diff<T: Copy + PartialEq + Send + Sync>(
        &self,
        now: &[T],
        kept: &mut Vec<T>,
        per_pixel: usize,
        tiles: &mut ChangedTiles,
        marks: &mut Vec<Vec<[u32; 3]>>,
    ) {
        marks.iter_mut().for_each(Vec::clear);
        if self.kept_anew(now, kept, tiles) {
            return;
        }
        let row_len = self.width * per_pixel;
        if row_len == 0 {
            return;
        }
        let rows = bands::band_rows(now.len() / row_len);
        let band_len = rows * row_len;
        let count = now.len().div_ceil(band_len);
        if marks.len() < count {
            marks.resize_with(count, Vec::new);
        }
        let parts = (now.chunks(band_len).zip(kept.chunks_mut(band_len)))
            .zip(marks.iter_mut())
            .enumerate()
            .collect();
        bands::for_each_part(parts, |(b, ((now, kept), marks))| {
            marks.clear();
            diff_rows(now, kept, row_len, per_pixel, b * rows, marks);
        });
        for &[y, x0, x1] in marks.iter().take(count).flatten() {
            tiles.mark_pixels(y, x0..x1);
        }
    }

    /// Where everything counts as changed or `kept` is not comparable with `now`:
    /// keeps `now`, marks every tile and returns true.
    fn kept_anew<T: Copy>(&self, now: &[T], kept: &mut Vec<T>, tiles: &mut ChangedTiles) -> bool {
        let anew = self.whole || kept.len() != now.len();
        if anew {
            kept.clear();
            kept.extend_from_slice(now);
            tiles.mark_whole();
        }
        anew
    }

    /// Marks in `tiles` every pixel within `reach` pixels of a pixel where the mask
    /// `now` differs from `kept`, by the box of each tile's moved pixels (kept in
    /// `moves`), then makes `kept` equal to it.
    fn mark_near_moves(
        &self,
        now: &[u8],
        kept: &mut Vec<u8>,
        reach: u32,
        tiles: &mut ChangedTiles,
        moves: &mut Vec<PixelRect>,
    ) {
        if self.kept_anew(now, kept, tiles) {
            moves.push(PixelRect {
                xs: 0..tiles.width(),
                ys: 0..tiles.height(),
            });
            return;
        }
        let (cols, _) = tiles.tiles();
        // per tile of the current tile row: the box of its moved pixels
        let mut boxes: Vec<Option<PixelRect>> = vec![None; cols as usize];
        let tile = TILE as usize;
        for (y, (a, b)) in now
            .chunks_exact(self.width)
            .zip(kept.chunks_exact_mut(self.width))
            .enumerate()
        {
            let y = y as u32;
            if a != b {
                for (tx, (ta, tb)) in a.chunks(tile).zip(b.chunks(tile)).enumerate() {
                    let Some(xs) = differing(ta, tb, 1) else {
                        continue;
                    };
                    let x0 = (tx * tile) as u32;
                    let (left, right) = (x0 + xs.start, x0 + xs.end);
                    let seen = boxes[tx].get_or_insert(PixelRect {
                        xs: left..right,
                        ys: y..y + 1,
                    });
                    seen.xs = seen.xs.start.min(left)..seen.xs.end.max(right);
                    seen.ys.end = y + 1;
                }
                b.copy_from_slice(a);
            }
            let last_of_tile_row = (y + 1).is_multiple_of(TILE) || y + 1 == tiles.height();
            if last_of_tile_row {
                // a run of tiles with moves is one move for the distances: their
                // windows would overlap
                let mut run: Option<PixelRect> = None;
                for slot in boxes.iter_mut() {
                    let Some(moved) = slot.take() else {
                        moves.extend(run.take());
                        continue;
                    };
                    tiles.mark_rect(&moved, reach);
                    run = Some(match run {
                        None => moved,
                        Some(r) => PixelRect {
                            xs: r.xs.start.min(moved.xs.start)..r.xs.end.max(moved.xs.end),
                            ys: r.ys.start.min(moved.ys.start)..r.ys.end.max(moved.ys.end),
                        },
                    });
                }
                moves.extend(run);
            }
        }
    }
}

/// Whether every stretch of `moves` lies within a `width`×`height` frame: moves told
/// wrongly are compared for instead of read out of bounds (here and in σ's sums).
pub(crate) fn moves_fit(moves: &[Vec<[u32; 3]>], width: u32, height: u32) -> bool {
    moves
        .iter()
        .flatten()
        .all(|&[y, x0, x1]| y < height && x0 < x1 && x1 <= width)
}

/// What [`RowDiff::diff`] finds for the frame `rgb`, told instead (`moves`, as
/// [`EnergyInputs::rgb_moves`]): the stretches go to `marks` and into `kept`, which
/// then equals `rgb` again.
fn take_moves(
    moves: &[Vec<[u32; 3]>],
    rgb: &[u8],
    kept: &mut [u8],
    width: u32,
    marks: &mut Vec<Vec<[u32; 3]>>,
) {
    marks.iter_mut().for_each(Vec::clear);
    if marks.len() < moves.len() {
        marks.resize_with(moves.len(), Vec::new);
    }
    for (marks, moves) in marks.iter_mut().zip(moves) {
        marks.clone_from(moves);
    }
    for &[y, x0, x1] in moves.iter().flatten() {
        let at = 3 * (y as usize * width as usize + x0 as usize)..;
        let len = 3 * (x1 - x0) as usize;
        kept[at.clone()][..len].copy_from_slice(&rgb[at][..len]);
    }
    debug_assert!(kept == rgb, "the moves told are all that changed");
}

/// [`RowDiff::diff`] on a band of rows `row_len` values long whose first is row
/// `first`: each row's differing stretch per tile goes to `marks` as `[y, x0, x1]`, and
/// the row is kept.
fn diff_rows<T: Copy + PartialEq>(
    now: &[T],
    kept: &mut [T],
    row_len: usize,
    per_pixel: usize,
    first: usize,
    marks: &mut Vec<[u32; 3]>,
) {
    let tile_len = TILE as usize * per_pixel;
    for (y, (a, b)) in now
        .chunks_exact(row_len)
        .zip(kept.chunks_exact_mut(row_len))
        .enumerate()
    {
        if a == b {
            continue;
        }
        for (tx, (ta, tb)) in a.chunks(tile_len).zip(b.chunks(tile_len)).enumerate() {
            if let Some(xs) = differing(ta, tb, per_pixel) {
                let x0 = tx as u32 * TILE;
                marks.push([(first + y) as u32, x0 + xs.start, x0 + xs.end]);
            }
        }
        b.copy_from_slice(a);
    }
}

/// Into `out`, one-row rectangles that hold the first pixel of every neighbour pair with
/// an end in `stretches` (`[y, x0, x1]`, in row then column order): such a pair starts
/// on the stretch's row or the row above, at most a pixel to either side. A row's
/// rectangles do not overlap, so no pair is redone twice.
fn pair_rows(
    stretches: impl Iterator<Item = [u32; 3]> + Clone,
    width: u32,
    out: &mut Vec<PixelRect>,
) {
    out.clear();
    let xs = |x0: u32, x1: u32| x0.saturating_sub(1)..(x1 + 1).min(width);
    // two runs in order, the stretches' rows and the rows above them, merged after
    out.extend(stretches.clone().map(|[y, x0, x1]| PixelRect {
        xs: xs(x0, x1),
        ys: y..y + 1,
    }));
    out.extend(stretches.filter_map(|[y, x0, x1]| {
        let above = y.checked_sub(1)?;
        Some(PixelRect {
            xs: xs(x0, x1),
            ys: above..y,
        })
    }));
    merge_rows(out);
}

/// The pixels of a stretch `[y, x0, x1]`.
fn stretch_rect(&[y, x0, x1]: &[u32; 3]) -> PixelRect {
    PixelRect {
        xs: x0..x1,
        ys: y..y + 1,
    }
}

/// Sorts one-row rectangles by row and column and merges those that overlap or touch
/// on a row, so that no pixel is in two. The rectangles come as a few runs already in
/// order, which the stable sort finds and merges in one pass each.
fn merge_rows(rects: &mut Vec<PixelRect>) {
    rects.sort_by_key(|r| (r.ys.start, r.xs.start));
    let mut kept = 0;
    for i in 0..rects.len() {
        if kept > 0 {
            let (done, rest) = rects.split_at_mut(i);
            let (last, next) = (&mut done[kept - 1], &rest[0]);
            if last.ys == next.ys && next.xs.start <= last.xs.end {
                last.xs.end = last.xs.end.max(next.xs.end);
                continue;
            }
        }
        rects.swap(kept, i);
        kept += 1;
    }
    rects.truncate(kept);
}

/// The pixels (of `per_pixel` values each) from the first to the last where `a` and
/// `b` differ, or `None` where they are equal.
fn differing<T: PartialEq>(a: &[T], b: &[T], per_pixel: usize) -> Option<Range<u32>> {
    if a == b {
        return None;
    }
    let first = a.iter().zip(b).position(|(p, q)| p != q)?;
    let last = a.iter().zip(b).rposition(|(p, q)| p != q)?;
    Some((first / per_pixel) as u32..(last / per_pixel) as u32 + 1)
}

/// Zeroes the capacities of the arcs that would leave a `width`-pixel-wide grid: a
/// whole frame writes every other one, and arrays reused from a frame of another shape
/// but as many pixels may hold capacities there.
fn clear_off_grid(edges: &mut [Vec<i32>], width: usize, height: usize) {
    for (array, dir) in edges.iter_mut().zip(Direction::ALL) {
        let (dx, dy) = dir.offset();
        for (y, row) in array.chunks_exact_mut(width.max(1)).enumerate() {
            if (dy < 0 && y == 0) || (dy > 0 && y + 1 == height) {
                row.fill(0);
            } else if dx < 0 {
                row[0] = 0;
            } else if dx > 0 {
                row[width - 1] = 0;
            }
        }
    }
}

/// The frame-wide inputs of `inputs` at σ `sigma`.
fn frame_key(inputs: &EnergyInputs<'_>, sigma: f32) -> FrameKey {
    let s = &inputs.smoothness;
    FrameKey {
        width: inputs.width,
        height: inputs.height,
        connectivity: s.connectivity,
        smoothness: [s.lambda.to_bits(), sigma.to_bits(), s.scale.to_bits()],
        models: inputs.colors.as_ref().map(|m| m.generation()),
        background: inputs.background.map(|(_, w)| w.to_bits()),
        temporal: inputs
            .temporal
            .map(|(_, p)| [p.weight.to_bits(), p.ramp.to_bits()]),
        seeded: inputs.seeds.is_some(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::color::{ColorModelKind, Side};
    use crate::grid::Connectivity;

    fn smoothness() -> Smoothness {
        Smoothness {
            connectivity: Connectivity::Four,
            lambda: 5.0,
            sigma: None,
            scale: CAPACITY_SCALE,
        }
    }

    #[test]
    fn moves_told_build_what_a_comparison_builds_and_bad_ones_are_compared() {
        let (w, h) = (40u32, 10u32);
        // a smooth frame, so that a changed pixel changes its arcs
        let first: Vec<u8> = (0..3 * w * h)
            .map(|i| (i / 3 % w + i / 3 / w) as u8)
            .collect();
        let mut second = first.clone();
        for p in [0usize, 1, 33, 39, 200, 399] {
            second[3 * p] = second[3 * p].wrapping_add(50);
        }
        // each row's first to last changed pixel per tile, as the gate lists them
        let told = vec![vec![
            [0, 0, 2],
            [0, 33, 34],
            [0, 39, 40],
            [5, 0, 1],
            [9, 39, 40],
        ]];
        let bad = vec![vec![[h, 0, 3], [0, 5, 3]]];
        let build = |moves: Option<&[Vec<[u32; 3]>]>| {
            let mut builder = EnergyBuilder::new();
            let inputs = |rgb, rgb_moves| EnergyInputs {
                width: w,
                height: h,
                rgb,
                smoothness: Smoothness {
                    sigma: Some(12.0),
                    ..smoothness()
                },
                colors: None,
                seeds: None,
                temporal: None,
                background: None,
                rgb_moves,
            };
            let a = builder.build(inputs(&first, None)).unwrap();
            builder.recycle(a);
            builder.build(inputs(&second, moves)).unwrap()
        };
        let compared = build(None);
        assert!(build(Some(&told)) == compared);
        assert!(build(Some(&bad)) == compared);
    }

    #[test]
    fn seeds_are_hard_and_data_terms_reparameterised() {
        // 4x1: red red blue blue; seeds on the two ends.
        let rgb = [200u8, 0, 0, 200, 0, 0, 0, 0, 200, 0, 0, 200];
        let mut seeds = Seeds::unknown(4, 1);
        seeds.labels[0] = SeedLabel::Foreground;
        seeds.labels[3] = SeedLabel::Background;
        let kind = ColorModelKind::Histogram { bits: 4 };
        let mut models = ColorModels::learn(kind, &rgb, |i| match seeds.labels[i] {
            SeedLabel::Foreground => Some(Side::Foreground),
            SeedLabel::Background => Some(Side::Background),
            SeedLabel::Unknown => None,
        })
        .unwrap();
        let mut builder = EnergyBuilder::new();
        let mut build = |builder: &mut EnergyBuilder| {
            builder
                .build(EnergyInputs {
                    width: 4,
                    height: 1,
                    rgb: &rgb,
                    smoothness: smoothness(),
                    colors: Some(&mut models),
                    seeds: Some(&seeds),
                    temporal: None,
                    background: None,
                    rgb_moves: None,
                })
                .unwrap()
        };
        let problem = build(&mut builder);
        let east = problem.edges(Direction::East);
        assert!(east[0] > 0, "seed to unknown arcs stay");
        assert_eq!(
            problem.edges(Direction::West)[1],
            east[0],
            "arcs are symmetric"
        );
        assert_eq!(problem.source()[0], 1 + east[0]);
        assert_eq!(problem.sink()[3], 1 + problem.edges(Direction::West)[3]);
        assert!(
            problem.source()[1] > 0 && problem.sink()[1] == 0,
            "red pixel leans fg"
        );
        assert!(
            problem.sink()[2] > 0 && problem.source()[2] == 0,
            "blue pixel leans bg"
        );
        // Arrays come back for the next frame and keep their size.
        builder.recycle(problem);
        let again = build(&mut builder);
        assert_eq!(again.pixels(), 4);
    }

    /// A frame sequence whose square moves and whose colours change in a few
    /// places, each frame built incrementally at `threads` threads (or whole).
    /// Eight frames of a square moving over noise, seeded every `seeded_every`-th frame
    /// (the colour beside a seed changing each frame), built on `threads` threads, each
    /// with the arcs the builder said it changed (where it knew).
    fn moving_square_problems(
        threads: usize,
        incremental: bool,
        seeded_every: u32,
    ) -> Vec<(GridProblem, Option<ChangedArcs>)> {
        let (w, h) = (61u32, 47u32);
        let mut bits = crate::test_bits::lcg(11);
        let mut rgb: Vec<u8> = (0..3 * w * h).map(|_| (bits() >> 60) as u8 * 9).collect();
        let kind = ColorModelKind::Gmm { components: 2 };
        let inside =
            |x: u32, y: u32, t: u32| (x + 40).abs_diff(2 * t + 50) < 9 && y.abs_diff(20) < 9;
        let mut models = ColorModels::learn(kind, &rgb, |i| {
            let (x, y) = (i as u32 % w, i as u32 / w);
            Some(if inside(x, y, 0) {
                Side::Foreground
            } else {
                Side::Background
            })
        })
        .unwrap();
        let mut seeds = Seeds::unknown(w, h);
        seeds.labels[5] = SeedLabel::Background;
        seeds.labels[(20 * w + 14) as usize] = SeedLabel::Foreground;
        let mut builder = EnergyBuilder::new();
        builder.set_incremental(incremental);
        let mut out = Vec::new();
        crate::bands::with_threads(threads, || {
            for t in 0..8u32 {
                for _ in 0..40 {
                    let i = (bits() >> 40) as usize % rgb.len();
                    rgb[i] = (bits() >> 56) as u8;
                }
                // close to its seeded neighbour's colour, so that their arc's weight moves
                let near = rgb[3 * 5].wrapping_add(t as u8 % 4 * 5);
                let pixel = [near, rgb[3 * 5 + 1], rgb[3 * 5 + 2]];
                rgb[3 * 6..3 * 7].copy_from_slice(&pixel);
                let previous = Mask::from_fn(w, h, |i| inside(i as u32 % w, i as u32 / w, t));
                let inputs = EnergyInputs {
                    width: w,
                    height: h,
                    rgb: &rgb,
                    smoothness: Smoothness {
                        connectivity: Connectivity::Eight,
                        sigma: Some(12.0),
                        ..smoothness()
                    },
                    colors: Some(&mut models),
                    seeds: t.is_multiple_of(seeded_every).then_some(&seeds),
                    temporal: Some((
                        &previous,
                        TemporalPrior {
                            weight: 2.0,
                            ramp: 3.0,
                        },
                    )),
                    background: None,
                    rgb_moves: None,
                };
                let problem = builder.build(inputs).unwrap();
                out.push((problem.clone(), builder.changes().arcs.cloned()));
                builder.recycle(problem);
            }
        });
        out
    }

    #[test]
    fn pair_rows_cover_each_pair_near_a_stretch_once() {
        let width = 40u32;
        let mut bits = crate::test_bits::lcg(5);
        let mut stretches: Vec<[u32; 3]> = (0..60)
            .map(|_| {
                let (y, x) = ((bits() >> 59) as u32, (bits() >> 58) as u32 % width);
                let len = 1 + (bits() >> 61) as u32;
                [y, x, (x + len).min(width)]
            })
            .collect();
        stretches.sort_unstable();
        let mut rects = Vec::new();
        super::pair_rows(stretches.iter().copied(), width, &mut rects);
        let mut covered = std::collections::HashSet::new();
        for r in &rects {
            for (x, y) in r.xs.clone().flat_map(|x| r.ys.clone().map(move |y| (x, y))) {
                assert!(covered.insert((x, y)), "({x}, {y}) twice");
            }
        }
        let mut near = std::collections::HashSet::new();
        for &[y, x0, x1] in &stretches {
            for ys in [y.checked_sub(1), Some(y)].into_iter().flatten() {
                near.extend((x0.saturating_sub(1)..(x1 + 1).min(width)).map(|x| (x, ys)));
            }
        }
        assert_eq!(covered, near);
    }

    #[test]
    fn bands_build_the_same_problems_whatever_the_threads() {
        for seeded_every in [1, 3] {
            built_alike(seeded_every);
        }
    }

    /// [`bands_build_the_same_problems_whatever_the_threads`] with seeds on every
    /// `seeded_every`-th frame.
    fn built_alike(seeded_every: u32) {
        let whole = moving_square_problems(1, false, seeded_every);
        assert!(whole.iter().all(|(_, arcs)| arcs.is_none()));
        for threads in [1, 2, 3] {
            let built = moving_square_problems(threads, true, seeded_every);
            for (t, ((a, _), (b, _))) in built.iter().zip(&whole).enumerate() {
                assert!(
                    a == b,
                    "frame {t} at {threads} threads differs from a whole build"
                );
            }
            let mut told = 0;
            for (t, pair) in built.windows(2).enumerate() {
                let [(last, _), (now, Some(arcs))] = pair else {
                    continue;
                };
                told += 1;
                let exact = ChangedArcs::between(last, now);
                assert!(*arcs == exact, "frame {} at {threads} threads: arcs", t + 1);
            }
            assert!(told >= 2, "only {told} frames said which arcs changed");
        }
    }

    #[test]
    fn a_frame_of_another_shape_and_as_many_pixels_reuses_the_arrays_cleanly() {
        let frame =
            |w: u32, h: u32| -> Vec<u8> { (0..3 * w * h).map(|i| (i * 37 % 251) as u8).collect() };
        let build = |builder: &mut EnergyBuilder, w: u32, h: u32, c: Connectivity| {
            let rgb = frame(w, h);
            let smoothness = Smoothness {
                connectivity: c,
                ..smoothness()
            };
            let inputs = EnergyInputs {
                width: w,
                height: h,
                rgb: &rgb,
                smoothness,
                colors: None,
                seeds: None,
                temporal: None,
                background: None,
                rgb_moves: None,
            };
            builder.build(inputs).unwrap()
        };
        for c in [Connectivity::Four, Connectivity::Eight] {
            let mut reused = EnergyBuilder::new();
            let wide = build(&mut reused, 12, 5, c);
            reused.recycle(wide);
            let tall = build(&mut reused, 5, 12, c);
            let fresh = build(&mut EnergyBuilder::new(), 5, 12, c);
            for &dir in c.directions() {
                assert_eq!(tall.edges(dir), fresh.edges(dir), "{dir:?}");
            }
            tall.validate().unwrap();
        }
    }
}
