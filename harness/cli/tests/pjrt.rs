//! The command line with the `pjrt` backend and `.hlo.pb` files: `hlo-diff run` reads an
//! `HloModuleProto` XLA wrote (jaxlib's serialization of a module) and runs it on
//! `interp,xla-cpu,pjrt`; a repro directory holds its module as an `.hlo.pb` too, which XLA
//! reads back; `doctor --json` records the plugin's path, platform and PJRT C API version.
//!
//! Needs the project's Python and the plugin `scripts/setup` installs (or
//! `HLO_DIFF_PJRT_PLUGIN`); fails without them unless `HLO_DIFF_SKIP_XLA=1`.

use std::process::Command;

fn hlo_diff() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hlo-diff"))
}

fn need_pjrt() -> bool {
    test_support::need_pjrt_plugin(&engine::worker::default_pjrt_plugin())
}

const TEXT: &str =
    "HloModule pb_round_trip\n\nENTRY %main (a: f32[3], b: s32[3]) -> (f32[3], s32[3]) {\n  \
    %a = f32[3]{0} parameter(0)\n  %b = s32[3]{0} parameter(1)\n  %n = f32[3]{0} negate(%a)\n  \
    %c = s32[] constant(7)\n  %bc = s32[3]{0} broadcast(%c), dimensions={}\n  \
    %m = s32[3]{0} multiply(%b, %bc)\n  ROOT %t = (f32[3]{0}, s32[3]{0}) tuple(%n, %m)\n}\n";

#[test]
fn an_xla_written_hlo_pb_runs_on_every_route_and_doctor_names_the_plugin() {
    if !need_pjrt() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("m.hlo");
    std::fs::write(&text, TEXT).unwrap();
    let pb = dir.path().join("m.hlo.pb");
    let st = Command::new(test_support::python())
        .args([
            "-c",
            "import sys\nfrom jaxlib import _hlo\n\
             m = _hlo.hlo_module_from_text(open(sys.argv[1]).read())\n\
             open(sys.argv[2], 'wb').write(m.as_serialized_hlo_module_proto())",
        ])
        .arg(&text)
        .arg(&pb)
        .status()
        .unwrap();
    assert!(st.success());
    let out = hlo_diff()
        .args(["run", "--backends", "interp,xla-cpu,pjrt", "--json"])
        .arg(&pb)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(v["verdict"], "match", "{v}");

    // A repro directory holds the module as an .hlo.pb, which XLA reads as the same module.
    let repro = dir.path().join("repro");
    let m = hlo::parse::parse_module(TEXT).unwrap();
    let r = findings::repro::Repro {
        module_text: TEXT.into(),
        module_name: m.name.clone(),
        inputs: generators::generate_inputs_from_seed(&m, 0, &generators::Config::default()),
        ..Default::default()
    };
    findings::repro::write_repro_dir(&repro, &r).unwrap();
    let pb_repro = std::fs::read_dir(&repro)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".hlo.pb"))
        .expect("the repro's .hlo.pb");
    let check = Command::new(test_support::python())
        .args([
            "-c",
            "import sys\nfrom jaxlib import _hlo\n\
             a = _hlo.HloModule.from_serialized_hlo_module_proto(open(sys.argv[1], 'rb').read())\n\
             b = _hlo.hlo_module_from_text(open(sys.argv[2]).read())\n\
             sys.exit(0 if a.to_string() == b.to_string() else 1)",
        ])
        .arg(&pb_repro)
        .arg(&text)
        .status()
        .unwrap();
    assert!(
        check.success(),
        "XLA reads the repro's .hlo.pb as another module"
    );

    let out = hlo_diff().args(["doctor", "--json"]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let p = &v["pjrt"];
    assert!(
        p["plugin"].as_str().is_some_and(|s| s.ends_with(".so")),
        "{v}"
    );
    assert_eq!(p["platform"], "cpu", "{v}");
    assert!(
        p["pjrt_api_version"]
            .as_str()
            .is_some_and(|s| s.starts_with("0.")),
        "{v}"
    );
}
