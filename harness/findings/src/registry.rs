//! The known-bug registry: one TOML file per bug in `corpora/known-bugs/`, each with its id,
//! title, status, upstream link, regression module and a matcher over
//! [`BucketSignature`]s. A bucket that an entry matches is KNOWN (and, for `intended`
//! entries, not a bug at all); any other bucket is NEW.
//!
//! ```toml
//! id = "xla-clz-constant-folding"
//! title = "count-leading-zeros of a constant folded to a wrong value"
//! status = "open"            # open | fixed | intended
//! fixed_in = ""              # the jaxlib release that fixed it (status = "fixed")
//! upstream = ""              # the public issue, when there is one
//! regression = "corpora/regressions/xla_miscompile_clz_constant_folding.hlo"
//! notes = "..."
//! releases = "..."           # the jaxlib releases that show it (`repro-bisect --releases`)
//! bisect = "..."             # what `repro-bisect` established on the regression module
//! text = "..."              # the text that makes it a bug (spec section, Annex clause, ...)
//! host_features = ["avx512_bf16"]  # the CPU vector features (as `hlo-diff doctor` names
//!                            # them) of the hosts the bug shows on; absent: every host
//!
//! [match]                    # every key given must hold
//! kind = "mismatch"          # the verdict kind
//! ops_include = ["count-leading-zeros"]   # each of these opcodes is among the bucket's ops
//!                                         # ("reduce|reduce-window": either of them)
//! ops_within = ["count-leading-zeros", "convert"]   # the bucket has no opcode outside these
//! ops_any = ["sine", "cosine"]            # at least one of these opcodes is among its ops
//! types = ["s4", "uint"]     # at least one op has one of these types (as buckets name
//!                            # them: float, int, uint, complex by class; s4, f8e5m2, pred...)
//! culprit = ["constant_folding"]          # the culprit is one of these (a failure's
//!                                         # stage, `compile`, also takes `compile: <pass>`)
//! symptom = ["value", "sign"]             # the symptom is one of these
//! message_contains = "SmallVector"        # crash/rejected: the message contains this
//! ```

use crate::bucket::BucketSignature;
use judge::VerdictKind;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// An entry's standing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// A bug, not fixed in the releases tested.
    Open,
    /// A bug fixed in `fixed_in`.
    Fixed,
    /// What XLA does on purpose (maintainers declined it as a bug): never counts as a bug.
    Intended,
}

/// What a bucket must look like for an entry to claim it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Matcher {
    pub kind: Option<VerdictKind>,
    #[serde(default)]
    pub ops_include: Vec<String>,
    #[serde(default)]
    pub ops_within: Vec<String>,
    #[serde(default)]
    pub ops_any: Vec<String>,
    #[serde(default)]
    pub types: Vec<String>,
    #[serde(default)]
    pub culprit: Vec<String>,
    #[serde(default)]
    pub symptom: Vec<String>,
    pub message_contains: Option<String>,
    /// The backend (`xla-cpu`), when the bug is one backend's.
    pub backend: Option<String>,
    /// `true`: the bug is an SPMD program's (the bucket's module is partitioned over several
    /// devices); unset or `false`: a one-device program's. A bucket needs the partitioning
    /// only when its minimized module kept it, so an entry of one kind never claims the other.
    pub partitioned: Option<bool>,
}

/// One known bug.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    pub id: String,
    pub title: String,
    pub status: Status,
    #[serde(default)]
    pub fixed_in: String,
    #[serde(default)]
    pub upstream: String,
    /// The regression module, relative to the repository root.
    #[serde(default)]
    pub regression: String,
    #[serde(default)]
    pub notes: String,
    /// How the regression module is checked: `bucket` (default: minimized, bisected and
    /// bucketed, the bucket must be this entry's) or `verbatim` (its exact text must still
    /// give a finding: for bugs in reading text that hlo-diff's printer avoids).
    #[serde(default)]
    pub check: Option<String>,
    /// The jaxlib releases that show the bug, as `repro-bisect --releases` found it on the
    /// regression module (e.g. `first bad 0.9.2 (last good 0.8.3)`, `present in every release
    /// tried (0.4.30 .. 0.10.2)`), with the range searched. Empty: not release-bisected.
    #[serde(default)]
    pub releases: String,
    /// What `repro-bisect` established on the regression module: the pass that changed the
    /// result (with the passes whose disabling only masks it), or below HLO with the first
    /// wrong kernel, or where XLA failed (e.g. `pass algsimp changed the result (snapshot step
    /// 6); disabling it avoids it (confirmed); jaxlib 0.10.2`), with the jaxlib it ran on.
    /// Documentation only: never part of matching. Empty: not bisected.
    #[serde(default)]
    pub bisect: String,
    /// The CPU vector features, as `hlo-diff doctor` names them
    /// ([`engine::environment::VECTOR_FEATURES`]), that every host the bug was seen on has and
    /// a host it was looked for and not seen on lacks: XLA CPU compiles for the host's features,
    /// so some bugs live in code only some hosts get. Empty: the bug shows on every host.
    /// Documentation and the registry test only (a bucket is matched on every host).
    #[serde(default)]
    pub host_features: Vec<String>,
    /// The text that makes it a bug (XLA's operation semantics, the StableHLO spec, XLA's
    /// sources, C99 Annex F/G, IEEE 754, a maintainer's statement): a registry entry is a bug
    /// by a cited text, not by the oracle's say-so (`hlo::semantics` is the judge's side of the
    /// same texts). Required.
    #[serde(default)]
    pub text: String,
    #[serde(rename = "match")]
    pub matcher: Matcher,
}

