//! Putting a finished output file in place.
//!
//! coprof writes a trace or a profile under a temporary name beside its
//! destination and renames it into place when it is complete, so that a
//! reader sees the old file or the new one, never a part, and an
//! interrupted run leaves nothing half written. A rename is right only
//! for a regular file, though: renamed onto `/dev/null`, a named pipe or a
//! terminal, it would put a plain file where the device or pipe was (for
//! everyone, when run as root), and renamed onto a symbolic link it would
//! replace the link instead of the file it names. Those destinations get
//! the finished bytes written into them instead, as `cp` would.

use std::fs::OpenOptions;
use std::io::{self, Seek, SeekFrom};
use std::path::Path;
use tempfile::NamedTempFile;

/// Whether `path` is written into rather than renamed over: a symbolic
/// link, or an existing file that is not a regular file or a directory.
fn written_into(path: &Path) -> bool {
    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    link || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// Whether `path` names a pipe, a socket or a character device (itself or
/// through symbolic links): a destination read as it is written, that
/// cannot be written back into, such as `/dev/fd/3` of a shell pipeline.
pub fn is_stream(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| {
        let t = m.file_type();
        t.is_fifo() || t.is_socket() || t.is_char_device()
    })
}

/// A temporary file for the output `path`, named `prefix…suffix`: in
/// `path`'s directory, so that [`put`] can rename it over `path`, or in
/// the system's temporary directory when `path` is written into (a
/// device's directory, such as `/dev/fd` for a shell's `>(command)`, may
/// hold no files).
pub fn temp_for(path: &Path, prefix: &str, suffix: &str) -> io::Result<NamedTempFile> {
    let dir = if written_into(path) {
        std::env::temp_dir()
    } else {
        match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => Path::new(".").to_path_buf(),
        }
    };
    tempfile::Builder::new()
        .prefix(prefix)
        .suffix(suffix)
        .tempfile_in(dir)
}

/// Puts the finished temporary file `tmp` at `path`: renamed over it when
/// `path` is a regular file or does not exist; otherwise (a device, a
/// pipe, a symbolic link to any of these or to a regular file) its bytes
/// are written into what `path` names, and `tmp` is removed.
pub fn put(tmp: NamedTempFile, path: &Path) -> io::Result<()> {
    if !written_into(path) {
        return tmp.persist(path).map(|_| ()).map_err(|e| e.error);
    }
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    let mut out = OpenOptions::new()
        .write(true)
        .truncate(regular)
        .create(true)
        .open(path)?;
    let mut from = tmp.as_file();
    from.seek(SeekFrom::Start(0))?;
    io::copy(&mut from, &mut out)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn finished(dir: &Path, text: &str) -> NamedTempFile {
        let mut tmp = NamedTempFile::new_in(dir).unwrap();
        tmp.write_all(text.as_bytes()).unwrap();
        tmp
    }

    #[test]
    fn a_regular_file_is_replaced_and_a_link_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.json");
        std::fs::write(&file, "old and longer").unwrap();
        put(finished(dir.path(), "new"), &file).unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "new");

        // A link stays a link, and the file it names gets the bytes.
        let target = dir.path().join("target.json");
        std::fs::write(&target, "old and longer").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        put(finished(dir.path(), "through"), &link).unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "through");

        // No temporary file is left beside them.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
    }

    /// A named pipe stands for every file that is not a regular one (a
    /// device such as /dev/null: a test that got it wrong would replace
    /// the machine's).
    #[test]
    fn a_named_pipe_gets_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid C string.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
        };
        put(finished(dir.path(), "through the pipe"), &fifo).unwrap();
        assert_eq!(reader.join().unwrap(), "through the pipe");
        assert!(!std::fs::metadata(&fifo).unwrap().is_file());
    }
}
