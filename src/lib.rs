//! livecut: real-time foreground extraction from live video with exact grid graph cuts.
//!
//! The modules follow the data flow: [`capture`] produces frames, [`energy`] turns a
//! frame and the user's seeds into a [`grid`] max-flow problem, a [`maxflow`] engine
//! (CUDA or CPU) cuts it, [`ccl`] cleans the mask up, [`pipeline`] runs these stages on
//! threads, and [`app`] shows the result. [`composite`] turns frames and masks into
//! cut-outs and replaced backgrounds, which [`output`] sends to a virtual camera.
//! [`gpu`] is the one CUDA runtime the GPU engine and labeller share; [`compute`] the
//! wgpu runtime that runs the energy on any other GPU. The passes over
//! every pixel (gate, colour conversion, composite, YUYV) run in row bands on every
//! core ([`bands`]).

pub mod app;
pub mod bands;
mod bits;
pub mod capture;
pub mod ccl;
pub mod composite;
pub mod compute;
pub mod energy;
pub mod gpu;
pub mod grid;
mod huge_pages;
pub mod maxflow;
pub mod output;
pub mod pipeline;
#[cfg(test)]
mod test_bits;
