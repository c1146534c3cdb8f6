//! Source files' lines, read once and cached, for annotated listings that
//! print each instruction beside its source line (DCPI's `dcpilist`).

use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::path::Path;
use std::sync::Arc;

/// Files larger than this are not read (a listing shows no text for them).
const MAX_SOURCE_BYTES: u64 = 64 << 20;

/// A cache of source files split into lines; a missing or unreadable file
/// is remembered as absent so it is not tried again.
#[derive(Default)]
pub struct SourceCache {
    files: RefCell<FxHashMap<String, Option<Arc<[String]>>>>,
}

impl SourceCache {
    /// Line `line` (1-based) of `file`, without its line ending; `None` when
    /// the file cannot be read or is shorter.
    pub fn line(&self, file: &str, line: u32) -> Option<String> {
        let idx = (line as usize).checked_sub(1)?;
        let mut files = self.files.borrow_mut();
        let lines = files
            .entry(file.to_string())
            .or_insert_with(|| read_lines(Path::new(file)));
        lines.as_ref()?.get(idx).cloned()
    }
}

fn read_lines(path: &Path) -> Option<Arc<[String]>> {
    if std::fs::metadata(path).ok()?.len() > MAX_SOURCE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    Some(
        text.lines()
            .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lines_and_remembers_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.c");
        std::fs::write(&p, "int x;\r\nint main(void) {\n}\n").unwrap();
        let c = SourceCache::default();
        let f = p.to_str().unwrap();
        assert_eq!(c.line(f, 1).as_deref(), Some("int x;"));
        assert_eq!(c.line(f, 2).as_deref(), Some("int main(void) {"));
        assert_eq!(c.line(f, 4), None);
        assert_eq!(c.line(f, 0), None);
        assert_eq!(c.line("/nonexistent/x.c", 1), None);
    }
}
