//! The user's scribbles: strokes of foreground, background or eraser painted over a
//! base layer of seeds (the source's default seeds or a loaded seeds file), with undo
//! and clear, rasterised into [`Seeds`] for the segmenter.

use crate::energy::{SeedLabel, Seeds};

/// What a stroke paints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Tool {
    /// Foreground seeds.
    Foreground,
    /// Background seeds.
    Background,
    /// Removes seeds (back to unconstrained).
    Erase,
}

impl Tool {
    /// The seed label the tool paints.
    pub fn label(self) -> SeedLabel {
        match self {
            Tool::Foreground => SeedLabel::Foreground,
            Tool::Background => SeedLabel::Background,
            Tool::Erase => SeedLabel::Unknown,
        }
    }
}

/// One stroke in frame pixel coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct Stroke {
    /// What it paints.
    pub tool: Tool,
    /// Brush radius in pixels.
    pub radius: f32,
    /// Centre line, at least one point.
    pub points: Vec<[f32; 2]>,
}

/// The seeds of one frame size: base layer plus strokes.
#[derive(Clone, Debug)]
pub struct Scribbles {
    width: u32,
    height: u32,
    base: Seeds,
    strokes: Vec<Stroke>,
    /// The stroke being painted, not yet in the undo list.
    active: Option<Stroke>,
    /// Seeds changed since the last [`Scribbles::take_changed`].
    changed: bool,
}

impl Scribbles {
    /// Scribbles over `base` (use [`Seeds::unknown`] for an empty canvas).
    pub fn new(base: Seeds) -> Self {
        Self {
            width: base.width,
            height: base.height,
            base,
            strokes: Vec::new(),
            active: None,
            changed: true,
        }
    }

    /// Frame size the scribbles belong to.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Finished strokes, oldest first, then the active one.
    pub fn strokes(&self) -> impl Iterator<Item = &Stroke> {
        self.strokes.iter().chain(self.active.as_ref())
    }

    /// The base layer.
    pub fn base(&self) -> &Seeds {
        &self.base
    }

    /// Whether there is anything to undo.
    pub fn can_undo(&self) -> bool {
        !self.strokes.is_empty()
    }

    /// Starts a stroke at `p` (frame pixels).
    pub fn begin(&mut self, tool: Tool, radius: f32, p: [f32; 2]) {
        self.finish();
        self.active = Some(Stroke {
            tool,
            radius: radius.max(0.5),
            points: vec![p],
        });
        self.changed = true;
    }

    /// Continues the active stroke to `p`; ignored when no stroke is active or the
    /// pointer did not move.
    pub fn extend(&mut self, p: [f32; 2]) {
        if let Some(stroke) = &mut self.active
            && stroke.points.last() != Some(&p)
        {
            stroke.points.push(p);
            self.changed = true;
        }
    }

    /// Ends the active stroke; it becomes one undo step.
    pub fn finish(&mut self) {
        if let Some(stroke) = self.active.take() {
            self.strokes.push(stroke);
        }
    }

    /// Whether a stroke is being painted.
    pub fn painting(&self) -> bool {
        self.active.is_some()
    }

    /// Removes the last stroke.
    pub fn undo(&mut self) {
        self.finish();
        if self.strokes.pop().is_some() {
            self.changed = true;
        }
    }

    /// Removes every stroke and the base layer.
    pub fn clear(&mut self) {
        self.active = None;
        self.strokes.clear();
        self.base = Seeds::unknown(self.width, self.height);
        self.changed = true;
    }

    /// Replaces everything by `base` (a loaded seeds file or the source's defaults).
    pub fn reset(&mut self, base: Seeds) {
        *self = Self::new(base);
    }

    /// True once after any change: the seeds must be sent to the worker again.
    pub fn take_changed(&mut self) -> bool {
        std::mem::take(&mut self.changed)
    }

    /// The seeds: base layer, then every stroke painted in order.
    pub fn rasterize(&self) -> Seeds {
        let mut seeds = self.base.clone();
        for stroke in self.strokes() {
            paint_stroke(&mut seeds, stroke);
        }
        seeds
    }
}

/// Stamps discs along the stroke's segments, spaced a quarter radius apart.
fn paint_stroke(seeds: &mut Seeds, stroke: &Stroke) {
    let label = stroke.tool.label();
    let step = (stroke.radius * 0.25).max(0.5);
    let mut prev = stroke.points[0];
    paint_disc(seeds, prev, stroke.radius, label);
    for &p in &stroke.points[1..] {
        let (dx, dy) = (p[0] - prev[0], p[1] - prev[1]);
        let n = ((dx * dx + dy * dy).sqrt() / step).ceil().max(1.0) as u32;
        for k in 1..=n {
            let t = k as f32 / n as f32;
            paint_disc(
                seeds,
                [prev[0] + dx * t, prev[1] + dy * t],
                stroke.radius,
                label,
            );
        }
        prev = p;
    }
}

