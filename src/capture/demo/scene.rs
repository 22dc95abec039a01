//! The demo scene itself: three textured objects (warm, saturated) drifting and spinning
//! over a textured, cool, slowly panning background, with soft shadows, a lighting dip
//! and sensor noise. Pure functions of (seed, frame index): any frame can be rendered
//! on its own, with its exact ground truth.

use super::noise::{Rng, fbm, mix, value};
use crate::capture::Frame;
use crate::energy::{SeedLabel, Seeds};
use crate::grid::Mask;
use std::f32::consts::TAU;
use std::time::Duration;

type Rgb = [f32; 3];

/// Background palette: slate blue, grey teal, muted green, warm grey.
const BACKGROUND: [Rgb; 4] = [[46.0, 78.0, 108.0], [96.0, 132.0, 146.0], [64.0, 100.0, 80.0], [122.0, 114.0, 102.0]];

/// Object palettes (base, pattern): orange with rust stripes, crimson with peach
/// spots, gold with brown blotches.
const OBJECTS: [[Rgb; 2]; 3] = [
    [[226.0, 128.0, 46.0], [160.0, 74.0, 34.0]],
    [[196.0, 52.0, 88.0], [236.0, 168.0, 128.0]],
    [[224.0, 188.0, 64.0], [134.0, 96.0, 44.0]],
];

/// Standard deviation of the sensor noise, in 8-bit levels.
const NOISE_SIGMA: f32 = 3.5;

/// Outline of an object in its own frame, as a radius per direction.
#[derive(Clone, Copy, Debug)]
enum Shape {
    Ellipse { a: f32, b: f32 },
    /// |x/a|^p + |y/b|^p = 1: a rounded rectangle for p around 4.
    Superellipse { a: f32, b: f32, p: f32 },
    /// A flower-like blob: r(φ) = r0 (1 + amp sin(lobes φ + phase)).
    Blob { r0: f32, lobes: f32, amp: f32, phase: f32 },
}

impl Shape {
    /// Distance from the centre to the outline in direction (cos φ, sin φ).
    fn radius(&self, c: f32, s: f32) -> f32 {
        match *self {
            Shape::Ellipse { a, b } => a * b / ((b * c).powi(2) + (a * s).powi(2)).sqrt(),
            Shape::Superellipse { a, b, p } => ((c / a).abs().powf(p) + (s / b).abs().powf(p)).powf(-1.0 / p),
            Shape::Blob { r0, lobes, amp, phase } => r0 * (1.0 + amp * (lobes * s.atan2(c) + phase).sin()),
        }
    }

