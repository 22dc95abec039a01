//! The README's "must not know" table, kept: each part of `src/` in it may not reach
//! what its row's last column names through `crate::` paths (its unit tests aside, which
//! may check it against anything). The rules are read from the README itself, so the
//! table and the check cannot drift apart; a forbidden path makes the test fail and say
//! where.

use std::path::{Path, PathBuf};

/// What the table's words mean: the `crate::` paths (or crates) each names.
const VOCABULARY: &[(&str, &[&str])] = &[
    ("engines", &["maxflow"]),
    ("how the problem is solved", &["maxflow"]),
    ("engine internals", &["maxflow::cpu", "maxflow::cuda"]),
    ("energies", &["energy"]),
    ("the algorithms", &["energy", "maxflow", "ccl"]),
    ("frames", &["capture"]),
    ("frame sources", &["capture"]),
    ("the pipeline", &["pipeline"]),
    ("the UI", &["app"]),
    ("the GPU runtime", &["gpu"]),
    ("egui", &["egui"]),
];

/// Per part of `src/` in the README's table, the paths it must not name.
fn rules() -> Vec<(String, Vec<&'static str>)> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let mut rules = Vec::new();
    for line in readme.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        // | `src/part` | owns | must not know |
        let [_, part, _, forbidden, _] = cells[..] else {
            continue;
        };
        let Some(part) = part.strip_prefix("`src/").and_then(|p| p.strip_suffix('`')) else {
            continue;
        };
        let mut paths = Vec::new();
        for phrase in forbidden.split(", ").filter(|p| *p != "—") {
            let phrase = phrase.split(" (").next().unwrap_or(phrase).trim();
            let Some((_, named)) = VOCABULARY.iter().find(|(words, _)| *words == phrase) else {
                panic!(
                    "the README's table says `{part}` must not know \"{phrase}\": add it to VOCABULARY"
                );
            };
            paths.extend_from_slice(named);
        }
        rules.push((part.to_string(), paths));
    }
    assert!(
        rules.len() >= 10,
        "the README's table was not found: {rules:?}"
    );
    rules
}

/// The Rust files of part `part`: `src/<part>.rs` and everything below `src/<part>/`.
fn files_of(part: &str) -> Vec<PathBuf> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    let file = src.join(format!("{part}.rs"));
    if file.is_file() {
        out.push(file);
    }
    let mut dirs = vec![src.join(part)];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Crates outside this one that a rule may name.
const CRATES: &[&str] = &["egui"];

/// The product's statements of a file, by first line number: comments and the unit
/// tests (`#[cfg(test)] mod` to the end) left out, a `use` over several lines joined.
fn code_lines(text: &str) -> Vec<(usize, String)> {
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut open_use = false;
    let mut iter = text.lines().enumerate().peekable();
    while let Some((i, line)) = iter.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && iter
                .peek()
                .is_some_and(|(_, next)| next.trim_start().starts_with("mod "))
        {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        let code = line.split(" //").next().unwrap_or(line).trim();
        match lines.last_mut() {
            Some((_, last)) if open_use => last.push_str(code),
            _ => lines.push((i + 1, code.to_string())),
        }
        let starts_use = code.starts_with("use ") || code.starts_with("pub use ");
        open_use = (open_use || starts_use) && !code.ends_with(';');
    }
    lines
}

/// Whether `line` names `target`: a path `crate::target…`, an item `target…` of a
/// `use crate::{…}` group, or the crate `target` itself.
fn names(line: &str, target: &str) -> bool {
    let ends_path = |rest: &str| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_');
    let path = line
        .match_indices(&format!("crate::{target}"))
        .any(|(at, m)| ends_path(&line[at + m.len()..]));
    let group = line.find("crate::{").is_some_and(|at| {
        line[at + "crate::{".len()..]
            .split([',', '{', '}'])
            .map(str::trim)
            .any(|item| item == target || item.starts_with(&format!("{target}::")))
    });
    let starts_word =
        |at: usize| !line[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':');
    let external = CRATES.contains(&target)
        && line
            .match_indices(&format!("{target}::"))
            .any(|(at, _)| starts_word(at));
    path || group || external
}

#[test]
fn no_part_uses_what_the_readme_says_it_must_not_know() {
    let mut found = Vec::new();
    for (part, forbidden) in rules() {
        let part = part.as_str();
        let files = files_of(part);
        assert!(!files.is_empty(), "no files for src/{part}");
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in code_lines(&text) {
                for &target in &forbidden {
                    if names(&line, target) {
                        found.push(format!(
                            "src/{part} must not know {target}: {}:{n}: {}",
                            file.strip_prefix(env!("CARGO_MANIFEST_DIR"))
                                .unwrap()
                                .display(),
                            line.trim()
                        ));
                    }
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_check_sees_paths_groups_and_crates() {
    assert!(names("use crate::maxflow::EngineKind;", "maxflow"));
    assert!(names(
        "fn kind(&self) -> crate::maxflow::EngineKind;",
        "maxflow"
    ));
    assert!(!names("use crate::maxflowx::Thing;", "maxflow"));
    assert!(names(
        "use crate::{grid::Mask, maxflow::Engine};",
        "maxflow"
    ));
    assert!(names(
        "use crate::{grid::Mask, maxflow::{cpu, Engine}};",
        "maxflow"
    ));
    assert!(!names("use crate::{grid::Mask, maxflowy};", "maxflow"));
    assert!(names("let x = egui::Color32::RED;", "egui"));
    assert!(!names("let x = my_egui::Color32::RED;", "egui"));
    let text = "use crate::{\n    grid::Mask,\n    app::X,\n};\n// crate::app\n\
                #[cfg(test)]\nmod tests {\n    use crate::app;\n}\n";
    let code = code_lines(text);
    assert_eq!(code.len(), 1, "{code:?}");
    assert!(names(&code[0].1, "app"));
}
