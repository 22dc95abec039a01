//! The push-relabel kernels (`kernels/pushrelabel/`): the embedded source, and the
//! typed handles the engine launches, loaded from one module per tile height.

use super::layout::{Ctl, Params, TILE_HEIGHTS, TILE_W};
use crate::gpu::{Compiled, Gpu, GpuError, KernelFamily, KernelSource, Program, driver};
use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig, PushKernelArg};
use std::sync::Arc;

/// The parts of the engine's kernel source under `kernels/pushrelabel/`, in the order
/// they are compiled as one program (each uses what the parts before it define): the
/// order of [`PUSH_RELABEL`]'s `concat!`, which a test holds to this list.
#[cfg(test)]
const PUSH_RELABEL_PARTS: [&str; 8] = [
    "common.cu",     // the scheme, sizes, parameter blocks, small helpers
    "barrier.cu",    // the persistent kernel's grid barrier
    "queue.cu",      // the work queue of the persistent global relabel
    "start.cu",      // a tile's shared memory, folding the terminals
    "relabel.cu",    // tile BFS, the global relabel that decides termination
    "discharge.cu",  // tile-local push-relabel, the mask of the cut
    "passes.cu",     // the host-driven scheme's entry points, the dynamic update
    "persistent.cu", // the persistent solve, the cut's capacity, the layout check
];

/// The engine's kernel source (the parts of [`PUSH_RELABEL_PARTS`], concatenated) and
/// its entry points.
pub const PUSH_RELABEL: KernelSource = KernelSource {
    name: "pushrelabel.cu",
    text: concat!(
        include_str!("../../../kernels/pushrelabel/common.cu"),
        include_str!("../../../kernels/pushrelabel/barrier.cu"),
        include_str!("../../../kernels/pushrelabel/queue.cu"),
        include_str!("../../../kernels/pushrelabel/start.cu"),
        include_str!("../../../kernels/pushrelabel/relabel.cu"),
        include_str!("../../../kernels/pushrelabel/discharge.cu"),
        include_str!("../../../kernels/pushrelabel/passes.cu"),
        include_str!("../../../kernels/pushrelabel/persistent.cu"),
    ),
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
        "pr_cut4",
        "pr_cut8",
    ],
};

/// Every kernel source of the CUDA engines (grids and volumes; Wave Front Fetch's with
/// the schedule experiments).
#[cfg(not(feature = "experiments"))]
pub const KERNEL_SOURCES: &[KernelSource] = &[PUSH_RELABEL, super::volume::VOLUME];
/// Every kernel source of the CUDA engines (grids and volumes; Wave Front Fetch's with
/// the schedule experiments).
#[cfg(feature = "experiments")]
pub const KERNEL_SOURCES: &[KernelSource] =
    &[PUSH_RELABEL, super::volume::VOLUME, super::volume::WFF];

/// The kernels of one connectivity, and what their launches need.
pub struct ConnKernels {
    /// Builds the tiled residual graph from the uploaded capacities (`pr_init*`).
    pub init: CudaFunction,
    /// Turns the kept residual graph into a preflow of new capacities (`pr_reparam*`).
    pub reparam: CudaFunction,
    /// One round of the host-driven scheme's global relabel (`pr_gr_round*`).
    pub gr_round: CudaFunction,
    /// One discharge phase of the host-driven scheme (`pr_discharge*`).
    pub discharge: CudaFunction,
    /// The whole persistent solve (`pr_solve*`).
    pub solve: CudaFunction,
    /// The capacity of the cut in the mask, for a solve stopped at its budget
    /// (`pr_cut*`).
    pub cut: CudaFunction,
    /// Dynamic shared memory of a discharge block, in bytes.
    pub tile_smem: u32,
    /// Blocks of a persistent solve resident on the device at once; 0 where the device
    /// has no cooperative launches.
    pub coop_blocks: u32,
}

/// The engine's kernels for one tile height.
pub struct PushRelabelKernels {
    /// 4-connected grids.
    pub four: ConnKernels,
    /// 8-connected grids.
    pub eight: ConnKernels,
    /// Writes the cut's mask (`pr_mask`).
    pub mask: CudaFunction,
    /// Dynamic shared memory of a BFS block, in bytes.
    pub bfs_smem: u32,
    /// Threads per tile block the kernels were compiled for (`BDIM`).
    pub block_threads: u32,
}

