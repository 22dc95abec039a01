//! Still images as sources: one image file, or a folder of images read in name order
//! as a sequence (every image the same size).

use super::{CaptureError, CapturedFrame, Frame, FrameSource, millis_since};
use crate::energy::{Seeds, SeedsError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// File extensions read as images (compared without case).
pub const IMAGE_EXTENSIONS: [&str; 4] = ["png", "jpg", "jpeg", "bmp"];

/// Frame rate given to image sequences for their nominal timestamps.
pub const SEQUENCE_FPS: f64 = 30.0;

/// Whether `path` has one of the [`IMAGE_EXTENSIONS`].
pub fn has_image_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| IMAGE_EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)))
}

/// The output name of a frame read from `path`: its file stem.
fn stem_of(path: &Path) -> String {
    path.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// Largest image side read, in pixels.
pub const MAX_IMAGE_SIDE: u32 = 16384;

/// Bytes any image may decode to, whatever its file's size: a 4K RGBA frame fits.
const BASE_DECODE_BYTES: u64 = 64 << 20;

/// Decoded bytes allowed per byte of file beyond [`BASE_DECODE_BYTES`]: the
/// compression ratio of real pictures stays far below it, while a small file whose
/// header claims a huge picture is refused before its buffer is allocated.
const DECODE_RATIO: u64 = 1024;

/// The decoder limits for an image file of `len` bytes.
fn image_limits(len: u64) -> image::Limits {
    let mut limits = image::Limits::default();
    limits.max_image_width = Some(MAX_IMAGE_SIDE);
    limits.max_image_height = Some(MAX_IMAGE_SIDE);
    limits.max_alloc = Some(BASE_DECODE_BYTES.max(len.saturating_mul(DECODE_RATIO)));
    limits
}

/// Decodes an image (PNG, JPEG or BMP, told by its content) held in memory, within
/// limits that keep its memory in proportion to its size.
pub fn decode_image(bytes: &[u8]) -> Result<image::DynamicImage, image::ImageError> {
    let mut reader = image::ImageReader::new(std::io::Cursor::new(bytes)).with_guessed_format()?;
    reader.limits(image_limits(bytes.len() as u64));
    reader.decode()
}

/// Reads and decodes an image file (the format told by its content, else by its
/// extension) within the limits of [`decode_image`]. Every image livecut reads from
/// outside (frames, seeds, ground truth, background pictures) comes through here.
pub fn read_image(path: &Path) -> Result<image::DynamicImage, image::ImageError> {
    let len = std::fs::metadata(path)
        .map_err(image::ImageError::IoError)?
        .len();
    let mut reader = image::ImageReader::open(path)?.with_guessed_format()?;
    reader.limits(image_limits(len));
    reader.decode()
}

/// Reads a seeds image or trimap ([`Seeds::from_image`]) within the limits of
/// [`decode_image`].
pub fn read_seeds(path: &Path) -> Result<Seeds, SeedsError> {
    Ok(Seeds::from_image(read_image(path)?))
}

/// Decodes seeds from an image file's bytes, as [`read_seeds`] does.
pub fn decode_seeds(bytes: &[u8]) -> Result<Seeds, SeedsError> {
    Ok(Seeds::from_image(decode_image(bytes)?))
}

/// Decodes an image file into RGB bytes.
fn decode_rgb(path: &Path) -> Result<(u32, u32, Vec<u8>), CaptureError> {
    let img = read_image(path).map_err(|source| CaptureError::Image {
        path: path.to_path_buf(),
        source,
    })?;
    let rgb = img.into_rgb8();
    let (w, h) = rgb.dimensions();
    Ok((w, h, rgb.into_raw()))
}

/// A frame size as the descriptions give it: `W`x`H`.
fn size_text((width, height): (u32, u32)) -> String {
    format!("{width}x{height}")
}

/// One image file, yielded as a single frame.
pub struct ImageSource {
    path: PathBuf,
    pending: Option<CapturedFrame>,
    size: (u32, u32),
}

impl ImageSource {
    /// Reads and decodes the image now, so a bad file fails here and not mid-run.
    pub fn open(path: &Path) -> Result<Self, CaptureError> {
        let start = Instant::now();
        let (width, height, rgb) = decode_rgb(path)?;
        let frame = Frame {
            width,
            height,
            rgb,
            timestamp: Duration::ZERO,
            index: 0,
        };
        Ok(Self {
            path: path.to_path_buf(),
            pending: Some(CapturedFrame {
                frame,
                decode_ms: millis_since(start),
                name: Some(stem_of(path)),
                truth: None,
            }),
            size: (width, height),
        })
    }

    /// The image file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl FrameSource for ImageSource {
    fn describe(&self) -> String {
        format!("image {} ({})", self.path.display(), size_text(self.size))
    }

    fn size(&self) -> (u32, u32) {
        self.size
    }

    fn len_hint(&self) -> Option<u64> {
        Some(1)
    }

    fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError> {
        Ok(self.pending.take())
    }
}

/// A folder of images, read in file-name order (byte-wise, so zero-pad numbers) as
/// one sequence. Files without an image extension are ignored.
pub struct FolderSource {
    dir: PathBuf,
    files: Vec<PathBuf>,
    next: usize,
    size: (u32, u32),
}

impl FolderSource {
    /// Lists the folder and checks every image's header (readable, same size, no two
    /// with the same stem) before any frame is read.
    pub fn open(dir: &Path) -> Result<Self, CaptureError> {
        let files = list_images(dir)?;
        check_unique_stems(&files)?;
        let first = files
            .first()
            .ok_or_else(|| CaptureError::EmptyFolder(dir.to_path_buf()))?;
        let size = image_size(first)?;
        for path in &files[1..] {
            check_size(path, image_size(path)?, size)?;
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            files,
            next: 0,
            size,
        })
    }

    /// The images in the order they are read.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

/// Image files directly inside `dir`, sorted by file name.
fn list_images(dir: &Path) -> Result<Vec<PathBuf>, CaptureError> {
    let io_err = |source| CaptureError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io_err)? {
        let path = entry.map_err(io_err)?.path();
        if path.is_file() && has_image_extension(&path) {
            files.push(path);
        }
    }
    files.sort_by(|a, b| a.file_name().cmp(&b.file_name()));
    Ok(files)
}

