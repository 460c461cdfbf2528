//! The enclosure: for each output element, the set of results XLA may legitimately return,
//! under all of its freedoms at once. The judge calls a difference a bug only when XLA's value
//! lies outside that set.
//!
//! The oracle evaluates a module once more on sets instead of values (abstract interpretation):
//! every element is a set of numbers (an interval in IEEE's total order, so a set can hold +0
//! without -0) with flags for NaN, or for complex values a set per part and a flag for a complex
//! infinity whose other part is unspecified. Each op encloses every result any legitimate
//! implementation gives for any operands in the sets:
//!
//! - **rounding**: each float result is rounded to nearest in its type, as IEEE 754 rounds;
//!   a product, and any result of a type narrower than f32, is rounded outward, which also
//!   encloses it contracted with the op after it into a fused multiply-add, or computed in a
//!   wider type and rounded later (excess precision);
//! - **reductions, dots and convolutions** in any order, blocking and tree shape, with partial
//!   results in the element type or wider ([`sum`]): a sum's error is bounded by
//!   `gamma(n) * sum |x|`, a partial result may overflow (then meet an infinity or a zero);
//! - **the init value of a reduction** inserted any number of times, none included, when it is
//!   its reducer's identity; any result when it is not (XLA assumes it is);
//! - **flush-to-zero** of subnormal operands and results of float arithmetic;
//! - **approximated functions** off by the ulps measured on XLA CPU (`hlo::semantics`), results they
//!   return exactly kept exact (`crate::variant::exact_result`);
//! - **NaN** of any sign and payload; **complex infinities** with any other part;
//! - **data-dependent ops** (compare, select, clamp, sort, gather and dynamic-slice indices,
//!   conditional and while predicates) take either outcome where the sets allow both.
//!
//! What no rule models is any value of its type ([`Why::UNMODELLED`]): the judge then says the
//! set is too wide to decide, never that XLA is wrong. Each freedom is a switch of
//! [`Freedoms`].

mod arith;
mod eval;
pub(crate) mod format;
mod funcs;
mod linalg;
pub mod set;
mod sum;

pub use eval::{enclose, Elems, EncloseOptions, Enclosure, Freedoms, SetArray};
pub use set::{CSet, FSet, ISet, Why};

/// The measured ulps of XLA CPU's approximated functions (the semantics table's
/// [`hlo::semantics::approximation_ulps`]), for tests and reports.
pub fn max_ulps(op: hlo::Opcode, ty: hlo::PrimitiveType) -> Option<u32> {
    hlo::semantics::approximation_ulps(op, ty)
}
