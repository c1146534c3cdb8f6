//! What a file given in the wrong place is, so that the error says how
//! to use it: a trace given where a program goes (`coprof loops --
//! run.cpt`), a program given as a trace (`coprof loops ./prog`, the
//! `--` forgotten), a profile given as a trace, a trace or a program given
//! as a profile (`coprof report run.cpt`).

use std::io::Read;
use std::path::Path;

/// Bytes read from the start of a file to tell what it is: a profile
/// starts with `{` and its `"format"` key.
const HEAD: u64 = 256;

/// What kind of file coprof takes a file for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileKind {
    /// A coprof trace: it starts with the trace format's magic.
    Trace,
    /// A coprof profile: JSON whose first key is `"format":
    /// "coprof-profile"`, as `coprof profile -o` writes it.
    Profile,
    /// An ELF file for the machine named: a program (or a library).
    Elf(&'static str),
}

/// What the file at `path` is, from its first bytes; `None` when it is
/// none of these or cannot be read.
pub(crate) fn of(path: &Path) -> Option<FileKind> {
    let mut head = Vec::with_capacity(HEAD as usize);
    std::fs::File::open(path)
        .ok()?
        .take(HEAD)
        .read_to_end(&mut head)
        .ok()?;
    of_head(&head)
}

/// [`of`] for a file's first bytes.
fn of_head(head: &[u8]) -> Option<FileKind> {
    if head.starts_with(&coprof_core::trace::MAGIC) {
        return Some(FileKind::Trace);
    }
    if let Some((machine, _)) = coprof_rv::elf::machine(head) {
        return Some(FileKind::Elf(machine));
    }
    let text = std::str::from_utf8(head.get(..head.len().min(64))?).ok()?;
    let key = text.trim_start().strip_prefix('{')?.trim_start();
    let value = key
        .strip_prefix("\"format\"")?
        .trim_start()
        .strip_prefix(':')?;
    value
        .trim_start()
        .starts_with("\"coprof-profile\"")
        .then_some(FileKind::Profile)
}

/// What is said of a coprof trace given where a program goes: how a
/// trace is read instead.
pub(crate) const TRACE_NOT_PROGRAM: &str = "it is a coprof trace, which is read, not run: give \
     it before any `--` (`coprof loops FILE`, `coprof profile FILE`), and `coprof info FILE` \
     describes it";

/// What to add to the error of a file that is not a trace, when it is
/// something else coprof knows: how that file is used instead.
pub(crate) fn not_a_trace(path: &Path) -> Option<String> {
    Some(match of(path)? {
        FileKind::Trace => return None,
        FileKind::Profile => "it is a coprof profile, which `coprof report FILE` prints \
                              (`--only loops` for one report)"
            .into(),
        FileKind::Elf(machine) => format!(
            "it is an ELF file for {machine}: a program is run after `--`, with its \
             arguments (`coprof profile -- FILE ARGS`)"
        ),
    })
}

/// What to add to the error of a file that is not a profile, when it is
/// something else coprof knows: how to make a profile of it.
pub(crate) fn not_a_profile(path: &Path) -> Option<String> {
    Some(match of(path)? {
        FileKind::Profile => return None,
        FileKind::Trace => "it is a coprof trace: `coprof profile -o PROFILE.json FILE` \
                            makes a profile of it"
            .into(),
        FileKind::Elf(machine) => format!(
            "it is an ELF file for {machine}: `coprof profile -o PROFILE.json -- FILE ARGS` \
             makes a profile of the program"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_profiles_and_programs_are_told_apart_by_their_first_bytes() {
        let mut trace = coprof_core::trace::MAGIC.to_vec();
        trace.extend_from_slice(&[0; 32]);
        assert_eq!(of_head(&trace), Some(FileKind::Trace));
        // The start of a profile as serde_json writes it, and by hand.
        let profile = b"{\n  \"format\": \"coprof-profile\",\n  \"version\": 1";
        assert_eq!(of_head(profile), Some(FileKind::Profile));
        assert_eq!(
            of_head(b"{\"format\":\"coprof-profile\"}"),
            Some(FileKind::Profile)
        );
        let me = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert!(matches!(of_head(&me), Some(FileKind::Elf(_))));
        // Other JSON, other text, a short file, bytes that are not text.
        assert_eq!(of_head(b"{\"format\": \"other\"}"), None);
        assert_eq!(
            of_head(b"{\"version\": 1, \"format\": \"coprof-profile\"}"),
            None
        );
        assert_eq!(of_head(b"#!/bin/sh\n"), None);
        assert_eq!(of_head(b"CPT"), None);
        assert_eq!(of_head(&[0xff, 0xfe, b'{']), None);
        assert_eq!(of_head(b""), None);
    }

    #[test]
    fn each_hint_is_for_the_place_it_is_given_in() {
        let dir = tempfile::tempdir().unwrap();
        let profile = dir.path().join("p.json");
        std::fs::write(&profile, "{\"format\": \"coprof-profile\"}").unwrap();
        let trace = dir.path().join("t.cpt");
        std::fs::write(&trace, coprof_core::trace::MAGIC).unwrap();
        let text = dir.path().join("t.txt");
        std::fs::write(&text, "text").unwrap();
        assert!(not_a_trace(&profile)
            .unwrap()
            .contains("coprof report FILE"));
        assert!(not_a_profile(&trace).unwrap().contains("coprof profile -o"));
        assert_eq!(not_a_trace(&trace), None);
        assert_eq!(not_a_profile(&profile), None);
        assert_eq!(not_a_trace(&text), None);
        assert_eq!(not_a_profile(&dir.path().join("missing")), None);
        let me = std::env::current_exe().unwrap();
        assert!(not_a_trace(&me).unwrap().contains("after `--`"));
        assert!(not_a_profile(&me).unwrap().contains("-- FILE ARGS"));
    }
}
