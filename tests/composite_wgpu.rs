//! The composite in wgpu compute shaders against the CPU composite, its reference: the
//! same bytes for every kind of picture (cut-out, blurred, colour and picture backdrops,
//! the transparent cut-out) on demo scenes, random frames and masks, masks of one label,
//! a mask of another size, odd sizes and a stream of frames whose size changes; the
//! texture holds the bytes read back, also where the frame was left on the device. Skipped, with a note, where no wgpu adapter opens
//! (CI runs it on lavapipe and requires it).

mod common;

use common::device::compute_device;
use common::rng::Rng;
use image::{RgbImage, RgbaImage};
use livecut::capture::{DemoScene, Frame};
use livecut::composite::wgpu::WgpuCompositor;
use livecut::composite::{self, Backdrop, Buffers, Composite};
use livecut::compute::{ComputeDevice, FrameOnDevice};
use livecut::grid::Mask;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Every kind of opaque picture, the backdrop picture smaller than the frames.
fn composites() -> Vec<Composite> {
    let picture = Arc::new(RgbImage::from_fn(45, 31, |x, y| {
        [(x * 5) as u8, (y * 8) as u8, (x * y) as u8].into()
    }));
    vec![
        Composite::CutOut,
        Composite::Background(Backdrop::Blur),
        Composite::Background(Backdrop::Colour([10, 200, 30])),
        Composite::Background(Backdrop::Image(picture)),
    ]
}

fn random_frame(rng: &mut Rng, width: u32, height: u32) -> Frame {
    Frame {
        width,
        height,
        rgb: (0..3 * width * height)
            .map(|_| rng.below(256) as u8)
            .collect(),
        timestamp: Duration::ZERO,
        index: 0,
    }
}

/// Random blobs with noise: many short cuts.
fn random_mask(rng: &mut Rng, width: u32, height: u32) -> Mask {
    let (cx, cy) = (
        rng.below(width.into()) as i64,
        rng.below(height.into()) as i64,
    );
    let r = 3 + rng.below(40) as i64;
    Mask::from_fn(width, height, |i| {
        let (x, y) = ((i as u32 % width) as i64, (i as u32 / width) as i64);
        (x - cx).pow(2) + (y - cy).pow(2) <= r * r || rng.below(20) == 0
    })
}

/// Checks every composite of `frame` and `mask` on the device against the CPU's, and
/// the transparent cut-out where the mask is the frame's size.
fn check(gpu: &mut WgpuCompositor, frame: &Frame, mask: &Mask, what: &str) {
    let mut out = RgbaImage::default();
    for composite in composites() {
        gpu.compose_into(&composite, frame, mask, &mut out)
            .expect("composing on the device");
        let want = composite.compose(frame, mask);
        assert_same(&out, &want, &format!("{what}, {composite:?}"));
    }
    if (mask.width, mask.height) == (frame.width, frame.height) {
        gpu.cut_out_alpha_into(frame, mask, &mut out)
            .expect("the cut-out on the device");
        assert_same(&out, &composite::cut_out_alpha(frame, mask), what);
    }
}

fn assert_same(got: &RgbaImage, want: &RgbaImage, what: &str) {
    assert_eq!(got.dimensions(), want.dimensions(), "{what}");
    let first = got.pixels().zip(want.pixels()).position(|(g, w)| g != w);
    if let Some(i) = first {
        let (x, y) = (i as u32 % want.width(), i as u32 / want.width());
        panic!(
            "{what}: pixel ({x}, {y}) is {:?} on the device, {:?} on the CPU",
            got.get_pixel(x, y),
            want.get_pixel(x, y)
        );
    }
}

fn compositor() -> Option<WgpuCompositor> {
    let gpu = compute_device()?;
    Some(WgpuCompositor::new(gpu).expect("the composite's shaders compile"))
}

#[test]
fn demo_scenes_compose_as_on_the_cpu() {
    let Some(mut gpu) = compositor() else { return };
    for (w, h, t) in [(160, 120, 5), (97, 61, 12), (64, 48, 30), (321, 179, 3)] {
        let (frame, mask) = DemoScene::new(w, h, 30, 2).render(t);
        check(&mut gpu, &frame, &mask, &format!("demo {w}x{h}"));
    }
}