    /// Smallest and largest radius, with a little slack for the angles between the
    /// samples.
    fn radius_range(&self) -> (f32, f32) {
        let radii = (0..720).map(|k| (k as f32 / 2.0).to_radians()).map(|a| self.radius(a.cos(), a.sin()));
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

/// One moving object.
#[derive(Clone, Debug)]
struct Object {
    shape: Shape,
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
    /// The surface pre-rendered on a square grid centred on the object, RGB f32.
    sprite: Vec<f32>,
    sprite_side: usize,
}

/// Where an object is at one instant.
#[derive(Clone, Copy, Debug)]
struct Pose {
    cx: f32,
    cy: f32,
    cos: f32,
    sin: f32,
}

impl Object {
    fn pose(&self, t: f32) -> Pose {
        let a = self.angle + self.spin * t;
        Pose {
            cx: self.base.0 + self.amp.0 * (self.omega.0 * t + self.phase.0).sin(),
            cy: self.base.1 + self.amp.1 * (self.omega.1 * t + self.phase.1).sin(),
            cos: a.cos(),
            sin: a.sin(),
        }
    }

    /// Pixel-centre coordinates in the object's own rotated frame.
    fn local(pose: &Pose, x: f32, y: f32) -> (f32, f32) {
        let (dx, dy) = (x - pose.cx, y - pose.cy);
        (dx * pose.cos + dy * pose.sin, -dx * pose.sin + dy * pose.cos)
    }

    /// Signed depth in pixels: positive inside, negative outside (radial distance to
    /// the outline, exact for circles and close enough for anti-aliasing elsewhere).
    fn depth(&self, u: f32, v: f32) -> f32 {
        let rho = (u * u + v * v).sqrt();
        if rho < 1e-6 {
            return self.shape.radius(1.0, 0.0);
        }
        self.shape.radius(u / rho, v / rho) - rho
    }

    /// [`Object::depth`] clamped to [-band, band], skipping the outline where the
    /// inner and outer circles decide (most pixels of a bounding box).
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

    /// Pattern and shading at local (u, v): the object's own surface, which turns with
    /// it. Evaluated once per sprite texel when the scene is built.
    fn surface(&self, u: f32, v: f32) -> Rgb {
        let r = self.size;
        let m = match self.texture {
            Texture::Stripes => {
                let warp = fbm(self.tex_seed, u / (0.6 * r), v / (0.6 * r), 2) - 0.5;
                let s = 0.5 + 0.5 * (TAU * u / (0.45 * r) + 4.0 * warp).sin();
                smoothstep(0.3, 0.7, s)
            }
            Texture::Spots => smoothstep(0.64, 0.74, value(self.tex_seed, u / (0.3 * r), v / (0.3 * r))),
            Texture::Blotches => smoothstep(0.5, 0.62, fbm(self.tex_seed, u / (0.5 * r), v / (0.5 * r), 3)),
        };
        let rho2 = (u * u + v * v) / (r * r);
        let shade = 1.0 - 0.3 * rho2.min(1.5);
        lerp(self.colours[0], self.colours[1], m).map(|c| c * shade)
    }

    /// Paints the sprite: the surface on a square grid covering the whole object.
    fn paint_sprite(&mut self) {
        let side = 2 * self.reach.ceil() as usize + 3;
        let half = (side / 2) as f32;
        let mut sprite = Vec::with_capacity(side * side * 3);
        for j in 0..side {
            for i in 0..side {
                sprite.extend(self.surface(i as f32 - half, j as f32 - half));
            }
        }
        self.sprite = sprite;
        self.sprite_side = side;
    }

    /// Colour at local (u, v) and frame position (x, y): the sprite (bilinear) plus a
    /// glint from a light at the top left, before global lighting.
    fn colour(&self, pose: &Pose, u: f32, v: f32, x: f32, y: f32) -> Rgb {
        let side = self.sprite_side;
        let half = (side / 2) as f32;
        let (su, sv) = ((u + half).clamp(0.0, side as f32 - 1.001), (v + half).clamp(0.0, side as f32 - 1.001));
        let (i0, j0) = (su.floor(), sv.floor());
        let (tx, ty) = (su - i0, sv - j0);
        let k = (j0 as usize * side + i0 as usize) * 3;
        let row = side * 3;
        let sp = &self.sprite;
        let r = self.size;
        let (hx, hy) = (x - pose.cx + 0.35 * r, y - pose.cy + 0.35 * r);
        let glint = 0.3 * (-(hx * hx + hy * hy) / (2.0 * (0.2 * r).powi(2))).exp();
        std::array::from_fn(|c| {
            let top = sp[k + c] + (sp[k + 3 + c] - sp[k + c]) * tx;
            let bottom = sp[k + row + c] + (sp[k + row + 3 + c] - sp[k + row + c]) * tx;
            let base = top + (bottom - top) * ty;
            base + (255.0 - base) * glint
        })
    }

    /// Integer bounding box of the object (grown by `grow` pixels) clipped to the frame.
    fn bounds(&self, pose: &Pose, grow: f32, w: u32, h: u32) -> (u32, u32, u32, u32) {
        let r = self.reach + grow + 1.0;
        let clip = |v: f32, max: u32| v.clamp(0.0, max as f32) as u32;
        (clip(pose.cx - r, w), clip(pose.cx + r + 1.0, w), clip(pose.cy - r, h), clip(pose.cy + r + 1.0, h))
    }
}

fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

fn lerp(a: Rgb, b: Rgb, t: f32) -> Rgb {
    std::array::from_fn(|c| a[c] + (b[c] - a[c]) * t)
}

/// A deterministic synthetic scene of a given size and frame rate.
#[derive(Clone, Debug)]
pub struct DemoScene {
    width: u32,
    height: u32,
    fps: f32,
    seed: u64,
    /// Background texture, larger than the frame by `drift` on every side, RGB f32.
    background: Vec<f32>,
    bg_width: usize,
    drift: (f32, f32),
    objects: Vec<Object>,
    shadow_offset: (f32, f32),
    shadow_blur: f32,
    stroke: f32,
}

impl DemoScene {
    /// Builds the scene (textures and motion paths) from the seed.
    pub fn new(width: u32, height: u32, fps: u32, seed: u64) -> Self {
        let (w, h) = (width as f32, height as f32);
        let s = w.min(h);
        let drift = ((0.025 * w).ceil(), (0.025 * h).ceil());
        let mut rng = Rng::new(seed ^ 0xD3E0);
        let objects = (0..3).map(|i| make_object(i, w, h, &mut rng, seed)).collect();
        let mut scene = Self {
            width,
            height,
            fps: fps as f32,
            seed,
            background: Vec::new(),
            bg_width: 0,
            drift,
            objects,
            shadow_offset: (0.035 * s, 0.05 * s),
            shadow_blur: (0.05 * s).max(1.0),
            stroke: (s / 90.0).max(1.0),
        };
        scene.paint_background_texture();
        scene
    }

    /// Frame width and height.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    fn paint_background_texture(&mut self) {
        let bw = self.width as usize + 2 * self.drift.0 as usize + 2;
        let bh = self.height as usize + 2 * self.drift.1 as usize + 2;
        let s = self.width.min(self.height) as f32;
        let (k1, k2, k3) = (mix(self.seed ^ 11), mix(self.seed ^ 12), mix(self.seed ^ 13));
        let weave = (0.045 * s).max(3.0);
        let mut bg = Vec::with_capacity(bw * bh * 3);
        for y in 0..bh {
            for x in 0..bw {
                let (fx, fy) = (x as f32, y as f32);
                let t1 = fbm(k1, fx / (0.35 * s), fy / (0.35 * s), 4);
                let t2 = fbm(k2, fx / (0.22 * s), fy / (0.22 * s), 3);
                let cool = lerp(BACKGROUND[0], BACKGROUND[1], smoothstep(0.3, 0.7, t1));
                let earthy = lerp(BACKGROUND[2], BACKGROUND[3], smoothstep(0.3, 0.7, t1));
                let base = lerp(cool, earthy, smoothstep(0.42, 0.68, t2));
                let cloth = 1.0 + 0.05 * (TAU * fx / weave).sin() * (TAU * fy / weave).sin();
                let grain = (value(k3, fx / 1.7, fy / 1.7) - 0.5) * 16.0;
                bg.extend(base.map(|c| c * cloth + grain));
            }
        }
        self.background = bg;
        self.bg_width = bw;
    }

    /// How far the background has panned at time t (within the painted margin).
    fn pan(&self, t: f32) -> (f32, f32) {
        (
            self.drift.0 * (1.0 + (TAU * t / 9.0).sin()),
            self.drift.1 * (1.0 + (TAU * t / 7.0 + 1.0).sin()),
        )
    }

    /// The background panned by (pan_x, pan_y) into `buf` (RGB f32, frame-sized). The
    /// fractional part of the pan is the same for every pixel, so are the bilinear
    /// weights.
    fn paint_background(&self, buf: &mut Vec<f32>, pan_x: f32, pan_y: f32) {
        let (x0, y0) = (pan_x.floor(), pan_y.floor());
        let (tx, ty) = (pan_x - x0, pan_y - y0);
        let weights = [(1.0 - tx) * (1.0 - ty), tx * (1.0 - ty), (1.0 - tx) * ty, tx * ty];
        let row = self.bg_width * 3;
        let w = self.width as usize * 3;
        let bg = &self.background;
        for y in 0..self.height as usize {
            let start = (y + y0 as usize) * row + x0 as usize * 3;
            let (top, bottom) = (&bg[start..start + w + 3], &bg[start + row..start + row + w + 3]);
            buf.extend((0..w).map(|i| {
                weights[0] * top[i] + weights[1] * top[i + 3] + weights[2] * bottom[i] + weights[3] * bottom[i + 3]
            }));
        }
    }

    fn time(&self, index: u64) -> f32 {
        index as f32 / self.fps
    }

    /// Global light level at time t: a dip to 72 % between 4 s and 8 s of every 10 s.
    fn dimming(t: f32) -> f32 {
        let p = t.rem_euclid(10.0);
        smoothstep(4.0, 5.0, p) * (1.0 - smoothstep(7.0, 8.0, p))
    }

    /// Renders frame `index` and its ground truth (255 where an object covers at least
    /// half of the pixel).
    pub fn render(&self, index: u64) -> (Frame, Mask) {
        let (w, h) = (self.width as usize, self.height as usize);
        let t = self.time(index);
        let (pan_x, pan_y) = self.pan(t);
        let mut buf = Vec::with_capacity(w * h * 3);
        self.paint_background(&mut buf, pan_x, pan_y);
        let poses: Vec<Pose> = self.objects.iter().map(|o| o.pose(t)).collect();
        self.cast_shadows(&mut buf, &poses);
        let mut truth = Mask::empty(self.width, self.height);
        for (object, pose) in self.objects.iter().zip(&poses) {
            self.paint_object(&mut buf, &mut truth, object, pose);
        }
        let rgb = self.expose(&buf, index, t);
        let frame = Frame {
            width: self.width,
            height: self.height,
            rgb,
            timestamp: Duration::from_secs_f64(index as f64 / self.fps as f64),
            index,
        };
        (frame, truth)
    }

    /// Ground truth of frame `index` alone (no rendering).
    pub fn truth(&self, index: u64) -> Mask {
        let t = self.time(index);
        let mut truth = Mask::empty(self.width, self.height);
        for object in &self.objects {
            let pose = object.pose(t);
            let (x0, x1, y0, y1) = object.bounds(&pose, 0.0, self.width, self.height);
            for y in y0..y1 {
                for x in x0..x1 {
                    let (u, v) = Object::local(&pose, x as f32 + 0.5, y as f32 + 0.5);
                    if object.depth_within(u, v, 1.0) >= 0.0 {
                        truth.data[y as usize * self.width as usize + x as usize] = 255;
                    }
                }
            }
        }
        truth
    }

    fn cast_shadows(&self, buf: &mut [f32], poses: &[Pose]) {
        let w = self.width as usize;
        for (object, pose) in self.objects.iter().zip(poses) {
            let shifted = Pose {
                cx: pose.cx + self.shadow_offset.0,
                cy: pose.cy + self.shadow_offset.1,
                ..*pose
            };
            let (x0, x1, y0, y1) = object.bounds(&shifted, self.shadow_blur, self.width, self.height);
            for y in y0..y1 {
                for x in x0..x1 {
                    let (u, v) = Object::local(&shifted, x as f32 + 0.5, y as f32 + 0.5);
                    let cover = (object.depth_within(u, v, self.shadow_blur) / self.shadow_blur + 0.5).clamp(0.0, 1.0);
                    let i = (y as usize * w + x as usize) * 3;
                    buf[i..i + 3].iter_mut().for_each(|c| *c *= 1.0 - 0.4 * cover);
                }
            }
        }
    }

    fn paint_object(&self, buf: &mut [f32], truth: &mut Mask, object: &Object, pose: &Pose) {
        let w = self.width as usize;
        let (x0, x1, y0, y1) = object.bounds(pose, 0.0, self.width, self.height);
        for y in y0..y1 {
            for x in x0..x1 {
                let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
                let (u, v) = Object::local(pose, px, py);
                let depth = object.depth_within(u, v, 1.0);
                let cover = (depth + 0.5).clamp(0.0, 1.0);
                if cover <= 0.0 {
                    continue;
                }
                let p = y as usize * w + x as usize;
                if depth >= 0.0 {
                    truth.data[p] = 255;
                }
                let colour = object.colour(pose, u, v, px, py);
                for (dst, src) in buf[p * 3..p * 3 + 3].iter_mut().zip(colour) {
                    *dst += (src - *dst) * cover;
                }
            }
        }
    }

    /// Global lighting (dip, slight warm shift, a soft band moving across), then
    /// sensor noise, then 8-bit quantisation.
    fn expose(&self, buf: &[f32], index: u64, t: f32) -> Vec<u8> {
        let (w, h) = (self.width as usize, self.height as usize);
        let dim = Self::dimming(t);
        let gain = 1.0 - 0.28 * dim;
        let tint = [gain * (1.0 + 0.03 * dim), gain, gain * (1.0 - 0.05 * dim)];
        let mut rng = Rng::new(mix(self.seed ^ 0x5E45) ^ index);
        let band: Vec<f32> = (0..w).map(|x| 1.0 + 0.08 * (TAU * x as f32 / w as f32 + 0.5 * t).sin()).collect();
        let mut out = Vec::with_capacity(w * h * 3);
        for y in 0..h {
            let vignette_y = 1.0 + 0.04 * (y as f32 / h as f32 - 0.5);
            for (x, band) in band.iter().enumerate() {
                let noise = rng.noise3();
                let i = (y * w + x) * 3;
                for c in 0..3 {
                    let v = buf[i + c] * tint[c] * band * vignette_y + NOISE_SIGMA * noise[c];
                    // `as` saturates: negative values become 0, large ones 255.
                    out.push((v + 0.5) as u8);
                }
            }
        }
        out
    }

    /// Seeds for frame 0 that need no user: a cross-shaped stroke inside each object
    /// (foreground) and a frame-border rectangle plus a wavy line across the scene,
    /// kept clear of every object (background).
    pub fn default_seeds(&self) -> Seeds {
        let (w, h) = (self.width as f32, self.height as f32);
        let s = w.min(h);
        let poses: Vec<Pose> = self.objects.iter().map(|o| o.pose(0.0)).collect();
        let hw = self.stroke;
        let inset = (0.05 * s).round().max(hw + 1.0);
        let clearance = 3.0 + 0.06 * s;
        let wave_phase = (mix(self.seed ^ 21) % 628) as f32 / 100.0;
        let mut seeds = Seeds::unknown(self.width, self.height);
        for y in 0..self.height {
            for x in 0..self.width {
                let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
                let local: Vec<(f32, f32)> = poses.iter().map(|p| Object::local(p, px, py)).collect();
                let in_stroke = self.objects.iter().zip(&local).any(|(o, &(u, v))| {
                    let rho = (u * u + v * v).sqrt().max(1e-6);
                    let inner = rho <= 0.55 * o.shape.radius(u / rho, v / rho) && o.depth(u, v) >= 1.5;
                    inner && (v.abs() <= hw || u.abs() <= hw)
                });
                let clear = self.objects.iter().zip(&local).all(|(o, &(u, v))| o.depth(u, v) < -clearance);
                let border = [px - inset, w - inset - px, py - inset, h - inset - py];
                let on_rect = border.iter().all(|&d| d >= -hw) && border.iter().any(|&d| d.abs() <= hw);
                let wave = h / 2.0 + 0.3 * h * (TAU * 1.3 * px / w + wave_phase).sin();
                let on_wave = (py - wave).abs() <= hw;
                let label = if in_stroke {
                    SeedLabel::Foreground
                } else if clear && (on_rect || on_wave) {
                    SeedLabel::Background
                } else {
                    continue;
                };
                seeds.labels[(y * self.width + x) as usize] = label;
            }
        }
        seeds
    }
}

/// Object `i` of the scene: its shape, palette, texture and motion path from the seed.
fn make_object(i: usize, w: f32, h: f32, rng: &mut Rng, seed: u64) -> Object {
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
        sprite: Vec::new(),
        sprite_side: 0,
    };
    object.paint_sprite();
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
