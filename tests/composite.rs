//! The composites' soft edge: binary far from the cut, following the image's edges
//! near it.

use livecut::capture::Frame;
use livecut::composite::{self, Backdrop, Composite, alpha};
use livecut::grid::Mask;
use std::time::Duration;

const W: u32 = 80;
const H: u32 = 40;
/// Where the frame turns from dark to bright.
const EDGE: u32 = 40;

fn frame(f: impl Fn(u32, u32) -> [u8; 3]) -> Frame {
    let rgb = (0..H)
        .flat_map(|y| (0..W).map(move |x| (x, y)))
        .flat_map(|(x, y)| f(x, y))
        .collect();
    Frame {
        width: W,
        height: H,
        rgb,
        timestamp: Duration::ZERO,
        index: 0,
    }
}

/// A dark object on the left of a bright wall.
fn dark_left() -> Frame {
    frame(|x, _| {
        if x < EDGE {
            [40, 30, 30]
        } else {
            [220, 220, 210]
        }
    })
}

/// Foreground left of `cut`.
fn mask_left_of(cut: u32) -> Mask {
    Mask::from_fn(W, H, |i| (i as u32 % W) < cut)
}

fn alpha_at(alpha: &[u8], x: u32) -> u8 {
    alpha[(H / 2 * W + x) as usize]
}

#[test]
fn alpha_is_the_mask_away_from_the_cut() {
    for cut in [EDGE - 3, EDGE, EDGE + 3] {
        let mask = mask_left_of(cut);
        let alpha = composite::soft_alpha(&dark_left(), &mask);
        let band = 2 * alpha::RADIUS as u32;
        for (i, (&a, &m)) in alpha.iter().zip(&mask.data).enumerate() {
            let x = i as u32 % W;
            if x + band < cut || x > cut + band {
                assert_eq!(a, m, "cut at {cut}, pixel {x}");
            }
        }
    }
    // A mask with nothing to cut stays as it is.
    assert_eq!(
        composite::soft_alpha(&dark_left(), &Mask::empty(W, H)),
        vec![0; (W * H) as usize]
    );
}

#[test]
fn alpha_follows_the_image_edge_near_the_cut() {
    // The cut runs three pixels short of the object's edge: the alpha moves to the
    // edge, where a flat frame's alpha only blurs the cut.
    let mask = mask_left_of(EDGE - 3);
    let edged = composite::soft_alpha(&dark_left(), &mask);
    let flat = composite::soft_alpha(&frame(|_, _| [128; 3]), &mask);
    for x in EDGE - 3..EDGE {
        let (e, f) = (alpha_at(&edged, x), alpha_at(&flat, x));
        assert!(
            e > 64 && e >= f + 15,
            "inside the object at {x}: {e} (flat {f})"
        );
    }
    for x in EDGE..EDGE + 3 {
        let (e, f) = (alpha_at(&edged, x), alpha_at(&flat, x));
        assert!(e < 8 && f > 10, "on the wall at {x}: {e} (flat {f})");
    }
    // The alpha drops at the image edge, not over the cut's blur.
    assert!(alpha_at(&edged, EDGE - 1) > alpha_at(&edged, EDGE) + 64);
    // With the cut on the edge, the edge stays sharp.
    let on_edge = composite::soft_alpha(&dark_left(), &mask_left_of(EDGE));
    assert!(alpha_at(&on_edge, EDGE - 1) > 240 && alpha_at(&on_edge, EDGE) < 15);
    // On a flat frame the alpha ramps down across the cut.
    let ramp: Vec<u8> = (EDGE - 13..EDGE + 8).map(|x| alpha_at(&flat, x)).collect();
    assert!(ramp.windows(2).all(|p| p[0] >= p[1]), "{ramp:?}");
    assert!(ramp[0] == 255 && ramp[20] == 0, "{ramp:?}");
    assert!(ramp[3..18].iter().all(|&a| a > 0 && a < 255), "{ramp:?}");
}

#[test]
fn composites_mix_foreground_and_background_by_the_soft_alpha() {
    let f = dark_left();
    let mask = mask_left_of(EDGE - 3);
    let alpha = composite::soft_alpha(&f, &mask);
    let backdrop = Composite::Background(Backdrop::Colour([0, 0, 255]));
    let img = backdrop.compose(&f, &mask);
    for x in [0, EDGE - 2, EDGE + 1, W - 1] {
        let a = u32::from(alpha_at(&alpha, x));
        let src = f.rgb[((H / 2 * W + x) * 3) as usize];
        let expected = ((u32::from(src) * a + 127) / 255) as u8;
        assert_eq!(img.get_pixel(x, H / 2).0[0], expected, "red at {x}");
        assert_eq!(img.get_pixel(x, H / 2).0[3], 255, "opaque");
    }
    let cut = composite::cut_out_alpha(&f, &mask);
    assert_eq!(cut.get_pixel(EDGE - 2, 0).0[3], alpha_at(&alpha, EDGE - 2));
    assert_eq!(cut.get_pixel(0, 0).0, [40, 30, 30, 255]);
    assert_eq!(cut.get_pixel(W - 1, 0).0[3], 0);
}