#[test]
fn random_frames_and_masks_compose_as_on_the_cpu() {
    let Some(mut gpu) = compositor() else { return };
    let mut rng = Rng(7);
    for (w, h) in [(1, 1), (7, 5), (97, 61), (130, 71)] {
        let frame = random_frame(&mut rng, w, h);
        let masks = [
            ("random", random_mask(&mut rng, w, h)),
            ("background", Mask::empty(w, h)),
            ("foreground", Mask::from_fn(w, h, |_| true)),
            ("checkered", Mask::from_fn(w, h, |i| i % 2 == 0)),
        ];
        for (name, mask) in masks {
            check(&mut gpu, &frame, &mask, &format!("{name} mask, {w}x{h}"));
        }
    }
}

#[test]
fn a_mask_of_another_size_gives_the_frame() {
    let Some(mut gpu) = compositor() else { return };
    let (frame, _) = DemoScene::new(97, 61, 30, 4).render(1);
    let (_, mask) = DemoScene::new(60, 40, 30, 4).render(1);
    check(&mut gpu, &frame, &mask, "a 60x40 mask on 97x61");
    let mut out = RgbaImage::default();
    let err = gpu.cut_out_alpha_into(&frame, &mask, &mut out);
    assert!(
        err.is_err(),
        "the transparent cut-out wants the frame's mask"
    );
}

/// `frame`'s bytes put on `gpu` as the energy leaves them there.
fn left_on_device(gpu: &ComputeDevice, frame: &Frame) -> FrameOnDevice {
    let on_device = FrameOnDevice::new(&gpu.device, frame.width, frame.height);
    let mut padded = frame.rgb.clone();
    padded.resize(frame.rgb.len().next_multiple_of(4), 0);
    gpu.queue.write_buffer(&on_device.buffer, 0, &padded);
    on_device
}

#[test]
fn a_frame_left_on_the_device_is_composed_from_there() {
    // the host's copy of the frame is blanked: only the device's bytes can give the
    // CPU's picture of the frame; one of another size is not taken
    let Some(mut gpu) = compositor() else { return };
    let device = gpu.device().clone();
    let (w, h) = (97, 61);
    let (frame, mask) = DemoScene::new(w, h, 30, 6).render(3);
    let on_device = left_on_device(&device, &frame);
    let blank = Frame {
        rgb: vec![0; frame.rgb.len()],
        ..frame.clone()
    };
    let other_size = FrameOnDevice::new(&device.device, w - 1, h);
    for composite in composites() {
        let want = composite.compose(&frame, &mask);
        let texture = gpu.compose(&composite, &blank, Some(&on_device), &mask);
        let texels = read_texture(&device, texture.expect("composing"));
        assert!(gpu.frame_was_on_device());
        assert_same(&texels, &want, &format!("{composite:?} from the device"));
        let texture = gpu.compose(&composite, &frame, Some(&other_size), &mask);
        let texels = read_texture(&device, texture.expect("composing"));
        assert!(!gpu.frame_was_on_device(), "a {}x{h} buffer taken", w - 1);
        assert_same(&texels, &want, &format!("{composite:?} uploaded"));
    }
}

#[test]
fn a_stream_whose_size_changes_reuses_the_buffers() {
    let Some(mut gpu) = compositor() else { return };
    let device = gpu.device().clone();
    let all = composites();
    let (mut cpu, mut want, mut got) = (
        Buffers::default(),
        RgbaImage::default(),
        RgbaImage::default(),
    );
    let sizes = [
        (97, 61),
        (160, 120),
        (160, 120),
        (33, 17),
        (97, 61),
        (160, 120),
    ];
    for (k, &(w, h)) in sizes.iter().enumerate() {
        let (frame, mask) = DemoScene::new(w, h, 30, 9).render(k as u64);
        let composite = &all[k % all.len()];
        composite.compose_into(&frame, &mask, &mut cpu, &mut want);
        gpu.compose_into(composite, &frame, &mask, &mut got)
            .expect("composing on the device");
        assert_same(&got, &want, &format!("frame {k}, {w}x{h}, {composite:?}"));
        // the texture holds the picture too
        let texture = gpu
            .compose(composite, &frame, None, &mask)
            .expect("composing");
        let texels = read_texture(&device, texture);
        assert_same(&texels, &want, &format!("texture of frame {k}"));
    }
}

