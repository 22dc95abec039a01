//! What the test binaries share: one reference max-flow, the shared instances' folder
//! and manifest, the random generators and grid generators, running the built binary,
//! real footage, a still camera's scene with a known answer and a panning one. Each binary uses part of it, so unused items are allowed here.

#![allow(dead_code)]

pub mod cli;
pub mod cxx;
pub mod device;
pub mod footage;
pub mod generators;
pub mod grids;
pub mod pan;
pub mod reference;
pub mod rng;
pub mod volumes;
pub mod walk;
