//! Volumes for the engine tests: the shared 3D instances' folder and manifest, and
//! random volumes.

use super::rng::Rng;
use livecut::grid::{VolumeConnectivity, VolumeProblem};
use proptest::prelude::*;
use std::path::PathBuf;

/// The folder of shared 3D instances: `$LIVECUT_GRIDS3D`, else `../shared/data/grids3d`
/// beside the checkout, else `grids3d/` here; `None`, with a note, where none holds a
/// manifest.
pub fn grids3d_dir() -> Option<PathBuf> {
    super::grids::shared_instances("LIVECUT_GRIDS3D", "grids3d")
}

/// (file, W, H, D, C, max flow) of every instance `dir/manifest.csv` lists.
pub fn manifest3d(dir: &std::path::Path) -> Vec<(String, [u32; 4], u64)> {
    super::grids::manifest_rows(dir, |file, n| {
        let size = [n(1) as u32, n(2) as u32, n(3) as u32, n(4) as u32];
        (file, size, n(5))
    })
}

/// A random volume: terminal arcs on about half the voxels (some with both), every
/// neighbour arc inside the volume drawn from `Rng::capacity`'s mix.
pub fn random_volume(rng: &mut Rng, size: (u32, u32, u32), c: VolumeConnectivity) -> VolumeProblem {
    let probe = VolumeProblem::zeros(size.0, size.1, size.2, c).unwrap();
    let n = probe.voxels();
    let terminal = |rng: &mut Rng| if rng.below(2) == 0 { rng.capacity() } else { 0 };
    let source = (0..n).map(|_| terminal(rng)).collect();
    let sink = (0..n).map(|_| terminal(rng)).collect();
    let edges = (0..c.number() as usize)
        .map(|d| {
            (0..n)
                .map(|i| {
                    if probe.step(i, d).is_some() {
                        rng.capacity()
                    } else {
                        0
                    }
                })
                .collect()
        })
        .collect();
    VolumeProblem::from_arrays(size, c, source, sink, edges).unwrap()
}

/// xorshift64: deterministic noise.
struct Noise(u64);

impl Noise {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A generated segmentation-like volume for the benches: a disk of source voxels
/// that moves a voxel per slice, in a field of sink voxels,
/// with data terms of ±40 plus noise of ±60 and neighbour arcs of 20–49.
pub fn drifting_disk((w, h, d): (u32, u32, u32), c: VolumeConnectivity) -> VolumeProblem {
    let probe = VolumeProblem::zeros(w, h, d, c).expect("volume size");
    let n = probe.voxels();
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    let (cx, cy, r) = (w as f64 / 3.0, h as f64 / 2.0, w.min(h) as f64 / 4.0);
    let (mut source, mut sink) = (vec![0; n], vec![0; n]);
    for i in 0..n {
        let (x, y, z) = probe.coords(i);
        let (dx, dy) = (x as f64 - cx - z as f64, y as f64 - cy);
        let prior = if dx * dx + dy * dy < r * r { 40 } else { -40 };
        let data = prior + noise.below(121) as i32 - 60;
        if data > 0 {
            source[i] = data;
        } else {
            sink[i] = -data;
        }
    }
    let edges = (0..c.number() as usize)
        .map(|k| {
            (0..n)
                .map(|i| probe.step(i, k).map_or(0, |_| 20 + noise.below(30) as i32))
                .collect()
        })
        .collect();
    VolumeProblem::from_arrays((w, h, d), c, source, sink, edges).expect("a valid volume")
}

/// The benches' generated volumes ([`drifting_disk`]): sizes and neighbourhoods.
pub const GENERATED: [((u32, u32, u32), VolumeConnectivity); 6] = [
    ((360, 240, 4), VolumeConnectivity::Ten),
    ((854, 480, 8), VolumeConnectivity::Ten),
    ((128, 128, 64), VolumeConnectivity::Six),
    ((256, 256, 32), VolumeConnectivity::Six),
    ((64, 64, 64), VolumeConnectivity::TwentySix),
    ((128, 128, 64), VolumeConnectivity::TwentySix),
];

/// Any of the three neighbourhoods.
pub fn connectivity() -> impl Strategy<Value = VolumeConnectivity> {
    prop_oneof![
        Just(VolumeConnectivity::Six),
        Just(VolumeConnectivity::Ten),
        Just(VolumeConnectivity::TwentySix)
    ]
}

/// A side of a volume: 1 often (lines and slabs), else up to `most`.
pub fn side(most: u32) -> impl Strategy<Value = u32> {
    prop_oneof![1 => Just(1u32), 4 => 1u32..=most]
}
