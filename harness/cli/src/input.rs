//! What every command reads from the user: an HLO module (parsed and verified), its inputs, and
//! XLA options. A module our verifier rejects is the user's error (exit 2, `file:line:col` of
//! the offending instruction), never run and never a finding.

use crate::Failure;
use hlo::{Literal, Module};
use std::path::Path;

/// Checks `module` (read from `path`) with our verifier: the first broken rule as a bad-input
/// failure, `file:line:col: instruction %name: message` (the parser records where each
/// instruction is defined).
pub fn verify(path: &Path, module: &Module) -> Result<(), Failure> {
    let Err(e) = hlo::verify::verify_module(module) else {
        return Ok(());
    };
    let sep = if e.pos.is_some() { ":" } else { ": " };
    Err(Failure::bad_input(format!(
        "{}{sep}{e} (invalid module, not run)",
        path.display()
    )))
}

/// Reads, parses and verifies an HLO module; errors name file:line:col.
pub fn load_module(path: &Path) -> Result<(String, Module), Failure> {
    let bytes = findings::inputs::read_file_within(path, interp::DEFAULT_MAX_BYTES)
        .map_err(Failure::bad_input)?;
    // An `HloModuleProto` (`--xla_dump_hlo_as_proto`'s `.hlo.pb`, detected by content): the
    // module XLA wrote, as our printer writes it (the text every backend is handed).
    if hlo::proto::looks_like_module_proto(&bytes) {
        let m = hlo::proto::decode_module(&bytes).map_err(|e| {
            Failure::bad_input(format!(
                "{}: reading the HloModuleProto: {e}",
                path.display()
            ))
        })?;
        let text = hlo::print::module_to_string(&m);
        let m = hlo::parse::parse_module(&text).map_err(|e| {
            Failure::bad_input(format!(
                "{}: the HloModuleProto reads as text our parser refuses ({}:{}: {})",
                path.display(),
                e.line,
                e.column,
                e.message
            ))
        })?;
        verify(path, &m)?;
        return Ok((text, m));
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        Failure::bad_input(format!(
            "{}: neither HLO text (not UTF-8 at byte {}) nor an HloModuleProto",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
    })?;
    let m = hlo::parse::parse_module(&text).map_err(|e| {
        Failure::bad_input(format!(
            "{}:{}:{}: {}",
            path.display(),
            e.line,
            e.column,
            e.message
        ))
    })?;
    verify(path, &m)?;
    Ok((text, m))
}

/// The inputs from `path` (any format [`findings::inputs`] detects: literal file, text lines,
/// literal proto text or binary, NumPy `.npy`/`.npz`; fitted to the parameters as
/// [`findings::inputs::ReadInputs::fit_to`] says, each conversion noted on stderr), or generated
/// from `seed` with `generator`; checked against the entry parameters.
pub fn load_inputs_with(
    m: &Module,
    path: Option<&Path>,
    seed: u64,
    generator: &generators::Config,
) -> Result<Vec<Literal>, Failure> {
    let params = m.entry_computation().parameter_shapes();
    let inputs = match path {
        Some(p) => {
            let read = findings::inputs::read_inputs_file(p).map_err(Failure::bad_input)?;
            let (inputs, notes) = read.fit_to(&params);
            for n in notes {
                eprintln!("{}: {n}", p.display());
            }
            inputs
        }
        // Within the oracle's memory budget: a parameter it could not hold is refused here,
        // before its input is allocated.
        None => {
            generators::try_generate_inputs_from_seed(m, seed, generator, interp::DEFAULT_MAX_BYTES)
                .map_err(|e| Failure::bad_input(format!("generating the inputs: {e}")))?
        }
    };
    // Inputs that do not fit the parameters are the input file's error: it is named.
    let file = path
        .map(|p| format!("{}: ", p.display()))
        .unwrap_or_default();
    if params.len() != inputs.len() {
        return Err(Failure::bad_input(format!(
            "{file}the module has {} parameters but {} inputs were given",
            params.len(),
            inputs.len()
        )));
    }
    for (k, (s, l)) in params.iter().zip(&inputs).enumerate() {
        if !s.compatible(&l.shape()) {
            return Err(Failure::bad_input(format!(
                "{file}input {k} is {} but parameter {k} is {}",
                l.shape(),
                s
            )));
        }
    }
    Ok(inputs)
}

/// [`load_inputs_with`] the default generator.
pub fn load_inputs(m: &Module, path: Option<&Path>, seed: u64) -> Result<Vec<Literal>, Failure> {
    load_inputs_with(m, path, seed, &generators::Config::default())
}

/// The known-bug registry in `dir` (which must exist when given), else the repository's; a
/// file in it that is not an entry is named in a warning on stderr.
pub fn load_registry(dir: Option<&Path>) -> Result<findings::registry::Registry, Failure> {
    let registry = findings::registry::Registry::load_or_default(dir)
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    for w in registry.warnings() {
        eprintln!("{w}");
    }
    Ok(registry)
}

/// `NAME=VALUE` pairs (a leading `--` is dropped).
pub fn parse_xla_options(opts: &[String]) -> Result<Vec<(String, String)>, Failure> {
    opts.iter()
        .map(|o| {
            let o = o.trim_start_matches("--");
            match o.split_once('=') {
                Some((k, v)) if !k.trim().is_empty() => {
                    Ok((k.trim().to_string(), v.trim().to_string()))
                }
                _ => Err(Failure::bad_input(format!(
                    "--xla-option {o:?}: expected NAME=VALUE"
                ))),
            }
        })
        .collect()
}

/// The XLA options a finding was found with (`meta.xla_options` of its `finding.json`), empty
/// when it recorded none.
pub fn finding_xla_options(dir: &Path) -> Result<Vec<(String, String)>, Failure> {
    let file = dir.join("finding.json");
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(Vec::new());
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        Failure::bad_input(format!(
            "{}:{}:{}: {e}",
            file.display(),
            e.line(),
            e.column()
        ))
    })?;
    Ok(v.get("meta")
        .map(findings::store::xla_options_of)
        .unwrap_or_default())
}

/// `stored` options with `given` ones added; a given option replaces a stored one of its name.
pub fn merge_xla_options(
    stored: &[(String, String)],
    given: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = stored
        .iter()
        .filter(|(k, _)| !given.iter().any(|(g, _)| g == k))
        .cloned()
        .collect();
    out.extend(given.iter().cloned());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn given_xla_options_replace_stored_ones_of_the_same_name() {
        let o = |k: &str, v: &str| (k.to_string(), v.to_string());
        let stored = [o("a", "1"), o("b", "2")];
        let merged = merge_xla_options(&stored, &[o("b", "3"), o("c", "4")]);
        assert_eq!(merged, vec![o("a", "1"), o("b", "3"), o("c", "4")]);
    }

    #[test]
    fn a_finding_records_the_xla_options_it_was_found_with() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("finding.json"),
            r#"{"meta": {"xla_options": [["xla_cpu_enable_fast_min_max", "true"]]}}"#,
        )
        .unwrap();
        assert_eq!(
            finding_xla_options(dir.path()).unwrap(),
            vec![(
                "xla_cpu_enable_fast_min_max".to_string(),
                "true".to_string()
            )]
        );
        assert!(finding_xla_options(&dir.path().join("none"))
            .unwrap()
            .is_empty());
    }
}
