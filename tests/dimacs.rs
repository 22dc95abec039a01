//! DIMACS grid reading: the shared instances, round trips, any arc order with
//! duplicates, and every class of malformed input.

mod common;

use common::grids::{grids_dir, instances};
use flate2::Compression;
use flate2::write::GzEncoder;
use livecut::grid::{Connectivity, Direction, GridProblem};
use livecut::maxflow::dimacs::{self, DimacsError};
use proptest::prelude::*;
use std::io::Write;

fn read_text(text: &str) -> Result<GridProblem, DimacsError> {
    dimacs::read(std::io::Cursor::new(text.as_bytes().to_vec()))
}

#[test]
fn shared_instances_read_with_their_manifest_sizes() {
    let Some(dir) = grids_dir() else { return };
    let instances = instances(&dir);
    for i in &instances {
        let p = dimacs::read_path(&dir.join(&i.file)).unwrap_or_else(|e| panic!("{}: {e}", i.file));
        let size = (p.width(), p.height(), p.connectivity().number());
        assert_eq!(size, (i.width, i.height, i.connectivity), "{}", i.file);
    }
    assert!(instances.len() >= 12);
}

/// The worked example of FORMAT.md, in two arc orders and with a duplicate split.
#[test]
fn arcs_in_any_order_with_duplicates_add_up() {
    let forward = "c grid 2 1 4\np max 4 4\nn 3 s\nn 4 t\na 3 1 5\na 1 2 3\na 2 4 4\na 1 4 1\n";
    let shuffled = "c grid 2 1 4\nc comment\np max 4 5\nn 4 t\nn 3 s\na 1 4 1\na 2 4 4\n\na 1 2 1\na 3 1 5\r\na 1 2 2";
    let a = read_text(forward).unwrap();
    let b = read_text(shuffled).unwrap();
    assert_eq!(a, b);
    assert_eq!(a.source(), &[5, 0]);
    assert_eq!(a.sink(), &[1, 4]);
    assert_eq!(a.edges(Direction::East), &[3, 0]);
}

fn arb_problem() -> impl Strategy<Value = GridProblem> {
    (1u32..7, 1u32..7, prop::bool::ANY).prop_flat_map(|(w, h, eight)| {
        let c = if eight {
            Connectivity::Eight
        } else {
            Connectivity::Four
        };
        let n = (w * h) as usize;
        let cap = prop_oneof![Just(0i32), 0i32..100, Just(i32::MAX)];
        let dirs = c.number() as usize;
        (
            prop::collection::vec(cap.clone(), n),
            prop::collection::vec(cap.clone(), n),
            prop::collection::vec(prop::collection::vec(cap, n), dirs),
        )
            .prop_map(move |(s, t, mut e)| {
                let probe = GridProblem::zeros(w, h, c).unwrap();
                for (d, arr) in e.iter_mut().enumerate() {
                    for (i, v) in arr.iter_mut().enumerate() {
                        let (x, y) = (i as u32 % w, i as u32 / w);
                        if probe.neighbour(x, y, Direction::ALL[d]).is_none() {
                            *v = 0;
                        }
                    }
                }
                GridProblem::from_arrays(w, h, c, s, t, e).unwrap()
            })
    })
}

proptest! {
    #[test]
    fn write_then_read_is_identity(p in arb_problem(), gzip in prop::bool::ANY) {
        let mut text = Vec::new();
        dimacs::write(&p, &mut text).unwrap();
        let back = if gzip {
            let mut enc = GzEncoder::new(Vec::new(), Compression::fast());
            enc.write_all(&text).unwrap();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("p.max.gz");
            std::fs::write(&path, enc.finish().unwrap()).unwrap();
            dimacs::read_path(&path).unwrap()
        } else {
            dimacs::read(std::io::Cursor::new(text)).unwrap()
        };
        prop_assert_eq!(back, p);
    }
}