#[test]
fn a_new_backdrop_picture_replaces_the_last() {
    let Some(mut gpu) = compositor() else { return };
    let (frame, mask) = DemoScene::new(97, 61, 30, 5).render(2);
    let mut out = RgbaImage::default();
    for shade in [40u8, 200, 200] {
        let picture = Arc::new(RgbImage::from_pixel(13, 7, [shade, 90, 255 - shade].into()));
        let composite = Composite::Background(Backdrop::Image(picture));
        for _ in 0..2 {
            gpu.compose_into(&composite, &frame, &mask, &mut out)
                .expect("composing");
            assert_same(&out, &composite.compose(&frame, &mask), "shade {shade}");
        }
    }
}

#[test]
fn frames_the_shaders_cannot_take_are_errors() {
    let Some(mut gpu) = compositor() else { return };
    let (mut frame, mask) = DemoScene::new(64, 48, 30, 5).render(2);
    let mut out = RgbaImage::default();
    let empty = Composite::Background(Backdrop::Image(Arc::new(RgbImage::new(0, 0))));
    assert!(gpu.compose_into(&empty, &frame, &mask, &mut out).is_err());
    frame.rgb.truncate(100);
    assert!(
        gpu.compose_into(&Composite::CutOut, &frame, &mask, &mut out)
            .is_err()
    );
    // and the compositor goes on
    let (frame, mask) = DemoScene::new(64, 48, 30, 5).render(3);
    check(&mut gpu, &frame, &mask, "after errors");
}

/// Times a 1280×720 compose of each kind on the device (read back) and on the CPU, and
/// checks they agree; `--nocapture` shows the figures.
#[test]
fn a_720p_frame_composes_as_on_the_cpu() {
    let Some(mut gpu) = compositor() else { return };
    let (frame, mask) = DemoScene::new(1280, 720, 30, 1).render(10);
    let on_device = left_on_device(gpu.device(), &frame);
    let (mut cpu, mut want, mut got) = (
        Buffers::default(),
        RgbaImage::default(),
        RgbaImage::default(),
    );
    for composite in composites() {
        let time = |f: &mut dyn FnMut()| {
            f(); // warm: buffers made, picture uploaded
            let start = Instant::now();
            for _ in 0..5 {
                f();
            }
            start.elapsed() / 5
        };
        let on_cpu = time(&mut || composite.compose_into(&frame, &mask, &mut cpu, &mut want));
        let on_gpu = time(&mut || {
            gpu.compose_into(&composite, &frame, &mask, &mut got)
                .expect("composing");
        });
        let texture_only = time(&mut || {
            gpu.compose(&composite, &frame, None, &mask)
                .expect("composing");
            gpu.device()
                .device
                .poll(wgpu::PollType::wait_indefinitely())
                .expect("waiting");
        });
        let from_device = time(&mut || {
            gpu.compose(&composite, &frame, Some(&on_device), &mask)
                .expect("composing");
            gpu.device()
                .device
                .poll(wgpu::PollType::wait_indefinitely())
                .expect("waiting");
        });
        let name = match &composite {
            Composite::Background(Backdrop::Image(_)) => "Background(Image)".to_string(),
            other => format!("{other:?}"),
        };
        eprintln!(
            "1280x720 {name}: CPU {on_cpu:?}, {} {on_gpu:?} read back, {texture_only:?} to the texture, {from_device:?} from the frame on the device",
            gpu.device().adapter
        );
        assert_same(&got, &want, &format!("1280x720 {name}"));
    }
}

/// The texels of an `Rgba8Unorm` texture, through a buffer with rows of a multiple of
/// 256 bytes.
fn read_texture(gpu: &livecut::compute::ComputeDevice, texture: &wgpu::Texture) -> RgbaImage {
    let (w, h) = (texture.width(), texture.height());
    let row = (4 * w).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT);
    let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("texels"),
        size: u64::from(row * h),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(row),
                rows_per_image: None,
            },
        },
        texture.size(),
    );
    gpu.queue.submit([encoder.finish()]);
    buffer.map_async(wgpu::MapMode::Read, .., |r| r.expect("mapping"));
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("waiting");
    let view = buffer.get_mapped_range(..).expect("mapped");
    let raw = view
        .chunks_exact(row as usize)
        .flat_map(|r| &r[..4 * w as usize])
        .copied()
        .collect();
    RgbaImage::from_raw(w, h, raw).expect("the texture's size")
}
