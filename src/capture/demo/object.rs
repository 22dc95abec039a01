//! The scene's moving objects: outlines, surfaces and motion paths from the seed, each
//! pre-rendered once as sprites in its own frame (surface with coverage, soft shadow)
//! and drawn per frame row by row at its pose, rotated by nearest-texel lookup.

use super::noise::{Rng, fbm, mix, value};
use super::scene::{Rgb, lerp, smoothstep};
use std::f32::consts::TAU;
use std::ops::Range;

/// Object palettes (base, pattern): orange with rust stripes, crimson with peach
/// spots, gold with brown blotches.
const OBJECTS: [[Rgb; 2]; 3] = [
    [[226.0, 128.0, 46.0], [160.0, 74.0, 34.0]],
    [[196.0, 52.0, 88.0], [236.0, 168.0, 128.0]],
    [[224.0, 188.0, 64.0], [134.0, 96.0, 44.0]],
];

/// Share of the light a full shadow takes away.
const SHADOW_DEPTH: f32 = 0.4;

/// Strength of the highlight at its centre, as a share of the way to white.
const GLINT: f32 = 0.3;

/// Radius (deviation) of the highlight, as a share of the object's size.
const GLINT_RADIUS: f32 = 0.2;

/// Outline of an object in its own frame, as a radius per direction.
#[derive(Clone, Copy, Debug)]
pub(super) enum Shape {
    Ellipse {
        a: f32,
        b: f32,
    },
    /// |x/a|^p + |y/b|^p = 1: a rounded rectangle for p around 4.
    Superellipse {
        a: f32,
        b: f32,
        p: f32,
    },
    /// A flower-like blob: r(φ) = r0 (1 + amp sin(lobes φ + phase)).
    Blob {
        r0: f32,
        lobes: f32,
        amp: f32,
        phase: f32,
    },
}

impl Shape {
    /// Distance from the centre to the outline in direction (cos φ, sin φ).
    pub(super) fn radius(&self, c: f32, s: f32) -> f32 {
        match *self {
            Shape::Ellipse { a, b } => a * b / ((b * c).powi(2) + (a * s).powi(2)).sqrt(),
            Shape::Superellipse { a, b, p } => {
                ((c / a).abs().powf(p) + (s / b).abs().powf(p)).powf(-1.0 / p)
            }
            Shape::Blob {
                r0,
                lobes,
                amp,
                phase,
            } => r0 * (1.0 + amp * (lobes * s.atan2(c) + phase).sin()),
        }
    }

    /// Smallest and largest radius, with a little slack for the angles between the
    /// samples.
    fn radius_range(&self) -> (f32, f32) {
        let radii = (0..720)
            .map(|k| (k as f32 / 2.0).to_radians())
            .map(|a| self.radius(a.cos(), a.sin()));
        let (lo, hi) = radii.fold((f32::MAX, 0.0f32), |(lo, hi), r| (lo.min(r), hi.max(r)));
        (0.98 * lo, 1.02 * hi)
    }
}

#[derive(Clone, Copy, Debug)]
enum Texture {
    Stripes,
    Spots,
    Blotches,
}

/// A square image centred on an object, in the object's own (rotating) frame: texel
/// (i, j) holds what lies at (i - half, j - half). Nothing lies beyond `radius`.
#[derive(Clone, Debug, Default)]
struct Sprite<T> {
    texels: Vec<T>,
    side: usize,
    half: usize,
    radius: f32,
}

impl<T: Copy> Sprite<T> {
    /// Samples `at(u, v)` on a grid wide enough for `radius` and for the margin that
    /// [`Sprite::row`] needs.
    fn new(radius: f32, at: impl Fn(f32, f32) -> T) -> Self {
        let half = radius.ceil() as usize + 2;
        let side = 2 * half + 1;
        let texels = (0..side * side)
            .map(|k| {
                at(
                    (k % side) as f32 - half as f32,
                    (k / side) as f32 - half as f32,
                )
            })
            .collect();
        Self {
            texels,
            side,
            half,
            radius,
        }
    }

    /// Calls `f(x, texel)` for every pixel of row `y` (of a frame `width` wide) whose
    /// centre lies within `radius` of the sprite placed at `pose` (and a few just
    /// beyond), with the texel nearest to that centre.
    fn row(&self, pose: &Pose, y: u32, width: u32, f: impl FnMut(usize, T)) {
        let xs = span(pose.cx, pose.cy, self.radius, y, width);
        self.walk(pose, y, xs, f);
    }