/// (name, file text, expected line of the error or 0 for none, words the message has)
const MALFORMED: &[(&str, &str, u64, &str)] = &[
    ("empty file", "", 0, "empty file"),
    (
        "missing c grid line",
        "p max 4 1\nn 3 s\nn 4 t\na 3 1 5\n",
        1,
        "c grid",
    ),
    ("bad connectivity", "c grid 2 1 6\n", 1, "c grid"),
    (
        "missing p line",
        "c grid 2 1 4\nn 3 s\nn 4 t\na 3 1 5\n",
        2,
        "'p max N M'",
    ),
    ("p line not max", "c grid 2 1 4\np min 4 1\n", 2, "p max"),
    (
        "p line wrong node count",
        "c grid 2 1 4\np max 5 1\n",
        2,
        "node count",
    ),
    (
        "second p line",
        "c grid 2 1 4\np max 4 0\np max 4 0\n",
        3,
        "second",
    ),
    (
        "non-numeric capacity",
        "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 3 1 x7\n",
        5,
        "capacity",
    ),
    (
        "negative capacity",
        "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 3 1 -5\n",
        5,
        "negative",
    ),
    (
        "capacity above 2^31-1",
        "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 3 1 2147483648\n",
        5,
        "2^31-1",
    ),
    (
        "huge capacity",
        "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 3 1 99999999999999999999999\n",
        5,
        "capacity",
    ),
    (
        "duplicates overflow",
        "c grid 2 1 4\np max 4 2\nn 3 s\nn 4 t\na 3 1 2147483647\na 3 1 1\n",
        6,
        "duplicate",
    ),
    (
        "node id out of range",
        "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 9 1 5\n",
        5,
        "out of range",
    ),
    (
        "node id zero",
        "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 0 1 5\n",
        5,
        "out of range",
    ),
    (
        "diagonal in 4C",
        "c grid 2 2 4\np max 6 1\nn 5 s\nn 6 t\na 1 4 5\n",
        5,
        "not a grid arc",
    ),
    (
        "row wrap is no neighbour",
        "c grid 3 2 8\np max 8 1\nn 7 s\nn 8 t\na 3 4 5\n",
        5,
        "not a grid arc",
    ),
    (
        "self loop",
        "c grid 2 2 8\np max 6 1\nn 5 s\nn 6 t\na 2 2 5\n",
        5,
        "not a grid arc",
    ),
    (
        "arc into the source",
        "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 1 3 5\n",
        5,
        "into the source",
    ),
    (
        "source to sink arc",
        "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 3 4 5\n",
        5,
        "source to the sink",
    ),
    (
        "source equal to sink",
        "c grid 2 1 4\np max 4 0\nn 3 s\nn 3 t\n",
        4,
        "different",
    ),
    (
        "source not W*H+1",
        "c grid 2 1 4\np max 4 0\nn 1 s\n",
        3,
        "source must be node 3",
    ),
    (
        "truncated arc line",
        "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 3 1\n",
        5,
        "truncated",
    ),
    (
        "extra token",
        "c grid 2 1 4\np max 4 1\nn 3 s\nn 4 t\na 3 1 5 6\n",
        5,
        "unexpected",
    ),
    (
        "unknown line",
        "c grid 2 1 4\np max 4 0\nx 1 2\n",
        3,
        "unknown line",
    ),
    (
        "fewer arcs than declared",
        "c grid 2 1 4\np max 4 3\nn 3 s\nn 4 t\na 3 1 5\n",
        0,
        "declares 3 arcs",
    ),
    ("missing n lines", "c grid 2 1 4\np max 4 0\n", 0, "missing"),
    (
        "absurd dimensions",
        "c grid 30000 30000 8\np max 900000002 0\n",
        1,
        "GiB",
    ),
    (
        "too many pixels",
        "c grid 4294967295 4294967295 4\n",
        1,
        "not supported",
    ),
];

#[test]
fn every_malformed_class_names_its_line() {
    for &(name, text, line, words) in MALFORMED {
        let err = read_text(text).expect_err(name);
        let msg = err.to_string();
        match (&err, line) {
            (DimacsError::Syntax { line: got, .. }, want) if want > 0 => {
                assert_eq!(*got, want, "{name}: {msg}")
            }
            (DimacsError::Content(_), 0) => {}
            _ => panic!("{name}: unexpected error kind {err:?}"),
        }
        assert!(msg.contains(words), "{name}: '{msg}' lacks '{words}'");
        assert!(!msg.contains('\n'), "{name}: one line");
    }
}

#[test]
fn random_bytes_and_truncated_gzip_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let noise: Vec<u8> = (0..4096u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let path = dir.path().join("noise.max");
    std::fs::write(&path, &noise).unwrap();
    assert!(matches!(
        dimacs::read_path(&path),
        Err(DimacsError::Syntax { line: 1, .. })
    ));

    let mut text = String::from("c grid 64 64 4\n");
    text += &format!(
        "p max {} {}\nn {} s\nn {} t\n",
        64 * 64 + 2,
        64 * 64,
        64 * 64 + 1,
        64 * 64 + 2
    );
    for p in 1..=64 * 64 {
        text += &format!("a {} {p} {}\n", 64 * 64 + 1, p * 7 % 13);
    }
    let mut enc = GzEncoder::new(Vec::new(), Compression::default());
    enc.write_all(text.as_bytes()).unwrap();
    let gz = enc.finish().unwrap();
    let path = dir.path().join("cut.max.gz");
    std::fs::write(&path, &gz[..gz.len() / 2]).unwrap();
    let err = dimacs::read_path(&path).expect_err("truncated gzip");
    assert!(err.to_string().contains("compressed stream"), "{err}");
    let missing = dimacs::read_path(&dir.path().join("absent.max")).expect_err("missing file");
    assert!(matches!(missing, DimacsError::Io(_)));
}
