//! Time to bug: when each known bug (registry entry) and each NEW bucket was first hit, over one
//! or more campaigns' `report.json` (`hlo-diff time-to-bug`, `scripts/time-to-bug`). The measure
//! of a generator's bug-finding power: how much campaign time and how many modules it takes to
//! reach each bug.
//!
//! A bucket's first hit (`first_hit_s`, `first_hit_module` in `report.json`) is the earliest
//! over its findings; a registry entry's, in one campaign, the earliest over the buckets it
//! claims. Over several campaigns (seeds) a row says in how many campaigns it was hit and the
//! median first hit over those. Buckets whose findings showed no bug run alone are not bugs and
//! are only counted.
//!
//! # JSON (schema `hlo-diff-time-to-bug/1`)
//! ```text
//! schema     "hlo-diff-time-to-bug/1"
//! campaigns  [{source, seed, jobs, resumed, fuzz_s, modules, modules_this_run, modules_per_s,
//!              cases_per_s,
//!              buckets, known_buckets, new_buckets, seen_before_buckets, not_reproduced,
//!              unbucketed}]
//! rows       [{kind: "known" | "new" | "seen-before", id, title, status, hits, campaigns,
//!              first_hit_s: [per campaign, null when not hit or not recorded],
//!              first_hit_module: [...], median_first_hit_s, median_first_hit_module}]
//!            known rows first, then NEW, then seen before; each by median first hit
//! totals     {campaigns, modules, fuzz_s, modules_per_s, registry_entries_hit,
//!             registry_entries, new_buckets, seen_before_buckets}
//! not_hit    registry entry ids no campaign hit
//! public_classes  null without a classes file, else {source, classes, reached,
//!             without_entry, rows: [{id, title, year, upstream: [urls], registry: [ids],
//!             entries_hit: [ids], hits, campaigns, first_hit_s: [...], first_hit_module: [...],
//!             median_first_hit_s, median_first_hit_module}]}
//!            reached classes first (by campaigns hit, then median first hit), then those with
//!            registry entries no campaign hit, then those without an entry; file order within
//! ```
//!
//! # Public bug classes
//! With a classes file ([`crate::public_classes`]: the classes of XLA:CPU bugs others reported
//! on the public trackers, each mapped to the registry entries that are its mechanism), a class
//! is reached in a campaign when any of its entries is hit there, first at the earliest of
//! their first hits. A class without an entry cannot be counted: a campaign that hit it would
//! show a NEW bucket, which says nothing of which class it is.

use crate::bucket::BucketSignature;
use crate::public_classes::PublicClasses;
use crate::registry::Registry;
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One campaign's `report.json`, as time to bug reads it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Campaign {
    /// Where the report came from (its path).
    pub source: String,
    pub seed: u64,
    pub jobs: u64,
    pub resumed: bool,
    /// Seconds of the fuzz phase (this invocation of the campaign).
    pub fuzz_s: f64,
    /// Modules tested over the whole campaign.
    pub modules: u64,
    /// Modules tested by this invocation (in `fuzz_s`; fewer than `modules` when resumed).
    pub modules_this_run: u64,
    /// This invocation's rates.
    pub modules_per_s: f64,
    pub cases_per_s: f64,
    pub buckets: usize,
    pub known_buckets: usize,
    pub new_buckets: usize,
    pub seen_before_buckets: usize,
    /// Buckets of findings that showed no bug run alone.
    pub not_reproduced: usize,
    /// Findings left unminimized (not in any bucket).
    pub unbucketed: usize,
}

/// What a row is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RowKind {
    /// A registry entry (the buckets it claims).
    Known,
    /// A bucket neither the registry nor the campaign's history knows.
    New,
    /// A bucket the campaign's history (`--history`) knew, no registry entry.
    SeenBefore,
}

/// A registry entry or a NEW bucket over the campaigns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    pub kind: RowKind,
    /// The registry entry's id, or the bucket's id.
    pub id: String,
    pub title: String,
    /// The registry entry's status (`open`, `fixed`, `intended`); empty for a bucket.
    pub status: String,
    /// Campaigns that hit it, of `campaigns`.
    pub hits: usize,
    pub campaigns: usize,
    /// Per campaign (in the order given): campaign seconds of the first hit.
    pub first_hit_s: Vec<Option<f64>>,
    /// Per campaign: the first module index that hit it.
    pub first_hit_module: Vec<Option<u64>>,
    /// Medians over the campaigns that hit it (and recorded the value).
    pub median_first_hit_s: Option<f64>,
    pub median_first_hit_module: Option<f64>,
}

