//! What reports asked of a file's symbols, kept on disk between runs.
//!
//! Opening a library's symbols costs far more than the few answers a
//! report wants from them: libc's debug file is inflated and its 1,992
//! units indexed (some 60 ms and 40 MB of fresh pages here) to name a
//! handful of PCs. A profile that follows child processes pays that in
//! every process, and a program profiled again pays it again. So the
//! answers (the location of a PC, the source lines of a range, an
//! instruction's text, a listing) are written, at the end of a run, to a
//! file named for the symbols' identity; a later run that asks only what
//! is there does not open the symbols at all.
//!
//! The identity ([`Key`]) is every file the answers came from, each by
//! path, length and modification time: the binary and each file that
//! could be its separate debug file (so installing one changes it), the
//! directories searched for them, and the coprof executable itself, so
//! that another build of coprof never reads answers an older one wrote.
//! A file whose key is not the one worked out now is not used. Source
//! lines' text is not kept: it is read from the source files each time.
//!
//! The files live in `$XDG_CACHE_HOME/coprof/symbols`, or
//! `~/.cache/coprof/symbols`; `--no-symbol-cache` leaves them alone.
//! A file is written whole under a temporary name and renamed, so
//! processes that save at once never leave one half written; what one of
//! them saved may be replaced by what the other did.

use coprof_symbols::debug_file::{stamps, FileStamp};
use coprof_symbols::split_dwarf::SplitFiles;
use coprof_symbols::Location;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::hash::Hash;
use std::path::{Path, PathBuf};

/// The layout of the files. A new build of coprof has a key of its own
/// anyway (its executable's stamp). 2: a span's answer holds its function.
const FORMAT: u32 = 2;

/// Answers kept per file at most: past this, a save starts the file
/// afresh with this run's answers only.
const MAX_ANSWERS: usize = 50_000;

/// Files kept in the cache at most: a save that finds more removes the
/// oldest written, down to [`KEEP_FILES`]. Programs built afresh, each a
/// new key, would otherwise leave files without end.
const MAX_FILES: usize = 500;
const KEEP_FILES: usize = 400;

/// The directory of the cache: `$XDG_CACHE_HOME/coprof/symbols`, else
/// `$HOME/.cache/coprof/symbols`; `None` when neither is set.
pub fn default_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        Some(x) => PathBuf::from(x),
        None => PathBuf::from(std::env::var_os("HOME").filter(|v| !v.is_empty())?).join(".cache"),
    };
    Some(base.join("coprof").join("symbols"))
}

/// What the answers of a file are the answers of.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    format: u32,
    /// The coprof executable that worked them out.
    tool: FileStamp,
    /// The binary and its candidate debug files.
    files: Vec<FileStamp>,
    debug_dirs: Vec<PathBuf>,
}

impl Key {
    /// The key of `binary`'s symbols as they would be opened now with
    /// `debug_dirs`; `None` when a stamp cannot be read.
    fn of(binary: &Path, debug_dirs: &[PathBuf]) -> Option<Key> {
        let tool = FileStamp::of(&std::env::current_exe().ok()?).ok()?;
        Some(Key {
            format: FORMAT,
            tool,
            files: stamps(binary, debug_dirs).ok()?,
            debug_dirs: debug_dirs.to_vec(),
        })
    }

    /// The file name of this key's answers: a 64-bit FNV-1a hash of it.
    fn file_name(&self) -> String {
        let text = serde_json::to_string(self).unwrap_or_default();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
        format!("{h:016x}.json")
    }
}

/// What a code range's source span says ([`coprof_symbols::SourceSpan`]),
/// as kept: its lines in words, when they are more than addresses, and
/// the innermost function the whole range lies in.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpanAnswer {
    pub text: Option<String>,
    pub function: Option<String>,
}

/// One row of a listing as kept: the instruction and its location (its
/// source line's text is read afresh).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    pub pc: u64,
    pub text: String,
    pub location: Location,
}

