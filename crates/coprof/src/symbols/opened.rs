//! Symbolizers opened in this process, kept for the next [`Symbols`] of
//! the same file: a native program's children, each profiled here with
//! symbols of its own, mostly run the same few files (the C library, the
//! loader, a shell), and opening one (inflating its compressed debug
//! sections, indexing its units) costs tens of milliseconds each time.
//!
//! [`Symbols`]: super::Symbols

use coprof_symbols::Symbolizer;
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// How many files are kept open: the most recently asked for.
pub(super) const KEPT: usize = 16;

/// A file as opened: its symbolizer, if it could be opened, and what to
/// say about it.
pub(super) type Opened = (Option<Rc<Symbolizer>>, Vec<String>);

/// Which file, as it is now: its path, where its debug files are looked
/// for, and its identity on disk, so that a file rebuilt or replaced
/// since is opened again.
#[derive(Clone, PartialEq, Eq)]
struct Key {
    path: PathBuf,
    dirs: Vec<PathBuf>,
    identity: (u64, u64, u64, i64, i64),
}

impl Key {
    fn of(path: &Path, dirs: &[PathBuf]) -> Option<Key> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path).ok()?;
        Some(Key {
            path: path.to_path_buf(),
            dirs: dirs.to_vec(),
            identity: (m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec()),
        })
    }
}

thread_local! {
    /// The files kept, the most recently asked for last.
    static KEPT_OPEN: RefCell<Vec<(Key, Opened)>> = const { RefCell::new(Vec::new()) };
}

/// `path` opened with `open`, or as it was opened before in this thread
/// if it has not changed since.
pub(super) fn open_kept(path: &Path, dirs: &[PathBuf], open: impl FnOnce() -> Opened) -> Opened {
    let Some(key) = Key::of(path, dirs) else {
        return open();
    };
    KEPT_OPEN.with(|kept| {
        let mut kept = kept.borrow_mut();
        if let Some(at) = kept.iter().position(|(k, _)| *k == key) {
            let entry = kept.remove(at);
            let opened = entry.1.clone();
            kept.push(entry);
            return opened;
        }
        let opened = open();
        if kept.len() == KEPT {
            kept.remove(0);
        }
        kept.push((key, opened.clone()));
        opened
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn a_file_is_opened_once_until_it_changes_or_falls_out() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("prog");
        std::fs::write(&file, "one").unwrap();
        let opens = Cell::new(0);
        let open = |path: &Path, dirs: &[PathBuf]| {
            open_kept(path, dirs, || {
                opens.set(opens.get() + 1);
                (None, vec![format!("opened {}", opens.get())])
            })
        };
        let dirs = [PathBuf::from("/usr/lib/debug")];
        assert_eq!(open(&file, &dirs).1, ["opened 1"]);
        assert_eq!(open(&file, &dirs).1, ["opened 1"], "kept, with its notes");
        assert_eq!(opens.get(), 1);
        // Other debug directories are another opening.
        open(&file, &[]);
        assert_eq!(opens.get(), 2);
        // The file rebuilt: opened again.
        std::fs::write(&file, "longer").unwrap();
        assert_eq!(open(&file, &dirs).1, ["opened 3"]);
        // A file that cannot be looked at is opened each time.
        let missing = dir.path().join("missing");
        open(&missing, &dirs);
        open(&missing, &dirs);
        assert_eq!(opens.get(), 5);
        // The least recently asked for falls out past KEPT files.
        for n in 0..KEPT {
            let other = dir.path().join(format!("other{n}"));
            std::fs::write(&other, "x").unwrap();
            open(&other, &dirs);
        }
        assert_eq!(opens.get(), 5 + KEPT);
        open(&file, &dirs);
        assert_eq!(opens.get(), 6 + KEPT);
    }
}