/// The whole measurement.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TimeToBug {
    pub schema: &'static str,
    pub campaigns: Vec<Campaign>,
    pub rows: Vec<Row>,
    pub totals: Totals,
    /// Registry entries that no campaign hit.
    pub not_hit: Vec<String>,
    /// The public bug classes, when a classes file was given.
    pub public_classes: Option<PublicClassesReached>,
}

/// Which of the publicly reported bug classes the campaigns reached.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PublicClassesReached {
    /// The classes file.
    pub source: String,
    pub classes: usize,
    /// Classes some campaign reached.
    pub reached: usize,
    /// Classes with no registry entry (never counted as reached).
    pub without_entry: usize,
    pub rows: Vec<ClassRow>,
}

/// A public bug class over the campaigns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClassRow {
    pub id: String,
    pub title: String,
    pub year: u16,
    /// The public threads that report it.
    pub upstream: Vec<String>,
    /// Its registry entries (empty: none).
    pub registry: Vec<String>,
    /// Those of its registry entries some campaign hit.
    pub entries_hit: Vec<String>,
    /// Campaigns that hit any of its entries, of `campaigns`.
    pub hits: usize,
    pub campaigns: usize,
    /// Per campaign: the earliest first hit over its entries.
    pub first_hit_s: Vec<Option<f64>>,
    pub first_hit_module: Vec<Option<u64>>,
    pub median_first_hit_s: Option<f64>,
    pub median_first_hit_module: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Totals {
    pub campaigns: usize,
    pub modules: u64,
    pub fuzz_s: f64,
    /// Modules the fuzz seconds tested (each campaign's last run) over those seconds, all
    /// campaigns together.
    pub modules_per_s: f64,
    pub registry_entries_hit: usize,
    pub registry_entries: usize,
    pub new_buckets: usize,
    pub seen_before_buckets: usize,
}

/// The median of `v` (the mean of the two middle values for an even count); `None` when empty.
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// A throughput figure of the whole campaign (`campaign_throughput`), or of the report's run
/// for reports from before it.
fn whole(r: &Value, key: &str) -> f64 {
    at(r, &["campaign_throughput", key])
        .as_f64()
        .or_else(|| at(r, &["throughput", key]).as_f64())
        .unwrap_or(0.0)
}

fn at<'a>(v: &'a Value, path: &[&str]) -> &'a Value {
    path.iter().fold(v, |v, k| &v[*k])
}

/// One campaign's first hits: row key -> (time, module), the earliest over its buckets.
type Hits = BTreeMap<(RowKind, String), (String, String, Option<f64>, Option<u64>)>;

fn earlier<T: PartialOrd + Copy>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(x), Some(y)) => Some(if y < x { y } else { x }),
        (x, None) => x,
        (None, y) => y,
    }
}

/// Which registry claims a campaign's buckets.
#[derive(Clone, Copy, Debug)]
pub enum Claims<'a> {
    /// The entry each bucket's report names: the registry as it was when the campaign ran.
    AsReported,
    /// This registry, matched against each bucket's signature: a bug registered after the
    /// campaign counts as its entry's, not as NEW (and a bucket no entry claims now is NEW, or
    /// seen before when the campaign's history knew it).
    Registry(&'a Registry),
}

