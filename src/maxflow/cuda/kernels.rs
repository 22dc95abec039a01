//! The CUDA C sources of the engine, embedded in the binary and compiled at run time.

/// One embedded kernel source file and the `extern "C" __global__` entry points the
/// engine loads from it.
#[derive(Clone, Copy, Debug)]
pub struct KernelSource {
    /// File name under `kernels/`.
    pub name: &'static str,
    /// The CUDA C text.
    pub text: &'static str,
    /// Entry points the engine looks up by name.
    pub entries: &'static [&'static str],
}

/// Every kernel source of the engine, in compilation order (they are concatenated into
/// one NVRTC program).
pub const KERNEL_SOURCES: &[KernelSource] = &[KernelSource {
    name: "pushrelabel.cu",
    text: include_str!("../../../kernels/pushrelabel.cu"),
    entries: &[
        "pr_layout",
        "pr_init4",
        "pr_init8",
        "pr_reparam4",
        "pr_reparam8",
        "pr_gr_round4",
        "pr_gr_round8",
        "pr_discharge4",
        "pr_discharge8",
        "pr_mask",
        "pr_solve4",
        "pr_solve8",
    ],
}];

/// The NVRTC program: all sources concatenated.
pub fn program_text() -> String {
    KERNEL_SOURCES
        .iter()
        .map(|s| s.text)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_defined_once() {
        let text = program_text();
        for source in KERNEL_SOURCES {
            assert!(!source.text.trim().is_empty(), "{} is empty", source.name);
            for entry in source.entries {
                let pattern = format!(" {entry}(");
                let defs = source
                    .text
                    .lines()
                    .filter(|l| l.starts_with("extern \"C\" __global__") && l.contains(&pattern))
                    .count();
                assert_eq!(defs, 1, "{entry} in {}", source.name);
                assert!(text.contains(&pattern));
            }
        }
    }
}