    /// [`Sprite::row`] over the pixels `xs` of that row, which lie within `radius`
    /// (plus a pixel) of the sprite's centre.
    fn walk(&self, pose: &Pose, y: u32, xs: Range<usize>, mut f: impl FnMut(usize, T)) {
        // Local coordinates step by (cos, -sin) per pixel, in 16.16 fixed point; the
        // half texel rounds to the nearest. Centres lie within radius + 1 of the pose,
        // inside the margin, so the coordinates stay positive.
        let fixed = |v: f32| (v * 65536.0).round() as i32;
        let dx = xs.start as f32 + 0.5 - pose.cx;
        let dy = y as f32 + 0.5 - pose.cy;
        let origin = self.half as f32 + 0.5;
        let mut u = fixed(dx * pose.cos + dy * pose.sin + origin);
        let mut v = fixed(-dx * pose.sin + dy * pose.cos + origin);
        let (du, dv) = (fixed(pose.cos), fixed(-pose.sin));
        for x in xs {
            let texel = (v >> 16) as usize * self.side + (u >> 16) as usize;
            f(x, self.texels[texel]);
            u += du;
            v += dv;
        }
    }
}

/// The pixels of row `y` (of a frame `width` wide) whose centres lie within `radius`
/// of (cx, cy), and at each end a few whose centres lie at most a pixel farther.
fn span(cx: f32, cy: f32, radius: f32, y: u32, width: u32) -> Range<usize> {
    let dy = y as f32 + 0.5 - cy;
    if dy.abs() >= radius {
        return 0..0;
    }
    let reach = (radius * radius - dy * dy).sqrt();
    let x0 = (cx - reach - 0.5).floor().max(0.0) as usize;
    let x1 = ((cx + reach + 0.5).ceil().max(0.0) as usize).min(width as usize);
    x0..x1.max(x0)
}

/// One moving object.
#[derive(Clone, Debug)]
pub(super) struct Object {
    pub(super) shape: Shape,
    size: f32,
    /// Radius of the largest circle inside the outline.
    inner: f32,
    /// Radius of the smallest circle around the outline.
    reach: f32,
    base: (f32, f32),
    amp: (f32, f32),
    omega: (f32, f32),
    phase: (f32, f32),
    angle: f32,
    spin: f32,
    colours: [Rgb; 2],
    texture: Texture,
    tex_seed: u64,
    /// The surface (RGB) and how much of each pixel it covers (alpha, 255 = all).
    sprite: Sprite<[u8; 4]>,
    /// How much the soft shadow darkens, in 256ths of the light.
    shadow: Sprite<u8>,
    /// Where the shadow falls from the object (a light at the top left).
    shadow_offset: (f32, f32),
}

/// Where an object (or its shadow) is at one instant.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pose {
    pub(super) cx: f32,
    pub(super) cy: f32,
    cos: f32,
    sin: f32,
}

impl Pose {
    /// The same pose moved by (dx, dy).
    fn shifted(&self, (dx, dy): (f32, f32)) -> Self {
        Self {
            cx: self.cx + dx,
            cy: self.cy + dy,
            ..*self
        }
    }
}

impl Object {
    /// Where the object is at time t.
    pub(super) fn pose(&self, t: f32) -> Pose {
        let a = self.angle + self.spin * t;
        Pose {
            cx: self.base.0 + self.amp.0 * (self.omega.0 * t + self.phase.0).sin(),
            cy: self.base.1 + self.amp.1 * (self.omega.1 * t + self.phase.1).sin(),
            cos: a.cos(),
            sin: a.sin(),
        }
    }

    /// Pixel-centre coordinates in the object's own rotated frame.
    pub(super) fn local(pose: &Pose, x: f32, y: f32) -> (f32, f32) {
        let (dx, dy) = (x - pose.cx, y - pose.cy);
        (
            dx * pose.cos + dy * pose.sin,
            -dx * pose.sin + dy * pose.cos,
        )
    }