impl Entry {
    /// One registry file's text as an entry: malformed TOML is an error with its line and
    /// column, and so is a matcher that constrains nothing.
    pub fn parse(text: &str) -> Result<Entry, String> {
        let e: Entry = toml::from_str(text).map_err(|e| e.to_string().trim().to_string())?;
        if !e.matcher.constrains_something() {
            return Err(format!(
                "entry `{}`: its [match] constrains nothing, so it would claim every bucket \
                 (give at least one key: kind, ops_include, culprit, ...)",
                e.id
            ));
        }
        if e.text.trim().is_empty() {
            return Err(format!(
                "entry `{}`: no `text`: a registry entry names the text that makes it a bug (a \
                 section of XLA's operation semantics or the StableHLO spec, a C99 Annex F/G or \
                 IEEE 754 clause, a line of XLA's sources, a maintainer's statement)",
                e.id
            ));
        }
        if let Some(f) = e
            .host_features
            .iter()
            .find(|f| !engine::environment::VECTOR_FEATURES.contains(&f.as_str()))
        {
            return Err(format!(
                "entry `{}`: host_features names `{f}`, which is not a vector feature hlo-diff \
                 detects (one of: {})",
                e.id,
                engine::environment::VECTOR_FEATURES.join(", ")
            ));
        }
        Ok(e)
    }

    /// The features of [`Entry::host_features`] that `features` (a host's, as
    /// [`engine::environment::Cpu::features`]) lacks: empty when the bug is expected there.
    pub fn missing_host_features(&self, features: &[String]) -> Vec<String> {
        self.host_features
            .iter()
            .filter(|f| !features.contains(f))
            .cloned()
            .collect()
    }
}

fn opcode(op: &str) -> &str {
    op.split_once(':').map(|(o, _)| o).unwrap_or(op)
}

fn ty(op: &str) -> &str {
    op.split_once(':').map(|(_, t)| t).unwrap_or("")
}

impl Matcher {
    /// Whether the matcher constrains anything: one with no key (or only empty lists, or an
    /// empty `message_contains`, which every message contains) would claim every bucket,
    /// hiding every bug, and is refused when the registry is read.
    pub fn constrains_something(&self) -> bool {
        let Matcher {
            kind,
            ops_include,
            ops_within,
            ops_any,
            types,
            culprit,
            symptom,
            message_contains,
            backend,
            // Which kind of program the entry is about narrows nothing within that kind.
            partitioned: _,
        } = self;
        kind.is_some()
            || !ops_include.is_empty()
            || !ops_within.is_empty()
            || !ops_any.is_empty()
            || !types.is_empty()
            || !culprit.is_empty()
            || !symptom.is_empty()
            || message_contains.as_deref().is_some_and(|m| !m.is_empty())
            || backend.is_some()
    }

    /// Whether `b` is this bug.
    pub fn matches(&self, b: &BucketSignature) -> bool {
        let one_of = |list: &[String], v: &str| list.is_empty() || list.iter().any(|x| x == v);
        self.kind.is_none_or(|k| k == b.kind)
            && self.partitioned.unwrap_or(false) == (b.partitions > 1)
            && self.backend.as_deref().is_none_or(|x| x == b.backend)
            && self.ops_include.iter().all(|want| {
                b.ops
                    .iter()
                    .any(|o| want.split('|').any(|w| opcode(o) == w))
            })
            && (self.ops_within.is_empty()
                || b.ops
                    .iter()
                    .all(|o| self.ops_within.iter().any(|w| w == opcode(o))))
            && (self.ops_any.is_empty()
                || b.ops
                    .iter()
                    .any(|o| self.ops_any.iter().any(|w| w == opcode(o))))
            && (self.types.is_empty()
                || b.ops.iter().any(|o| self.types.iter().any(|t| t == ty(o))))
            // A failure's culprit is its stage and the place in it (`compile: algsimp`): an
            // entry naming the stage alone (`compile`) takes every place in it.
            && (one_of(&self.culprit, &b.culprit)
                || b.culprit.split_once(": ").is_some_and(|(stage, _)| {
                    self.culprit.iter().any(|x| x == stage)
                }))
            && one_of(&self.symptom, &b.symptom)
            && self
                .message_contains
                .as_deref()
                .is_none_or(|m| b.message.contains(m))
    }
}

