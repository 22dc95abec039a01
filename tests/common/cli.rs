//! Running the built `livecut` binary as a user does.

use std::process::{Command, Output};

/// Runs `livecut` with `args`.
pub fn livecut(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_livecut"))
        .args(args)
        .output()
        .expect("run livecut")
}

/// The JSON a run printed, after checking that it succeeded (else its stderr is the
/// failure message).
pub fn json_output(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

/// Checks that a run failed as bad input must: exit status 2, nothing on stdout, and
/// one `error:` line on stderr that contains `needle`.
pub fn assert_fails_with(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        out.stdout.is_empty(),
        "partial output: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
}