/// The function symbols a code range overlaps, or the data objects a
/// range of addresses does: how many, and the names of the first and last
/// by address.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionsIn {
    pub count: usize,
    pub first: Option<String>,
    pub last: Option<String>,
}

impl FunctionsIn {
    /// Of `symbols`, in address order.
    pub fn of(symbols: &[coprof_symbols::symtab::FunctionSymbol]) -> FunctionsIn {
        FunctionsIn {
            count: symbols.len(),
            first: symbols.first().map(|f| f.name.clone()),
            last: symbols.last().map(|f| f.name.clone()),
        }
    }
}

/// Answers about one file's addresses (the file's own, not the run's).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Answers {
    /// Whether the file opened at all (else its PCs have no module).
    pub opened: bool,
    /// What opening it says on standard error, for the program's notes.
    pub notes: Vec<String>,
    #[serde(with = "pairs")]
    pub locations: HashMap<u64, Location>,
    #[serde(with = "pairs")]
    pub spans: HashMap<(u64, u64), SpanAnswer>,
    #[serde(with = "pairs")]
    pub instructions: HashMap<(u64, u64), Option<u64>>,
    #[serde(with = "pairs")]
    pub disassembly: HashMap<u64, Option<String>>,
    #[serde(with = "pairs")]
    pub listings: HashMap<(u64, u64), Option<Vec<Row>>>,
    /// (Files kept before this answer was asked have none.)
    #[serde(default, with = "pairs")]
    pub functions_in: HashMap<(u64, u64), FunctionsIn>,
    /// The data objects a range of addresses overlaps.
    #[serde(default, with = "pairs")]
    pub objects_in: HashMap<(u64, u64), FunctionsIn>,
    /// What a pointer to an address points at: the function or data
    /// object that starts there, or the C++ virtual table it lies in.
    #[serde(default, with = "pairs")]
    pub starting_at: HashMap<u64, Option<String>>,
    /// Whether the instruction at an address loads a code address (a
    /// return address).
    #[serde(default, with = "pairs")]
    pub code_loads: HashMap<u64, bool>,
    /// The function and offset of a code address.
    #[serde(default, with = "pairs")]
    pub code_symbols: HashMap<u64, Option<String>>,
    /// The split DWARF files (`.dwo`, `.dwp`) the answers were read from,
    /// as they were: the answers hold while each is unchanged. Which they
    /// are is known only once the binary's DWARF is read, so they are not
    /// part of the key, which is worked out without reading it.
    #[serde(default)]
    pub split_read: Vec<FileStamp>,
    /// Where split files that were missing were looked for: the answers
    /// hold while none of them is there.
    #[serde(default)]
    pub split_absent: Vec<PathBuf>,
}

impl Answers {
    fn len(&self) -> usize {
        self.locations.len()
            + self.spans.len()
            + self.instructions.len()
            + self.disassembly.len()
            + self.listings.len()
            + self.functions_in.len()
            + self.objects_in.len()
            + self.starting_at.len()
            + self.code_loads.len()
            + self.code_symbols.len()
    }

    /// `other`'s answers added where these have none.
    fn merge(&mut self, other: Answers) {
        fn add<K: Eq + Hash, V>(to: &mut HashMap<K, V>, from: HashMap<K, V>) {
            for (k, v) in from {
                to.entry(k).or_insert(v);
            }
        }
        add(&mut self.locations, other.locations);
        add(&mut self.spans, other.spans);
        add(&mut self.instructions, other.instructions);
        add(&mut self.disassembly, other.disassembly);
        add(&mut self.listings, other.listings);
        add(&mut self.functions_in, other.functions_in);
        add(&mut self.objects_in, other.objects_in);
        add(&mut self.starting_at, other.starting_at);
        add(&mut self.code_loads, other.code_loads);
        add(&mut self.code_symbols, other.code_symbols);
        self.depend_on(other.split_read, other.split_absent);
    }

