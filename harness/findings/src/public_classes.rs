//! Classes of XLA:CPU bugs that others reported on the public trackers
//! (`corpora/public-bug-classes.toml`): per class, one mechanism in XLA, the public threads
//! that show it, and the known-bug registry entries that are that mechanism. `hlo-diff
//! time-to-bug` reports per class whether default campaigns reached it (any of its entries
//! hit) and when ([`crate::time_to_bug`]).
//!
//! ```toml
//! [[class]]
//! id = "ynn-reduce-window-base-dilation"
//! title = "reduce-window with base dilation ... drops the dilation holes on the YNNPACK path"
//! year = 2026
//! registry = ["xla-ynn-reduce-window-base-dilation"]   # may be empty: no entry yet
//! [[class.issue]]
//! url = "https://github.com/openxla/xla/issues/48714"
//! reports = "what the thread reports, in one line"
//! ```
//!
//! A malformed file, a duplicated class id, a class without a report, or a registry id the
//! registry does not hold is an error naming the file, line and column.

use crate::registry::Registry;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// One public report of a class.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublicIssue {
    /// The thread (`https://github.com/OWNER/REPO/issues/N` or `/pull/N`).
    pub url: String,
    /// One line: what the thread reports.
    pub reports: String,
}

impl PublicIssue {
    /// `openxla/xla#48714` for a GitHub issue or pull request URL, else the URL itself.
    pub fn short(&self) -> String {
        let rest = self
            .url
            .strip_prefix("https://github.com/")
            .unwrap_or(&self.url);
        let parts: Vec<&str> = rest.split('/').collect();
        match parts.as_slice() {
            [owner, repo, "issues" | "pull", n] if n.parse::<u64>().is_ok() => {
                format!("{owner}/{repo}#{n}")
            }
            _ => self.url.clone(),
        }
    }
}

/// One bug class: a mechanism in XLA.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawClass {
    id: toml::Spanned<String>,
    title: String,
    year: u16,
    registry: Vec<toml::Spanned<String>>,
    #[serde(default)]
    issue: Vec<PublicIssue>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    class: Vec<RawClass>,
}

/// One bug class, checked against the registry.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PublicClass {
    pub id: String,
    pub title: String,
    /// The year of the first public report.
    pub year: u16,
    /// The registry entries that are this mechanism (empty: none yet).
    pub registry: Vec<String>,
    pub issues: Vec<PublicIssue>,
}

/// The classes file, read and checked.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PublicClasses {
    /// The file they came from (for the report); empty when there is none.
    pub source: String,
    pub classes: Vec<PublicClass>,
}

/// 1-based line and column of byte `offset` in `text`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rfind('\n').map_or(before.chars().count(), |nl| {
        before[nl + 1..].chars().count()
    }) + 1;
    (line, col)
}

impl PublicClasses {
    /// The classes of `text` (`source` names it in errors), every registry id checked against
    /// `registry`. Errors are `source:line:col: message`.
    pub fn parse(source: &str, text: &str, registry: &Registry) -> Result<PublicClasses, String> {
        let raw: RawFile = toml::from_str(text).map_err(|e| {
            let (l, c) = e.span().map_or((1, 1), |s| line_col(text, s.start));
            format!("{source}:{l}:{c}: {}", e.message().trim())
        })?;
        let at = |span: std::ops::Range<usize>, msg: String| {
            let (l, c) = line_col(text, span.start);
            format!("{source}:{l}:{c}: {msg}")
        };
        let mut classes: Vec<PublicClass> = Vec::new();
        for c in raw.class {
            let id = c.id.get_ref().clone();
            if id.is_empty() {
                return Err(at(c.id.span(), "a class has an empty id".into()));
            }
            if classes.iter().any(|o| o.id == id) {
                return Err(at(c.id.span(), format!("class id `{id}` is used twice")));
            }
            if c.issue.is_empty() {
                return Err(at(
                    c.id.span(),
                    format!("class `{id}` names no public report ([[class.issue]])"),
                ));
            }
            let mut ids = Vec::new();
            for r in &c.registry {
                if registry.get(r.get_ref()).is_none() {
                    return Err(at(
                        r.span(),
                        format!(
                            "class `{id}` names registry entry `{}`, which the registry does not hold",
                            r.get_ref()
                        ),
                    ));
                }
                ids.push(r.get_ref().clone());
            }
            classes.push(PublicClass {
                id,
                title: c.title,
                year: c.year,
                registry: ids,
                issues: c.issue,
            });
        }
        Ok(PublicClasses {
            source: source.to_string(),
            classes,
        })
    }

