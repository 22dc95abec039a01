//! The composite in wgpu compute shaders (`kernels/composite.wgsl`), for any GPU
//! (Vulkan, Metal, DirectX 12): the same integer arithmetic as the CPU composite, so
//! that the picture is byte for byte [`Composite::compose`]'s. The picture stays on the
//! device as an `Rgba8Unorm` texture (for a window on the same device) and can be read
//! back as RGBA bytes (for the virtual camera).

use super::alpha::{COEF_BITS, EPSILON, RADIUS};
use super::blur::{MAX_FACTOR, MEAN_BITS, WEIGHT_BITS};
use super::{BLUR_FACTOR, Backdrop, CHECKER, Composite};
use crate::capture::Frame;
use crate::compute::{
    ComputeDevice, ComputeError, FrameOnDevice, Kernel, map_read, pass, shader, workgroups,
    write_bytes,
};
use crate::grid::Mask;
use bytemuck::{Pod, Zeroable};
use image::{RgbImage, RgbaImage};
use std::sync::Arc;

/// The shaders, before the host's constants are prepended.
pub const SOURCE: &str = include_str!("../../kernels/composite.wgsl");

/// Invocations per workgroup of every shader (`WG` in the source).
const WORKGROUP: u32 = 256;

/// The kinds of picture (`KIND_*` in the source).
const KIND_CHECKER: u32 = 0;
const KIND_COLOUR: u32 = 1;
const KIND_IMAGE: u32 = 2;
const KIND_BLUR: u32 = 3;
const KIND_ALPHA: u32 = 4;

// the shader's long division takes two bits a step
const _: () = assert!(COEF_BITS.is_multiple_of(2) && BLUR_FACTOR <= MAX_FACTOR);

/// The shaders' uniform parameters (`Params` in the source).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct Params {
    width: u32,
    height: u32,
    n: u32,
    stride: u32,
    kind: u32,
    colour: u32,
    image_width: u32,
    image_height: u32,
    small_width: u32,
    small_height: u32,
    factor: u32,
    filtered: u32,
}

/// The shaders' source with the host's constants prepended: the workgroup size, the
/// filter's and the blur's, the checkerboard's square and the kinds of picture.
pub fn shader_source() -> String {
    let constants = [
        ("WG", WORKGROUP),
        ("RADIUS", RADIUS as u32),
        ("EPSILON", EPSILON),
        ("COEF_BITS", COEF_BITS),
        ("MEAN_BITS", MEAN_BITS),
        ("WEIGHT_BITS", WEIGHT_BITS),
        ("CHECKER", CHECKER),
        ("KIND_CHECKER", KIND_CHECKER),
        ("KIND_COLOUR", KIND_COLOUR),
        ("KIND_IMAGE", KIND_IMAGE),
        ("KIND_BLUR", KIND_BLUR),
        ("KIND_ALPHA", KIND_ALPHA),
    ];
    let constants: String = constants
        .iter()
        .map(|(name, value)| format!("const {name}: u32 = {value}u;\n"))
        .collect();
    constants + SOURCE
}

/// The shaders' pipelines.
struct Kernels {
    unpack: Kernel,
    rows: Kernel,
    coef: Kernel,
    coef_rows: Kernel,
    cells: Kernel,
    smooth: Kernel,
    compose: Kernel,
}

impl Kernels {
    fn new(device: &wgpu::Device) -> Self {
        let module = shader(device, "composite.wgsl", shader_source());
        let kernel =
            |entry: &str, bindings: &'static [u32]| Kernel::new(device, &module, entry, bindings);
        // the bindings each entry point uses (its automatic layout holds only those)
        Self {
            unpack: kernel("cp_unpack", &[0, 1, 2, 3]),
            rows: kernel("cp_rows", &[0, 3, 4]),
            coef: kernel("cp_coef", &[0, 4, 5]),
            coef_rows: kernel("cp_coef_rows", &[0, 5, 6]),
            cells: kernel("cp_cells", &[0, 3, 7]),
            smooth: kernel("cp_smooth", &[0, 7, 8]),
            compose: kernel("cp_compose", &[0, 3, 4, 6, 8, 9, 10]),
        }
    }

