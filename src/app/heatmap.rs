//! The active-block heatmap: a perceptual colour map (dark purple → orange → pale
//! yellow) of how often the solver worked on each block of the grid, and its legend.

use crate::maxflow::BlockActivity;
use egui::{Color32, Pos2, Rect, Stroke, Ui, Vec2};

/// Colour stops of the map, evenly spaced from 0 to 1 (after "inferno").
const STOPS: [[u8; 3]; 6] = [
    [20, 11, 52],
    [87, 16, 110],
    [165, 44, 96],
    [230, 92, 48],
    [251, 165, 10],
    [252, 255, 164],
];

/// Colour of `t` in 0..=1 (clamped), interpolated between the stops.
pub fn colour_map(t: f32) -> [u8; 3] {
    let t = if t.is_nan() { 0.0 } else { t.clamp(0.0, 1.0) };
    let pos = t * (STOPS.len() - 1) as f32;
    let i = (pos.floor() as usize).min(STOPS.len() - 2);
    let f = pos - i as f32;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    std::array::from_fn(|c| (a[c] as f32 + (b[c] as f32 - a[c] as f32) * f).round() as u8)
}

/// Where a count sits on the map: logarithmic, so a few very busy blocks do not wash
/// out the rest. 0 for an idle block, 1 for the busiest.
pub fn level(count: u32, max: u32) -> f32 {
    if max == 0 {
        0.0
    } else {
        (1.0 + count as f32).ln() / (1.0 + max as f32).ln()
    }
}

/// Colour of every block, row-major; `None` for blocks the solver never touched.
pub fn block_colours(activity: &BlockActivity) -> Vec<Option<[u8; 3]>> {
    let max = activity.counts.iter().copied().max().unwrap_or(0);
    let blocks = activity.columns as usize * activity.rows as usize;
    (0..blocks)
        .map(|i| {
            let count = activity.counts.get(i).copied().unwrap_or(0);
            (count > 0).then(|| colour_map(level(count, max)))
        })
        .collect()
}

/// Share of blocks the solver touched, 0..=1.
pub fn active_share(activity: &BlockActivity) -> f32 {
    let n = activity.counts.len().max(1);
    activity.counts.iter().filter(|&&c| c > 0).count() as f32 / n as f32
}

/// Draws the legend: the colour bar from 1 to the busiest block's count, with labels.
pub fn legend(ui: &mut Ui, activity: Option<&BlockActivity>) {
    let Some(act) = activity else {
        ui.label("No block activity from this engine.");
        return;
    };
    let max = act.counts.iter().copied().max().unwrap_or(0);
    ui.horizontal(|ui| {
        ui.label("idle");
        let (rect, _) = ui.allocate_exact_size(Vec2::new(160.0, 14.0), egui::Sense::hover());
        paint_bar(ui, rect);
        ui.label(format!("1 … {max} visits"));
    });
    ui.label(format!(
        "{} × {} blocks of {}×{} px, {:.0}% active",
        act.columns,
        act.rows,
        act.block_width,
        act.block_height,
        active_share(act) * 100.0
    ));
}

fn paint_bar(ui: &Ui, rect: Rect) {
    let painter = ui.painter_at(rect);
    let steps = 32;
    let w = rect.width() / steps as f32;
    for s in 0..steps {
        let c = colour_map(s as f32 / (steps - 1) as f32);
        let r = Rect::from_min_size(
            Pos2::new(rect.left() + s as f32 * w, rect.top()),
            Vec2::new(w + 0.5, rect.height()),
        );
        painter.rect_filled(r, 0.0, Color32::from_rgb(c[0], c[1], c[2]));
    }
    painter.rect_stroke(
        rect,
        0.0,
        Stroke::new(1.0, ui.visuals().text_color()),
        egui::StrokeKind::Inside,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_ends_and_monotone_brightness() {
        assert_eq!(colour_map(0.0), STOPS[0]);
        assert_eq!(colour_map(1.0), STOPS[5]);
        assert_eq!(colour_map(-3.0), STOPS[0]);
        assert_eq!(colour_map(f32::NAN), STOPS[0]);
        let luma = |c: [u8; 3]| c[0] as u32 * 3 + c[1] as u32 * 6 + c[2] as u32;
        let mut last = 0;
        for s in 0..=50 {
            let l = luma(colour_map(s as f32 / 50.0));
            assert!(l >= last, "brightness grows along the map");
            last = l;
        }
    }

    #[test]
    fn levels_are_logarithmic_and_bounded() {
        assert_eq!(level(0, 0), 0.0);
        assert_eq!(level(0, 100), 0.0);
        assert_eq!(level(100, 100), 1.0);
        let mid = level(10, 100);
        assert!(mid > 0.4 && mid < 0.6, "{mid}");
    }

    #[test]
    fn idle_blocks_have_no_colour() {
        let act = BlockActivity {
            block_width: 8,
            block_height: 8,
            columns: 3,
            rows: 1,
            counts: vec![0, 1, 50],
        };
        let c = block_colours(&act);
        assert_eq!(c[0], None);
        assert!(c[1].is_some());
        assert_eq!(c[2], Some(STOPS[5]));
        assert!((active_share(&act) - 2.0 / 3.0).abs() < 1e-6);
    }
}