    /// The classes file at `path`, checked against `registry`.
    pub fn load(path: &Path, registry: &Registry) -> Result<PublicClasses, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        PublicClasses::parse(&path.display().to_string(), &text, registry)
    }

    /// The file checked into the repository (`<repo>/corpora/public-bug-classes.toml`).
    pub fn default_path() -> PathBuf {
        engine::worker::repo_root().join("corpora/public-bug-classes.toml")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(ids: &[&str]) -> Registry {
        let tmp = tempfile::tempdir().unwrap();
        for id in ids {
            std::fs::write(
                tmp.path().join(format!("{id}.toml")),
                format!("id = \"{id}\"\ntitle = \"t\"\nstatus = \"open\"\ntext = \"a cited text\"\n\n[match]\nops_include = [\"{id}\"]\n"),
            )
            .unwrap();
        }
        Registry::load(tmp.path()).unwrap()
    }

    const ONE: &str = r#"
[[class]]
id = "c1"
title = "t1"
year = 2026
registry = ["clz", "popcnt"]
[[class.issue]]
url = "https://github.com/openxla/xla/issues/48714"
reports = "r"

[[class]]
id = "c2"
title = "t2"
year = 2025
registry = []
[[class.issue]]
url = "https://github.com/jax-ml/jax/pull/29537"
reports = "r"
"#;

    #[test]
    fn classes_are_read_in_file_order() {
        let c = PublicClasses::parse("f.toml", ONE, &registry(&["clz", "popcnt"])).unwrap();
        assert_eq!(c.classes.len(), 2);
        assert_eq!(c.classes[0].registry, ["clz", "popcnt"]);
        assert!(c.classes[1].registry.is_empty());
        assert_eq!(c.classes[0].issues[0].short(), "openxla/xla#48714");
        assert_eq!(c.classes[1].issues[0].short(), "jax-ml/jax#29537");
    }

    /// A registry id that does not exist is an error at the id's own line and column.
    #[test]
    fn an_unknown_registry_id_is_an_error_at_its_line_and_column() {
        let e = PublicClasses::parse("f.toml", ONE, &registry(&["clz"])).unwrap_err();
        assert_eq!(
            e,
            "f.toml:6:20: class `c1` names registry entry `popcnt`, which the registry does not hold"
        );
    }

    #[test]
    fn malformed_files_are_errors_with_line_and_column() {
        let r = registry(&["clz", "popcnt"]);
        // A misspelt key.
        let e = PublicClasses::parse("f.toml", &ONE.replace("year = 2025", "yaer = 2025"), &r)
            .unwrap_err();
        assert!(e.starts_with("f.toml:"), "{e}");
        assert!(e.contains("yaer"), "{e}");
        // Not TOML at all.
        let e = PublicClasses::parse("f.toml", "[[class]]\nid = \n", &r).unwrap_err();
        assert!(e.starts_with("f.toml:2:"), "{e}");
        // The same id twice.
        let e = PublicClasses::parse("f.toml", &ONE.replace("\"c2\"", "\"c1\""), &r).unwrap_err();
        assert_eq!(e, "f.toml:12:6: class id `c1` is used twice");
        // A class nobody reported.
        let no_issue = "[[class]]\nid = \"x\"\ntitle = \"t\"\nyear = 2026\nregistry = []\n";
        let e = PublicClasses::parse("f.toml", no_issue, &r).unwrap_err();
        assert!(
            e.starts_with("f.toml:2:6: class `x` names no public report"),
            "{e}"
        );
    }

    #[test]
    fn line_and_column_count_characters_from_one() {
        assert_eq!(line_col("ab\ncd", 0), (1, 1));
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(line_col("é\nx", 3), (2, 1));
    }
}