/// Reads one `report.json` value (`source` names it in errors).
fn read_campaign(source: &str, r: &Value, claims: Claims) -> Result<(Campaign, Hits), String> {
    let schema = r["schema"].as_str().unwrap_or("");
    if schema != "hlo-diff-campaign-report/1" {
        return Err(format!(
            "{source}: not a campaign report (schema {schema:?}, want \"hlo-diff-campaign-report/1\")"
        ));
    }
    let buckets = r["buckets"]
        .as_array()
        .ok_or_else(|| format!("{source}: no \"buckets\" list"))?;
    let mut hits = Hits::new();
    let mut c = Campaign {
        source: source.to_string(),
        seed: at(r, &["campaign", "seed"]).as_u64().unwrap_or(0),
        jobs: at(r, &["campaign", "jobs"]).as_u64().unwrap_or(0),
        resumed: at(r, &["campaign", "resumed"]).as_bool().unwrap_or(false),
        fuzz_s: whole(r, "elapsed_s"),
        modules: at(r, &["totals", "modules"]).as_u64().unwrap_or(0),
        modules_this_run: at(r, &["throughput", "modules"]).as_u64().unwrap_or(0),
        modules_per_s: whole(r, "modules_per_s"),
        cases_per_s: whole(r, "cases_per_s"),
        buckets: 0,
        known_buckets: 0,
        new_buckets: 0,
        seen_before_buckets: 0,
        not_reproduced: 0,
        unbucketed: r["unbucketed"].as_array().map_or(0, Vec::len),
    };
    for (i, b) in buckets.iter().enumerate() {
        let id = b["id"]
            .as_str()
            .ok_or_else(|| format!("{source}: bucket {i} has no \"id\""))?;
        c.buckets += 1;
        if b["not_reproduced"].as_bool().unwrap_or(false) {
            c.not_reproduced += 1;
            continue;
        }
        let claimed_now = match claims {
            Claims::AsReported => None,
            Claims::Registry(registry) => {
                let sig: BucketSignature =
                    serde_json::from_value(b["signature"].clone()).map_err(|e| {
                        format!(
                            "{source}: bucket {id} has no readable \"signature\" ({e}), which \
                             claiming it by the registry needs"
                        )
                    })?;
                Some(registry.lookup(&sig))
            }
        };
        let (kind, key, title, status) = if let Some(claimed) = claimed_now {
            match claimed {
                Some(e) => {
                    c.known_buckets += 1;
                    (
                        RowKind::Known,
                        e.id.clone(),
                        e.title.clone(),
                        serde_json::to_value(e.status)
                            .ok()
                            .and_then(|v| v.as_str().map(str::to_string))
                            .unwrap_or_default(),
                    )
                }
                None if b["seen_before"].as_bool().unwrap_or(false) => {
                    c.seen_before_buckets += 1;
                    (
                        RowKind::SeenBefore,
                        id.to_string(),
                        b["title"].as_str().unwrap_or("").to_string(),
                        String::new(),
                    )
                }
                None => {
                    c.new_buckets += 1;
                    (
                        RowKind::New,
                        id.to_string(),
                        b["title"].as_str().unwrap_or("").to_string(),
                        String::new(),
                    )
                }
            }
        } else if b["known"].is_object() {
            c.known_buckets += 1;
            let k = &b["known"];
            (
                RowKind::Known,
                k["id"].as_str().unwrap_or(id).to_string(),
                k["title"].as_str().unwrap_or("").to_string(),
                k["status"].as_str().unwrap_or("").to_string(),
            )
        } else if b["new"].as_bool().unwrap_or(false) {
            c.new_buckets += 1;
            (
                RowKind::New,
                id.to_string(),
                b["title"].as_str().unwrap_or("").to_string(),
                String::new(),
            )
        } else {
            c.seen_before_buckets += 1;
            (
                RowKind::SeenBefore,
                id.to_string(),
                b["title"].as_str().unwrap_or("").to_string(),
                String::new(),
            )
        };
        let t = b["first_hit_s"].as_f64();
        let m = b["first_hit_module"].as_u64();
        let e = hits
            .entry((kind, key))
            .or_insert_with(|| (title, status, None, None));
        e.2 = earlier(e.2, t);
        e.3 = earlier(e.3, m);
    }
    Ok((c, hits))
}

/// Each class of `classes` over the campaigns' first hits (`per`, one map per campaign): reached
/// in a campaign when any of its registry entries was hit there, at the earliest of them.
fn public_classes_reached(classes: &PublicClasses, per: &[Hits]) -> PublicClassesReached {
    let n = per.len();
    let mut rows: Vec<ClassRow> = classes
        .classes
        .iter()
        .map(|c| {
            let mut row = ClassRow {
                id: c.id.clone(),
                title: c.title.clone(),
                year: c.year,
                upstream: c.issues.iter().map(|i| i.url.clone()).collect(),
                registry: c.registry.clone(),
                entries_hit: Vec::new(),
                hits: 0,
                campaigns: n,
                first_hit_s: vec![None; n],
                first_hit_module: vec![None; n],
                median_first_hit_s: None,
                median_first_hit_module: None,
            };
            for (i, hits) in per.iter().enumerate() {
                let mut hit = false;
                for entry in &c.registry {
                    if let Some((_, _, t, m)) = hits.get(&(RowKind::Known, entry.clone())) {
                        hit = true;
                        row.first_hit_s[i] = earlier(row.first_hit_s[i], *t);
                        row.first_hit_module[i] = earlier(row.first_hit_module[i], *m);
                        if !row.entries_hit.contains(entry) {
                            row.entries_hit.push(entry.clone());
                        }
                    }
                }
                row.hits += usize::from(hit);
            }
            row.entries_hit
                .sort_by_key(|e| c.registry.iter().position(|r| r == e));
            row.median_first_hit_s = median(row.first_hit_s.iter().flatten().copied().collect());
            row.median_first_hit_module = median(
                row.first_hit_module
                    .iter()
                    .flatten()
                    .map(|&m| m as f64)
                    .collect(),
            );
            row
        })
        .collect();
    // Reached first (most campaigns, then earliest), then not reached, then without an entry;
    // the sort is stable, so file order within each.
    rows.sort_by(|a, b| {
        a.registry
            .is_empty()
            .cmp(&b.registry.is_empty())
            .then(b.hits.cmp(&a.hits))
            .then(
                a.median_first_hit_s
                    .unwrap_or(f64::INFINITY)
                    .total_cmp(&b.median_first_hit_s.unwrap_or(f64::INFINITY)),
            )
    });
    PublicClassesReached {
        source: classes.source.clone(),
        classes: rows.len(),
        reached: rows.iter().filter(|r| r.hits > 0).count(),
        without_entry: rows.iter().filter(|r| r.registry.is_empty()).count(),
        rows,
    }
}