/// Sets every pixel whose centre lies within `radius` of `c` (pixel centres at +0.5).
fn paint_disc(seeds: &mut Seeds, c: [f32; 2], radius: f32, label: SeedLabel) {
    let (w, h) = (seeds.width as i64, seeds.height as i64);
    let x0 = ((c[0] - radius).floor() as i64).max(0);
    let x1 = ((c[0] + radius).ceil() as i64).min(w - 1);
    let y0 = ((c[1] - radius).floor() as i64).max(0);
    let y1 = ((c[1] + radius).ceil() as i64).min(h - 1);
    let r2 = radius * radius;
    for y in y0..=y1 {
        for x in x0..=x1 {
            let (dx, dy) = (x as f32 + 0.5 - c[0], y as f32 + 0.5 - c[1]);
            if dx * dx + dy * dy <= r2 {
                seeds.labels[(y * w + x) as usize] = label;
            }
        }
    }
}

/// Default seeds for a source without its own: a foreground stroke down the middle
/// of the frame and a background frame around the border (a person in front of a
/// camera is the usual scene).
pub fn default_seeds(width: u32, height: u32) -> Seeds {
    let mut seeds = Seeds::unknown(width, height);
    let (w, h) = (width as f32, height as f32);
    let band = (w.min(h) * 0.03).max(1.0);
    let border = Stroke {
        tool: Tool::Background,
        radius: band,
        points: vec![
            [band, band],
            [w - band, band],
            [w - band, h - band],
            [band, h - band],
            [band, band],
        ],
    };
    let centre = Stroke {
        tool: Tool::Foreground,
        radius: band,
        points: vec![[w * 0.5, h * 0.35], [w * 0.5, h * 0.85]],
    };
    paint_stroke(&mut seeds, &border);
    paint_stroke(&mut seeds, &centre);
    seeds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strokes_paint_undo_and_erase() {
        let mut s = Scribbles::new(Seeds::unknown(40, 20));
        s.begin(Tool::Foreground, 2.0, [5.0, 10.0]);
        s.extend([35.0, 10.0]);
        s.finish();
        let seeds = s.rasterize();
        assert_eq!(
            seeds.labels[10 * 40 + 20],
            SeedLabel::Foreground,
            "segment interior painted"
        );
        assert_eq!(seeds.labels[0], SeedLabel::Unknown);
        // Erase a piece of it.
        s.begin(Tool::Erase, 3.0, [20.0, 10.0]);
        s.finish();
        assert_eq!(s.rasterize().labels[10 * 40 + 20], SeedLabel::Unknown);
        s.undo();
        assert_eq!(s.rasterize(), seeds);
        s.undo();
        assert_eq!(s.rasterize().count(SeedLabel::Foreground), 0);
        assert!(!s.can_undo());
    }

    #[test]
    fn later_strokes_win_and_clear_drops_the_base() {
        let mut base = Seeds::unknown(10, 10);
        base.labels[0] = SeedLabel::Background;
        let mut s = Scribbles::new(base);
        s.begin(Tool::Foreground, 1.0, [0.5, 0.5]);
        s.begin(Tool::Background, 1.0, [0.5, 0.5]);
        let seeds = s.rasterize();
        assert_eq!(seeds.labels[0], SeedLabel::Background);
        assert_eq!(s.strokes().count(), 2);
        s.clear();
        assert_eq!(s.rasterize(), Seeds::unknown(10, 10));
    }

    #[test]
    fn strokes_outside_the_frame_are_clipped() {
        let mut s = Scribbles::new(Seeds::unknown(8, 8));
        s.begin(Tool::Foreground, 4.0, [-20.0, -20.0]);
        s.extend([30.0, 30.0]);
        let seeds = s.rasterize();
        assert_eq!(seeds.labels[3 * 8 + 3], SeedLabel::Foreground);
    }

    #[test]
    fn changes_are_reported_once() {
        let mut s = Scribbles::new(Seeds::unknown(4, 4));
        assert!(s.take_changed());
        assert!(!s.take_changed());
        s.begin(Tool::Background, 1.0, [1.0, 1.0]);
        s.extend([1.0, 1.0]);
        assert!(s.take_changed());
        s.extend([1.0, 1.0]);
        assert!(!s.take_changed(), "no movement, no change");
        s.undo();
        assert!(s.take_changed());
    }

    #[test]
    fn default_seeds_have_both_labels() {
        let seeds = default_seeds(64, 48);
        assert!(seeds.count(SeedLabel::Foreground) > 0);
        assert!(seeds.count(SeedLabel::Background) > 0);
        assert_eq!(seeds.labels[0], SeedLabel::Background);
        assert_eq!(seeds.labels[(30 * 64 + 32) as usize], SeedLabel::Foreground);
    }
}
