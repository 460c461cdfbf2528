//! The generators avoid what the semantics table (`hlo::semantics`) leaves
//! implementation-defined where a generated value would then decide nothing: reductions take
//! their reducer's identity as init (`Condition::NotAMonoid`), the Cholesky solve is fed a
//! positive definite matrix and uses only the triangle the factor defines
//! (`NotPositiveDefinite`, `OtherTriangle`). If the table changes, so must these rules.

use hlo::semantics::{implementation_defined, Condition};
use hlo::{Opcode, PrimitiveType};

#[test]
fn the_generators_rules_are_the_tables() {
    for ty in [PrimitiveType::F32, PrimitiveType::S32, PrimitiveType::Pred] {
        assert!(
            implementation_defined(Opcode::Reduce, ty, Condition::NotAMonoid),
            "reductions with another init than the identity would be defined on {ty}: \
             generators/src/ops.rs identity() could draw any init"
        );
    }
    for c in [Condition::NotPositiveDefinite, Condition::OtherTriangle] {
        assert!(
            implementation_defined(Opcode::Cholesky, PrimitiveType::F32, c),
            "{c:?}: generators/src/realistic.rs linear_solve sanitizes and masks for it"
        );
    }
    assert!(implementation_defined(
        Opcode::TriangularSolve,
        PrimitiveType::F32,
        Condition::OtherTriangle
    ));
}