impl PushRelabelKernels {
    /// The kernels for tiles `tile_h` pixels high (one of [`TILE_HEIGHTS`]), compiled
    /// the first time any engine asks for them.
    pub fn for_tile_height(gpu: &Gpu, tile_h: u32) -> Result<Arc<Compiled<Self>>, GpuError> {
        if !TILE_HEIGHTS.contains(&tile_h) {
            return Err(GpuError::Mismatch(format!(
                "no kernels for tiles {tile_h} pixels high (have {TILE_HEIGHTS:?})"
            )));
        }
        gpu.kernels::<Self>(tile_h)
    }

    /// The kernels for grids of `dirs` arcs per pixel (4 or 8).
    pub fn conn(&self, dirs: u32) -> &ConnKernels {
        if dirs == 8 { &self.eight } else { &self.four }
    }
}

impl KernelFamily for PushRelabelKernels {
    /// The tile height (`TH`).
    type Variant = u32;

    fn program(tile_h: u32) -> Program {
        let mut options = vec![
            "--std=c++17".to_string(),
            "-lineinfo".to_string(),
            format!("-DTH={tile_h}"),
        ];
        // the cycle counters and the relabel log of the schedule experiments
        if cfg!(feature = "experiments") {
            options.push("-DLIVECUT_PROFILE".to_string());
        }
        Program {
            name: PUSH_RELABEL.name,
            text: PUSH_RELABEL.text.to_string(),
            options,
        }
    }

    fn load(gpu: &Gpu, module: &Arc<CudaModule>, tile_h: u32) -> Result<Self, GpuError> {
        let function = |name: &str| PUSH_RELABEL.function(module, name);
        let sizes = layout_sizes(gpu, &function("pr_layout")?, tile_h)?;
        let (bfs_smem, block_threads) = (sizes.bfs_smem, sizes.block_threads);
        let conn = |dirs: usize, tile_smem: u32| -> Result<ConnKernels, GpuError> {
            let kernels = ConnKernels {
                init: function(&format!("pr_init{dirs}"))?,
                reparam: function(&format!("pr_reparam{dirs}"))?,
                gr_round: function(&format!("pr_gr_round{dirs}"))?,
                discharge: function(&format!("pr_discharge{dirs}"))?,
                solve: function(&format!("pr_solve{dirs}"))?,
                cut: function(&format!("pr_cut{dirs}"))?,
                tile_smem,
                coop_blocks: 0,
            };
            for (name, f, bytes) in [
                ("pr_discharge", &kernels.discharge, tile_smem),
                ("pr_solve", &kernels.solve, tile_smem),
                ("pr_gr_round", &kernels.gr_round, bfs_smem),
            ] {
                allow_shared_memory(f, bytes).map_err(driver(format!(
                    "shared memory of {name}{dirs} ({bytes} bytes)"
                )))?;
            }
            let coop_blocks = persistent_blocks(gpu, &kernels.solve, block_threads, tile_smem)?;
            Ok(ConnKernels {
                coop_blocks,
                ..kernels
            })
        };
        Ok(Self {
            four: conn(4, sizes.tile_smem[0])?,
            eight: conn(8, sizes.tile_smem[1])?,
            mask: function("pr_mask")?,
            bfs_smem,
            block_threads,
        })
    }
}

/// Sizes the compiled kernels report about themselves.
struct LayoutSizes {
    tile_smem: [u32; 2],
    bfs_smem: u32,
    block_threads: u32,
}

/// Asks the module for its struct sizes and tile shape and checks them against the
/// Rust mirrors and `tile_h`.
fn layout_sizes(gpu: &Gpu, pr_layout: &CudaFunction, tile_h: u32) -> Result<LayoutSizes, GpuError> {
    let stream = gpu.context().default_stream();
    let mut out = stream.alloc_zeros::<u32>(7).map_err(driver("alloc"))?;
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: pr_layout writes 7 u32 to its argument, which holds 7.
    unsafe { stream.launch_builder(pr_layout).arg(&mut out).launch(cfg) }
        .map_err(driver("layout kernel"))?;
    let sizes = stream.clone_dtoh(&out).map_err(driver("layout readback"))?;
    let expected = [
        std::mem::size_of::<Params>() as u32,
        std::mem::size_of::<Ctl>() as u32,
    ];
    if sizes[0] != expected[0] || sizes[1] != expected[1] {
        return Err(GpuError::Mismatch(format!(
            "kernel structs do not match the engine (Params {} vs {}, Ctl {} vs {})",
            sizes[0], expected[0], sizes[1], expected[1]
        )));
    }
    let layout = LayoutSizes {
        tile_smem: [sizes[2], sizes[3]],
        bfs_smem: sizes[4],
        block_threads: sizes[5],
    };
    if sizes[6] != tile_h || layout.block_threads != TILE_W * tile_h {
        return Err(GpuError::Mismatch(format!(
            "kernels for {TILE_W}x{tile_h} tiles report {}-pixel-high tiles and {} threads per block",
            sizes[6], layout.block_threads
        )));
    }
    Ok(layout)
}

