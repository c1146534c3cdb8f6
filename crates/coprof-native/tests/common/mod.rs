//! What the sampler's tests share: their programs built with the host's
//! gcc, and the addresses of their symbols.

use object::{Object, ObjectSymbol};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `src` to `dir/NAME.c` and builds it into `dir/NAME` with the
/// host's gcc, statically and at fixed addresses (`-no-pie`), so that a
/// sample's PC is the address in the file; `flags` are added.
pub fn build_static(dir: &Path, name: &str, src: &str, flags: &[&str]) -> PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, src).unwrap();
    let out = dir.join(name);
    let status = Command::new("gcc")
        .args(["-O1", "-g", "-static", "-no-pie"])
        .args(flags)
        .arg("-o")
        .arg(&out)
        .arg(&c)
        .status()
        .unwrap();
    assert!(status.success(), "gcc {name}.c failed");
    out
}

/// The address range of the symbol `name` in `prog`.
pub fn function(prog: &Path, name: &str) -> std::ops::Range<u64> {
    let (_, range) = symbols(prog)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name} in {}", prog.display()));
    range
}

/// The symbols of `prog`, read once: each one's name and address range.
pub fn symbols(prog: &Path) -> Vec<(String, std::ops::Range<u64>)> {
    let data = std::fs::read(prog).unwrap();
    let file = object::File::parse(&*data).unwrap();
    file.symbols()
        .map(|s| {
            let name = s.name().unwrap_or("?").to_string();
            (name, s.address()..s.address() + s.size())
        })
        .collect()
}
