//! The built-in demo scene as a source: generated in code (no footage), deterministic
//! from a seed, at any size and frame rate, with default seeds for its first frame and
//! the ground-truth mask of every frame. It is what livecut shows where there is no
//! camera, and what tests segment.

mod noise;
mod object;
mod scene;

pub use scene::DemoScene;

use super::{CaptureError, CapturedFrame, FrameSource, millis_since};
use crate::energy::Seeds;
use std::time::{Duration, Instant};

/// Smallest and largest side accepted, in pixels.
pub const SIDE_RANGE: std::ops::RangeInclusive<u32> = 16..=8192;

/// Largest frame rate accepted.
pub const MAX_FPS: u32 = 240;

/// How the demo's camera moves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DemoMotion {
    /// On a tripod: the background stays put and only sensor noise, a slow exposure
    /// drift and the objects change it, as in front of a webcam. What dynamic cuts are
    /// for.
    #[default]
    Still,
    /// Panning slowly, with a lighting dip and a band of light moving across: the
    /// whole background moves, by a fraction of a pixel per frame.
    Pan,
}

impl DemoMotion {
    /// Every motion, the default first.
    pub const ALL: [Self; 2] = [Self::Still, Self::Pan];

    /// The name used in source specs (`demo:pan`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Still => "still",
            Self::Pan => "pan",
        }
    }
}

/// How to generate the demo stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemoConfig {
    /// Frame width in pixels.
    pub width: u32,
    /// Frame height in pixels.
    pub height: u32,
    /// Frames per second of scene time.
    pub fps: u32,
    /// Seed of everything random in the scene.
    pub seed: u64,
    /// How the camera moves.
    pub motion: DemoMotion,
    /// Number of frames before the stream ends; `None` runs forever.
    pub frames: Option<u64>,
    /// Deliver frames at `fps` in real time like a camera (a live source) instead of
    /// as fast as they are read.
    pub realtime: bool,
}

impl Default for DemoConfig {
    fn default() -> Self {
        Self {
            width: 640,
            height: 480,
            fps: 30,
            seed: 1,
            motion: DemoMotion::Still,
            frames: None,
            realtime: false,
        }
    }
}

/// The demo scene as a [`FrameSource`].
pub struct DemoSource {
    config: DemoConfig,
    scene: DemoScene,
    next: u64,
    started: Option<Instant>,
}

impl DemoSource {
    /// Checks the configuration and builds the scene.
    pub fn new(config: DemoConfig) -> Result<Self, CaptureError> {
        if !SIDE_RANGE.contains(&config.width) || !SIDE_RANGE.contains(&config.height) {
            return Err(CaptureError::Settings(format!(
                "demo size {}x{} is out of range (each side {} to {} pixels)",
                config.width,
                config.height,
                SIDE_RANGE.start(),
                SIDE_RANGE.end()
            )));
        }
        if config.fps == 0 || config.fps > MAX_FPS {
            return Err(CaptureError::Settings(format!(
                "demo frame rate {} is out of range (1 to {MAX_FPS})",
                config.fps
            )));
        }
        let c = &config;
        let scene = DemoScene::with_motion(c.width, c.height, c.fps, c.seed, c.motion);
        Ok(Self {
            config,
            scene,
            next: 0,
            started: None,
        })
    }

    /// The scene, for rendering or ground truth of any frame.
    pub fn scene(&self) -> &DemoScene {
        &self.scene
    }

    /// Sleeps until frame `index` is due, when paced in real time.
    fn wait_for(&mut self, index: u64) {
        if !self.config.realtime {
            return;
        }
        let start = *self.started.get_or_insert_with(Instant::now);
        let due = start + Duration::from_secs_f64(index as f64 / self.config.fps as f64);
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        }
    }
}

impl FrameSource for DemoSource {
    fn describe(&self) -> String {
        let c = &self.config;
        let camera = match c.motion {
            DemoMotion::Still => "still camera",
            DemoMotion::Pan => "panning camera",
        };
        format!(
            "demo scene {}x{} @ {} fps (seed {}, {camera})",
            c.width, c.height, c.fps, c.seed
        )
    }

    fn size(&self) -> (u32, u32) {
        self.scene.size()
    }

    fn is_live(&self) -> bool {
        self.config.realtime
    }

    fn len_hint(&self) -> Option<u64> {
        self.config.frames
    }

    fn default_seeds(&self) -> Option<Seeds> {
        Some(self.scene.default_seeds())
    }

    fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError> {
        let index = self.next;
        if self.config.frames.is_some_and(|n| index >= n) {
            return Ok(None);
        }
        self.wait_for(index);
        let start = Instant::now();
        let (frame, truth) = self.scene.render(index);
        self.next += 1;
        Ok(Some(CapturedFrame {
            frame,
            decode_ms: millis_since(start),
            name: None,
            truth: Some(truth),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::SeedLabel;

    fn config(width: u32, height: u32, seed: u64) -> DemoConfig {
        DemoConfig {
            width,
            height,
            fps: 30,
            seed,
            motion: DemoMotion::Still,
            frames: Some(3),
            realtime: false,
        }
    }

    fn frames(c: DemoConfig) -> Vec<CapturedFrame> {
        let mut src = DemoSource::new(c).unwrap();
        std::iter::from_fn(|| src.next_frame().unwrap()).collect()
    }

    #[test]
    fn same_seed_same_frames_other_seed_other_frames() {
        for motion in DemoMotion::ALL {
            let with = |seed| DemoConfig {
                motion,
                ..config(48, 32, seed)
            };
            let (a, b, c) = (frames(with(5)), frames(with(5)), frames(with(6)));
            assert_eq!(a.len(), 3);
            for (x, y) in a.iter().zip(&b) {
                assert_eq!(x.frame, y.frame);
                assert_eq!(x.truth, y.truth);
            }
            assert_ne!(a[0].frame.rgb, c[0].frame.rgb);
            assert_ne!(a[0].frame.rgb, a[1].frame.rgb, "the scene moves");
        }
    }

    #[test]
    fn frames_have_the_requested_size_and_timestamps() {
        let mut c = config(40, 24, 1);
        c.fps = 20;
        let f = frames(c);
        for (i, cf) in f.iter().enumerate() {
            assert_eq!(
                (cf.frame.width, cf.frame.height, cf.frame.index),
                (40, 24, i as u64)
            );
            assert_eq!(cf.frame.rgb.len(), 40 * 24 * 3);
            assert_eq!(cf.frame.timestamp, Duration::from_millis(50 * i as u64));
            let truth = cf.truth.as_ref().unwrap();
            assert_eq!((truth.width, truth.height), (40, 24));
        }
    }

    #[test]
    fn truth_covers_part_of_the_frame_and_matches_render() {
        let src = DemoSource::new(config(96, 72, 3)).unwrap();
        for index in [0, 17, 90, 400] {
            let (_, rendered) = src.scene().render(index);
            let truth = src.scene().truth(index);
            assert_eq!(rendered, truth);
            let share = truth.count_source() as f64 / (96.0 * 72.0);
            assert!((0.08..0.5).contains(&share), "foreground share {share}");
        }
    }

    #[test]
    fn default_seeds_agree_with_the_first_truth() {
        for seed in [1, 2, 3, 9] {
            let src = DemoSource::new(config(64, 48, seed)).unwrap();
            let seeds = src.default_seeds().unwrap();
            let truth = src.scene().truth(0);
            assert_eq!((seeds.width, seeds.height), (64, 48));
            assert!(seeds.count(SeedLabel::Foreground) > 10, "seed {seed}");
            assert!(seeds.count(SeedLabel::Background) > 50, "seed {seed}");
            for (i, label) in seeds.labels.iter().enumerate() {
                match label {
                    SeedLabel::Foreground => assert!(truth.is_source(i), "seed {seed} pixel {i}"),
                    SeedLabel::Background => assert!(!truth.is_source(i), "seed {seed} pixel {i}"),
                    SeedLabel::Unknown => {}
                }
            }
        }
    }

    #[test]
    fn objects_are_warmer_than_the_background() {
        // Colour separability in one number: mean (R - B) inside vs outside the truth.
        let src = DemoSource::new(config(128, 96, 4)).unwrap();
        let (frame, truth) = src.scene().render(0);
        let (mut fg, mut bg) = ((0.0, 0), (0.0, 0));
        for (i, px) in frame.rgb.chunks(3).enumerate() {
            let warmth = px[0] as f64 - px[2] as f64;
            let acc = if truth.is_source(i) { &mut fg } else { &mut bg };
            acc.0 += warmth;
            acc.1 += 1;
        }
        let (fg, bg) = (fg.0 / fg.1 as f64, bg.0 / bg.1 as f64);
        assert!(fg > 60.0 && bg < 10.0, "fg warmth {fg}, bg warmth {bg}");
    }

    #[test]
    fn bad_settings_are_rejected() {
        assert!(DemoSource::new(config(8, 32, 1)).is_err());
        let mut c = config(32, 32, 1);
        c.fps = 0;
        assert!(DemoSource::new(c).is_err());
    }

    #[test]
    fn realtime_pacing_makes_it_live() {
        let mut c = config(16, 16, 1);
        c.realtime = true;
        assert!(DemoSource::new(c).unwrap().is_live());
        assert!(!DemoSource::new(config(16, 16, 1)).unwrap().is_live());
    }
}
