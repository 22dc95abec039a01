//! Wave Front Fetch on the volume engine's arrays (`kernels/wff.cu`), a schedule of the
//! experiments: time stamps sent from the sink replace heights between the same exact
//! global relabels, which decide termination; push-relabel finishes a solve whose
//! waves stall. Measured against push-relabel by `benches/wff.rs`
//! (`kernels/NOTES.md`, Volumes).

use super::{Buffers, CudaVolumeEngine, VolumeKernels, Work, linear};
use crate::gpu::{GpuError, KernelSource, driver};
use crate::maxflow::EngineError;
use cudarc::driver::PushKernelArg;

/// Wave Front Fetch's unit operation, compiled after [`super::VOLUME`], whose arrays
/// it works on.
pub const WFF: KernelSource = KernelSource {
    name: "wff.cu",
    text: include_str!("../../../../kernels/wff.cu"),
    entries: &["wff_wave"],
};

/// Relabels in a row at the most launches that found no fewer active voxels, after
/// which the waves hand the rest of the solve to push-relabel.
const STALLS: u32 = 4;

/// How excess moves between global relabels.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum VolumeSchedule {
    /// Push-relabel (`vol_push`): pushes to the lowest neighbour, relabels.
    #[default]
    PushRelabel,
    /// Wave Front Fetch (`wff_wave`): time stamps sent from the sink, pushes toward
    /// newer time, no relabel; push-relabel takes over should the waves stall.
    WaveFrontFetch,
}

/// The schedule and the state of the waves of one solve.
#[derive(Default)]
pub(super) struct Lab {
    schedule: VolumeSchedule,
    /// The waves run (not stalled, nor push-relabel chosen).
    on: bool,
    stalls: u32,
    /// The last unit operation's time.
    now: i32,
    took_over: bool,
}

impl Lab {
    /// Counts a relabel that found `active` voxels (`last` the one before) after the
    /// most launches (`full`); hands over to push-relabel after [`STALLS`] that made
    /// no headway (exact heights are at hand right after a relabel).
    pub(super) fn watch(&mut self, active: u32, last: u32, full: bool) {
        self.stalls = if full && active >= last {
            self.stalls + 1
        } else {
            0
        };
        if self.on && self.stalls >= STALLS {
            self.on = false;
            self.took_over = true;
        }
    }

    /// Whether the waves move the excess now.
    pub(super) fn waving(&self) -> bool {
        self.on
    }
}

impl CudaVolumeEngine {
    /// An engine that moves excess by `schedule`.
    pub fn with_schedule(schedule: VolumeSchedule) -> Result<Self, EngineError> {
        let mut engine = Self::new()?;
        engine.lab.schedule = schedule;
        Ok(engine)
    }

    /// Whether the last solve's waves stalled and push-relabel finished it.
    pub fn took_over(&self) -> bool {
        self.lab.took_over
    }

    /// Readies a solve: waves from time 1 on cleared stamps, where they are the schedule.
    pub(super) fn start_waves(&mut self) -> Result<(), GpuError> {
        let on = self.lab.schedule == VolumeSchedule::WaveFrontFetch;
        self.lab = Lab {
            schedule: self.lab.schedule,
            on,
            ..Lab::default()
        };
        if on {
            let b: &mut Buffers = self.buffers.as_mut().expect("buffers allocated");
            self.stream
                .memset_zeros(&mut b.stamp)
                .map_err(driver("clearing the time stamps"))?;
        }
        Ok(())
    }

    /// `count` unit operations of Wave Front Fetch, each at a newer time.
    pub(super) fn waves(
        &mut self,
        k: &VolumeKernels,
        size: (u32, u32),
        count: u32,
        work: &mut Work,
    ) -> Result<(), GpuError> {
        let stream = self.stream.clone();
        let b = self.buffers.as_mut().expect("buffers allocated");
        let n = b.voxels;
        let n64 = n as i64;
        let (w, h) = (size.0 as i32, size.1 as i32);
        for _ in 0..count {
            self.lab.now += 1;
            // SAFETY: the arguments match wff_wave's signature; every array holds n
            // voxels (`res` n per direction).
            unsafe {
                stream
                    .launch_builder(&k.wave)
                    .arg(&mut b.res)
                    .arg(&mut b.excess)
                    .arg(&mut b.sink)
                    .arg(&b.height)
                    .arg(&mut b.stamp)
                    .arg(&w)
                    .arg(&h)
                    .arg(&n64)
                    .arg(&self.lab.now)
                    .launch(linear(n))
                    .map_err(driver("the volume's wave kernel"))?;
            }
        }
        work.launches += u64::from(count);
        work.push_launches += u64::from(count);
        Ok(())
    }
}
