//! The notes a command gives on its run: what a user needs to read its
//! numbers right (a program that failed, samples that stand for little of
//! the CPU time, a binary without debug information, children left
//! unsampled). Each is printed on standard error as it is found, as perf
//! and valgrind print theirs, and kept, so that a profile file holds them
//! for `coprof report` to give again and `--json` gives them to a script.

use std::sync::{Mutex, PoisonError};

/// The notes kept so far in this process, in the order they were given.
/// One process runs one command, so the notes are that command's.
static KEPT: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Prints `text` as a note on standard error, and keeps it.
pub fn say(text: impl Into<String>) {
    let text = text.into();
    print(&text);
    keep(text);
}

/// Prints `text` as a note on standard error without keeping it: a
/// saved profile's notes, given again by `coprof report`.
pub fn print(text: &str) {
    eprintln!("coprof: note: {text}");
}

/// Says `text` as [`say`] does, or, for a `quiet` run (a followed
/// child's), keeps it alone as [`keep`] does.
pub fn give(text: impl Into<String>, quiet: bool) {
    match quiet {
        true => keep(text.into()),
        false => say(text),
    }
}

/// Keeps `text` without printing it: a followed child's note, which would
/// land in its program's standard error, goes into its profile alone, and
/// a `--json` summary on standard error holds its notes, not lines beside
/// it. A note given twice (the same library opened by two reports) is
/// kept once.
pub fn keep(text: String) {
    let mut kept = KEPT.lock().unwrap_or_else(PoisonError::into_inner);
    if !kept.contains(&text) {
        kept.push(text);
    }
}

/// The notes kept so far, in the order they were given.
pub fn kept() -> Vec<String> {
    KEPT.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_kept_once_in_the_order_given() {
        keep("first".into());
        say("second");
        keep("first".into());
        let kept = kept();
        let at = |t: &str| kept.iter().position(|k| k == t);
        assert_eq!(kept.iter().filter(|k| *k == "first").count(), 1);
        assert!(at("first") < at("second"), "{kept:?}");
    }
}
