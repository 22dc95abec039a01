//! Building the kernel emulation drivers (`tests/emulation/`) with the host's C++
//! compiler.

use livecut::gpu::KernelSource;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles `driver` (under `tests/emulation/`) with the kernel source `kernel` (the
/// text the engine gives NVRTC, written beside the build) and `defines` into `out`
/// under the test target folder, with `$CXX`, else `c++` or `g++`. `None`, with a
/// note, where no compiler is installed; a compiler that fails on the source fails the
/// test.
pub fn build(
    driver: &str,
    kernel: &KernelSource,
    defines: &[String],
    out: &str,
) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(out);
    let source = out.with_extension("cu");
    std::fs::write(&source, kernel.text).expect("the kernel source is written");
    let kernel = kernel.name;
    let candidates = std::env::var("CXX")
        .ok()
        .into_iter()
        .chain(["c++".to_string(), "g++".to_string()]);
    for cxx in candidates {
        let built = Command::new(&cxx)
            .args(["-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror"])
            .arg("-Wno-unknown-pragmas")
            .arg(format!("-I{}", root.join("tests/emulation").display()))
            .arg(format!("-DKERNEL_SOURCE=\"{}\"", source.display()))
            .args(defines)
            .arg(root.join("tests/emulation").join(driver))
            .arg("-o")
            .arg(&out)
            .output();
        match built {
            Ok(o) if o.status.success() => return Some(out),
            Ok(o) => panic!(
                "{cxx} failed on {kernel}:\n{}",
                String::from_utf8_lossy(&o.stderr)
            ),
            Err(_) => continue, // not installed: try the next name
        }
    }
    eprintln!("note: skipping, no C++ compiler found (set CXX)");
    None
}