    /// Signed depth in pixels: positive inside, negative outside (radial distance to
    /// the outline, exact for circles and close enough for anti-aliasing elsewhere).
    pub(super) fn depth(&self, u: f32, v: f32) -> f32 {
        let rho = (u * u + v * v).sqrt();
        if rho < 1e-6 {
            return self.shape.radius(1.0, 0.0);
        }
        self.shape.radius(u / rho, v / rho) - rho
    }

    /// [`Object::depth`] clamped to [-band, band], skipping the outline where the
    /// inner and outer circles decide (most texels).
    fn depth_within(&self, u: f32, v: f32, band: f32) -> f32 {
        let rho2 = u * u + v * v;
        let (outer, inner) = (self.reach + band, (self.inner - band).max(0.0));
        if rho2 >= outer * outer {
            -band
        } else if rho2 <= inner * inner {
            band
        } else {
            self.depth(u, v).clamp(-band, band)
        }
    }

    /// Pattern, shading and highlight at local (u, v): the object's own surface, which
    /// turns with it. Shading and highlight are centred (a light from the camera), so
    /// they look the same at every angle.
    fn surface(&self, u: f32, v: f32) -> Rgb {
        let r = self.size;
        let m = match self.texture {
            Texture::Stripes => {
                let warp = fbm(self.tex_seed, u / (0.6 * r), v / (0.6 * r), 2) - 0.5;
                let s = 0.5 + 0.5 * (TAU * u / (0.45 * r) + 4.0 * warp).sin();
                smoothstep(0.3, 0.7, s)
            }
            Texture::Spots => smoothstep(
                0.64,
                0.74,
                value(self.tex_seed, u / (0.3 * r), v / (0.3 * r)),
            ),
            Texture::Blotches => smoothstep(
                0.5,
                0.62,
                fbm(self.tex_seed, u / (0.5 * r), v / (0.5 * r), 3),
            ),
        };
        let rho2 = (u * u + v * v) / (r * r);
        let shade = 1.0 - 0.3 * rho2.min(1.5);
        let glint = GLINT * (-rho2 / (2.0 * GLINT_RADIUS * GLINT_RADIUS)).exp();
        lerp(self.colours[0], self.colours[1], m).map(|c| {
            let shaded = c * shade;
            shaded + (255.0 - shaded) * glint
        })
    }

    /// Renders the sprites once: the surface with its anti-aliased coverage (half
    /// covered where the depth is 0), and the shadow `blur` pixels soft.
    fn pre_render(&mut self, blur: f32) {
        // Coverage fades out half a pixel beyond the outline.
        self.sprite = Sprite::new(self.reach + 1.0, |u, v| {
            let cover = (self.depth_within(u, v, 1.0) + 0.5).clamp(0.0, 1.0);
            let [r, g, b] = self
                .surface(u, v)
                .map(|c| c.round().clamp(0.0, 255.0) as u8);
            [r, g, b, (255.0 * cover).round() as u8]
        });
        // The shadow fades out half a blur beyond the outline.
        self.shadow = Sprite::new(self.reach + 0.5 * blur + 1.0, |u, v| {
            let cover = (self.depth_within(u, v, blur) / blur + 0.5).clamp(0.0, 1.0);
            (256.0 * SHADOW_DEPTH * cover).round() as u8
        });
    }

    /// Darkens row `y` of an RGB frame `width` wide where the shadow of the object at
    /// `pose` falls.
    pub(super) fn shade_row(&self, pose: &Pose, y: u32, width: u32, rgb: &mut [u8]) {
        let shadow = pose.shifted(self.shadow_offset);
        let all = span(shadow.cx, shadow.cy, self.shadow.radius, y, width);
        // The object's opaque core hides its own shadow: no need to darken there. Its
        // span reaches a pixel beyond its radius and the nearest texel another 0.71;
        // texels within `inner - 1` all have alpha 255.
        let core = span(pose.cx, pose.cy, self.inner - 3.0, y, width);
        let parts = if core.is_empty() {
            [all, 0..0]
        } else {
            [
                all.start..all.end.min(core.start),
                all.start.max(core.end)..all.end,
            ]
        };
        for xs in parts {
            self.shadow.walk(&shadow, y, xs, |x, k| {
                if k > 0 {
                    for c in &mut rgb[3 * x..3 * x + 3] {
                        *c -= ((*c as u32 * k as u32 + 128) >> 8) as u8;
                    }
                }
            });
        }
    }