    /// Adds split files the answers were read from, and places where one
    /// was missing; whether any was new.
    fn depend_on(&mut self, read: Vec<FileStamp>, absent: Vec<PathBuf>) -> bool {
        let mut new = false;
        for f in read {
            if !self.split_read.iter().any(|g| g.path == f.path) {
                self.split_read.push(f);
                new = true;
            }
        }
        for p in absent {
            if !self.split_absent.contains(&p) {
                self.split_absent.push(p);
                new = true;
            }
        }
        new
    }

    /// Whether the split files the answers were read from are as they
    /// were, and those that were missing still are.
    fn split_files_hold(&self) -> bool {
        self.split_read
            .iter()
            .all(|f| FileStamp::of(&f.path).is_ok_and(|now| now == *f))
            && !self.split_absent.iter().any(|p| p.exists())
    }
}

/// A map kept as a list of pairs: JSON keys are strings only.
mod pairs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::HashMap;
    use std::hash::Hash;

    pub fn serialize<K: Serialize + Ord, V: Serialize, S: Serializer>(
        map: &HashMap<K, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        // Sorted, so that the same answers make the same file.
        let mut v: Vec<(&K, &V)> = map.iter().collect();
        v.sort_by(|a, b| a.0.cmp(b.0));
        v.serialize(s)
    }

    pub fn deserialize<'de, K, V, D>(d: D) -> Result<HashMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Eq + Hash,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
    }
}

/// The file as written: the key, to check, and the answers.
#[derive(Serialize, Deserialize)]
struct Saved {
    key: Key,
    answers: Answers,
}

/// One file's kept answers: those read at the start, and those added.
#[derive(Debug)]
pub struct SymbolCache {
    key: Key,
    path: PathBuf,
    /// Whether the answers came from the file.
    hit: bool,
    /// Whether answers were added since.
    added: bool,
    pub answers: Answers,
}

impl SymbolCache {
    /// The kept answers of `binary`'s symbols in `dir`, or none yet;
    /// `None` when the key cannot be worked out (a file that cannot be
    /// read: then nothing is kept for it).
    pub fn open(binary: &Path, debug_dirs: &[PathBuf], dir: &Path) -> Option<SymbolCache> {
        let key = Key::of(binary, debug_dirs)?;
        let path = dir.join(key.file_name());
        let answers = read(&path, &key);
        Some(SymbolCache {
            hit: answers.is_some(),
            answers: answers.unwrap_or_default(),
            key,
            path,
            added: false,
        })
    }

    /// Whether the answers were read from a file: the symbols need not be
    /// opened unless a question is new.
    pub fn hit(&self) -> bool {
        self.hit
    }

    /// Marks the answers as changed, to be written by [`save`](Self::save).
    pub fn touch(&mut self) {
        self.added = true;
    }

    /// Records the split DWARF files that the symbols' answers so far were
    /// read from, as they are now, and where missing ones were looked for
    /// ([`coprof_symbols::Symbolizer::split_files`]): a later run takes the
    /// answers only while those files are unchanged and the missing ones
    /// still missing.
    pub fn depend_on(&mut self, files: &SplitFiles) {
        // Stamped when first recorded: a file already there keeps the
        // stamp its answers were read with.
        let known = &self.answers.split_read;
        let read = files
            .read
            .iter()
            .filter(|p| !known.iter().any(|f| &f.path == *p))
            .filter_map(|p| FileStamp::of(p).ok())
            .collect();
        if self.answers.depend_on(read, files.absent.clone()) {
            self.touch();
        }
    }

    /// Writes the answers, when any were added, merged with what another
    /// process may have written meanwhile. A cache that cannot be written
    /// is no error: the next run works the answers out again.
    pub fn save(&mut self) {
        if !self.added {
            return;
        }
        self.added = false;
        let mut answers = std::mem::take(&mut self.answers);
        if let Some(theirs) = read(&self.path, &self.key) {
            if theirs.len() + answers.len() <= MAX_ANSWERS {
                answers.merge(theirs);
            }
        }
        let saved = Saved {
            key: self.key.clone(),
            answers,
        };
        if write(&self.path, &saved).is_ok() {
            if let Some(dir) = self.path.parent() {
                prune(dir, MAX_FILES, KEEP_FILES);
            }
        }
        self.answers = saved.answers;
    }
}