impl TimeToBug {
    /// The measurement over `reports` (each `(source, report.json value)`), with `registry`
    /// naming the entries no campaign hit, `claims` saying which registry claims the buckets,
    /// and `classes` (when given) the public bug classes to report on. An error names the
    /// report that is not one.
    pub fn new(
        reports: &[(String, Value)],
        registry: &Registry,
        claims: Claims,
        classes: Option<&PublicClasses>,
    ) -> Result<TimeToBug, String> {
        let mut campaigns = Vec::new();
        let mut per: Vec<Hits> = Vec::new();
        for (source, r) in reports {
            let (c, h) = read_campaign(source, r, claims)?;
            campaigns.push(c);
            per.push(h);
        }
        let n = campaigns.len();
        let mut rows: BTreeMap<(RowKind, String), Row> = BTreeMap::new();
        for (i, hits) in per.iter().enumerate() {
            for ((kind, id), (title, status, t, m)) in hits {
                let row = rows.entry((*kind, id.clone())).or_insert_with(|| Row {
                    kind: *kind,
                    id: id.clone(),
                    title: title.clone(),
                    status: status.clone(),
                    hits: 0,
                    campaigns: n,
                    first_hit_s: vec![None; n],
                    first_hit_module: vec![None; n],
                    median_first_hit_s: None,
                    median_first_hit_module: None,
                });
                row.hits += 1;
                row.first_hit_s[i] = *t;
                row.first_hit_module[i] = *m;
            }
        }
        let mut rows: Vec<Row> = rows
            .into_values()
            .map(|mut r| {
                r.median_first_hit_s = median(r.first_hit_s.iter().flatten().copied().collect());
                r.median_first_hit_module = median(
                    r.first_hit_module
                        .iter()
                        .flatten()
                        .map(|&m| m as f64)
                        .collect(),
                );
                r
            })
            .collect();
        rows.sort_by(|a, b| {
            a.kind
                .cmp(&b.kind)
                .then(b.hits.cmp(&a.hits))
                .then(
                    a.median_first_hit_s
                        .unwrap_or(f64::INFINITY)
                        .total_cmp(&b.median_first_hit_s.unwrap_or(f64::INFINITY)),
                )
                .then(a.id.cmp(&b.id))
        });
        let hit: std::collections::BTreeSet<&str> = rows
            .iter()
            .filter(|r| r.kind == RowKind::Known)
            .map(|r| r.id.as_str())
            .collect();
        let not_hit: Vec<String> = registry
            .entries
            .iter()
            .filter(|e| !hit.contains(e.id.as_str()))
            .map(|e| e.id.clone())
            .collect();
        let modules: u64 = campaigns.iter().map(|c| c.modules).sum();
        let timed: u64 = campaigns.iter().map(|c| c.modules_this_run).sum();
        let fuzz_s: f64 = campaigns.iter().map(|c| c.fuzz_s).sum();
        let count = |k: RowKind| rows.iter().filter(|r| r.kind == k).count();
        let totals = Totals {
            campaigns: n,
            modules,
            fuzz_s,
            modules_per_s: timed as f64 / fuzz_s.max(1e-9),
            registry_entries_hit: count(RowKind::Known),
            registry_entries: registry.entries.len(),
            new_buckets: count(RowKind::New),
            seen_before_buckets: count(RowKind::SeenBefore),
        };
        let public_classes = classes.map(|c| public_classes_reached(c, &per));
        Ok(TimeToBug {
            schema: "hlo-diff-time-to-bug/1",
            campaigns,
            rows,
            totals,
            not_hit,
            public_classes,
        })
    }