    /// Paints the object at `pose` over row `y` of an RGB frame `width` wide, and marks
    /// in `truth` the pixels it covers at least half of.
    pub(super) fn paint_row(
        &self,
        pose: &Pose,
        y: u32,
        width: u32,
        rgb: &mut [u8],
        truth: &mut [u8],
    ) {
        self.sprite.row(pose, y, width, |x, [r, g, b, a]| {
            let dst = &mut rgb[3 * x..3 * x + 3];
            match a {
                0 => return,
                255 => dst.copy_from_slice(&[r, g, b]),
                _ => {
                    let alpha = a as u32 + (a as u32 >> 7);
                    for (d, s) in dst.iter_mut().zip([r, g, b]) {
                        *d = ((*d as u32 * (256 - alpha) + s as u32 * alpha + 128) >> 8) as u8;
                    }
                }
            }
            if a >= 128 {
                truth[x] = 255;
            }
        });
    }

    /// Marks in `truth` the pixels of row `y` that the object at `pose` covers at
    /// least half of, exactly as [`Object::paint_row`] does.
    pub(super) fn truth_row(&self, pose: &Pose, y: u32, width: u32, truth: &mut [u8]) {
        self.sprite.row(pose, y, width, |x, [_, _, _, a]| {
            if a >= 128 {
                truth[x] = 255;
            }
        });
    }
}

/// Object `i` of the scene: its shape, palette, texture and motion path from the seed,
/// with its sprites.
pub(super) fn make_object(i: usize, w: f32, h: f32, rng: &mut Rng, seed: u64) -> Object {
    let s = w.min(h);
    let size = s * rng.range(0.12, 0.16);
    let shape = match (i + (seed % 3) as usize) % 3 {
        0 => {
            let aspect = rng.range(1.25, 1.6).sqrt();
            Shape::Ellipse {
                a: size * aspect,
                b: size / aspect,
            }
        }
        1 => Shape::Superellipse {
            a: size * rng.range(1.0, 1.15),
            b: size * rng.range(0.8, 0.95),
            p: rng.range(3.5, 5.0),
        },
        _ => Shape::Blob {
            r0: size,
            lobes: (4 + (rng.next_u64() % 3)) as f32,
            amp: rng.range(0.12, 0.2),
            phase: rng.range(0.0, TAU),
        },
    };
    let (inner, reach) = shape.radius_range();
    let jitter = |rng: &mut Rng, v: f32| v + rng.range(-0.05, 0.05);
    let anchors = [(0.24, 0.38), (0.52, 0.64), (0.78, 0.4)];
    let (axis_x, amp_x) = path_axis(jitter(rng, anchors[i].0) * w, w, reach, 0.18 * w);
    let (axis_y, amp_y) = path_axis(jitter(rng, anchors[i].1) * h, h, reach, 0.16 * h);
    let colours = OBJECTS[i].map(|c| c.map(|v| (v + rng.range(-8.0, 8.0)).clamp(0.0, 255.0)));
    let mut object = Object {
        shape,
        size,
        inner,
        reach,
        base: (axis_x, axis_y),
        amp: (amp_x, amp_y),
        omega: (TAU / rng.range(4.0, 8.0), TAU / rng.range(4.0, 8.0)),
        phase: (rng.range(0.0, TAU), rng.range(0.0, TAU)),
        angle: rng.range(0.0, TAU),
        spin: rng.range(0.25, 0.7) * if rng.next_u64() & 1 == 0 { 1.0 } else { -1.0 },
        colours,
        texture: [Texture::Stripes, Texture::Spots, Texture::Blotches][i],
        tex_seed: mix(seed ^ (0x7E57 + i as u64)),
        shadow_offset: (0.035 * s, 0.05 * s),
        sprite: Sprite::default(),
        shadow: Sprite::default(),
    };
    object.pre_render((0.05 * s).max(1.0));
    object
}

/// Centre and swing of one axis of a path so that an object of radius `reach` stays
/// inside `[0, extent]` (with a small margin) for every phase.
fn path_axis(want: f32, extent: f32, reach: f32, max_swing: f32) -> (f32, f32) {
    let margin = reach + 0.02 * extent;
    let (lo, hi) = (margin, extent - margin);
    if lo >= hi {
        return (extent / 2.0, 0.0);
    }
    let centre = want.clamp(lo, hi);
    (centre, max_swing.min(centre - lo).min(hi - centre))
}
