//! Files written per process, as `valgrind --trace-children=yes` gives
//! a log per process: `-o FILE` with `%p` standing for each process's PID.

use crate::error::bad_input;
use std::path::{Path, PathBuf};

/// What stands for the PID in a per-process file's name.
pub(crate) const PID: &str = "%p";

/// `path` with every `%p` replaced by `pid`.
pub(crate) fn expand(path: &Path, pid: u32) -> PathBuf {
    PathBuf::from(path.to_string_lossy().replace(PID, &pid.to_string()))
}

/// The name of a child's file (a profile, a trace), with `%p` for its PID: `output`
/// itself if its file name holds `%p`, else `output` with `.%p` before its
/// extension (`prof.json` gives `prof.%p.json`). `%p` in a directory
/// would name directories that do not exist: refused. A device (`-o
/// /dev/null`) takes every process's profile, without `%p`.
pub(crate) fn pattern(output: &Path) -> anyhow::Result<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    if std::fs::metadata(output).is_ok_and(|m| m.file_type().is_char_device()) {
        return Ok(output.to_path_buf());
    }
    let name = output.file_name().map(|n| n.to_string_lossy().into_owned());
    let dir = output.parent().unwrap_or(Path::new(""));
    if dir.to_string_lossy().contains(PID) {
        return Err(bad_input(format!(
            "-o {}: with --follow-children, %p may stand only in the file's name, not in a directory",
            output.display()
        )));
    }
    let name = name.unwrap_or_default();
    if name.contains(PID) {
        return Ok(output.to_path_buf());
    }
    let named = match name.rfind('.') {
        Some(dot) if dot > 0 => format!("{}.{PID}{}", &name[..dot], &name[dot..]),
        _ => format!("{name}.{PID}"),
    };
    Ok(dir.join(named))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_child_file_is_named_by_its_pid() {
        let p = |s: &str| pattern(Path::new(s)).unwrap();
        assert_eq!(p("/d/prof.json"), Path::new("/d/prof.%p.json"));
        assert_eq!(p("/d/prof.out.json"), Path::new("/d/prof.out.%p.json"));
        assert_eq!(p("/d/prof"), Path::new("/d/prof.%p"));
        assert_eq!(p("/d/.prof"), Path::new("/d/.prof.%p"));
        assert_eq!(p("/d/p-%p.json"), Path::new("/d/p-%p.json"));
        assert_eq!(
            expand(Path::new("/d/p-%p.json"), 4321),
            Path::new("/d/p-4321.json")
        );
        let e = pattern(Path::new("/d-%p/prof.json")).unwrap_err();
        assert!(e.to_string().contains("only in the file's name"), "{e}");
    }
}
