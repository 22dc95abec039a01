//! The shared grid instances: where they are and what their manifest says.

use std::path::{Path, PathBuf};

/// The folder of shared instances: `$LIVECUT_GRIDS`, else `../shared/data/grids` beside
/// the checkout, else `grids/` in the working directory (how the GPU machine gets them).
/// `None`, with a note, where none of them holds a manifest: the tests then skip them.
pub fn grids_dir() -> Option<PathBuf> {
    shared_instances("LIVECUT_GRIDS", "grids")
}

/// The folder `name` of instances with a `manifest.csv`: `$var`, else
/// `../shared/data/NAME` beside the checkout, else `NAME/` in the working directory;
/// `None`, with a note, where none holds a manifest.
pub fn shared_instances(var: &str, name: &str) -> Option<PathBuf> {
    let candidates = [
        std::env::var_os(var).map(PathBuf::from),
        Some(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../shared/data")
                .join(name),
        ),
        Some(PathBuf::from(name)),
    ];
    let found = candidates
        .into_iter()
        .flatten()
        .find(|p| p.join("manifest.csv").exists());
    if found.is_none() {
        eprintln!("note: shared {name} not found (set {var}); skipping them");
    }
    found
}

/// One instance as the manifest lists it.
pub struct Instance {
    /// File name inside the grids folder.
    pub file: String,
    /// Grid width.
    pub width: u32,
    /// Grid height.
    pub height: u32,
    /// 4 or 8.
    pub connectivity: u32,
    /// Its maximum flow.
    pub flow: u64,
}

/// Every instance `dir/manifest.csv` lists, in its order.
pub fn instances(dir: &Path) -> Vec<Instance> {
    manifest_rows(dir, |file, number| Instance {
        file,
        width: number(1) as u32,
        height: number(2) as u32,
        connectivity: number(3) as u32,
        flow: number(4),
    })
}

/// Every row of `dir/manifest.csv` (after its header) through `row`, which gets the
/// file name and the row's number in a column (panicking on one that is not).
pub fn manifest_rows<T>(dir: &Path, row: impl Fn(String, &dyn Fn(usize) -> u64) -> T) -> Vec<T> {
    let text = std::fs::read_to_string(dir.join("manifest.csv")).expect("manifest.csv");
    text.lines()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').map(str::trim).collect();
            let number = |k: usize| -> u64 { f[k].parse().unwrap_or_else(|e| panic!("{l}: {e}")) };
            row(f[0].to_string(), &number)
        })
        .collect()
}

/// (file name, maximum flow) of every instance `dir/manifest.csv` lists: what the
/// solvers are checked against.
pub fn manifest(dir: &Path) -> Vec<(String, u64)> {
    instances(dir)
        .into_iter()
        .map(|i| (i.file, i.flow))
        .collect()
}