/// Removes the oldest written of the cache files in `dir` when it holds
/// more than `max`, down to `keep`.
fn prune(dir: &Path, max: usize, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let path = e.path();
            let ours = path.extension().is_some_and(|x| x == "json");
            let written = e.metadata().ok()?.modified().ok()?;
            ours.then_some((written, path))
        })
        .collect();
    if files.len() <= max {
        return;
    }
    files.sort();
    for (_, path) in &files[..files.len() - keep] {
        let _ = std::fs::remove_file(path);
    }
}

/// The answers in `path`, when it holds answers for `key`.
fn read(path: &Path, key: &Key) -> Option<Answers> {
    let text = std::fs::read(path).ok()?;
    let saved: Saved = serde_json::from_slice(&text).ok()?;
    (saved.key == *key && saved.answers.split_files_hold()).then_some(saved.answers)
}

/// Writes `saved` to `path` under a temporary name put in place when
/// complete ([`coprof_core::put`]), creating the cache's directory.
fn write(path: &Path, saved: &Saved) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let text = serde_json::to_vec(saved).map_err(std::io::Error::other)?;
    let mut tmp = coprof_core::put::temp_for(path, ".coprof-", ".json.tmp")?;
    std::io::Write::write_all(&mut tmp, &text)?;
    coprof_core::put::put(tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    const BINARY: &str = "/bin/true";

    #[test]
    fn a_save_merges_what_another_process_saved() {
        let dir = tempfile::tempdir().unwrap();
        let open = || SymbolCache::open(Path::new(BINARY), &[], dir.path()).unwrap();
        let (mut a, mut b) = (open(), open());
        assert!(!a.hit());
        for (pc, text) in [(1, "a1"), (2, "a2")] {
            a.answers.disassembly.insert(pc, Some(text.into()));
        }
        a.touch();
        a.save();
        for (pc, text) in [(2, "b2"), (3, "b3")] {
            b.answers.disassembly.insert(pc, Some(text.into()));
        }
        b.touch();
        b.save();
        let c = open();
        assert!(c.hit());
        let mut got: Vec<(u64, Option<String>)> = c.answers.disassembly.into_iter().collect();
        got.sort();
        let want = [(1, "a1"), (2, "b2"), (3, "b3")].map(|(pc, t)| (pc, Some(t.to_string())));
        assert_eq!(
            got, want,
            "the later save's own answers first, then the earlier's"
        );
    }

    /// Every kind of answer a process saved is kept when another saves
    /// after it: an answer left out of the merge would be lost, and one
    /// left out of the count would not start a full file afresh.
    #[test]
    fn a_merge_keeps_every_kind_of_answer() {
        let dir = tempfile::tempdir().unwrap();
        let open = || SymbolCache::open(Path::new(BINARY), &[], dir.path()).unwrap();
        let (mut a, mut b) = (open(), open());
        let x = &mut a.answers;
        x.locations.insert(1, Location::address(1));
        let span = SpanAnswer {
            text: Some("a.c:1".into()),
            function: Some("f".into()),
        };
        x.spans.insert((1, 2), span);
        x.instructions.insert((1, 2), Some(1));
        x.disassembly.insert(1, Some("nop".into()));
        x.listings.insert((1, 2), None);
        x.functions_in.insert((1, 2), FunctionsIn::default());
        x.objects_in.insert((1, 2), FunctionsIn::default());
        x.starting_at.insert(1, Some("f".into()));
        x.code_loads.insert(1, true);
        x.code_symbols.insert(1, Some("f+0x1".into()));
        // Each map of answers has one: a new kind must be added here.
        let saved = serde_json::to_value(&a.answers).unwrap();
        let maps: Vec<&String> = saved
            .as_object()
            .unwrap()
            .iter()
            .filter(|(k, v)| v.is_array() && !k.starts_with("split_") && *k != "notes")
            .map(|(k, _)| k)
            .collect();
        for k in &maps {
            assert_eq!(saved[k.as_str()].as_array().unwrap().len(), 1, "{k}");
        }
        assert_eq!(a.answers.len(), maps.len());
        a.touch();
        a.save();
        b.answers.disassembly.insert(2, Some("ret".into()));
        b.touch();
        b.save();
        let c = serde_json::to_value(&open().answers).unwrap();
        for k in maps {
            let kept = c[k.as_str()].as_array().unwrap();
            assert!(kept.contains(&saved[k.as_str()][0]), "{k} lost: {c}");
        }
    }

    #[test]
    fn answers_hold_while_their_split_files_are_as_they_were() {
        let dir = tempfile::tempdir().unwrap();
        let build = tempfile::tempdir().unwrap();
        let (dwo, gone) = (build.path().join("a.dwo"), build.path().join("b.dwo"));
        std::fs::write(&dwo, b"first").unwrap();
        let open = || SymbolCache::open(Path::new(BINARY), &[], dir.path()).unwrap();
        let files = SplitFiles {
            read: vec![dwo.clone()],
            absent: vec![gone.clone()],
        };
        let keep = || {
            let mut c = open();
            c.answers.opened = true;
            c.touch();
            c.depend_on(&files);
            c.save();
        };
        keep();
        assert!(open().hit(), "nothing changed");
        // A `.dwo` rewritten (by a build that did not relink) is another
        // file: the answers read from the old one are passed over.
        std::fs::write(&dwo, b"second, longer").unwrap();
        assert!(!open().hit(), "the .dwo changed");
        keep();
        assert!(open().hit(), "written again with the .dwo as it is now");
        // A split file that was missing and is there now has frames the
        // answers lack.
        std::fs::write(&gone, b"found").unwrap();
        assert!(!open().hit(), "a missing .dwo appeared");
        std::fs::remove_file(&gone).unwrap();
        assert!(open().hit());
        std::fs::remove_file(&dwo).unwrap();
        assert!(!open().hit(), "a .dwo read was removed");
    }

    #[test]
    fn a_file_holding_another_keys_answers_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let mut a = SymbolCache::open(Path::new(BINARY), &[], dir.path()).unwrap();
        a.answers.opened = true;
        a.touch();
        a.save();
        // The same binary with other debug directories has another key:
        // its answers put under this key's file name are passed over.
        let dirs = [other.path().to_path_buf()];
        let b = SymbolCache::open(Path::new(BINARY), &dirs, dir.path()).unwrap();
        assert_ne!(a.path, b.path);
        std::fs::copy(&a.path, &b.path).unwrap();
        let b = SymbolCache::open(Path::new(BINARY), &dirs, dir.path()).unwrap();
        assert!(!b.hit());
        assert!(SymbolCache::open(Path::new(BINARY), &[], dir.path())
            .unwrap()
            .hit());
    }

    #[test]
    fn the_oldest_files_go_when_there_are_too_many() {
        let dir = tempfile::tempdir().unwrap();
        let start = std::time::SystemTime::now() - std::time::Duration::from_secs(1000);
        for i in 0..12u64 {
            let path = dir.path().join(format!("{i:016x}.json"));
            std::fs::write(&path, b"{}").unwrap();
            let file = std::fs::File::options().append(true).open(&path).unwrap();
            file.set_modified(start + std::time::Duration::from_secs(i))
                .unwrap();
        }
        std::fs::write(dir.path().join("other.txt"), b"").unwrap();
        prune(dir.path(), 12, 5);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            13,
            "at most 12: none go"
        );
        prune(dir.path(), 10, 5);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let newest: Vec<String> = (7..12u64).map(|i| format!("{i:016x}.json")).collect();
        let mut want = newest;
        want.push("other.txt".into());
        assert_eq!(left, want);
    }

    #[test]
    fn nothing_is_written_without_new_answers() {
        let dir = tempfile::tempdir().unwrap();
        let mut a = SymbolCache::open(Path::new(BINARY), &[], dir.path()).unwrap();
        a.save();
        assert!(!a.path.exists());
    }
}
