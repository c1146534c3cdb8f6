//! Every relative link in the project's Markdown (README.md and docs/)
//! leads somewhere: the file exists, and a `#fragment` names a heading
//! of the Markdown file it points into, spelled as GitHub spells
//! heading anchors. A reader who follows a link from the README to a
//! measurement, or from one document to another's section, lands on it.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The workspace's root, two levels above this crate.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files a user reads: README.md and every file of docs/.
fn documents() -> Vec<PathBuf> {
    let mut files = vec![root().join("README.md")];
    let docs = root().join("docs");
    for entry in std::fs::read_dir(&docs).expect("docs/ is readable") {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// The lines of `text` outside fenced code blocks, numbered from 1.
fn prose_lines(text: &str) -> Vec<(usize, &str)> {
    let mut fenced = false;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push((i + 1, line));
        }
    }
    out
}

/// A heading's anchor as GitHub makes it: lower case, letters, digits,
/// `-` and `_` kept, spaces made `-`, everything else dropped.
fn anchor_of(heading: &str) -> String {
    let mut out = String::new();
    for c in heading.trim().chars() {
        if c == ' ' {
            out.push('-');
        } else if c.is_alphanumeric() || c == '-' || c == '_' {
            out.extend(c.to_lowercase());
        }
    }
    out
}

/// The anchors of a Markdown file's headings; a heading that repeats an
/// earlier one's anchor gets `-1`, `-2`, … after it, as on GitHub.
fn anchors(text: &str) -> HashSet<String> {
    let mut seen = HashSet::new();
    for (_, line) in prose_lines(text) {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        let Some(heading) = line[hashes..].strip_prefix(' ') else {
            continue;
        };
        if !(1..=6).contains(&hashes) {
            continue;
        }
        let base = anchor_of(heading);
        let mut anchor = base.clone();
        let mut k = 0;
        while seen.contains(&anchor) {
            k += 1;
            anchor = format!("{base}-{k}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The targets of the inline links (`[text](target)`) on a line.
fn link_targets(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let end = after
            .find(|c: char| c == ')' || c.is_whitespace())
            .unwrap_or(after.len());
        out.push(&after[..end]);
        rest = &after[end..];
    }
    out
}

/// Every broken relative link in `file`, as `file:line: target: why`.
/// `known` keeps each Markdown file's anchors once read, since many
/// links point into the same few files.
fn broken_links(file: &Path, known: &mut HashMap<PathBuf, HashSet<String>>) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let mut broken = Vec::new();
    for (n, line) in prose_lines(&text) {
        for target in link_targets(line) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = match target.split_once('#') {
                Some((p, f)) => (p, Some(f)),
                None => (target, None),
            };
            let dest = if path.is_empty() {
                file.to_path_buf()
            } else {
                dir.join(path)
            };
            let at = format!("{}:{n}: {target}", file.display());
            if !dest.exists() {
                broken.push(format!("{at}: no such file"));
                continue;
            }
            let Some(fragment) = fragment else { continue };
            if dest.extension().is_some_and(|e| e == "md") {
                let heads = known
                    .entry(dest.clone())
                    .or_insert_with(|| anchors(&std::fs::read_to_string(&dest).unwrap()));
                if !heads.contains(fragment) {
                    broken.push(format!("{at}: no heading with that anchor"));
                }
            }
        }
    }
    broken
}

#[test]
fn every_relative_link_in_the_docs_leads_somewhere() {
    let files = documents();
    assert!(files.len() > 5, "README.md and docs/ found: {files:?}");
    let mut known = HashMap::new();
    let broken: Vec<String> = files
        .iter()
        .flat_map(|f| broken_links(f, &mut known))
        .collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn anchors_are_spelled_as_github_spells_them() {
    assert_eq!(
        anchor_of("Speed of the whole: `coprof profile` beside qemu and callgrind"),
        "speed-of-the-whole-coprof-profile-beside-qemu-and-callgrind"
    );
    assert_eq!(
        anchor_of("Measured on 2026-11-27 at 0d3cd45: the whole bench with `a0` to `a5` in host registers"),
        "measured-on-2026-11-27-at-0d3cd45-the-whole-bench-with-a0-to-a5-in-host-registers"
    );
    assert_eq!(anchor_of("Threads (`--threads N`)"), "threads---threads-n");
    let heads = anchors("# A\n## B\n```\n# not a heading\n```\n## B\n");
    let expected: HashSet<String> = ["a", "b", "b-1"].map(String::from).into();
    assert_eq!(heads, expected);
}

#[test]
fn a_broken_link_is_found_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("doc.md");
    std::fs::write(dir.path().join("other.md"), "# Other\n## Its section\n").unwrap();
    std::fs::write(
        &doc,
        "See [it](other.md#its-section), [here](#top) and [gone](missing.md).\n\
         # Top\n\
         A [wrong section](other.md#no-such-section), [a site](https://example.org/x#y).\n\
         ```\n[in code](nowhere.md)\n```\n",
    )
    .unwrap();
    let broken = broken_links(&doc, &mut HashMap::new());
    assert_eq!(broken.len(), 2, "{broken:?}");
    assert!(
        broken[0].ends_with(":1: missing.md: no such file"),
        "{broken:?}"
    );
    assert!(
        broken[1].ends_with(":3: other.md#no-such-section: no heading with that anchor"),
        "{broken:?}"
    );
}
