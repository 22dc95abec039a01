//! The live picture drawn straight with wgpu, as an egui paint callback: one textured
//! quad with a minimal shader. egui's own shape shader is general (vertex colours,
//! texture flags, dithering) and a software rasteriser (Mesa's lavapipe, a machine with
//! no GPU) shades it at several times the cost per pixel; the picture covers most of
//! the window, so drawing it this way is what keeps the window at its frame rate
//! there. Where no wgpu render state is at hand (another renderer, some tests) the
//! app shows the picture as an ordinary egui texture instead. A picture composed on
//! the renderer's own device ([`DevicePicture`]) is drawn from there, never uploaded.

use eframe::egui_wgpu::{self, CallbackResources, CallbackTrait, RenderState, wgpu};
use egui::{Rect, Vec2};
use std::sync::Arc;

/// One composed picture, RGBA with opaque alpha, tagged so that the GPU copy is
/// refreshed only when it changed.
#[derive(Debug)]
pub struct PictureImage {
    /// Increases with every new picture.
    pub generation: u64,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 4` bytes, row-major.
    pub rgba: Vec<u8>,
}

impl PictureImage {
    /// Size in pixels as a vector, for layout.
    pub fn size_vec2(&self) -> Vec2 {
        Vec2::new(self.width as f32, self.height as f32)
    }
}

/// A picture already on the renderer's device: a texture a compute pass wrote
/// (`Rgba8Unorm`, with an `Rgba8UnormSrgb` view allowed for sRGB targets).
#[derive(Debug)]
pub struct DevicePicture {
    /// Increases with every new picture.
    pub generation: u64,
    /// The texture, valid until the next picture is composed.
    pub texture: wgpu::Texture,
}

impl DevicePicture {
    /// Size in pixels as a vector, for layout.
    pub fn size_vec2(&self) -> Vec2 {
        Vec2::new(self.texture.width() as f32, self.texture.height() as f32)
    }
}

/// Where the callback's picture is.
#[derive(Clone)]
pub enum Source {
    /// Pixels in memory, uploaded when new.
    Host(Arc<PictureImage>),
    /// A texture on the device, bound when new.
    Device(Arc<DevicePicture>),
}

/// Prepares `render_state` to draw pictures (pipeline, sampler) for its target format.
/// Call once, before the first [`paint_callback`] is painted.
pub fn install(render_state: &RenderState) {
    let resources = Resources::new(&render_state.device, render_state.target_format);
    render_state
        .renderer
        .write()
        .callback_resources
        .insert(resources);
}

/// The paint callback that draws `source`'s picture stretched over `rect`.
pub fn paint_callback(rect: Rect, source: Source) -> egui::PaintCallback {
    egui_wgpu::Callback::new_paint_callback(rect, Callback { source })
}

struct Callback {
    source: Source,
}

impl CallbackTrait for Callback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        _screen: &egui_wgpu::ScreenDescriptor,
        _encoder: &mut wgpu::CommandEncoder,
        resources: &mut CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        if let Some(res) = resources.get_mut::<Resources>() {
            match &self.source {
                Source::Host(image) => res.upload(device, queue, image),
                Source::Device(picture) => res.bind(device, picture),
            }
        }
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &CallbackResources,
    ) {
        let Some(uploaded) = resources
            .get::<Resources>()
            .and_then(|r| r.uploaded.as_ref().map(|u| (&r.pipeline, u)))
        else {
            return;
        };
        let (pipeline, picture) = uploaded;
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &picture.bind_group, &[]);
        pass.draw(0..4, 0..1);
    }
}

/// What lives in egui-wgpu's callback resources between frames.
struct Resources {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    /// Texture format that samples as the picture's sRGB bytes are meant for the target:
    /// raw for a gamma target (egui's preference), decoded for an sRGB one.
    texture_format: wgpu::TextureFormat,
    uploaded: Option<Uploaded>,
}

/// The picture's copy on the GPU (or the device picture itself), bound for drawing.
struct Uploaded {
    generation: u64,
    size: (u32, u32),
    texture: wgpu::Texture,
    bind_group: wgpu::BindGroup,
    /// The texture is a device picture's, not one to upload into.
    borrowed: bool,
}

impl Resources {
    fn new(device: &wgpu::Device, target: wgpu::TextureFormat) -> Self {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("livecut_picture"),
            source: wgpu::ShaderSource::Wgsl(include_str!("picture.wgsl").into()),
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("livecut_picture"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        multisampled: false,
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("livecut_picture"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some("livecut_picture"),
            layout: Some(&pipeline_layout),
            vertex: wgpu::VertexState {
                module: &module,
                entry_point: Some("vs_main"),
                buffers: &[],
                compilation_options: wgpu::PipelineCompilationOptions::default(),
            },
            primitive: wgpu::PrimitiveState {
                topology: wgpu::PrimitiveTopology::TriangleStrip,
                ..Default::default()
            },
            depth_stencil: None,
            // The app asks eframe for no multisampling (`NativeOptions::multisampling` 0).
            multisample: wgpu::MultisampleState::default(),
            fragment: Some(wgpu::FragmentState {
                module: &module,
                entry_point: Some("fs_main"),
                targets: &[Some(wgpu::ColorTargetState {
                    format: target,
                    blend: None,
                    write_mask: wgpu::ColorWrites::ALL,
                })],
                compilation_options: wgpu::PipelineCompilationOptions::default(),
            }),
            multiview_mask: None,
            cache: None,
        });
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("livecut_picture"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        let texture_format = if target.is_srgb() {
            wgpu::TextureFormat::Rgba8UnormSrgb
        } else {
            wgpu::TextureFormat::Rgba8Unorm
        };
        Self {
            pipeline,
            layout,
            sampler,
            texture_format,
            uploaded: None,
        }
    }

    /// Copies `image` to the GPU unless that generation is there already.
    fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, image: &PictureImage) {
        let expected = image.width as usize * image.height as usize * 4;
        if image.width == 0 || image.height == 0 || image.rgba.len() != expected {
            return;
        }
        if self
            .uploaded
            .as_ref()
            .is_some_and(|u| u.generation == image.generation)
        {
            return;
        }
        let size = (image.width, image.height);
        if self
            .uploaded
            .as_ref()
            .is_none_or(|u| u.size != size || u.borrowed)
        {
            self.uploaded = Some(self.allocate(device, size));
        }
        let uploaded = self.uploaded.as_mut().expect("allocated above");
        queue.write_texture(
            wgpu::TexelCopyTextureInfo {
                texture: &uploaded.texture,
                mip_level: 0,
                origin: wgpu::Origin3d::ZERO,
                aspect: wgpu::TextureAspect::All,
            },
            &image.rgba,
            wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(4 * image.width),
                rows_per_image: Some(image.height),
            },
            wgpu::Extent3d {
                width: image.width,
                height: image.height,
                depth_or_array_layers: 1,
            },
        );
        uploaded.generation = image.generation;
    }

    /// Binds `picture`'s texture unless that generation is bound already.
    fn bind(&mut self, device: &wgpu::Device, picture: &DevicePicture) {
        if self
            .uploaded
            .as_ref()
            .is_some_and(|u| u.borrowed && u.generation == picture.generation)
        {
            return;
        }
        let texture = picture.texture.clone();
        let view = texture.create_view(&wgpu::TextureViewDescriptor {
            format: Some(self.texture_format),
            ..Default::default()
        });
        self.uploaded = Some(Uploaded {
            generation: picture.generation,
            size: (texture.width(), texture.height()),
            bind_group: self.bind_group(device, &view),
            texture,
            borrowed: true,
        });
    }

    fn bind_group(&self, device: &wgpu::Device, view: &wgpu::TextureView) -> wgpu::BindGroup {
        device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("livecut_picture"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::Sampler(&self.sampler),
                },
            ],
        })
    }

    fn allocate(&self, device: &wgpu::Device, (width, height): (u32, u32)) -> Uploaded {
        let texture = device.create_texture(&wgpu::TextureDescriptor {
            label: Some("livecut_picture"),
            size: wgpu::Extent3d {
                width,
                height,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: self.texture_format,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        });
        let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
        Uploaded {
            generation: u64::MAX,
            size: (width, height),
            bind_group: self.bind_group(device, &view),
            texture,
            borrowed: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use egui_kittest::Harness;
    use egui_kittest::wgpu::{WgpuTestRenderer, create_render_state, default_wgpu_setup};

    /// A 2×2 picture: red, green / blue, white.
    fn quadrants(generation: u64) -> Arc<PictureImage> {
        let rgba = [[255, 0, 0], [0, 255, 0], [0, 0, 255], [255, 255, 255]]
            .iter()
            .flat_map(|&[r, g, b]| [r, g, b, 255])
            .collect();
        Arc::new(PictureImage {
            generation,
            width: 2,
            height: 2,
            rgba,
        })
    }

    #[test]
    fn the_callback_draws_the_picture_over_its_rect() {
        let render_state = create_render_state(
            default_wgpu_setup(),
            egui_wgpu::RendererOptions::PREDICTABLE,
        );
        install(&render_state);
        let image = quadrants(1);
        let rect = Rect::from_min_size(egui::pos2(20.0, 10.0), Vec2::new(80.0, 60.0));
        let mut harness = Harness::builder()
            .with_size(Vec2::new(120.0, 80.0))
            .with_pixels_per_point(1.0)
            .renderer(WgpuTestRenderer::from_render_state(render_state))
            .build_ui(move |ui| {
                ui.painter()
                    .add(paint_callback(rect, Source::Host(image.clone())));
            });
        harness.run();
        let shot = harness.render().expect("rendering with wgpu");
        let at = |x: u32, y: u32| shot.get_pixel(x, y).0;
        // Quadrant centres, far from the bilinear blend between texels.
        assert_eq!(at(30, 17), [255, 0, 0, 255]);
        assert_eq!(at(90, 17), [0, 255, 0, 255]);
        assert_eq!(at(30, 63), [0, 0, 255, 255]);
        assert_eq!(at(90, 63), [255, 255, 255, 255]);
        // Outside the rect the picture leaves the background alone.
        assert_ne!(at(5, 40), [255, 0, 0, 255]);
        assert_ne!(at(110, 40), [0, 255, 0, 255]);
    }
}
