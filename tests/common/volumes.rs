//! Volumes for the engine tests: the shared 3D instances' folder and manifest, and
//! random volumes.

use super::rng::Rng;
use livecut::grid::{VolumeConnectivity, VolumeProblem};
use std::path::PathBuf;

/// The folder of shared 3D instances: `$LIVECUT_GRIDS3D`, else `../shared/data/grids3d`
/// beside the checkout, else `grids3d/` here; `None`, with a note, where none holds a
/// manifest.
pub fn grids3d_dir() -> Option<PathBuf> {
    super::grids::shared_instances("LIVECUT_GRIDS3D", "grids3d")
}

/// (file, W, H, D, C, max flow) of every instance `dir/manifest.csv` lists.
pub fn manifest3d(dir: &std::path::Path) -> Vec<(String, [u32; 4], u64)> {
    let text = std::fs::read_to_string(dir.join("manifest.csv")).expect("manifest.csv");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            let n = |k: usize| f[k].parse::<u64>().unwrap_or_else(|e| panic!("{l}: {e}"));
            let size = [n(1) as u32, n(2) as u32, n(3) as u32, n(4) as u32];
            (f[0].to_string(), size, n(5))
        })
        .collect()
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