    /// Every pipeline, for forgetting their bind groups.
    fn all(&self) -> [&Kernel; 7] {
        [
            &self.unpack,
            &self.rows,
            &self.coef,
            &self.coef_rows,
            &self.cells,
            &self.smooth,
            &self.compose,
        ]
    }
}

/// Device buffers of one frame size, kept between frames.
struct Buffers {
    width: u32,
    height: u32,
    /// Words per row of the picture: rows of a multiple of 256 bytes, as copies from a
    /// buffer to a texture or the other way want.
    stride: u32,
    params: wgpu::Buffer,
    frame: wgpu::Buffer,
    mask: wgpu::Buffer,
    px: wgpu::Buffer,
    sums: wgpu::Buffer,
    coef: wgpu::Buffer,
    coef_rows: wgpu::Buffer,
    means: wgpu::Buffer,
    small: wgpu::Buffer,
    /// The picture in words with padded rows: written as bytes by the shaders, so the
    /// texture and the read-back get them exactly (no float conversion on the way).
    picture: wgpu::Buffer,
    picture_read: wgpu::Buffer,
    texture: wgpu::Texture,
}

impl Buffers {
    fn new(device: &wgpu::Device, width: u32, height: u32) -> Self {
        use wgpu::BufferUsages as U;
        let n = u64::from(width) * u64::from(height);
        let cells = u64::from(width.div_ceil(BLUR_FACTOR) * height.div_ceil(BLUR_FACTOR));
        let stride = (4 * width).next_multiple_of(wgpu::COPY_BYTES_PER_ROW_ALIGNMENT) / 4;
        let rows = u64::from(stride) * u64::from(height);
        let buffer = |label: &str, words: u64, usage: U| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 4 * words.max(1),
                usage,
                mapped_at_creation: false,
            })
        };
        let storage = U::STORAGE | U::COPY_DST;
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("composite"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC
                | wgpu::TextureUsages::COPY_DST,
            // an sRGB view for windows whose target decodes sRGB
            view_formats: &[wgpu::TextureFormat::Rgba8UnormSrgb],
        });
        Self {
            width,
            height,
            stride,
            params: buffer("params", 12, U::UNIFORM | U::COPY_DST),
            frame: buffer("frame", (3 * n).div_ceil(4), storage),
            mask: buffer("mask", n.div_ceil(4), storage),
            px: buffer("pixels", n, storage),
            sums: buffer("row sums", 5 * n, storage),
            coef: buffer("coefficients", 2 * n, storage),
            coef_rows: buffer("coefficients' row sums", 2 * n, storage),
            means: buffer("cell means", 3 * cells, storage),
            small: buffer("small copy", 3 * cells, storage),
            picture: buffer("picture", rows, U::STORAGE | U::COPY_SRC),
            picture_read: buffer("picture read", rows, U::MAP_READ | U::COPY_DST),
            texture,
        }
    }

    fn pixels(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// The buffer at a binding of `composite.wgsl`.
    fn binding<'a>(&'a self, binding: u32, image: &'a wgpu::Buffer) -> &'a wgpu::Buffer {
        match binding {
            0 => &self.params,
            1 => &self.frame,
            2 => &self.mask,
            3 => &self.px,
            4 => &self.sums,
            5 => &self.coef,
            6 => &self.coef_rows,
            7 => &self.means,
            8 => &self.small,
            9 => image,
            10 => &self.picture,
            _ => unreachable!("composite.wgsl has no binding {binding}"),
        }
    }
}

/// What a run makes: an opaque composite, or the cut-out with the soft alpha.
#[derive(Clone, Copy)]
enum Picture<'a> {
    Opaque(&'a Composite),
    CutOutAlpha,
}