    /// The measurement as markdown: the campaigns, then one row per registry entry and per NEW
    /// bucket with its first hit, then the entries not hit.
    pub fn markdown(&self) -> String {
        let mut o = String::new();
        let t = &self.totals;
        let _ = writeln!(
            o,
            "## Time to bug: {} campaign(s), {} modules; {:.0} s of fuzzing at {:.2} modules/s\n",
            t.campaigns, t.modules, t.fuzz_s, t.modules_per_s
        );
        o.push_str(
            "| campaign | seed | jobs | fuzz s | modules | modules/s | cases/s | buckets | known | NEW | not reproduced | unbucketed |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        for c in &self.campaigns {
            let _ = writeln!(
                o,
                "| {}{} | {} | {} | {:.0} | {} | {:.3} | {:.2} | {} | {} | {} | {} | {} |",
                c.source,
                if c.resumed {
                    " (resumed: fuzz s and rates are its last run's)"
                } else {
                    ""
                },
                c.seed,
                c.jobs,
                c.fuzz_s,
                c.modules,
                c.modules_per_s,
                c.cases_per_s,
                c.buckets,
                c.known_buckets,
                c.new_buckets,
                c.not_reproduced,
                c.unbucketed
            );
        }
        let _ = writeln!(
            o,
            "\n{} of {} registry entries hit, {} NEW bucket(s){}.\n",
            t.registry_entries_hit,
            t.registry_entries,
            t.new_buckets,
            if t.seen_before_buckets > 0 {
                format!(", {} seen before", t.seen_before_buckets)
            } else {
                String::new()
            }
        );
        if self.rows.is_empty() {
            o.push_str("No bug was hit.\n");
        } else {
            let several = self.campaigns.len() > 1;
            let _ = writeln!(
                o,
                "| registry entry / bucket | status | hit in | first hit{} (s) | first-hit module{} | title |\n\
                 |---|---|---:|---:|---:|---|",
                if several { ", median" } else { "" },
                if several { ", median" } else { "" },
            );
            for r in &self.rows {
                let status = match r.kind {
                    RowKind::Known => r.status.clone(),
                    RowKind::New => "**NEW**".into(),
                    RowKind::SeenBefore => "seen before".into(),
                };
                let id = match r.kind {
                    RowKind::Known => r.id.clone(),
                    _ => format!("`{}`", r.id),
                };
                let fmt = |v: Option<f64>, digits: usize| {
                    v.map_or("-".to_string(), |x| format!("{x:.digits$}"))
                };
                let _ = writeln!(
                    o,
                    "| {id} | {status} | {}/{} | {} | {} | {} |",
                    r.hits,
                    r.campaigns,
                    fmt(r.median_first_hit_s, 0),
                    fmt(
                        r.median_first_hit_module,
                        usize::from(r.median_first_hit_module.is_some_and(|m| m.fract() != 0.0))
                    ),
                    r.title.replace('|', "\\|")
                );
            }
        }
        if !self.not_hit.is_empty() {
            let _ = writeln!(
                o,
                "\nRegistry entries not hit ({}): {}",
                self.not_hit.len(),
                self.not_hit.join(", ")
            );
        }
        if let Some(p) = &self.public_classes {
            p.markdown(&mut o, self.campaigns.len() > 1);
        }
        o
    }
}

