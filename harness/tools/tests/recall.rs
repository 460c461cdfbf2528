//! `hlo-diff recall` (`tools::recall`) on real XLA CPU results: a fault in an element the texts
//! give one correct value is proven wrong, an element of a float sum is not counted as unique,
//! and the report states the goals.

mod common;

use tools::recall::{measure, unique_cone, Fault, RecallConfig, Subject};

fn subject(name: &str, text: &str) -> Subject {
    let module = hlo::parse::parse_module(text).unwrap();
    let plain = generators::Config {
        special_value_percent: 0,
        ..generators::Config::default()
    };
    let inputs = generators::generate_inputs_from_seed(&module, 7, &plain);
    Subject {
        name: name.into(),
        module,
        inputs,
    }
}

const ADD: &str = "HloModule add\n\nENTRY main {\n  x = f32[8] parameter(0)\n  y = f32[8] parameter(1)\n  ROOT r = f32[8] add(x, y)\n}\n";
const SUM: &str = "HloModule sum\n\nadd_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY main {\n  x = f32[64] parameter(0)\n  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add_f32\n}\n";

#[test]
fn a_correctly_rounded_element_has_one_value_and_a_float_sum_has_many() {
    let add = hlo::parse::parse_module(ADD).unwrap();
    let sum = hlo::parse::parse_module(SUM).unwrap();
    assert!(unique_cone(&add, add.entry_computation().root));
    assert!(!unique_cone(&sum, sum.entry_computation().root));
}

#[test]
fn faults_in_an_exactly_rounded_add_are_all_proven_and_a_sum_is_not_unique() {
    let Some(xla) = common::xla_cpu() else { return };
    let subjects = vec![subject("add", ADD), subject("sum", SUM)];
    let cfg = RecallConfig {
        count: 0,
        command: "test".into(),
        ..RecallConfig::default()
    };
    let report = measure(&cfg, &subjects, &xla);
    assert_eq!(report.modules, 2, "{report:?}");
    assert_eq!(
        report.baseline.verdicts.get("match"),
        Some(&2),
        "{:?}",
        report.baseline
    );
    let add_faults: Vec<_> = report.faults.iter().filter(|f| f.module == "add").collect();
    assert!(
        add_faults.iter().any(|f| f.fault == Fault::Ulps(1)),
        "no 1-ulp fault injected: {add_faults:?}"
    );
    for f in &add_faults {
        assert!(f.unique, "{f:?}");
        assert!(f.found, "a fault in an exactly rounded add missed: {f:?}");
    }
    let sum_faults: Vec<_> = report.faults.iter().filter(|f| f.module == "sum").collect();
    assert!(!sum_faults.is_empty());
    for f in &sum_faults {
        assert!(!f.unique, "{f:?}");
    }
    let md = report.markdown();
    assert!(md.contains("## Goals") && md.contains("goal 99%"), "{md}");
}
