//! What the user asks to read (`demo`, `camera:1`, a path) and how to open it.

use super::{
    CameraSource, CaptureError, DemoConfig, DemoMotion, DemoSource, FolderSource, FrameSource,
    ImageSource, VideoSource, files::has_image_extension, list_cameras,
};
use std::path::PathBuf;

/// Requested size and rate for sources that can produce any (the demo) or choose among
/// modes (cameras take the closest they offer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamSettings {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Frames per second.
    pub fps: u32,
}

impl Default for StreamSettings {
    fn default() -> Self {
        Self {
            width: 640,
            height: 480,
            fps: 30,
        }
    }
}

/// A source to open, as named by the user.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceSpec {
    /// A camera by index, or the first one that opens.
    Camera {
        /// Index as listed by `livecut cameras`; `None` for the first that opens.
        index: Option<u32>,
        /// Requested mode.
        settings: StreamSettings,
    },
    /// One image file.
    Image(PathBuf),
    /// A folder of images in name order.
    Folder(PathBuf),
    /// A video file, decoded by ffmpeg.
    Video(PathBuf),
    /// The built-in demo scene.
    Demo(DemoConfig),
}

impl SourceSpec {
    /// Parses `demo` (or `demo:still`), `demo:pan`, `camera`, `camera:N` or a path (a
    /// folder, an image by its extension, anything else a video). The demo takes its
    /// size and rate from `settings` and is not paced (frames as fast as they are
    /// read); `demo:pan` films it with a panning camera.
    pub fn parse(input: &str, settings: StreamSettings) -> Result<Self, CaptureError> {
        if let Some(motion) = demo_motion(input)? {
            return Ok(Self::Demo(DemoConfig {
                width: settings.width,
                height: settings.height,
                fps: settings.fps,
                motion,
                ..DemoConfig::default()
            }));
        }
        if input == "camera" {
            return Ok(Self::Camera {
                index: None,
                settings,
            });
        }
        if let Some(n) = input.strip_prefix("camera:") {
            let index = n.parse().map_err(|_| CaptureError::BadSpec {
                input: input.into(),
                reason: "the camera index must be a number, e.g. camera:0".into(),
            })?;
            return Ok(Self::Camera {
                index: Some(index),
                settings,
            });
        }
        let path = PathBuf::from(input);
        if path.is_dir() {
            Ok(Self::Folder(path))
        } else if path.is_file() {
            Ok(if has_image_extension(&path) {
                Self::Image(path)
            } else {
                Self::Video(path)
            })
        } else {
            Err(CaptureError::NotFound(path))
        }
    }

    /// The source to show when the user has not chosen one: the first camera, or the
    /// demo scene (paced in real time) where there is no camera.
    pub fn preferred(settings: StreamSettings) -> Self {
        let has_camera = list_cameras().is_ok_and(|c| c.iter().any(|c| !c.modes.is_empty()));
        if has_camera {
            Self::Camera {
                index: None,
                settings,
            }
        } else {
            Self::Demo(DemoConfig {
                width: settings.width,
                height: settings.height,
                fps: settings.fps,
                realtime: true,
                ..DemoConfig::default()
            })
        }
    }

    /// Opens the source; every failure is a one-line error naming the input.
    pub fn open(&self) -> Result<Box<dyn FrameSource>, CaptureError> {
        Ok(match self {
            Self::Camera { index, settings } => Box::new(CameraSource::open(*index, *settings)?),
            Self::Image(path) => Box::new(ImageSource::open(path)?),
            Self::Folder(path) => Box::new(FolderSource::open(path)?),
            Self::Video(path) => Box::new(VideoSource::open(path)?),
            Self::Demo(config) => Box::new(DemoSource::new(config.clone())?),
        })
    }

    /// The file or folder this source reads, if any.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Self::Image(p) | Self::Folder(p) | Self::Video(p) => Some(p),
            Self::Camera { .. } | Self::Demo(_) => None,
        }
    }
}

/// The camera motion `input` asks of the demo (`demo`, `demo:still`, `demo:pan`), or
/// `None` where it does not name the demo.
fn demo_motion(input: &str) -> Result<Option<DemoMotion>, CaptureError> {
    let Some(rest) = input.strip_prefix("demo") else {
        return Ok(None);
    };
    if rest.is_empty() {
        return Ok(Some(DemoMotion::default()));
    }
    // A file or folder whose name starts with "demo" is a path.
    let Some(name) = rest.strip_prefix(':') else {
        return Ok(None);
    };
    let motion = DemoMotion::ALL.into_iter().find(|m| m.name() == name);
    motion.map(Some).ok_or_else(|| CaptureError::BadSpec {
        input: input.into(),
        reason: "the demo's camera is still or pan, e.g. demo:pan".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_and_paths_are_recognised() {
        let s = StreamSettings {
            width: 64,
            height: 48,
            fps: 10,
        };
        let demo = |input| match SourceSpec::parse(input, s).unwrap() {
            SourceSpec::Demo(c) => {
                assert_eq!((c.width, c.height, c.fps, c.realtime), (64, 48, 10, false));
                c.motion
            }
            other => panic!("{other:?}"),
        };
        assert_eq!(demo("demo"), DemoMotion::Still);
        assert_eq!(demo("demo:still"), DemoMotion::Still);
        assert_eq!(demo("demo:pan"), DemoMotion::Pan);
        assert!(matches!(
            SourceSpec::parse("demo:zoom", s),
            Err(CaptureError::BadSpec { .. })
        ));
        // Paths that merely start with the word are paths.
        assert!(matches!(demo_motion("demos/clip.mkv"), Ok(None)));
        assert_eq!(
            SourceSpec::parse("camera:2", s).unwrap(),
            SourceSpec::Camera {
                index: Some(2),
                settings: s
            }
        );
        assert_eq!(
            SourceSpec::parse("camera", s).unwrap(),
            SourceSpec::Camera {
                index: None,
                settings: s
            }
        );
        assert!(matches!(
            SourceSpec::parse("camera:x", s),
            Err(CaptureError::BadSpec { .. })
        ));

        let dir = tempfile::tempdir().unwrap();
        let img = dir.path().join("a.JPG");
        let vid = dir.path().join("a.mkv");
        std::fs::write(&img, b"").unwrap();
        std::fs::write(&vid, b"").unwrap();
        let p = |p: &std::path::Path| SourceSpec::parse(p.to_str().unwrap(), s).unwrap();
        assert_eq!(p(dir.path()), SourceSpec::Folder(dir.path().into()));
        assert_eq!(p(&img), SourceSpec::Image(img.clone()));
        assert_eq!(p(&vid), SourceSpec::Video(vid.clone()));
        let missing = dir.path().join("nope.png");
        assert!(matches!(
            SourceSpec::parse(missing.to_str().unwrap(), s),
            Err(CaptureError::NotFound(_))
        ));
    }
}