fn check_unique_stems(files: &[PathBuf]) -> Result<(), CaptureError> {
    let mut seen = std::collections::HashMap::new();
    for path in files {
        if let Some(first) = seen.insert(stem_of(path), path) {
            return Err(CaptureError::DuplicateName {
                name: stem_of(path),
                first: first.clone(),
                second: path.clone(),
            });
        }
    }
    Ok(())
}

fn image_size(path: &Path) -> Result<(u32, u32), CaptureError> {
    image::image_dimensions(path).map_err(|source| CaptureError::Image {
        path: path.to_path_buf(),
        source,
    })
}

fn check_size(path: &Path, got: (u32, u32), want: (u32, u32)) -> Result<(), CaptureError> {
    if got == want {
        return Ok(());
    }
    Err(CaptureError::SizeChanged {
        path: path.to_path_buf(),
        got_w: got.0,
        got_h: got.1,
        want_w: want.0,
        want_h: want.1,
    })
}

impl FrameSource for FolderSource {
    fn describe(&self) -> String {
        let (dir, count) = (self.dir.display(), self.files.len());
        format!("folder {dir} ({count} images, {})", size_text(self.size))
    }

    fn size(&self) -> (u32, u32) {
        self.size
    }

    fn len_hint(&self) -> Option<u64> {
        Some(self.files.len() as u64)
    }

    fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError> {
        let Some(path) = self.files.get(self.next) else {
            return Ok(None);
        };
        let start = Instant::now();
        let (width, height, rgb) = decode_rgb(path)?;
        check_size(path, (width, height), self.size)?;
        let index = self.next as u64;
        self.next += 1;
        Ok(Some(CapturedFrame {
            frame: Frame {
                width,
                height,
                rgb,
                timestamp: Duration::from_secs_f64(index as f64 / SEQUENCE_FPS),
                index,
            },
            decode_ms: millis_since(start),
            name: Some(stem_of(path)),
            truth: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_png(path: &Path, w: u32, h: u32, value: u8) {
        image::RgbImage::from_pixel(w, h, image::Rgb([value, 0, 255 - value]))
            .save(path)
            .unwrap();
    }

    #[test]
    fn image_source_yields_one_frame_named_by_stem() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cat.png");
        write_png(&path, 5, 3, 10);
        let mut src = ImageSource::open(&path).unwrap();
        assert_eq!(src.size(), (5, 3));
        assert!(!src.is_live());
        let f = src.next_frame().unwrap().unwrap();
        assert_eq!(f.name.as_deref(), Some("cat"));
        assert_eq!((f.frame.width, f.frame.height, f.frame.index), (5, 3, 0));
        assert_eq!(&f.frame.rgb[..3], &[10, 0, 245]);
        assert_eq!(f.frame.rgb.len(), 5 * 3 * 3);
        assert!(src.next_frame().unwrap().is_none());
    }

    #[test]
    fn a_small_file_claiming_a_huge_image_is_refused_before_decoding() {
        // A valid PNG of 1x1, its header patched to claim 16000x16000 pixels.
        let mut png = Vec::new();
        image::RgbImage::new(1, 1)
            .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
            .unwrap();
        png[16..24].copy_from_slice(&[0, 0, 0x3e, 0x80, 0, 0, 0x3e, 0x80]);
        let mut crc = flate2::Crc::new();
        crc.update(&png[12..29]);
        png[29..33].copy_from_slice(&crc.sum().to_be_bytes());
        let err = decode_image(&png).unwrap_err();
        assert!(matches!(err, image::ImageError::Limits(_)), "{err}");
        assert!(decode_image(&png[..8]).is_err());
    }

    #[test]
    fn unreadable_image_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("broken.png");
        std::fs::write(&path, b"not a png").unwrap();
        let err = ImageSource::open(&path).err().unwrap().to_string();
        assert!(err.contains("broken.png"), "{err}");
        assert!(!err.contains('\n'));
    }

    #[test]
    fn folder_is_read_in_name_order_skipping_other_files() {
        let dir = tempfile::tempdir().unwrap();
        for (name, v) in [("b.png", 2), ("a.png", 1), ("c.bmp", 3), ("a10.PNG", 4)] {
            write_png(&dir.path().join(name), 4, 2, v);
        }
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        std::fs::create_dir(dir.path().join("sub.png")).unwrap();
        let mut src = FolderSource::open(dir.path()).unwrap();
        assert_eq!(src.len_hint(), Some(4));
        let mut names = Vec::new();
        let mut reds = Vec::new();
        while let Some(f) = src.next_frame().unwrap() {
            assert_eq!(f.frame.index, names.len() as u64);
            names.push(f.name.unwrap());
            reds.push(f.frame.rgb[0]);
        }
        assert_eq!(names, ["a", "a10", "b", "c"]);
        assert_eq!(reds, [1, 4, 2, 3]);
    }

    #[test]
    fn folder_errors_are_caught_at_open() {
        let empty = tempfile::tempdir().unwrap();
        assert!(matches!(
            FolderSource::open(empty.path()),
            Err(CaptureError::EmptyFolder(_))
        ));

        let mixed = tempfile::tempdir().unwrap();
        write_png(&mixed.path().join("a.png"), 4, 2, 0);
        write_png(&mixed.path().join("b.png"), 4, 3, 0);
        let err = FolderSource::open(mixed.path()).err().unwrap();
        assert!(
            matches!(
                err,
                CaptureError::SizeChanged {
                    got_h: 3,
                    want_h: 2,
                    ..
                }
            ),
            "{err}"
        );

        let dup = tempfile::tempdir().unwrap();
        write_png(&dup.path().join("a.png"), 4, 2, 0);
        write_png(&dup.path().join("a.bmp"), 4, 2, 0);
        assert!(matches!(
            FolderSource::open(dup.path()),
            Err(CaptureError::DuplicateName { .. })
        ));

        let bad = tempfile::tempdir().unwrap();
        write_png(&bad.path().join("a.png"), 4, 2, 0);
        std::fs::write(bad.path().join("b.png"), b"junk").unwrap();
        assert!(matches!(
            FolderSource::open(bad.path()),
            Err(CaptureError::Image { .. })
        ));
    }
}