/// The composite on a wgpu device: the pipelines, compiled once, and the buffers and
/// backdrop picture kept for the next frame. Every call runs under the device's error
/// scopes: a lost or invalid device is a [`ComputeError`], never a panic.
pub struct WgpuCompositor {
    gpu: ComputeDevice,
    kernels: Kernels,
    buffers: Option<Buffers>,
    /// The backdrop picture uploaded last (one word a pixel), or a one-word stand-in.
    image: (Option<Arc<RgbImage>>, wgpu::Buffer),
    /// The last picture's frame was copied from the device, not uploaded.
    frame_copied: bool,
}

impl WgpuCompositor {
    /// Compiles the shaders on `gpu`, or says why they do not compile.
    pub fn new(gpu: ComputeDevice) -> Result<Self, ComputeError> {
        let ((kernels, stand_in), error) = gpu.checked(|| {
            let stand_in = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("no backdrop picture"),
                size: 4,
                usage: wgpu::BufferUsages::STORAGE,
                mapped_at_creation: false,
            });
            (Kernels::new(&gpu.device), stand_in)
        });
        if let Some(e) = error {
            return Err(ComputeError(format!("composite shaders: {}", e.0)));
        }
        Ok(Self {
            gpu,
            kernels,
            buffers: None,
            image: (None, stand_in),
            frame_copied: false,
        })
    }

    /// The device the pictures are made on (the window draws them there).
    pub fn device(&self) -> &ComputeDevice {
        &self.gpu
    }

    /// Makes `composite` of `frame` and `mask` (the frame as it is where the mask is
    /// another size), as [`Composite::compose`] does, and leaves it on the device: an
    /// `Rgba8Unorm` texture of the frame's size, valid until the next call.
    ///
    /// `on_device`: the frame's bytes already on this device (the energy left them
    /// there), copied on the device instead of uploaded where they fit the frame.
    pub fn compose(
        &mut self,
        composite: &Composite,
        frame: &Frame,
        on_device: Option<&FrameOnDevice>,
        mask: &Mask,
    ) -> Result<&wgpu::Texture, ComputeError> {
        let picture = Picture::Opaque(composite);
        self.checked(|me| me.run(picture, (frame, on_device), mask, None))?;
        Ok(&self.buffers.as_ref().expect("made by the run").texture)
    }

    /// Whether the last picture's frame was copied from the device rather than
    /// uploaded.
    pub fn frame_was_on_device(&self) -> bool {
        self.frame_copied
    }

    /// [`Self::compose`], the picture also read back into `out` (its memory reused):
    /// the bytes of [`Composite::compose`].
    pub fn compose_into(
        &mut self,
        composite: &Composite,
        frame: &Frame,
        mask: &Mask,
        out: &mut RgbaImage,
    ) -> Result<(), ComputeError> {
        self.checked(|me| me.run(Picture::Opaque(composite), (frame, None), mask, Some(out)))
    }

    /// The frame with the soft alpha of `mask` (the same size) into `out` and the
    /// texture: the bytes of [`super::cut_out_alpha`].
    pub fn cut_out_alpha_into(
        &mut self,
        frame: &Frame,
        mask: &Mask,
        out: &mut RgbaImage,
    ) -> Result<(), ComputeError> {
        if (mask.width, mask.height) != (frame.width, frame.height) {
            return Err(ComputeError(format!(
                "composite: a {}x{} mask for a {}x{} frame",
                mask.width, mask.height, frame.width, frame.height
            )));
        }
        self.checked(|me| me.run(Picture::CutOutAlpha, (frame, None), mask, Some(out)))
    }

    /// Runs `work` under the device's error scopes; after an error the buffers are
    /// made afresh.
    fn checked(
        &mut self,
        work: impl FnOnce(&mut Self) -> Result<(), ComputeError>,
    ) -> Result<(), ComputeError> {
        let gpu = self.gpu.clone();
        let (done, error) = gpu.checked(|| work(self));
        let done = match error {
            Some(e) => Err(ComputeError(format!("composite: {}", e.0))),
            None => done,
        };
        if done.is_err() {
            (self.buffers, self.image.0) = (None, None);
            self.forget_groups();
        }
        done
    }

    /// Uploads the frame, mask and backdrop, runs the shaders, copies the picture into
    /// the texture and, with `out`, reads it back.
    fn run(
        &mut self,
        picture: Picture<'_>,
        (frame, on_device): (&Frame, Option<&FrameOnDevice>),
        mask: &Mask,
        out: Option<&mut RgbaImage>,
    ) -> Result<(), ComputeError> {
        let (w, h) = (frame.width, frame.height);
        check_frame(frame)?;
        let filter = (mask.width, mask.height) == (w, h);
        if filter && mask.data.len() != w as usize * h as usize {
            return Err(ComputeError(format!(
                "composite: a {w}x{h} mask of {} bytes",
                mask.data.len()
            )));
        }
        let mut params = Params {
            width: w,
            height: h,
            n: w * h,
            kind: KIND_ALPHA,
            factor: BLUR_FACTOR,
            small_width: w.div_ceil(BLUR_FACTOR),
            small_height: h.div_ceil(BLUR_FACTOR),
            filtered: u32::from(filter),
            ..Params::default()
        };
        if let Picture::Opaque(composite) = picture {
            self.backdrop(composite, &mut params)?;
        }
        if self
            .buffers
            .as_ref()
            .is_none_or(|b| (b.width, b.height) != (w, h))
        {
            self.buffers = Some(Buffers::new(&self.gpu.device, w, h));
            self.forget_groups();
        }
        let b = self.buffers.as_ref().expect("made above");
        params.stride = b.stride;
        let queue = &self.gpu.queue;
        queue.write_buffer(&b.params, 0, bytemuck::bytes_of(&params));
        let on_device = on_device.filter(|f| f.fits(&self.gpu.device, w, h));
        if on_device.is_none() {
            write_bytes(queue, &b.frame, &frame.rgb[..3 * b.pixels()]);
        }
        self.frame_copied = on_device.is_some();
        if filter {
            write_bytes(queue, &b.mask, &mask.data);
        }
        let mut encoder = self
            .gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("composite"),
            });
        let (pixels, cells) = (
            dispatch_size(b.pixels()),
            dispatch_size((params.small_width * params.small_height) as usize),
        );
        if let Some(on_device) = on_device {
            encoder.copy_buffer_to_buffer(&on_device.buffer, 0, &b.frame, 0, None);
        }
        let k = &self.kernels;
        {
            let mut pass = pass(&mut encoder);
            self.record(&mut pass, &k.unpack, pixels);
            if filter {
                for kernel in [&k.rows, &k.coef, &k.coef_rows] {
                    self.record(&mut pass, kernel, pixels);
                }
            }
            if params.kind == KIND_BLUR {
                self.record(&mut pass, &k.cells, cells);
                self.record(&mut pass, &k.smooth, cells);
            }
            self.record(&mut pass, &k.compose, pixels);
        }
        let layout = wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(4 * b.stride),
            rows_per_image: None,
        };
        let size = wgpu::Extent3d {
            width: w,
            height: h,
            depth_or_array_layers: 1,
        };
        encoder.copy_buffer_to_texture(
            wgpu::TexelCopyBufferInfo {
                buffer: &b.picture,
                layout,
            },
            b.texture.as_image_copy(),
            size,
        );
        if out.is_some() {
            encoder.copy_buffer_to_buffer(&b.picture, 0, &b.picture_read, 0, None);
        }
        queue.submit([encoder.finish()]);
        match out {
            Some(out) => self.read_picture(out),
            None => Ok(()),
        }
    }

    /// Sets the kind of picture and its backdrop in `params`, uploading a backdrop
    /// picture not uploaded last time.
    fn backdrop(&mut self, composite: &Composite, params: &mut Params) -> Result<(), ComputeError> {
        params.kind = match composite {
            Composite::CutOut => KIND_CHECKER,
            Composite::Background(Backdrop::Blur) => KIND_BLUR,
            Composite::Background(Backdrop::Colour([r, g, b])) => {
                params.colour = u32::from_le_bytes([*r, *g, *b, 0]);
                KIND_COLOUR
            }
            Composite::Background(Backdrop::Image(picture)) => {
                let (iw, ih) = picture.dimensions();
                if iw == 0 || ih == 0 {
                    return Err(ComputeError("composite: an empty backdrop picture".into()));
                }
                (params.image_width, params.image_height) = (iw, ih);
                self.upload_image(picture);
                KIND_IMAGE
            }
        };
        Ok(())
    }

    /// Uploads `picture` (one word a pixel) unless it is the one uploaded last.
    fn upload_image(&mut self, picture: &Arc<RgbImage>) {
        if self
            .image
            .0
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(p, picture))
        {
            return;
        }
        let words: Vec<u32> = picture
            .pixels()
            .map(|p| u32::from_le_bytes([p[0], p[1], p[2], 0]))
            .collect();
        let buffer = wgpu::util::DeviceExt::create_buffer_init(
            &self.gpu.device,
            &wgpu::util::BufferInitDescriptor {
                label: Some("backdrop picture"),
                contents: bytemuck::cast_slice(&words),
                usage: wgpu::BufferUsages::STORAGE,
            },
        );
        self.image = (Some(Arc::clone(picture)), buffer);
        self.forget_groups();
    }

    /// Records `kernel` over `groups` workgroups into `pass`.
    fn record(&self, pass: &mut wgpu::ComputePass<'_>, kernel: &Kernel, groups: u32) {
        let b = self.buffers.as_ref().expect("buffers");
        let buffer = |binding| b.binding(binding, &self.image.1);
        kernel.record(&self.gpu.device, pass, (0, buffer), groups);
    }

    /// Forgets every bind group: a buffer they name was made anew.
    fn forget_groups(&self) {
        self.kernels.all().iter().for_each(|k| k.forget());
    }

    /// Waits for the device and copies the read-back picture, without its rows'
    /// padding, into `out`.
    fn read_picture(&self, out: &mut RgbaImage) -> Result<(), ComputeError> {
        let b = self.buffers.as_ref().expect("buffers");
        let buffer = &b.picture_read;
        let mut raw = std::mem::take(out).into_raw();
        raw.clear();
        let (row, stride) = (b.width as usize, b.stride as usize);
        map_read(&self.gpu, buffer, |words| {
            for padded in words.chunks_exact(stride) {
                raw.extend_from_slice(bytemuck::cast_slice(&padded[..row]));
            }
        })?;
        *out = RgbaImage::from_raw(b.width, b.height, raw).expect("the picture's size");
        Ok(())
    }
}

/// A frame the shaders can take: not empty, with all its bytes, within the sides where
/// the backdrop's stretch stays within 32 bits.
fn check_frame(frame: &Frame) -> Result<(), ComputeError> {
    let (w, h) = (frame.width, frame.height);
    if w == 0 || h == 0 || w > u32::from(u16::MAX) || h > u32::from(u16::MAX) {
        return Err(ComputeError(format!("composite: a {w}x{h} frame")));
    }
    if frame.rgb.len() < 3 * w as usize * h as usize {
        return Err(ComputeError(format!(
            "composite: a {w}x{h} frame of {} bytes",
            frame.rgb.len()
        )));
    }
    Ok(())
}

/// Workgroups for `n` items; the shaders stride over the rest.
fn dispatch_size(n: usize) -> u32 {
    workgroups(n, WORKGROUP)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::shader_checks::{struct_layout, validated};

    #[test]
    fn the_shaders_are_valid_wgsl() {
        validated(&shader_source());
    }

    #[test]
    fn params_match_the_shaders_struct() {
        // one word a member, and the same size
        let words = std::mem::size_of::<Params>() / 4;
        assert_eq!(
            struct_layout(&validated(&shader_source()), "Params"),
            (4 * words, words)
        );
    }
}