/// Why the registry could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("{path}: {message}")]
    Bad { path: PathBuf, message: String },
    #[error("{0}: {1}")]
    Io(PathBuf, std::io::Error),
}

/// Every entry of the registry.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    pub entries: Vec<Entry>,
    /// Files in the registry directory that are not entries (not `*.toml`: `a.TOML`,
    /// `entry.toml~`, ...), which a reader should be told about; hidden files, folders and the
    /// directory's documentation (`*.md`) are not listed.
    pub ignored: Vec<PathBuf>,
}

impl Registry {
    /// The registry in `dir` (every `*.toml`, sorted by file name; other files are listed in
    /// [`Registry::ignored`]). A directory that cannot be read is an error (a mistyped
    /// `--registry` must not become an empty registry); so is a malformed file (naming it, and
    /// the line and column) and a matcher that constrains nothing.
    pub fn load(dir: &Path) -> Result<Registry, RegistryError> {
        let rd = std::fs::read_dir(dir).map_err(|e| RegistryError::Io(dir.to_path_buf(), e))?;
        let mut files: Vec<PathBuf> = Vec::new();
        let mut ignored: Vec<PathBuf> = Vec::new();
        for e in rd {
            let p = e
                .map_err(|e| RegistryError::Io(dir.to_path_buf(), e))?
                .path();
            if p.extension().is_some_and(|x| x == "toml") {
                files.push(p);
            } else if !p.is_dir()
                && !p.extension().is_some_and(|x| x == "md")
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            {
                ignored.push(p);
            }
        }
        files.sort();
        ignored.sort();
        let mut entries: Vec<Entry> = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(&f).map_err(|e| RegistryError::Io(f.clone(), e))?;
            let e = Entry::parse(&text).map_err(|message| RegistryError::Bad {
                path: f.clone(),
                message,
            })?;
            if entries.iter().any(|o| o.id == e.id) {
                return Err(RegistryError::Bad {
                    path: f,
                    message: format!("id `{}` is used twice", e.id),
                });
            }
            entries.push(e);
        }
        Ok(Registry { entries, ignored })
    }

    /// The registry a command uses: `dir` when given (which must exist), else the repository's
    /// ([`Registry::default_dir`]), which is empty when hlo-diff runs outside its repository.
    pub fn load_or_default(dir: Option<&Path>) -> Result<Registry, RegistryError> {
        match dir {
            Some(d) => Registry::load(d),
            None => {
                let d = Registry::default_dir();
                if d.is_dir() {
                    Registry::load(&d)
                } else {
                    Ok(Registry::default())
                }
            }
        }
    }

    /// One warning line per [`Registry::ignored`] file.
    pub fn warnings(&self) -> Vec<String> {
        self.ignored
            .iter()
            .map(|p| {
                format!(
                    "warning: {}: not a registry entry (entries are *.toml files), ignored",
                    p.display()
                )
            })
            .collect()
    }

    /// The registry checked into the repository (`<repo>/corpora/known-bugs`).
    pub fn default_dir() -> PathBuf {
        engine::worker::repo_root().join("corpora/known-bugs")
    }

    /// The entry that claims `b`, if any (the first in file order).
    pub fn lookup(&self, b: &BucketSignature) -> Option<&Entry> {
        self.entries.iter().find(|e| e.matcher.matches(b))
    }

    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bucket(ops: &[&str], culprit: &str) -> BucketSignature {
        BucketSignature {
            partitions: 1,
            kind: VerdictKind::Mismatch,
            backend: "xla-cpu".into(),
            ops: ops.iter().map(|s| s.to_string()).collect(),
            symptom: "value".into(),
            culprit: culprit.into(),
            message: String::new(),
        }
    }

    #[test]
    fn a_matcher_holds_only_when_every_given_key_holds() {
        let m: Entry = toml::from_str(
            r#"
            id = "clz"
            title = "clz folded"
            status = "open"
            [match]
            kind = "mismatch"
            ops_include = ["count-leading-zeros"]
            ops_within = ["count-leading-zeros", "convert"]
            culprit = ["constant_folding"]
            "#,
        )
        .unwrap();
        assert!(m
            .matcher
            .matches(&bucket(&["count-leading-zeros:s16"], "constant_folding")));
        assert!(!m
            .matcher
            .matches(&bucket(&["count-leading-zeros:s16"], "below-hlo")));
        assert!(!m.matcher.matches(&bucket(
            &["count-leading-zeros:s16", "add:s16"],
            "constant_folding"
        )));
        assert!(!m
            .matcher
            .matches(&bucket(&["popcnt:s4"], "constant_folding")));
    }

    #[test]
    fn an_alternative_in_ops_include_is_met_by_either_opcode() {
        let m: Entry = toml::from_str(
            r#"
            id = "nan"
            title = "reductions drop NaN"
            status = "open"
            [match]
            ops_include = ["reduce|reduce-window"]
            ops_any = ["maximum", "minimum"]
            "#,
        )
        .unwrap();
        let ok = |ops: &[&str]| m.matcher.matches(&bucket(ops, "below-hlo"));
        assert!(ok(&["reduce:float", "maximum:float"]));
        assert!(ok(&["reduce-window:float", "minimum:float"]));
        assert!(!ok(&["minimum:float"]));
        assert!(!ok(&["reduce:float", "add:float"]));
    }

    #[test]
    fn a_malformed_entry_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bad.toml"), "id = \"x\"\ntitle = 3\n").unwrap();
        let e = Registry::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("bad.toml"), "{e}");
    }

    /// A mistyped registry directory used to be an empty registry: every bucket NEW and no
    /// word said.
    #[test]
    fn a_registry_directory_that_does_not_exist_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("none");
        let e = Registry::load(&missing).unwrap_err().to_string();
        assert!(e.contains("none"), "{e}");
        let e = Registry::load_or_default(Some(&missing))
            .unwrap_err()
            .to_string();
        assert!(e.contains("none"), "{e}");
    }

    /// An empty `[match]` (or one of empty lists) used to claim every bucket, hiding every bug.
    #[test]
    fn a_matcher_that_constrains_nothing_is_an_error_naming_the_file() {
        for body in [
            "[match]\n",
            "[match]\nops_include = []\nculprit = []\n",
            // Every message contains the empty string.
            "[match]\nmessage_contains = \"\"\n",
        ] {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(
                dir.path().join("all.toml"),
                format!("id = \"all\"\ntitle = \"everything\"\nstatus = \"intended\"\ntext = \"a cited text\"\n{body}"),
            )
            .unwrap();
            let e = Registry::load(dir.path()).unwrap_err().to_string();
            assert!(
                e.contains("all.toml") && e.contains("constrains nothing"),
                "{e}"
            );
        }
    }

    /// `a.TOML` and other files are not entries: they are named, not silently skipped.
    #[test]
    fn files_that_are_not_entries_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let entry = "id = \"x\"\ntitle = \"x\"\nstatus = \"open\"\ntext = \"a cited text\"\n[match]\nkind = \"crash\"\n";
        std::fs::write(dir.path().join("x.toml"), entry).unwrap();
        std::fs::write(dir.path().join("a.TOML"), entry.replace('x', "a")).unwrap();
        std::fs::write(dir.path().join("notes.txt"), "").unwrap();
        std::fs::write(dir.path().join(".hidden"), "").unwrap();
        std::fs::write(dir.path().join("BISECT.md"), "").unwrap();
        let r = Registry::load(dir.path()).unwrap();
        assert_eq!(r.entries.len(), 1);
        let w = r.warnings().join("\n");
        assert!(w.contains("a.TOML") && w.contains("notes.txt"), "{w}");
        assert!(!w.contains(".hidden") && !w.contains("BISECT.md"), "{w}");
    }

    /// An entry whose culprit is a failure's stage takes the places in that stage the bisector
    /// names, and no other stage.
    #[test]
    fn a_stage_culprit_takes_the_places_in_it() {
        let e: Entry = toml::from_str(
            "id = \"x\"\ntitle = \"t\"\nstatus = \"open\"\ntext = \"a cited text\"\n[match]\nkind = \"crash\"\nculprit = [\"compile\"]\n",
        )
        .unwrap();
        let mut b = bucket(&[], "compile: algsimp");
        b.kind = judge::VerdictKind::Crash;
        assert!(e.matcher.matches(&b));
        b.culprit = "compile".into();
        assert!(e.matcher.matches(&b));
        b.culprit = "execute".into();
        assert!(!e.matcher.matches(&b));
        b.culprit = "compiler".into();
        assert!(!e.matcher.matches(&b));
    }
}
