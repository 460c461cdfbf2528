//! The documentation holds together (no XLA needed): every known-bug registry entry appears in
//! the generated `reports/bugs.md` (`scripts/reports`), every relative markdown link in
//! `README.md`, `docs/*.md` and `reports/*.md` points to a file that exists, and the README stays
//! short (under 10 KiB).

use findings::registry::Registry;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    test_support::repo_root()
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// README.md, docs/*.md and reports/*.md.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    for dir in ["docs", "reports"] {
        let rd = std::fs::read_dir(root().join(dir))
            .unwrap_or_else(|e| panic!("{dir}/ should exist: {e}"));
        let mut md: Vec<PathBuf> = rd
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        md.sort();
        assert!(!md.is_empty(), "{dir}/ holds no markdown page");
        pages.extend(md);
    }
    pages
}

/// The targets of the inline links `](target)` in `text` (an optional title after a space is
/// dropped; `<target>` brackets are removed).
fn link_targets(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].trim();
        let target = match target.strip_prefix('<') {
            Some(t) => t.split('>').next().unwrap_or(""),
            None => target.split_whitespace().next().unwrap_or(""),
        };
        out.push(target.to_string());
        rest = &rest[end..];
    }
    out
}

/// Whether a link target is relative to the page (not a URL, a mail address or an anchor alone).
fn is_relative(target: &str) -> bool {
    !(target.is_empty()
        || target.starts_with('#')
        || target.starts_with('/')
        || target.contains("://")
        || target.starts_with("mailto:"))
}

#[test]
fn every_registry_entry_is_in_the_bug_report() {
    let registry = Registry::load(&root().join("corpora/known-bugs")).expect("the registry reads");
    assert!(!registry.entries.is_empty(), "the registry is empty");
    let report = read(&root().join("reports/bugs.md"));
    let missing: Vec<&str> = registry
        .entries
        .iter()
        .map(|e| e.id.as_str())
        .filter(|id| !report.contains(&format!("`{id}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "reports/bugs.md lacks registry entries {missing:?}: run scripts/reports"
    );
}

#[test]
fn relative_links_point_to_existing_files() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let dir = page.parent().expect("a page has a directory").to_path_buf();
        for target in link_targets(&read(&page)) {
            if !is_relative(&target) {
                continue;
            }
            let path = target.split('#').next().unwrap_or("");
            checked += 1;
            if !dir.join(path).exists() {
                let rel = page
                    .strip_prefix(root())
                    .unwrap_or(&page)
                    .display()
                    .to_string();
                broken.push(format!("{rel}: {target}"));
            }
        }
    }
    assert!(
        checked > 0,
        "no relative link found: the link reader is broken"
    );
    assert!(
        broken.is_empty(),
        "links to missing files:\n{}",
        broken.join("\n")
    );
}

#[test]
fn link_reader_reads_links() {
    let t =
        link_targets("see [a](docs/a.md#x), [b](<b c.md>), [u](https://x.org) and [t](t.md \"T\")");
    assert_eq!(t, ["docs/a.md#x", "b c.md", "https://x.org", "t.md"]);
    assert!(is_relative("docs/a.md#x") && !is_relative("#x") && !is_relative("https://x.org"));
}

#[test]
fn readme_is_under_10_kib() {
    let n = std::fs::metadata(root().join("README.md"))
        .expect("README.md")
        .len();
    assert!(
        n < 10_240,
        "README.md is {n} bytes; move detail to docs/ or reports/"
    );
}
