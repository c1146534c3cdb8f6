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
    files: RefCell<FxHashMap<String, Option<Arc<Lines>>>>,
}

impl SourceCache {
    /// Line `line` (1-based) of `file`, without its line ending; `None` when
    /// the file cannot be read or is shorter.
    pub fn line(&self, file: &str, line: u32) -> Option<String> {
        let idx = (line as usize).checked_sub(1)?;
        let mut files = self.files.borrow_mut();
        let lines = files
            .entry(file.to_string())
            .or_insert_with(|| read_lines(Path::new(file)).map(Arc::new));
        lines.as_ref()?.get(idx).map(str::to_string)
    }
}

/// A file's text and where each of its lines starts: a listing wants a
/// few lines of a file that may have hundreds of thousands (SQLite's
/// amalgamation, 9 MB, is one C file), so the lines are found, not copied
/// one by one.
struct Lines {
    text: String,
    /// Byte offset of each line's first byte.
    starts: Vec<usize>,
}

impl Lines {
    /// Splits `text` as [`str::lines`] does, at `\n` with a `\r` before
    /// it left out and no empty line after a final line ending, and leaves
    /// out one more `\r` at the end of each line.
    fn new(text: String) -> Lines {
        let mut starts = Vec::new();
        if !text.is_empty() {
            starts.push(0);
        }
        let len = text.len();
        starts.extend(
            memchr::memchr_iter(b'\n', text.as_bytes())
                .map(|i| i + 1)
                .filter(|&next| next < len),
        );
        Lines { text, starts }
    }

    /// Line `idx` (0-based), without its line ending.
    fn get(&self, idx: usize) -> Option<&str> {
        let start = *self.starts.get(idx)?;
        let end = self.starts.get(idx + 1).map_or(self.text.len(), |&s| s);
        let mut line = &self.text[start..end];
        if let Some(l) = line.strip_suffix('\n') {
            line = l.strip_suffix('\r').unwrap_or(l);
        }
        // A carriage return left at the end, as an editor that ends lines
        // with `\r\r\n` or a last line with no `\n` leaves, is left out too.
        Some(line.strip_suffix('\r').unwrap_or(line))
    }
}

fn read_lines(path: &Path) -> Option<Lines> {
    if std::fs::metadata(path).ok()?.len() > MAX_SOURCE_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    Some(Lines::new(text))
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

    #[test]
    fn splits_lines_as_str_lines_does() {
        for text in [
            "",
            "\n",
            "a",
            "a\n",
            "a\r\n\r\nb",
            "a\rb\r",
            "\n\nlast\r",
            "é\u{fffd}\nx\r\n",
            "a\r\r\nb\r\r",
        ] {
            let lines = Lines::new(text.to_string());
            let want: Vec<&str> = text
                .lines()
                .map(|l| l.strip_suffix('\r').unwrap_or(l))
                .collect();
            let got: Vec<&str> = (0..want.len() + 1).map_while(|i| lines.get(i)).collect();
            assert_eq!(got, want, "{text:?}");
        }
    }
}