/// Raises the dynamic shared-memory limit of `f` to `bytes` (kernels past 48 KB).
fn allow_shared_memory(f: &CudaFunction, bytes: u32) -> Result<(), cudarc::driver::DriverError> {
    let attr = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    f.set_attribute(attr, bytes as i32)
}

/// Blocks of the persistent `solve` that fit on the device at once; 0 without
/// cooperative launches.
fn persistent_blocks(
    gpu: &Gpu,
    solve: &CudaFunction,
    threads: u32,
    smem: u32,
) -> Result<u32, GpuError> {
    if !gpu.cooperative() {
        return Ok(0);
    }
    let per_sm = solve
        .occupancy_max_active_blocks_per_multiprocessor(threads, smem as usize, None)
        .map_err(driver("occupancy"))?;
    Ok(per_sm * gpu.sm_count())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel source with every `//` comment removed, by line.
    fn code_lines(text: &str) -> impl Iterator<Item = &str> {
        text.lines().map(|l| l.split("//").next().unwrap_or(""))
    }

    #[test]
    fn profiling_counters_compile_only_when_asked_for() {
        // outside `#ifdef LIVECUT_PROFILE` blocks and `PROFILE(...)` statements, no
        // line may touch a cycle counter, the relabel log or the cycle clock
        let profiling = [
            "cyc_discharge",
            "cyc_bfs",
            "path_bfs",
            "path_discharge",
            "bfs_wait",
            "barrier_cycles",
            "cycles()",
            "charge(",
            "p.log",
            "LOG_ROWS",
            "LOG_COLS",
        ];
        // per open conditional block: whether only profiling builds compile it
        let mut blocks: Vec<bool> = Vec::new();
        for (n, line) in code_lines(PUSH_RELABEL.text).enumerate() {
            let directive = line.trim_start();
            if directive.starts_with("#if") {
                blocks.push(directive.starts_with("#ifdef LIVECUT_PROFILE"));
            } else if directive.starts_with("#else") {
                let top = blocks.last_mut().expect("an #else inside a block");
                *top = false;
            } else if directive.starts_with("#endif") {
                blocks.pop().expect("an #endif closing a block");
            }
            let guarded = blocks.iter().any(|&b| b) || directive.starts_with("PROFILE(");
            if !guarded {
                for word in profiling {
                    assert!(!line.contains(word), "line {}: {word} unguarded", n + 1);
                }
            }
        }
        assert!(blocks.is_empty(), "unbalanced #if blocks");
    }

    #[test]
    fn only_profiling_builds_define_the_profile() {
        let options = PushRelabelKernels::program(16).options;
        assert!(options.contains(&"-DTH=16".to_string()));
        assert_eq!(
            options.contains(&"-DLIVECUT_PROFILE".to_string()),
            cfg!(feature = "experiments")
        );
    }

    #[test]
    fn the_source_is_every_part_in_order() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels/pushrelabel");
        let read = |part: &&str| std::fs::read_to_string(dir.join(part)).expect("a part");
        let whole: String = PUSH_RELABEL_PARTS.iter().map(read).collect();
        assert!(
            whole == PUSH_RELABEL.text,
            "the concat! and the list differ"
        );
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .expect("the parts' folder")
            .map(|e| {
                e.expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|name| name.ends_with(".cu"))
            .collect();
        files.sort();
        let mut parts = PUSH_RELABEL_PARTS.map(String::from).to_vec();
        parts.sort();
        assert_eq!(files, parts, "every part is compiled, once");
    }
}
