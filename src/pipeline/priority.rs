//! Scheduling priority of the pipeline's threads. Beside a window, capture and
//! solving run below the UI's priority: when they would take every core (a software
//! renderer on a small machine), the operating system then serves the window first
//! and the worker drops frames instead, as a live view should.

/// How much lower than the thread that starts it a background thread runs, in nice
/// steps (Linux: each step gives about 10 % less processor share under contention).
pub const BACKGROUND_NICENESS: i32 = 8;

/// Lowers the calling thread's scheduling priority by `steps` nice steps, where the
/// platform has per-thread priorities. Returns whether it did; failing is harmless
/// (the thread runs at the normal priority).
pub fn lower_current_thread(steps: i32) -> bool {
    imp::lower_current_thread(steps)
}

/// The calling thread's nice value, where the platform has one.
pub fn current_niceness() -> Option<i32> {
    imp::current_niceness()
}

#[cfg(target_os = "linux")]
mod imp {
    /// On Linux `setpriority(PRIO_PROCESS, tid, …)` applies to that thread alone.
    pub fn lower_current_thread(steps: i32) -> bool {
        let Some(now) = current_niceness() else {
            return false;
        };
        let target = (now + steps.max(0)).min(19);
        // SAFETY: plain system calls on the calling thread's id.
        unsafe { libc::setpriority(libc::PRIO_PROCESS, tid(), target) == 0 }
    }

    pub fn current_niceness() -> Option<i32> {
        // getpriority returns -1 both as a value and as an error: tell them by errno.
        // SAFETY: as above.
        unsafe {
            *libc::__errno_location() = 0;
            let value = libc::getpriority(libc::PRIO_PROCESS, tid());
            (value != -1 || *libc::__errno_location() == 0).then_some(value)
        }
    }

    fn tid() -> libc::id_t {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::gettid() as libc::id_t }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub fn lower_current_thread(_steps: i32) -> bool {
        false
    }

    pub fn current_niceness() -> Option<i32> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    #[test]
    fn lowering_affects_only_the_calling_thread() {
        let main_before = current_niceness().expect("Linux has nice values");
        let (before, after) = std::thread::spawn(|| {
            let before = current_niceness().unwrap();
            assert!(lower_current_thread(3));
            (before, current_niceness().unwrap())
        })
        .join()
        .unwrap();
        assert_eq!(after, (before + 3).min(19));
        assert_eq!(
            current_niceness(),
            Some(main_before),
            "other threads keep theirs"
        );
    }
}
