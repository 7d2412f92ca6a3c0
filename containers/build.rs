//! Compiles into the binary what the harness writes out for containers: the shipped client
//! adapters (`../adapters`, minus what its `.dockerignore` names), so the client image can be
//! built from any directory and its tag is a hash of exactly what goes into it; and the fake
//! clock's preload shim (`shim/monotonic_sleep.c`, see `src/control/clock.rs`), built by the
//! system's C compiler (the one every Rust toolchain links with): host and node image are both
//! Debian bookworm on x86_64, so a library built here loads there.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn main() {
    adapter_files();
    monotonic_sleep_shim();
}

/// `$OUT_DIR/monotonic_sleep.so`, from `shim/monotonic_sleep.c` (`$CC`, else `cc`).
fn monotonic_sleep_shim() {
    let source =
        PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("shim/monotonic_sleep.c");
    println!("cargo:rerun-if-changed={}", source.display());
    println!("cargo:rerun-if-env-changed=CC");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("monotonic_sleep.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let status = std::process::Command::new(&cc)
        .args([
            "-shared", "-fPIC", "-O2", "-Wall", "-Wextra", "-Werror", "-o",
        ])
        .arg(&out)
        .arg(&source)
        .status()
        .unwrap_or_else(|e| {
            panic!(
                "running the C compiler `{cc}` for {}: {e}",
                source.display()
            )
        });
    assert!(
        status.success(),
        "`{cc}` could not build {} ({status})",
        source.display()
    );
}

fn adapter_files() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("../adapters");
    println!("cargo:rerun-if-changed={}", root.display());
    let ignore = std::fs::read_to_string(root.join(".dockerignore")).unwrap_or_default();
    let ignored: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let mut files = Vec::new();
    walk(&root, &root, &ignored, &mut files);
    files.sort();
    let mut out = String::from("pub const ADAPTER_FILES: &[AdapterFile] = &[\n");
    for (rel, abs, executable) in &files {
        writeln!(
            out,
            "    AdapterFile {{ path: {rel:?}, contents: include_bytes!({abs:?}), executable: {executable} }},"
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("adapter_files.rs");
    std::fs::write(dest, out).unwrap();
}

fn walk(root: &Path, dir: &Path, ignored: &[&str], files: &mut Vec<(String, String, bool)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        println!("cargo:rerun-if-changed={}", path.display());
        let rel = path
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .to_string();
        let name = entry.file_name().to_string_lossy().to_string();
        if name == "__pycache__" || ignored.iter().any(|i| *i == rel) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            walk(root, &path, ignored, files);
        } else {
            use std::os::unix::fs::PermissionsExt;
            let executable = meta.permissions().mode() & 0o111 != 0;
            files.push((
                rel,
                path.canonicalize().unwrap().display().to_string(),
                executable,
            ));
        }
    }
}
