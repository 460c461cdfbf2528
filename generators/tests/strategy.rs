//! The proptest strategy yields valid modules (verifier + print/parse fixpoint) and shrinks.
#![cfg(feature = "proptest")]

use generators::strategy::{arb_module, arb_module_with_inputs};
use generators::Config;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arb_module_is_valid(m in arb_module(Config::default())) {
        prop_assert!(hlo::verify::verify_module(&m).is_ok());
        let text = hlo::print::module_to_string(&m);
        let back = hlo::parse::parse_module(&text).unwrap();
        prop_assert_eq!(hlo::print::module_to_string(&back), text);
    }

    #[test]
    fn inputs_fit_parameters((m, inputs) in arb_module_with_inputs(Config::default())) {
        let shapes = m.entry_computation().parameter_shapes();
        prop_assert_eq!(inputs.len(), shapes.len());
        for (l, s) in inputs.iter().zip(&shapes) {
            prop_assert!(l.shape().compatible(s));
        }
    }
}
