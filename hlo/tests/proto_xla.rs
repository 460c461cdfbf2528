//! The HloModuleProto round trip against XLA (jaxlib's parser, printer and proto code, run by
//! `xla_proto.py` in the project's Python), over every corpus file:
//! - XLA reads our proto as the same module as our text: its printing of the module from our
//!   `HloModuleProto` equals its printing of the module parsed from our printed text;
//! - we read XLA's proto: our reader on XLA's `HloModuleProto` of that text gives the module our
//!   parser reads from XLA's printing of it (printed by our printer, the same text).
//!
//! Needs the project's Python with jaxlib (`test_support::python`); fails without it unless
//! `HLO_DIFF_SKIP_XLA=1`.

mod common;

use common::{corpus_files, read_text};
use std::path::Path;
use std::process::Command;

#[test]
fn xla_reads_our_proto_and_we_read_xlas_for_every_corpus_file() {
    if !test_support::need_xla() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // HLO_DIFF_PROTO_TEST_DIR keeps the files (ours and XLA's) for a look.
    let kept = std::env::var_os("HLO_DIFF_PROTO_TEST_DIR").map(std::path::PathBuf::from);
    let dir_path = kept.clone().unwrap_or_else(|| dir.path().to_path_buf());
    std::fs::create_dir_all(&dir_path).unwrap();
    let files = corpus_files();
    let mut written = 0;
    let mut elided = 0;
    let mut per_device = 0;
    for (i, f) in files.iter().enumerate() {
        let m = hlo::parse::parse_module(&read_text(f))
            .unwrap_or_else(|e| panic!("{}:{e}", f.display()));
        // A per-device module with collectives (what the SPMD partitioner makes of a
        // sharded program, `corpora/jax-sharded/`'s pass dumps): the writer does not write
        // collectives' attributes yet.
        let collectives = m.computations.iter().any(|c| {
            c.instructions
                .iter()
                .any(|i| i.opcode.category() == hlo::opcode::Category::Collective)
        });
        if collectives {
            per_device += 1;
            continue;
        }
        match hlo::proto::encode_module(&m) {
            Ok(bytes) => {
                std::fs::write(dir_path.as_path().join(format!("{i:04}.pb")), bytes).unwrap();
                std::fs::write(
                    dir_path.as_path().join(format!("{i:04}.hlo")),
                    hlo::print::module_to_string(&m),
                )
                .unwrap();
                written += 1;
            }
            // A dump's elided large constant (`{...}`) has no value to write.
            Err(hlo::proto::ProtoError::Unsupported(e)) if e.contains("elided") => elided += 1,
            Err(e) => panic!("{}: {e}", f.display()),
        }
    }
    assert!(written > 100, "only {written} corpus modules written");
    let py = test_support::python();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xla_proto.py");
    let output = Command::new(&py)
        .arg(&script)
        .arg(dir_path.as_path())
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", py.display()));
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (mut same, mut read_back, mut xla_refused) = (0, 0, 0);
    let mut failures = Vec::new();
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let name = v["name"].as_str().unwrap().to_string();
        let orig = &files[name.parse::<usize>().unwrap()];
        if v["ok"] != true {
            // XLA's parser refuses some corpus files (crash regressions written to be refused).
            let err = v["error"].as_str().unwrap_or("");
            if !orig.to_string_lossy().contains("regressions") {
                failures.push(format!("{}: XLA: {err}", orig.display()));
            }
            xla_refused += 1;
            continue;
        }
        // The module configuration XLA prints in the header (`allow_spmd_...`, from the text's
        // header) is no part of an HloModuleProto.
        let from_text = without_config(v["from_text"].as_str().unwrap());
        let from_text = from_text.as_str();
        // XLA prints computations in the order it holds them, which follows the proto's.
        if canonical(v["from_proto"].as_str().unwrap()) == canonical(from_text) {
            same += 1;
        } else {
            let (a, b) = (
                canonical(from_text),
                canonical(v["from_proto"].as_str().unwrap()),
            );
            let diff = similar::TextDiff::from_lines(&a, &b)
                .unified_diff()
                .context_radius(0)
                .to_string();
            failures.push(format!(
                "{}: XLA reads our proto differently from our text:\n{diff}",
                orig.display()
            ));
            continue;
        }
        // Our reader on XLA's proto of the same module.
        let xla_pb = std::fs::read(dir_path.as_path().join(format!("{name}.xla.pb"))).unwrap();
        let ours = match hlo::proto::decode_module(&xla_pb) {
            Ok(m) => hlo::print::module_to_string(&m),
            Err(e) => {
                failures.push(format!("{}: reading XLA's proto: {e}", orig.display()));
                continue;
            }
        };
        let expected = hlo::print::module_to_string(&hlo::parse::parse_module(from_text).unwrap());
        // The proto's computation order is XLA's post order, not its printing order; XLA prints
        // `/*index=N*/` comments in long tuples' shapes.
        let (ours, expected) = (canonical(&ours), canonical(&expected));
        if ours == expected {
            read_back += 1;
        } else {
            let diff = similar::TextDiff::from_lines(&expected, &ours)
                .unified_diff()
                .context_radius(0)
                .to_string();
            failures.push(format!("{}: our reader differs:\n{diff}", orig.display()));
        }
    }
    eprintln!(
        "{written} modules written ({elided} with elided constants, {per_device} per-device \
         modules with collectives skipped); XLA refused {xla_refused}; \
         XLA read {same} of our protos as our text; we read {read_back} of XLA's protos as XLA's text"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(8)].join("\n\n")
    );
}

/// The text without the module-configuration attributes of its `HloModule` line.
fn without_config(text: &str) -> String {
    let (first, rest) = text.split_once('\n').unwrap_or((text, ""));
    let mut line = first.to_string();
    for key in [
        ", allow_spmd_sharding_propagation_to_parameters=",
        ", allow_spmd_sharding_propagation_to_output=",
    ] {
        if let Some(at) = line.find(key) {
            let end = line[at + key.len()..]
                .find('}')
                .map(|e| at + key.len() + e + 1)
                .unwrap_or(line.len());
            line.replace_range(at..end, "");
        }
    }
    // The SPMD partition count is the configuration's too (`num_partitions=2`).
    if let Some(at) = line.find(", num_partitions=") {
        let digits = line[at + ", num_partitions=".len()..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        line.replace_range(at..at + ", num_partitions=".len() + digits, "");
    }
    format!("{line}\n{rest}")
}

/// The text with its computations sorted by name and `/*index=N*/` comments removed.
fn canonical(text: &str) -> String {
    let mut blocks: Vec<String> = Vec::new();
    let mut header = String::new();
    let mut cur = String::new();
    let mut in_comp = false;
    for line in text.lines() {
        let line = strip_index_comments(line);
        if !in_comp && line.ends_with('{') && !line.starts_with(' ') {
            in_comp = true;
        }
        if in_comp {
            cur.push_str(&line);
            cur.push('\n');
            if line.starts_with('}') {
                blocks.push(std::mem::take(&mut cur));
                in_comp = false;
            }
        } else {
            header.push_str(&line);
            header.push('\n');
        }
    }
    // The entry computation's position is not part of the module.
    let mut blocks: Vec<String> = blocks
        .into_iter()
        .map(|b| b.strip_prefix("ENTRY ").unwrap_or(&b).to_string())
        .collect();
    blocks.sort();
    header + &blocks.join("\n")
}

fn strip_index_comments(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find("/*index=") {
        out.push_str(&rest[..at]);
        match rest[at..].find("*/") {
            Some(e) => rest = &rest[at + e + 2..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}