impl PublicClassesReached {
    /// The section "Public bug classes" of the markdown.
    fn markdown(&self, o: &mut String, several: bool) {
        let _ = writeln!(
            o,
            "\n### Public bug classes: {} of {} reached\n\n\
             Classes of XLA:CPU bugs others reported on the public trackers (`{}`). A class is \
             reached in a campaign when one of its registry entries is hit there (**bold**: the \
             entries hit). {} of the {} have registry entries; the other {} have none, so a \
             campaign that hit one would show it as a NEW bucket, not counted here.\n",
            self.reached,
            self.classes,
            self.source,
            self.classes - self.without_entry,
            self.classes,
            self.without_entry,
        );
        if self.rows.is_empty() {
            o.push_str("The classes file names no class.\n");
            return;
        }
        let _ = writeln!(
            o,
            "| class | year | reported | registry entries | reached in | first hit{} (s) | first-hit module{} | title |\n\
             |---|---:|---|---|---:|---:|---:|---|",
            if several { ", median" } else { "" },
            if several { ", median" } else { "" },
        );
        let fmt =
            |v: Option<f64>, digits: usize| v.map_or("-".to_string(), |x| format!("{x:.digits$}"));
        for r in &self.rows {
            let reported: Vec<String> = r
                .upstream
                .iter()
                .map(|u| {
                    let short = crate::public_classes::PublicIssue {
                        url: u.clone(),
                        reports: String::new(),
                    }
                    .short();
                    format!("[{short}]({u})")
                })
                .collect();
            let (entries, reached) = if r.registry.is_empty() {
                (
                    "none".to_string(),
                    "no registry entry: a hit would be a NEW bucket".to_string(),
                )
            } else {
                (
                    r.registry
                        .iter()
                        .map(|e| {
                            if r.entries_hit.contains(e) {
                                format!("**{e}**")
                            } else {
                                e.clone()
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(", "),
                    format!("{}/{}", r.hits, r.campaigns),
                )
            };
            let _ = writeln!(
                o,
                "| {} | {} | {} | {entries} | {reached} | {} | {} | {} |",
                r.id,
                r.year,
                reported.join(", "),
                fmt(r.median_first_hit_s, 0),
                fmt(
                    r.median_first_hit_module,
                    usize::from(r.median_first_hit_module.is_some_and(|m| m.fract() != 0.0))
                ),
                r.title.replace('|', "\\|")
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bucket(id: &str, known: Option<&str>, t: Option<f64>, m: Option<u64>) -> Value {
        json!({
            "id": id,
            "title": format!("title of {id}"),
            "new": known.is_none(),
            "known": known.map(|k| json!({"id": k, "title": format!("entry {k}"), "status": "open"})),
            "not_reproduced": false,
            "first_hit_s": t,
            "first_hit_module": m,
        })
    }

    fn report(seed: u64, modules: u64, elapsed: f64, buckets: Vec<Value>) -> Value {
        json!({
            "schema": "hlo-diff-campaign-report/1",
            "campaign": {"seed": seed, "jobs": 2, "resumed": false},
            "throughput": {"elapsed_s": elapsed, "modules": modules, "modules_per_s": modules as f64 / elapsed, "cases_per_s": 1.0},
            "totals": {"modules": modules},
            "buckets": buckets,
            "unbucketed": [],
        })
    }

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

    #[test]
    fn medians() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![5.0]), Some(5.0));
        assert_eq!(median(vec![9.0, 1.0, 5.0]), Some(5.0));
        assert_eq!(median(vec![4.0, 1.0, 10.0, 2.0]), Some(3.0));
    }

    /// An entry claiming two buckets in one campaign is first hit by the earlier; over three
    /// campaigns a row counts the campaigns that hit it and takes the median over those.
    #[test]
    fn entries_and_new_buckets_over_several_campaigns() {
        let reports = vec![
            (
                "a".to_string(),
                report(
                    1,
                    100,
                    50.0,
                    vec![
                        bucket("b1", Some("clz"), Some(30.0), Some(60)),
                        bucket("b2", Some("clz"), Some(10.0), Some(20)),
                        bucket("n1", None, Some(40.0), Some(80)),
                    ],
                ),
            ),
            (
                "b".to_string(),
                report(
                    2,
                    300,
                    100.0,
                    vec![bucket("b1", Some("clz"), Some(70.0), Some(200))],
                ),
            ),
            (
                "c".to_string(),
                report(
                    3,
                    200,
                    50.0,
                    vec![
                        bucket("b3", Some("clz"), Some(20.0), Some(90)),
                        bucket("b4", Some("popcnt"), None, Some(7)),
                    ],
                ),
            ),
        ];
        let t = TimeToBug::new(
            &reports,
            &registry(&["clz", "popcnt", "pow"]),
            Claims::AsReported,
            None,
        )
        .unwrap();
        assert_eq!(t.totals.modules, 600);
        assert_eq!(t.totals.fuzz_s, 200.0);
        assert_eq!(t.totals.modules_per_s, 3.0);
        assert_eq!(t.totals.registry_entries_hit, 2);
        assert_eq!(t.totals.new_buckets, 1);
        assert_eq!(t.not_hit, vec!["pow".to_string()]);
        let ids: Vec<&str> = t.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["clz", "popcnt", "n1"]);
        let clz = &t.rows[0];
        assert_eq!(clz.hits, 3);
        assert_eq!(clz.first_hit_s, vec![Some(10.0), Some(70.0), Some(20.0)]);
        assert_eq!(clz.first_hit_module, vec![Some(20), Some(200), Some(90)]);
        assert_eq!(clz.median_first_hit_s, Some(20.0));
        assert_eq!(clz.median_first_hit_module, Some(90.0));
        let popcnt = &t.rows[1];
        assert_eq!(popcnt.hits, 1);
        assert_eq!(popcnt.median_first_hit_s, None, "no time recorded");
        assert_eq!(popcnt.median_first_hit_module, Some(7.0));
        let new = &t.rows[2];
        assert_eq!(new.kind, RowKind::New);
        assert_eq!(new.hits, 1);
        assert_eq!(new.first_hit_s, vec![Some(40.0), None, None]);
        let md = t.markdown();
        assert!(
            md.contains("| clz | open | 3/3 | 20 | 90 | entry clz |"),
            "{md}"
        );
        assert!(md.contains("| popcnt | open | 1/3 | - | 7 |"), "{md}");
        assert!(md.contains("| `n1` | **NEW** | 1/3 | 40 | 80 |"), "{md}");
        assert!(md.contains("not hit (1): pow"), "{md}");
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(v["schema"], "hlo-diff-time-to-bug/1");
        assert_eq!(v["rows"][2]["kind"], "new");
    }

    /// A resumed campaign's report counts the whole campaign's modules but times only its last
    /// run: the rate is that run's modules over its seconds.
    #[test]
    fn a_resumed_campaign_rates_only_its_last_run() {
        let mut r = report(4, 1000, 10.0, vec![]);
        r["campaign"]["resumed"] = json!(true);
        r["throughput"]["modules"] = json!(20);
        r["throughput"]["modules_per_s"] = json!(2.0);
        let t = TimeToBug::new(
            &[("r".to_string(), r)],
            &Registry::default(),
            Claims::AsReported,
            None,
        )
        .unwrap();
        assert_eq!(t.totals.modules, 1000);
        assert_eq!(t.campaigns[0].modules_this_run, 20);
        assert_eq!(t.totals.modules_per_s, 2.0);
        assert!(t
            .markdown()
            .contains("(resumed: fuzz s and rates are its last run's)"));
    }

    /// Buckets of findings that did not reproduce alone are no bugs: counted, never rows.
    #[test]
    fn not_reproduced_buckets_are_only_counted() {
        let mut b = bucket("x", None, Some(3.0), Some(1));
        b["not_reproduced"] = json!(true);
        b["new"] = json!(false);
        let t = TimeToBug::new(
            &[("r".to_string(), report(1, 10, 5.0, vec![b]))],
            &Registry::default(),
            Claims::AsReported,
            None,
        )
        .unwrap();
        assert!(t.rows.is_empty());
        assert_eq!(t.campaigns[0].not_reproduced, 1);
        assert!(t.markdown().contains("No bug was hit."));
    }

    fn classes(registry: &Registry) -> PublicClasses {
        PublicClasses::parse(
            "classes.toml",
            r#"
[[class]]
id = "no-entry"
title = "a mechanism the registry does not know"
year = 2026
registry = []
[[class.issue]]
url = "https://github.com/openxla/xla/issues/1"
reports = "r"

[[class]]
id = "never-hit"
title = "t"
year = 2025
registry = ["pow"]
[[class.issue]]
url = "https://github.com/jax-ml/jax/issues/2"
reports = "r"

[[class]]
id = "counts"
title = "count | ops"
year = 2026
registry = ["popcnt", "clz"]
[[class.issue]]
url = "https://github.com/openxla/xla/issues/3"
reports = "r"
[[class.issue]]
url = "https://github.com/openxla/xla/pull/4"
reports = "r"
"#,
            registry,
        )
        .unwrap()
    }

    /// A class is reached in a campaign when any of its entries is hit there, at the earliest of
    /// their first hits; a class without an entry is never counted and says why.
    #[test]
    fn public_classes_are_reached_through_their_registry_entries() {
        let reports = vec![
            (
                "a".to_string(),
                report(
                    1,
                    100,
                    50.0,
                    vec![
                        bucket("b1", Some("clz"), Some(30.0), Some(60)),
                        bucket("b2", Some("popcnt"), Some(12.0), Some(70)),
                        bucket("n1", None, Some(5.0), Some(2)),
                    ],
                ),
            ),
            ("b".to_string(), report(2, 100, 50.0, vec![])),
            (
                "c".to_string(),
                report(
                    3,
                    100,
                    50.0,
                    vec![bucket("b3", Some("clz"), Some(40.0), Some(20))],
                ),
            ),
        ];
        let reg = registry(&["clz", "popcnt", "pow"]);
        let t = TimeToBug::new(&reports, &reg, Claims::AsReported, Some(&classes(&reg))).unwrap();
        let p = t.public_classes.as_ref().unwrap();
        assert_eq!((p.classes, p.reached, p.without_entry), (3, 1, 1));
        let ids: Vec<&str> = p.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["counts", "never-hit", "no-entry"]);
        let c = &p.rows[0];
        assert_eq!(c.hits, 2);
        assert_eq!(c.entries_hit, ["popcnt", "clz"], "in the class's order");
        // Campaign a: popcnt at 12 s is earlier than clz at 30 s, but clz's module 60 is the
        // smaller one: time and module are each the earliest.
        assert_eq!(c.first_hit_s, vec![Some(12.0), None, Some(40.0)]);
        assert_eq!(c.first_hit_module, vec![Some(60), None, Some(20)]);
        assert_eq!(c.median_first_hit_s, Some(26.0));
        assert_eq!(c.median_first_hit_module, Some(40.0));
        assert_eq!(p.rows[1].hits, 0);
        assert_eq!(p.rows[1].median_first_hit_s, None);
        assert_eq!(p.rows[2].hits, 0);

        let md = t.markdown();
        assert!(
            md.contains("### Public bug classes: 1 of 3 reached"),
            "{md}"
        );
        assert!(
            md.contains("2 of the 3 have registry entries; the other 1 have none"),
            "{md}"
        );
        assert!(
            md.contains(
                "| counts | 2026 | [openxla/xla#3](https://github.com/openxla/xla/issues/3), \
                 [openxla/xla#4](https://github.com/openxla/xla/pull/4) | **popcnt**, **clz** | \
                 2/3 | 26 | 40 | count \\| ops |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| never-hit | 2025 | [jax-ml/jax#2](https://github.com/jax-ml/jax/issues/2) | pow | 0/3 | - | - | t |"),
            "{md}"
        );
        assert!(
            md.contains("| none | no registry entry: a hit would be a NEW bucket | - | - |"),
            "{md}"
        );
        let v = serde_json::to_value(&t).unwrap();
        assert_eq!(v["public_classes"]["reached"], 1);
        assert_eq!(v["public_classes"]["rows"][0]["entries_hit"][1], "clz");
        assert_eq!(
            v["public_classes"]["rows"][0]["first_hit_s"][1],
            Value::Null
        );
    }

    /// A bucket the campaign called NEW that the registry claims now (by its signature) is that
    /// entry's row when claimed by the registry, and NEW as reported; a public class reached
    /// only through it is reached only then.
    #[test]
    fn buckets_can_be_claimed_by_the_registry_now() {
        let mut b = bucket("n1", None, Some(9.0), Some(4));
        b["signature"] = json!({"kind": "mismatch", "backend": "xla-cpu", "ops": ["pow:int"],
            "symptom": "value", "culprit": "below-hlo", "message": ""});
        let mut other = bucket("n2", None, Some(3.0), Some(1));
        other["signature"] = json!({"kind": "mismatch", "backend": "xla-cpu", "ops": ["add:int"],
            "symptom": "value", "culprit": "below-hlo", "message": ""});
        let reports = vec![("a".to_string(), report(1, 10, 5.0, vec![b, other]))];
        let reg = registry(&["clz", "popcnt", "pow"]);
        let cls = classes(&reg);
        let as_reported = TimeToBug::new(&reports, &reg, Claims::AsReported, Some(&cls)).unwrap();
        assert_eq!(as_reported.totals.registry_entries_hit, 0);
        assert_eq!(as_reported.public_classes.as_ref().unwrap().reached, 0);
        let now = TimeToBug::new(&reports, &reg, Claims::Registry(&reg), Some(&cls)).unwrap();
        assert_eq!(now.totals.registry_entries_hit, 1);
        assert_eq!(now.totals.new_buckets, 1);
        assert_eq!(now.campaigns[0].known_buckets, 1);
        let pow = now.rows.iter().find(|r| r.id == "pow").unwrap();
        assert_eq!((pow.kind, pow.status.as_str()), (RowKind::Known, "open"));
        assert_eq!(pow.first_hit_s, vec![Some(9.0)]);
        let p = now.public_classes.as_ref().unwrap();
        assert_eq!(p.reached, 1);
        assert_eq!(p.rows[0].id, "never-hit");
        // A report without signatures cannot be claimed by the registry: an error naming it.
        let e = TimeToBug::new(
            &[(
                "r.json".to_string(),
                report(1, 10, 5.0, vec![bucket("x", None, None, None)]),
            )],
            &reg,
            Claims::Registry(&reg),
            None,
        )
        .unwrap_err();
        assert!(
            e.starts_with("r.json: bucket x has no readable \"signature\""),
            "{e}"
        );
    }

    /// Without a classes file there is no section, in the markdown or the JSON.
    #[test]
    fn without_a_classes_file_there_is_no_public_section() {
        let t = TimeToBug::new(
            &[("r".to_string(), report(1, 10, 5.0, vec![]))],
            &Registry::default(),
            Claims::AsReported,
            None,
        )
        .unwrap();
        assert!(t.public_classes.is_none());
        assert!(!t.markdown().contains("Public bug classes"));
        assert_eq!(
            serde_json::to_value(&t).unwrap()["public_classes"],
            Value::Null
        );
    }

    #[test]
    fn a_file_that_is_not_a_campaign_report_is_an_error_naming_it() {
        let e = TimeToBug::new(
            &[("runs/x/report.json".to_string(), json!({"schema": "other"}))],
            &Registry::default(),
            Claims::AsReported,
            None,
        )
        .unwrap_err();
        assert!(
            e.starts_with("runs/x/report.json: not a campaign report"),
            "{e}"
        );
    }
}
