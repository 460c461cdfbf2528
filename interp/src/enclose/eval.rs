//! The enclosure's evaluation loop: one step per instruction over arrays of sets, values released
//! after their last use, called computations (reducers, comparators, loop bodies, fusions)
//! evaluated on sets like the entry.
//!
//! Data movement reuses the oracle's own code: the op runs on an array of element indices
//! instead of values (the instruction retyped to s64), and the indices it returns pick the sets.
//! Ops XLA has no freedom in (integer and `pred` arithmetic, conversions to integers, random bit
//! generation, sorts of exactly known keys) run as the oracle runs them, on every value each
//! operand's set holds when those are few. Ops no rule models give any value of their type,
//! which the judge reports as too wide to decide, never as a bug.

use super::arith::{self, Dir, Subnormals};
use super::format::{format, Format};
use super::funcs;
use super::set::{le, tmax, tmin, CSet, FSet, ISet, Why};
use super::sum::{accumulation, MaxAcc, ProdAcc, SumAcc};
use crate::eval::{plan, Plan};
use crate::value::{from_bits, product, to_bits, Array, Buffer, Value};
use crate::{attrs, invalid, unsupported, EvalError, EvalOptions, Result};
use hlo::{
    ArrayLiteral, Category, CompId, Instruction, Module, Opcode, PrimitiveType, Scalar, Shape,
    TypeClass,
};
use std::cmp::Ordering;
use std::rc::Rc;
use std::sync::Arc;

/// The freedoms the enclosure grants XLA, each one a switch (all on by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Freedoms {
    /// Subnormal operands of float arithmetic read as zero and subnormal results flushed to zero
    /// (XLA CPU runs with the CPU's denormals-are-zero and flush-to-zero modes; its constant
    /// folding does not).
    pub flush_denormals: bool,
    /// Reductions, dots and convolutions combine in any order, blocking and tree shape (XLA:
    /// "the evaluation order of the reduction function is arbitrary"); off: in row-major order.
    pub any_order: bool,
    /// A reduction's init value may be inserted any number of times, none included (XLA: "it
    /// may be inserted anywhere during computation by the back-end"; algsimp drops it,
    /// assuming it is an identity); off: exactly once.
    pub init_anywhere: bool,
    /// Approximated functions may be off by the ulps measured on XLA CPU; off: correctly
    /// rounded.
    pub approximations: bool,
}

impl Default for Freedoms {
    fn default() -> Self {
        Freedoms {
            flush_denormals: true,
            any_order: true,
            init_anywhere: true,
            approximations: true,
        }
    }
}

/// Limits and freedoms of an enclosure.
#[derive(Clone, Debug, PartialEq)]
pub struct EncloseOptions {
    /// Instructions evaluated, counting those inside called computations.
    pub max_steps: u64,
    /// Bytes of live sets.
    pub max_bytes: u64,
    pub freedoms: Freedoms,
    /// The elements the caller will look at, per output leaf of the entry computation's root
    /// (`None`: every element of that leaf). A contraction whose result reaches an output only
    /// elementwise computes the looked-at elements alone; every other element of the
    /// enclosure is then the unbounded set, and means nothing.
    pub demand: Option<Vec<Option<Vec<usize>>>>,
}

impl Default for EncloseOptions {
    fn default() -> Self {
        EncloseOptions {
            max_steps: 50_000_000,
            max_bytes: 4 << 30,
            freedoms: Freedoms::default(),
            demand: None,
        }
    }
}

/// The sets of an array's elements, by element kind.
#[derive(Clone, Debug, PartialEq)]
pub enum Elems {
    F(Vec<FSet>),
    I(Vec<ISet>),
    C(Vec<CSet>),
}

impl Elems {
    pub fn len(&self) -> usize {
        match self {
            Elems::F(v) => v.len(),
            Elems::I(v) => v.len(),
            Elems::C(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn take(&self, idx: &[usize]) -> Elems {
        match self {
            Elems::F(v) => Elems::F(idx.iter().map(|&i| v[i]).collect()),
            Elems::I(v) => Elems::I(idx.iter().map(|&i| v[i]).collect()),
            Elems::C(v) => Elems::C(idx.iter().map(|&i| v[i]).collect()),
        }
    }

    fn concat(parts: &[&Elems]) -> Option<Elems> {
        let mut out = match parts.first()? {
            Elems::F(_) => Elems::F(Vec::new()),
            Elems::I(_) => Elems::I(Vec::new()),
            Elems::C(_) => Elems::C(Vec::new()),
        };
        for p in parts {
            match (&mut out, p) {
                (Elems::F(o), Elems::F(v)) => o.extend_from_slice(v),
                (Elems::I(o), Elems::I(v)) => o.extend_from_slice(v),
                (Elems::C(o), Elems::C(v)) => o.extend_from_slice(v),
                _ => return None,
            }
        }
        Some(out)
    }

    fn bytes(&self) -> u64 {
        let n = self.len() as u64;
        match self {
            Elems::F(_) => n * std::mem::size_of::<FSet>() as u64,
            Elems::I(_) => n * std::mem::size_of::<ISet>() as u64,
            Elems::C(_) => n * std::mem::size_of::<CSet>() as u64,
        }
    }
}

/// An array of sets.
#[derive(Clone, Debug, PartialEq)]
pub struct SetArray {
    pub ty: PrimitiveType,
    pub dims: Vec<usize>,
    pub elems: Elems,
}

/// The range of an integer type (`pred`: 0 and 1).
pub(crate) fn int_range(ty: PrimitiveType) -> (i128, i128) {
    if ty == PrimitiveType::Pred {
        return (0, 1);
    }
    let b = ty.bit_width();
    if ty.is_signed_integer() {
        (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
    } else {
        (0, (1i128 << b) - 1)
    }
}

/// Whether `i` computes values of an element type the enclosure does not model: f8e8m0fnu
/// (no zero, no negatives) and f4e2m1fn (no NaN, no infinities), whose conversions XLA does in
/// software with results of its own. Moving their values (and exact operands of exact ops) is
/// still modelled.
fn produces_unmodelled_type(i: &Instruction) -> bool {
    use Opcode as O;
    if matches!(
        i.opcode,
        O::Parameter
            | O::Constant
            | O::Tuple
            | O::GetTupleElement
            | O::Copy
            | O::Broadcast
            | O::Reshape
            | O::Transpose
            | O::Slice
            | O::Concatenate
            | O::Pad
            | O::Reverse
            | O::DynamicSlice
            | O::DynamicUpdateSlice
            | O::Bitcast
            | O::Gather
            | O::Iota
            | O::BitcastConvert
            | O::Call
            | O::Fusion
            | O::While
            | O::Conditional
            | O::OptimizationBarrier
            | O::Select
            | O::Sort
    ) {
        return false;
    }
    i.shape
        .leaves()
        .iter()
        .any(|l| matches!(l.ty, PrimitiveType::F8E8M0FNU | PrimitiveType::F4E2M1FN))
}

/// Whether float type `ty` has a negative zero (the fnuz types and f8e8m0fnu do not).
fn has_negative_zero(ty: PrimitiveType) -> bool {
    use PrimitiveType as T;
    !matches!(
        ty,
        T::F8E4M3FNUZ | T::F8E5M2FNUZ | T::F8E4M3B11FNUZ | T::F8E8M0FNU
    )
}

/// The integer an element of `ty` with these (zero-extended) bits holds.
fn int_of_bits(ty: PrimitiveType, bits: u128) -> i128 {
    let w = ty.bit_width();
    let b = if w >= 128 {
        bits
    } else {
        bits & ((1u128 << w) - 1)
    };
    if ty.is_signed_integer() && w < 128 && b >> (w - 1) & 1 == 1 {
        b as i128 - (1i128 << w)
    } else {
        b as i128
    }
}

fn bits_of_int(ty: PrimitiveType, v: i128) -> u128 {
    let w = ty.bit_width();
    (v as u128)
        & if w >= 128 {
            u128::MAX
        } else {
            (1u128 << w) - 1
        }
}

impl SetArray {
    pub fn len(&self) -> usize {
        self.elems.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Any value of the type.
    pub fn top(ty: PrimitiveType, dims: Vec<usize>, why: Why) -> Result<SetArray> {
        let n = dims.iter().product();
        let elems = match ty.class() {
            TypeClass::Float => Elems::F(vec![FSet::top(why); n]),
            TypeClass::Complex => Elems::C(vec![CSet::top(why); n]),
            TypeClass::Signed | TypeClass::Unsigned | TypeClass::Pred => {
                let (lo, hi) = int_range(ty);
                let s = if why.has(Why::UNDEFINED) {
                    ISet::undefined(ty, why)
                } else {
                    ISet::range(lo, hi).because(why)
                };
                Elems::I(vec![s; n])
            }
            TypeClass::Other => return Err(unsupported(format!("sets of {ty}"))),
        };
        Ok(SetArray { ty, dims, elems })
    }

    /// Exactly the values of `a`.
    pub fn exact(a: &Array) -> Result<SetArray> {
        let elems = match a.ty.class() {
            TypeClass::Float => Elems::F(
                crate::elementwise::to_f64s(&a.buf)
                    .into_iter()
                    .map(FSet::point)
                    .collect(),
            ),
            TypeClass::Complex => Elems::C(
                crate::elementwise::to_c64s(&a.buf)
                    .into_iter()
                    .map(|z| CSet::point(z.re, z.im))
                    .collect(),
            ),
            TypeClass::Signed | TypeClass::Unsigned | TypeClass::Pred => Elems::I(
                to_bits(&a.buf)
                    .into_iter()
                    .map(|b| ISet::point(int_of_bits(a.ty, b)))
                    .collect(),
            ),
            TypeClass::Other => return Err(unsupported(format!("sets of {}", a.ty))),
        };
        Ok(SetArray {
            ty: a.ty,
            dims: a.dims.clone(),
            elems,
        })
    }

    /// The array of its values when every element is one exactly known value (a NaN's bits
    /// are never known: NaN is not exact).
    pub fn to_exact(&self) -> Option<Array> {
        let buf = match &self.elems {
            Elems::F(v) => {
                if !v.iter().all(|s| s.is_point()) {
                    return None;
                }
                let f = Array::new(
                    PrimitiveType::F64,
                    self.dims.clone(),
                    Buffer::F64(v.iter().map(|s| s.lo).collect()),
                );
                return crate::convert::convert(&f, self.ty).ok();
            }
            Elems::C(v) => {
                if !v.iter().all(|s| s.is_point()) {
                    return None;
                }
                let f = Array::new(
                    PrimitiveType::C128,
                    self.dims.clone(),
                    Buffer::C128(
                        v.iter()
                            .map(|s| num_complex::Complex64::new(s.re.lo, s.im.lo))
                            .collect(),
                    ),
                );
                return crate::convert::convert(&f, self.ty).ok();
            }
            Elems::I(v) => {
                if !v.iter().all(|s| s.is_point()) {
                    return None;
                }
                let bits: Vec<u128> = v.iter().map(|s| bits_of_int(self.ty, s.lo)).collect();
                from_bits(self.ty, &bits).ok()?
            }
        };
        Some(Array::new(self.ty, self.dims.clone(), buf))
    }

    fn floats(&self) -> Result<&[FSet]> {
        match &self.elems {
            Elems::F(v) => Ok(v),
            _ => Err(invalid("expected a float operand")),
        }
    }

    fn ints(&self) -> Result<&[ISet]> {
        match &self.elems {
            Elems::I(v) => Ok(v),
            _ => Err(invalid("expected an integer operand")),
        }
    }

    /// Whether element `k` holds the value `v` (an element of the same type's literal).
    pub fn holds(&self, k: usize, v: Scalar) -> bool {
        match (&self.elems, v) {
            // A type without -0 (the fnuz types) reads either zero as its one zero.
            (Elems::F(s), Scalar::F(x)) if x == 0.0 && !has_negative_zero(self.ty) => {
                s[k].contains(0.0) || s[k].contains(-0.0)
            }
            (Elems::F(s), Scalar::F(x)) => s[k].contains(x),
            (Elems::I(s), Scalar::S(x)) => s[k].contains(x as i128),
            (Elems::I(s), Scalar::U(x)) => s[k].contains(x as i128),
            (Elems::I(s), Scalar::Pred(b)) => s[k].contains(b as i128),
            (Elems::C(s), Scalar::C(re, im)) => s[k].contains(re, im),
            _ => false,
        }
    }

    /// The freedoms that widened element `k`.
    pub fn why(&self, k: usize) -> Why {
        match &self.elems {
            Elems::F(s) => s[k].why,
            Elems::I(s) => s[k].why,
            Elems::C(s) => s[k].why(),
        }
    }

    /// Element `k`'s set, for humans: `[lo, hi]`, `NaN`, `[lo, hi] or NaN`, ...
    pub fn describe(&self, k: usize) -> String {
        fn f(s: &FSet) -> String {
            let mut parts: Vec<String> = Vec::new();
            for (lo, hi) in s.pieces() {
                parts.push(if lo.to_bits() == hi.to_bits() {
                    format!("{lo:e}")
                } else {
                    format!("[{lo:e}, {hi:e}]")
                });
            }
            if s.nan {
                parts.push(match s.nan_sign {
                    Some(true) => "-NaN".into(),
                    Some(false) => "+NaN".into(),
                    None => "NaN".into(),
                });
            }
            if parts.is_empty() {
                "nothing".into()
            } else {
                parts.join(" or ")
            }
        }
        match &self.elems {
            Elems::F(s) => f(&s[k]),
            Elems::I(s) if s[k].is_point() => format!("{}", s[k].lo),
            Elems::I(s) => format!("[{}, {}]", s[k].lo, s[k].hi),
            Elems::C(s) => {
                let c = &s[k];
                let base = format!("({}, {})", f(&c.re), f(&c.im));
                if c.inf {
                    format!("{base} or any complex infinity")
                } else {
                    base
                }
            }
        }
    }

    /// Whether element `k` could be any value of its type (nothing bounds it).
    pub fn is_unbounded(&self, k: usize) -> bool {
        match &self.elems {
            Elems::F(s) => {
                s[k].nan && s[k].num && s[k].lo == f64::NEG_INFINITY && s[k].hi == f64::INFINITY
            }
            Elems::I(s) => {
                let (lo, hi) = int_range(self.ty);
                s[k].lo <= lo && s[k].hi >= hi
            }
            Elems::C(s) => {
                s[k].inf
                    && s[k].re.nan
                    && s[k].re.lo == f64::NEG_INFINITY
                    && s[k].re.hi == f64::INFINITY
            }
        }
    }
}

/// A value of sets: an array, a tuple or a token.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum SetValue {
    Array(Arc<SetArray>),
    Tuple(Vec<SetValue>),
    Token,
}

impl SetValue {
    fn array(a: SetArray) -> SetValue {
        SetValue::Array(Arc::new(a))
    }

    fn bytes(&self) -> u64 {
        match self {
            SetValue::Array(a) => a.elems.bytes(),
            SetValue::Tuple(t) => t.iter().map(|v| v.bytes()).sum(),
            SetValue::Token => 0,
        }
    }

    fn from_value(v: &Value) -> Result<SetValue> {
        Ok(match v {
            Value::Array(a) => SetValue::array(SetArray::exact(a)?),
            Value::Tuple(t) => {
                SetValue::Tuple(t.iter().map(SetValue::from_value).collect::<Result<_>>()?)
            }
            Value::Token => SetValue::Token,
        })
    }

    /// The exact value, when every element of every leaf is exactly known.
    fn to_exact(&self) -> Option<Value> {
        Some(match self {
            SetValue::Array(a) => Value::array(a.to_exact()?),
            SetValue::Tuple(t) => {
                Value::Tuple(t.iter().map(|v| v.to_exact()).collect::<Option<_>>()?)
            }
            SetValue::Token => Value::Token,
        })
    }

    /// Any value of `shape`.
    fn top(shape: &Shape, why: Why) -> Result<SetValue> {
        Ok(match shape {
            Shape::Array(a) => {
                let dims = a.dims.iter().map(|&d| d.max(0) as usize).collect();
                SetValue::array(SetArray::top(a.ty, dims, why)?)
            }
            Shape::Tuple(t) => SetValue::Tuple(
                t.iter()
                    .map(|s| SetValue::top(s, why))
                    .collect::<Result<_>>()?,
            ),
            _ => SetValue::Token,
        })
    }

    /// Element-wise hull of two values of the same shape.
    fn hull(&self, o: &SetValue) -> Result<SetValue> {
        Ok(match (self, o) {
            (SetValue::Array(a), SetValue::Array(b)) => {
                let elems = match (&a.elems, &b.elems) {
                    (Elems::F(x), Elems::F(y)) if x.len() == y.len() => {
                        Elems::F(x.iter().zip(y).map(|(p, q)| p.hull(*q)).collect())
                    }
                    (Elems::I(x), Elems::I(y)) if x.len() == y.len() => {
                        Elems::I(x.iter().zip(y).map(|(p, q)| p.hull(*q)).collect())
                    }
                    (Elems::C(x), Elems::C(y)) if x.len() == y.len() => {
                        Elems::C(x.iter().zip(y).map(|(p, q)| p.hull(*q)).collect())
                    }
                    _ => return Err(invalid("values of different shapes")),
                };
                SetValue::array(SetArray {
                    ty: a.ty,
                    dims: a.dims.clone(),
                    elems,
                })
            }
            (SetValue::Tuple(x), SetValue::Tuple(y)) if x.len() == y.len() => SetValue::Tuple(
                x.iter()
                    .zip(y)
                    .map(|(p, q)| p.hull(q))
                    .collect::<Result<_>>()?,
            ),
            (SetValue::Token, SetValue::Token) => SetValue::Token,
            _ => return Err(invalid("values of different shapes")),
        })
    }

    fn leaves(&self, out: &mut Vec<SetArray>) {
        match self {
            SetValue::Array(a) => out.push((**a).clone()),
            SetValue::Tuple(t) => t.iter().for_each(|v| v.leaves(out)),
            SetValue::Token => {}
        }
    }

    /// Whether some element's set was widened by an op without a rule.
    fn has_unmodelled(&self) -> bool {
        match self {
            SetValue::Array(a) => (0..a.len()).any(|k| a.why(k).has(Why::UNMODELLED)),
            SetValue::Tuple(t) => t.iter().any(SetValue::has_unmodelled),
            SetValue::Token => false,
        }
    }
}

fn sarr(v: &SetValue) -> Result<&Arc<SetArray>> {
    match v {
        SetValue::Array(a) => Ok(a),
        _ => Err(invalid("operand is not an array")),
    }
}

/// The sets of an entry computation's results, one per leaf (tuples flattened as XLA does).
#[derive(Clone, Debug, PartialEq)]
pub struct Enclosure {
    pub leaves: Vec<SetArray>,
    /// The ops whose sets are unbounded for want of a rule (`opcode type`, e.g. `fft c64`):
    /// each the first instruction on its path whose result an op without a rule widened
    /// (what the coverage report names, and what keeps a verdict `unproven`).
    pub unmodelled: std::collections::BTreeSet<String>,
}

impl Enclosure {
    /// The elements of `actual` (leaf `leaf` of a backend's result) outside their sets.
    pub fn outside(&self, leaf: usize, actual: &ArrayLiteral) -> Vec<usize> {
        let Some(s) = self.leaves.get(leaf) else {
            return Vec::new();
        };
        if s.ty != actual.ty || s.len() != actual.len() {
            return Vec::new();
        }
        (0..s.len())
            .filter(|&k| !s.holds(k, actual.get(k)))
            .collect()
    }
}

/// The set of results XLA may legitimately return for `module` on `args`, element by element.
pub fn enclose(
    module: &Module,
    args: &[hlo::Literal],
    opts: &EncloseOptions,
) -> std::result::Result<Enclosure, EvalError> {
    let run = || -> Result<Enclosure> {
        if module.entry >= module.computations.len() {
            return Err(invalid("module has no entry computation"));
        }
        let vals = args
            .iter()
            .map(|l| Value::from_literal(l).and_then(|v| SetValue::from_value(&v)))
            .collect::<Result<Vec<_>>>()?;
        let mut ctx = Ctx {
            module,
            opts: opts.clone(),
            steps: 0,
            live: 0,
            plans: vec![None; module.computations.len()],
            depth: 0,
            oracle: EvalOptions {
                max_steps: opts.max_steps,
                ..EvalOptions::default()
            },
            entry_demand: Vec::new(),
            demanded: None,
            unmodelled: std::collections::BTreeSet::new(),
        };
        if let Some(d) = &opts.demand {
            let order = ctx.get_plan(module.entry)?;
            ctx.entry_demand = entry_demand(module, &order.order, d);
        }
        let entry = module.entry_computation();
        if entry.parameters().len() != vals.len() {
            return Err(invalid(format!(
                "entry computation takes {} parameters, given {}",
                entry.parameters().len(),
                vals.len()
            )));
        }
        let out = ctx.call(module.entry, vals)?;
        let mut leaves = Vec::new();
        out.leaves(&mut leaves);
        Ok(Enclosure {
            leaves,
            unmodelled: ctx.unmodelled,
        })
    };
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(run)) {
        Ok(r) => r,
        Err(p) => Err(EvalError::Internal {
            why: p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "panic".into()),
        }),
    }
}

struct Ctx<'m> {
    module: &'m Module,
    /// See [`Enclosure::unmodelled`].
    unmodelled: std::collections::BTreeSet<String>,
    opts: EncloseOptions,
    steps: u64,
    live: u64,
    plans: Vec<Option<Rc<Plan>>>,
    depth: usize,
    /// The oracle's options for the exact fallback.
    oracle: EvalOptions,
    /// Per instruction of the entry computation, the elements of its result looked at, when
    /// fewer than all ([`entry_demand`]).
    entry_demand: Vec<Option<Rc<Vec<usize>>>>,
    /// The demand of the instruction being evaluated (set for the entry computation only).
    demanded: Option<Rc<Vec<usize>>>,
}

/// How many combinations of operand values an op on integer sets is run on before a range rule
/// (or any value) stands in.
const ENUMERATE: u128 = 64;

/// At most this many enumerated combinations in one integer op, all elements together (the
/// candidate arrays' memory); elements past it take the op's rule.
const ENUMERATE_TOTAL: usize = 1 << 20;

impl<'m> Ctx<'m> {
    fn step(&mut self, n: u64) -> Result<()> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > self.opts.max_steps {
            return Err(EvalError::Budget {
                what: format!("more than {} enclosure steps", self.opts.max_steps),
            });
        }
        Ok(())
    }

    fn sub(&self, op: Opcode, ty: PrimitiveType) -> Subnormals {
        if !self.opts.freedoms.flush_denormals {
            return Subnormals {
                daz: false,
                ftz: false,
            };
        }
        let comp = ty.complex_component().unwrap_or(ty);
        // Whether the semantics table grants flush-to-zero for the op: ops that move or
        // relabel bits do not flush (measured on XLA CPU, see `crate::variant::flush_operand`);
        // conversions flush their results only.
        let moves = !hlo::semantics::row_for(op, ty)
            .is_none_or(|r| r.freedoms.contains(&hlo::semantics::Freedom::FlushToZero));
        use PrimitiveType as T;
        Subnormals {
            daz: !moves
                && op != Opcode::Convert
                && (matches!(comp, T::Bf16 | T::F32 | T::F64) || comp.bit_width() <= 8),
            ftz: !moves && matches!(comp, T::Bf16 | T::F16 | T::F32 | T::F64),
        }
    }

    fn ulps(&self, op: Opcode, ty: PrimitiveType) -> Option<u32> {
        if !self.opts.freedoms.approximations {
            return Some(0);
        }
        hlo::semantics::approximation_ulps(op, ty)
    }

    /// A complex op's normwise error (`None`: not modelled), 0 without the approximations
    /// freedom.
    fn normwise_ulps(&self, op: Opcode, ty: PrimitiveType) -> Option<u32> {
        hlo::semantics::normwise_ulps(op, ty).map(|u| {
            if self.opts.freedoms.approximations {
                u
            } else {
                0
            }
        })
    }

    fn get_plan(&mut self, c: CompId) -> Result<Rc<Plan>> {
        if let Some(p) = &self.plans[c] {
            return Ok(p.clone());
        }
        let p = Rc::new(plan(self.module, c)?);
        self.plans[c] = Some(p.clone());
        Ok(p)
    }

    fn call(&mut self, c: CompId, args: Vec<SetValue>) -> Result<SetValue> {
        let module = self.module;
        let comp = module
            .computations
            .get(c)
            .ok_or_else(|| invalid(format!("called computation {c} does not exist")))?;
        if self.depth > 200 {
            return Err(EvalError::Budget {
                what: "computation calls nested deeper than 200".into(),
            });
        }
        let plan = self.get_plan(c)?;
        let mut env: Vec<Option<SetValue>> = vec![None; comp.instructions.len()];
        let mut env_bytes = 0u64;
        let at_entry = self.depth == 0 && c == module.entry;
        self.depth += 1;
        let result = (|| {
            for (k, &id) in plan.order.iter().enumerate() {
                let instr = &comp.instructions[id];
                self.step(1)?;
                let v = if instr.opcode == Opcode::Parameter {
                    let p = instr.parameter_number.unwrap_or(-1);
                    usize::try_from(p)
                        .ok()
                        .and_then(|p| args.get(p))
                        .cloned()
                        .ok_or_else(|| invalid(format!("parameter({p}) has no argument")))?
                } else {
                    let ops: Vec<&SetValue> = instr
                        .operands
                        .iter()
                        .map(|&o| env[o].as_ref().expect("operand evaluated before use"))
                        .collect();
                    self.demanded = if at_entry {
                        self.entry_demand.get(id).cloned().flatten()
                    } else {
                        None
                    };
                    let inner = self.unmodelled.len();
                    let v = self.eval_instr(comp, instr, &ops).map_err(|e| match e {
                        EvalError::Invalid { instr: s, why } if s.is_empty() => {
                            EvalError::Invalid {
                                instr: format!("{} ({})", instr.name, instr.opcode.name()),
                                why,
                            }
                        }
                        e => e,
                    })?;
                    let v = if produces_unmodelled_type(instr) {
                        SetValue::top(&instr.shape, Why::UNMODELLED)?
                    } else {
                        v
                    };
                    // The first op on a path whose set lost its bound (not one that only
                    // carries an operand's, nor a call whose inner op was named already).
                    if self.unmodelled.len() == inner
                        && v.has_unmodelled()
                        && !ops.iter().any(|o| o.has_unmodelled())
                    {
                        let ty = instr
                            .shape
                            .leaves()
                            .first()
                            .map_or(String::new(), |a| a.ty.to_string());
                        self.unmodelled
                            .insert(format!("{} {ty}", instr.opcode.name()).trim().to_string());
                    }
                    v
                };
                let v = if produces_unmodelled_type(instr) {
                    SetValue::top(&instr.shape, Why::UNMODELLED)?
                } else {
                    v
                };
                let b = v.bytes();
                env_bytes += b;
                self.live += b;
                if self.live > self.opts.max_bytes {
                    return Err(EvalError::Budget {
                        what: format!("sets of more than {} bytes", self.opts.max_bytes),
                    });
                }
                env[id] = Some(v);
                for &d in &plan.release[k] {
                    if let Some(v) = env[d].take() {
                        let b = v.bytes();
                        env_bytes -= b;
                        self.live -= b;
                    }
                }
            }
            env[comp.root]
                .take()
                .ok_or_else(|| invalid("root was not evaluated"))
        })();
        self.live -= env_bytes.min(self.live);
        self.depth -= 1;
        result
    }

    /// `i` run by the oracle on the exact values of `ops`, when each is exactly known.
    fn exactly(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
    ) -> Result<Option<SetValue>> {
        let Some(vals) = exact_values(ops) else {
            return Ok(None);
        };
        let refs: Vec<&Value> = vals.iter().collect();
        let v = crate::eval::eval_one(self.module, &self.oracle, comp, i, &refs)?;
        Ok(Some(SetValue::from_value(&v)?))
    }

    fn eval_instr(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
    ) -> Result<SetValue> {
        use Opcode as O;
        let a = |k: usize| -> Result<&Arc<SetArray>> {
            sarr(ops.get(k).ok_or_else(|| invalid("missing operand"))?)
        };
        // An op the semantics table leaves implementation-defined on these types: any value.
        if let Some(result) = i.shape.as_array().map(|s| s.ty) {
            let operand = ops.first().and_then(|v| sarr(v).ok()).map(|a| a.ty);
            if hlo::semantics::row_of(i.opcode, operand, result)
                .is_some_and(|r| r.rule == hlo::semantics::Rule::ImplementationDefined)
            {
                return SetValue::top(&i.shape, Why::UNDEFINED);
            }
        }
        Ok(match i.opcode {
            O::Constant => match &i.constant {
                Some(hlo::Constant::Literal(l)) => SetValue::from_value(&Value::from_literal(l)?)?,
                Some(hlo::Constant::Elided) => {
                    return Err(unsupported("constant elided from the dump ({...})"))
                }
                None => return Err(invalid("constant without a value")),
            },
            O::Tuple => SetValue::Tuple(ops.iter().map(|v| (*v).clone()).collect()),
            O::GetTupleElement => {
                let idx = attrs::req_int(i, "index")?;
                match ops.first() {
                    Some(SetValue::Tuple(t)) => usize::try_from(idx)
                        .ok()
                        .and_then(|k| t.get(k))
                        .cloned()
                        .ok_or_else(|| invalid(format!("tuple index {idx} out of range")))?,
                    _ => return Err(invalid("get-tuple-element of a non-tuple")),
                }
            }
            O::Copy | O::OptimizationBarrier | O::Domain | O::AddDependency => ops
                .first()
                .map(|v| (*v).clone())
                .ok_or_else(|| invalid("missing operand"))?,
            O::AfterAll => SetValue::Token,
            O::Call | O::Fusion => {
                let c = attrs::comp(
                    i,
                    if i.opcode == O::Call {
                        "to_apply"
                    } else {
                        "calls"
                    },
                )?;
                self.call(c, ops.iter().map(|v| (*v).clone()).collect())?
            }
            O::While => self.while_loop(i, ops)?,
            O::Conditional => self.conditional(i, ops)?,
            O::Map => self.map(i, ops)?,
            O::Scan => self.scan(i, ops)?,
            op if op.category() == Category::ElementwiseUnary => {
                SetValue::array(self.unary(i, &**a(0)?)?)
            }
            O::Compare => SetValue::array(self.compare(i, &**a(0)?, &**a(1)?)?),
            op if op.category() == Category::ElementwiseBinary => {
                SetValue::array(self.binary(i, &**a(0)?, &**a(1)?)?)
            }
            O::Select => SetValue::array(select(&**a(0)?, &**a(1)?, &**a(2)?)?),
            O::Clamp => SetValue::array(self.clamp(&**a(0)?, &**a(1)?, &**a(2)?)?),
            O::Convert => SetValue::array(self.convert(i, &**a(0)?)?),
            O::Iota if i.shape.as_array().is_some_and(|a| a.ty.is_float()) => {
                let n = i.shape.as_array().map_or(0, |a| {
                    a.dims
                        .iter()
                        .fold(1u64, |n, &d| n.saturating_mul(d.max(0) as u64))
                });
                self.step(n)?;
                SetValue::array(float_iota(i)?)
            }
            O::Iota => {
                let v = self
                    .exactly(comp, i, ops)?
                    .ok_or_else(|| invalid("iota takes no operands"))?;
                int_iota_overflow(i, v)?
            }
            O::BitcastConvert | O::RngBitGenerator | O::GetDimensionSize => {
                match self.exactly(comp, i, ops)? {
                    Some(v) => v,
                    None => SetValue::top(&i.shape, Why::NAN_BITS | Why::UNMODELLED)?,
                }
            }
            O::ReducePrecision => SetValue::array(reduce_precision(i, &**a(0)?)?),
            O::Broadcast
            | O::Reshape
            | O::Transpose
            | O::Slice
            | O::Concatenate
            | O::Pad
            | O::Reverse
            | O::DynamicSlice
            | O::DynamicUpdateSlice
            | O::Bitcast
            | O::Gather
            | O::SetDimensionSize
            | O::DynamicReshape => self.move_data(comp, i, ops)?,
            O::Reduce => self.reduce(i, ops, false)?,
            O::ReduceWindow => self.reduce(i, ops, true)?,
            O::Dot => SetValue::array(self.dot(i, &**a(0)?, &**a(1)?)?),
            O::Convolution => SetValue::array(self.convolution(i, &**a(0)?, &**a(1)?)?),
            O::Scatter => self.scatter(comp, i, ops)?,
            O::SelectAndScatter => self.select_and_scatter(comp, i, ops)?,
            O::Sort => self.sort(comp, i, ops)?,
            O::TopK => match self.exactly(comp, i, ops)? {
                Some(v) => v,
                None => topk_sets(i, &**a(0)?)?,
            },
            O::PartitionId | O::ReplicaId => {
                let (ty, dims) = out_dims(i)?;
                SetValue::array(SetArray::exact(&Array::zeros(ty, dims)?)?)
            }
            O::Fft => SetValue::array(self.fft(i, &**a(0)?)?),
            O::Cholesky => self.cholesky(comp, i, ops, None)?,
            O::TriangularSolve => self.triangular_solve(comp, i, ops, None)?,
            O::CustomCall => self.custom_call(comp, i, ops)?,
            O::Parameter => unreachable!("parameters are bound by the caller"),
            // Custom calls (library and LAPACK calls), fft, cholesky, triangular-solve and
            // anything else: not modelled, so any value of the shape.
            _ => SetValue::top(&i.shape, Why::UNMODELLED)?,
        })
    }

    /// fft by its normwise error bound (the semantics table's fft row): each output within
    /// `r` of the exact transform of the operand's midpoints, in each part, where `r` bounds a
    /// Cooley-Tukey FFT's error relative to the result's 2-norm (Higham, Accuracy and
    /// Stability of Numerical Algorithms, Thm 24.2: `log2(n) * eta`, `eta` about 7 unit
    /// roundoffs with accurate twiddle factors; taken as 16 per level, and lengths that are
    /// not powers of two as a Bluestein transform of three FFTs of the next power of two above
    /// `2n - 1`), plus the operand's own uncertainty (every DFT weight has modulus 1), the
    /// oracle's f64 direct sum, and a flushed subnormal. A batch with a NaN or an infinity in
    /// its operand is any value.
    fn fft(&mut self, i: &Instruction, x: &SetArray) -> Result<SetArray> {
        let kind = attrs::word(i, "fft_type").ok_or_else(|| invalid("fft without fft_type"))?;
        let len = attrs::dims(i, "fft_length")?;
        let n: f64 = len.iter().map(|&d| d as f64).product();
        self.step((x.len() as u64).saturating_mul(n as u64) / 4)?;
        // The operand's midpoints (f64 / c128), half-widths and finiteness.
        let part = |s: &FSet| -> Option<(f64, f64)> {
            if s.nan || s.pinf || s.ninf {
                return None;
            }
            let (lo, hi) = s.extent()?;
            (lo.is_finite() && hi.is_finite()).then(|| (0.5 * lo + 0.5 * hi, 0.5 * (hi - lo)))
        };
        let mut finite = Vec::with_capacity(x.len());
        let mut radius = Vec::with_capacity(x.len());
        let mid = match &x.elems {
            Elems::F(v) => {
                let mut m = Vec::with_capacity(v.len());
                for s in v {
                    let p = part(s);
                    finite.push(p.is_some());
                    radius.push(p.map_or(0.0, |p| p.1));
                    m.push(p.map_or(0.0, |p| p.0));
                }
                Array::new(PrimitiveType::F64, x.dims.clone(), Buffer::F64(m))
            }
            Elems::C(v) => {
                let mut m = Vec::with_capacity(v.len());
                for c in v {
                    let (re, im) = (part(&c.re), part(&c.im));
                    let ok = !c.inf && re.is_some() && im.is_some();
                    finite.push(ok);
                    radius.push(match (re, im) {
                        (Some(a), Some(b)) => a.1.hypot(b.1),
                        _ => 0.0,
                    });
                    m.push(num_complex::Complex64::new(
                        re.map_or(0.0, |p| p.0),
                        im.map_or(0.0, |p| p.0),
                    ));
                }
                Array::new(PrimitiveType::C128, x.dims.clone(), Buffer::C128(m))
            }
            Elems::I(_) => return Err(invalid("fft of an integer operand")),
        };
        let (ty, dims, values) = crate::fft::fft_unrounded(i, &mid)?;
        let part_ty = funcs::part_type(ty);
        let fmt = fmt_of(part_ty)?;
        let u = fmt.unit_roundoff();
        // The operand's batches: everything before the transformed dimensions.
        let in_per: usize = x.dims[x.dims.len().saturating_sub(len.len())..]
            .iter()
            .product::<usize>()
            .max(1);
        let out_len: usize = dims.iter().product();
        let batches = (x.len() / in_per).max(1);
        let out_per = (out_len / batches).max(1);
        let levels: f64 = len
            .iter()
            .map(|&d| {
                let d = d.max(1) as u64;
                if d.is_power_of_two() {
                    (d as f64).log2()
                } else {
                    3.0 * ((2 * d - 1).next_power_of_two() as f64).log2() + 4.0
                }
            })
            .sum::<f64>()
            .max(1.0);
        let inverse = matches!(kind.as_str(), "IFFT" | "IRFFT");
        let hermitian = if kind == "IRFFT" { 2f64.sqrt() } else { 1.0 };
        let weight = if inverse { 1.0 / n.max(1.0) } else { 1.0 };
        let mut r_batch = Vec::with_capacity(batches);
        let mut ok_batch = Vec::with_capacity(batches);
        let mid_parts = crate::elementwise::to_c64s(&mid.buf);
        for b in 0..batches {
            let span = b * in_per..((b + 1) * in_per).min(mid_parts.len());
            let norm2 = mid_parts[span.clone()]
                .iter()
                .map(|z| z.norm_sqr())
                .sum::<f64>()
                .sqrt()
                * hermitian;
            let norm1: f64 = mid_parts[span.clone()].iter().map(|z| z.norm()).sum();
            let spread: f64 = radius[span.clone()].iter().sum();
            ok_batch.push(finite[span].iter().all(|&f| f));
            let result_norm = if inverse {
                norm2 / n.max(1.0).sqrt()
            } else {
                norm2 * n.sqrt()
            };
            let r = 16.0 * levels * u * result_norm
                + (spread + n * f64::EPSILON * norm1) * weight * hermitian
                + fmt.min_normal;
            r_batch.push(r);
        }
        let around =
            |c: f64, r: f64| round_set(fmt, FSet::range(c - r, c + r)).because(Why::ERROR_BOUND);
        let elems = match values {
            crate::fft::Unrounded::Complex(v) => Elems::C(
                v.iter()
                    .enumerate()
                    .map(|(k, z)| {
                        let b = (k / out_per).min(batches - 1);
                        if !ok_batch[b] {
                            return CSet::top(Why::ERROR_BOUND | Why::NAN_BITS);
                        }
                        CSet {
                            re: around(z.re, r_batch[b]),
                            im: around(z.im, r_batch[b]),
                            inf: false,
                        }
                    })
                    .collect(),
            ),
            crate::fft::Unrounded::Real(v) => Elems::F(
                v.iter()
                    .enumerate()
                    .map(|(k, &y)| {
                        let b = (k / out_per).min(batches - 1);
                        if !ok_batch[b] {
                            return FSet::top(Why::ERROR_BOUND | Why::NAN_BITS);
                        }
                        around(y, r_batch[b])
                    })
                    .collect(),
            ),
        };
        Ok(SetArray { ty, dims, elems })
    }

    /// The oracle's result of `i` on the operands' midpoints (each in its own type; the
    /// rounding of a midpoint to it is added to the operand's radii), with the midpoints and
    /// radii; `None` where an operand may be NaN or infinite.
    #[allow(clippy::type_complexity)]
    fn at_midpoints(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
    ) -> Result<Option<(Value, Vec<Vec<num_complex::Complex64>>, Vec<Vec<f64>>)>> {
        let mut vals = Vec::with_capacity(ops.len());
        let mut mids = Vec::with_capacity(ops.len());
        let mut rads = Vec::with_capacity(ops.len());
        for o in ops {
            let x = sarr(o)?;
            let Some((mid, mut rad)) = super::linalg::midpoints(x) else {
                return Ok(None);
            };
            let wide = if x.ty.is_complex() {
                Array::new(
                    PrimitiveType::C128,
                    x.dims.clone(),
                    Buffer::C128(mid.clone()),
                )
            } else {
                Array::new(
                    PrimitiveType::F64,
                    x.dims.clone(),
                    Buffer::F64(mid.iter().map(|z| z.re).collect()),
                )
            };
            let own = crate::convert::convert(&wide, x.ty)?;
            let back = crate::elementwise::to_c64s(&own.buf);
            for (k, (m, b)) in mid.iter().zip(&back).enumerate() {
                rad[k] += (m - b).norm();
            }
            vals.push(Value::array(own));
            mids.push(back);
            rads.push(rad);
        }
        let refs: Vec<&Value> = vals.iter().collect();
        let v = crate::eval::eval_one(self.module, &self.oracle, comp, i, &refs)?;
        Ok(Some((v, mids, rads)))
    }

    /// `cholesky` (or `lapack_?potrf_ffi`, `lapack`: its `uplo`), by its error bound
    /// ([`super::linalg::cholesky_radius`]): the computed triangle within the radius of the
    /// oracle's factor at the midpoints, the other triangle and a matrix that may not be
    /// positive definite any value.
    fn cholesky(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
        lapack_lower: Option<bool>,
    ) -> Result<SetValue> {
        let x = sarr(ops.first().ok_or_else(|| invalid("missing operand"))?)?.clone();
        let Some((v, _, rads)) = self.at_midpoints(comp, i, ops)? else {
            return SetValue::top(&i.shape, Why::UNDEFINED);
        };
        let lower = lapack_lower.unwrap_or_else(|| attrs::flag(i, "lower", false));
        let factor = match &v {
            Value::Tuple(t) => t
                .first()
                .and_then(|f| crate::eval::arr(f).ok())
                .map(|a| (**a).clone()),
            _ => crate::eval::arr(&v).ok().map(|a| (**a).clone()),
        }
        .ok_or_else(|| invalid("cholesky without a factor"))?;
        let fmt = fmt_of(funcs::part_type(x.ty))?;
        let u = fmt.unit_roundoff();
        let n = *x.dims.last().unwrap_or(&0);
        let per = n * n;
        let values = crate::elementwise::to_c64s(&factor.buf);
        let batches = if per == 0 { 0 } else { values.len() / per };
        let mut radii = vec![f64::INFINITY; values.len()];
        let mut definite = vec![false; batches];
        for b in 0..batches {
            let l: Vec<num_complex::Complex64> = (0..per)
                .map(|k| {
                    let (r, c) = (k / n, k % n);
                    if (c <= r) == lower || r == c {
                        values[b * per + k]
                    } else {
                        num_complex::Complex64::new(0.0, 0.0)
                    }
                })
                .collect();
            let a_rad: Vec<f64> = (0..per)
                .map(|k| {
                    let (r, c) = (k / n, k % n);
                    if (c <= r) == lower || r == c {
                        rads[0][b * per + k]
                    } else {
                        0.0
                    }
                })
                .collect();
            if let Some(r) = super::linalg::cholesky_radius(&l, &a_rad, n, lower, u) {
                definite[b] = true;
                radii[b * per..(b + 1) * per].fill(r);
            }
        }
        let mut out = super::linalg::bounded(x.ty, factor.dims.clone(), &values, &radii, |s| {
            round_set(fmt, s)
        });
        for k in 0..values.len() {
            let (r, c) = ((k % per) / n, k % n);
            let other = r != c && (c <= r) != lower;
            if other || !definite[k / per.max(1)] {
                super::linalg::undefine(&mut out, k);
            }
        }
        if lapack_lower.is_none() {
            return Ok(SetValue::array(out));
        }
        // potrf's info: 0 for a definite matrix, else implementation-defined.
        let info_ty = match &i.shape {
            Shape::Tuple(t) => t
                .get(1)
                .and_then(|s| s.as_array())
                .map_or(PrimitiveType::S32, |a| a.ty),
            _ => PrimitiveType::S32,
        };
        let (lo, hi) = int_range(info_ty);
        let info = SetArray {
            ty: info_ty,
            dims: x.dims[..x.dims.len().saturating_sub(2)].to_vec(),
            elems: Elems::I(
                definite
                    .iter()
                    .map(|&d| {
                        if d {
                            ISet::point(0)
                        } else {
                            ISet::range(lo, hi).because(Why::UNDEFINED)
                        }
                    })
                    .collect(),
            ),
        };
        Ok(SetValue::Tuple(vec![
            SetValue::array(out),
            SetValue::array(info),
        ]))
    }

    /// `triangular-solve` (or `lapack_?trsm_ffi`, whose layout `lapack` gives), by its error
    /// bound ([`super::linalg::solve_radii`]); a singular matrix gives any value.
    fn triangular_solve(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
        lapack: Option<super::linalg::Layout>,
    ) -> Result<SetValue> {
        let b = sarr(ops.get(1).ok_or_else(|| invalid("missing operand"))?)?.clone();
        let Some((v, mids, rads)) = self.at_midpoints(comp, i, ops)? else {
            return SetValue::top(&i.shape, Why::UNDEFINED);
        };
        let layout = lapack.unwrap_or_else(|| super::linalg::Layout {
            left: attrs::flag(i, "left_side", false),
            lower: attrs::flag(i, "lower", false),
            unit: attrs::flag(i, "unit_diagonal", false),
            trans: !matches!(
                attrs::word(i, "transpose_a").as_deref(),
                None | Some("NO_TRANSPOSE")
            ),
        });
        let x = crate::eval::arr(&v)?.clone();
        let xs = crate::elementwise::to_c64s(&x.buf);
        let rank = b.dims.len();
        if rank < 2 {
            return Err(invalid("triangular-solve of rank < 2"));
        }
        let (m, n) = (b.dims[rank - 2], b.dims[rank - 1]);
        let k = if layout.left { m } else { n };
        let rhs = if layout.left { n } else { m };
        let fmt = fmt_of(funcs::part_type(b.ty))?;
        let u = fmt.unit_roundoff();
        let per_b = m * n;
        let per_t = k * k;
        let batches = if per_b == 0 { 0 } else { xs.len() / per_b };
        let mut radii = vec![f64::INFINITY; xs.len()];
        let mut singular = vec![true; batches];
        for t in 0..batches {
            let r = super::linalg::solve_radii(
                &mids[0][t * per_t..(t + 1) * per_t],
                &rads[0][t * per_t..(t + 1) * per_t],
                &rads[1][t * per_b..(t + 1) * per_b],
                &xs[t * per_b..(t + 1) * per_b],
                k,
                rhs,
                layout,
                u,
            );
            if let Some(r) = r {
                singular[t] = false;
                radii[t * per_b..(t + 1) * per_b].copy_from_slice(&r);
            }
        }
        let mut out =
            super::linalg::bounded(b.ty, b.dims.clone(), &xs, &radii, |s| round_set(fmt, s));
        for kk in 0..xs.len() {
            if singular[kk / per_b.max(1)] {
                super::linalg::undefine(&mut out, kk);
            }
        }
        Ok(SetValue::array(out))
    }

    /// Custom calls: `TopK` as `topk`, the sharding annotations as identities, jax's LAPACK
    /// calls by their error bounds; any other target is not modelled.
    fn custom_call(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
    ) -> Result<SetValue> {
        let target = attrs::word(i, "custom_call_target").unwrap_or_default();
        match target.as_str() {
            "TopK" | "__cpu$TopK" => {
                return match self.exactly(comp, i, ops)? {
                    Some(v) => Ok(v),
                    None => topk_sets(i, sarr(ops.first().ok_or_else(|| invalid("no operand"))?)?),
                };
            }
            "Sharding" | "SPMDFullToShardShape" | "SPMDShardToFullShape" => {
                return ops
                    .first()
                    .map(|v| (*v).clone())
                    .ok_or_else(|| invalid("no operand"));
            }
            _ => {}
        }
        let routine = target
            .strip_prefix("lapack_")
            .and_then(|r| r.strip_suffix("_ffi"))
            .filter(|r| r.starts_with('s') || r.starts_with('d'))
            .map(|r| &r[1..]);
        let ch = |key: &str| crate::linalg::config_char(i, key);
        match routine {
            Some("potrf") => self.cholesky(comp, i, ops, Some(ch("uplo") == Some(b'L'))),
            Some("trsm") => {
                let layout = super::linalg::Layout {
                    left: ch("side") == Some(b'L'),
                    lower: ch("uplo") == Some(b'L'),
                    unit: ch("diag") == Some(b'U'),
                    trans: ch("trans_x").is_some_and(|c| c != b'N'),
                };
                self.triangular_solve(comp, i, ops, Some(layout))
            }
            Some("getrf" | "geqrf" | "orgqr" | "syevd") => {
                self.decomposition_invariants(comp, i, ops, routine.unwrap_or_default())
            }
            _ => SetValue::top(&i.shape, Why::UNMODELLED),
        }
    }

    /// The decompositions whose outputs are not unique element by element, by their
    /// invariants: LU with partial pivoting (`|L| <= 1`, `|U| <= 2^(k-1) max |A|`, pivots and
    /// info in range), QR (reflector entries and `tau` within [0, 2], `|R_ij| <= ||A_:,j||`,
    /// the orthonormal Q's entries within 1), the symmetric eigendecomposition (eigenvalues
    /// within `4 k u ||A||_F` plus the operand's radius of the oracle's, by Weyl's theorem and
    /// backward stability; eigenvectors' entries within 1; info 0). Each bound is widened by
    /// `4 k u` of itself for the roundings.
    fn decomposition_invariants(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
        routine: &str,
    ) -> Result<SetValue> {
        let Some((v, mids, rads)) = self.at_midpoints(comp, i, ops)? else {
            return SetValue::top(&i.shape, Why::UNDEFINED);
        };
        let a = sarr(ops.first().ok_or_else(|| invalid("no operand"))?)?.clone();
        let fmt = fmt_of(a.ty)?;
        let u = fmt.unit_roundoff();
        let rank = a.dims.len();
        if rank < 2 {
            return Err(invalid("a decomposition of rank < 2"));
        }
        let (rows, cols) = (a.dims[rank - 2], a.dims[rank - 1]);
        let k = rows.max(cols).max(1);
        let widen = 1.0 + 4.0 * k as f64 * u;
        let range = |lim: f64| round_set(fmt, FSet::range(-lim, lim)).because(Why::ERROR_BOUND);
        let per = rows * cols;
        let batches = if per == 0 { 0 } else { a.len() / per };
        let col_norms: Vec<f64> = (0..batches * cols)
            .map(|bc| {
                let (b, c) = (bc / cols, bc % cols);
                (0..rows)
                    .map(|r| {
                        let z = mids[0][b * per + r * cols + c];
                        (z.norm() + rads[0][b * per + r * cols + c]).powi(2)
                    })
                    .sum::<f64>()
                    .sqrt()
            })
            .collect();
        let max_abs: Vec<f64> = (0..batches)
            .map(|b| {
                (0..per)
                    .map(|t| mids[0][b * per + t].norm() + rads[0][b * per + t])
                    .fold(0.0, f64::max)
            })
            .collect();
        let parts: Vec<&Value> = match &v {
            Value::Tuple(t) => t.iter().collect(),
            v => vec![v],
        };
        let mut outs = Vec::new();
        for (p, part) in parts.iter().enumerate() {
            let arr_p = crate::eval::arr(part)?;
            let (ty, dims) = (arr_p.ty, arr_p.dims.clone());
            let n = dims.iter().product::<usize>();
            let elems = if ty.is_float() {
                let pfmt = fmt_of(ty)?;
                let vals = crate::elementwise::to_c64s(&arr_p.buf);
                Elems::F(
                    (0..n)
                        .map(|e| {
                            let b = if per == 0 {
                                0
                            } else {
                                (e / per).min(batches.saturating_sub(1))
                            };
                            let (r, c) = ((e % per.max(1)) / cols.max(1), e % cols.max(1));
                            match (routine, p) {
                                ("getrf", 0) if c < r => range(widen),
                                ("getrf", 0) => {
                                    range(2f64.powi((k as i32 - 1).min(1000)) * max_abs[b] * widen)
                                }
                                ("geqrf", 0) if c < r => range(widen),
                                ("geqrf", 0) => range(col_norms[b * cols + c] * widen),
                                ("geqrf", 1) => round_set(pfmt, FSet::range(0.0, 2.0 * widen))
                                    .because(Why::ERROR_BOUND),
                                ("orgqr", _) => range(widen),
                                ("syevd", 0) => range(widen),
                                ("syevd", _) => {
                                    // Eigenvalues: the oracle's within Weyl's bound.
                                    let bb = e / rows.max(1);
                                    let norm: f64 = (0..per)
                                        .map(|t| mids[0][bb.min(batches - 1) * per + t].norm_sqr())
                                        .sum::<f64>()
                                        .sqrt();
                                    let dr: f64 = (0..per)
                                        .map(|t| rads[0][bb.min(batches - 1) * per + t].powi(2))
                                        .sum::<f64>()
                                        .sqrt();
                                    let r = 4.0 * k as f64 * u * norm + 2.0 * dr;
                                    let c0 = vals[e].re;
                                    round_set(pfmt, FSet::range(c0 - r, c0 + r))
                                        .because(Why::ERROR_BOUND)
                                }
                                _ => FSet::top(Why::UNMODELLED),
                            }
                        })
                        .collect(),
                )
            } else {
                // Pivots and info.
                let (lo, hi) = int_range(ty);
                let set = match routine {
                    "getrf" if p == 1 => ISet::range(1, rows as i128),
                    "syevd" => ISet::point(0),
                    _ => ISet::range(0.max(lo), (k as i128).min(hi)),
                };
                Elems::I(vec![set.because(Why::ERROR_BOUND); n])
            };
            outs.push(SetValue::array(SetArray { ty, dims, elems }));
        }
        Ok(match &v {
            Value::Tuple(_) => SetValue::Tuple(outs),
            _ => outs.pop().ok_or_else(|| invalid("no result"))?,
        })
    }

    fn unary(&mut self, i: &Instruction, x: &SetArray) -> Result<SetArray> {
        use Opcode as O;
        let (ty, dims) = out_dims(i)?;
        let op = i.opcode;
        let elems = match (&x.elems, ty.class()) {
            (Elems::F(v), TypeClass::Float) => {
                let fmt = fmt_of(ty)?;
                let sub = self.sub(op, ty);
                let ulps = self.ulps(op, ty);
                Elems::F(
                    v.iter()
                        .map(|&s| {
                            if subnormal_operand(fmt, op, ty, &[s]) {
                                return Ok(FSet::top(Why::UNDEFINED));
                            }
                            float_unary(fmt, op, s, sub, ulps)
                        })
                        .collect::<Result<_>>()?,
                )
            }
            (Elems::F(v), TypeClass::Pred) if op == O::IsFinite => Elems::I(
                v.iter()
                    .map(|s| {
                        let fin = s.meets(-f64::MAX, f64::MAX);
                        let inf = s.nan || s.pinf || s.ninf;
                        let r = ISet::range(if inf { 0 } else { 1 }, if fin { 1 } else { 0 });
                        r.because(s.why)
                    })
                    .collect(),
            ),
            (Elems::C(v), _) => {
                let part = funcs::part_type(x.ty);
                let fmt = fmt_of(part)?;
                let sub = self.sub(op, x.ty);
                let ulps = self.normwise_ulps(op, x.ty);
                match op {
                    // The parts are moved, not computed; a flush of the result is not ruled
                    // out (the oracle's flush-to-zero choice makes one).
                    O::Real => Elems::F(
                        v.iter()
                            .map(|c| arith::result(fmt, part_of(c, true), self.sub(O::Add, x.ty)))
                            .collect(),
                    ),
                    O::Imag => Elems::F(
                        v.iter()
                            .map(|c| arith::result(fmt, part_of(c, false), self.sub(O::Add, x.ty)))
                            .collect(),
                    ),
                    O::Negate => Elems::C(
                        v.iter()
                            .map(|c| CSet {
                                re: arith::negate(c.re),
                                im: arith::negate(c.im),
                                inf: c.inf,
                            })
                            .collect(),
                    ),
                    O::Abs => Elems::F(v.iter().map(|c| complex_abs(fmt, c, sub, ulps)).collect()),
                    O::Logistic => {
                        let ulps_of = |op| self.normwise_ulps(op, x.ty);
                        let (exp, div) = (ulps_of(O::Exp), ulps_of(O::Divide));
                        Elems::C(
                            v.iter()
                                .map(|c| {
                                    with_daz(fmt, sub, &[c], |v| {
                                        complex_logistic(fmt, v[0], sub, exp, div)
                                    })
                                })
                                .collect(),
                        )
                    }
                    _ => {
                        let f = crate::elementwise::unary_complex_fn(op);
                        Elems::C(
                            v.iter()
                                .map(|c| {
                                    if subnormal_operand(fmt, op, x.ty, &[c.re, c.im]) {
                                        return CSet::top(Why::UNDEFINED);
                                    }
                                    let at = |c: &CSet| {
                                        let out =
                                            complex_point_fn(fmt, c, ulps, error_floor(op), |z| {
                                                f.map(|f| f(z))
                                            });
                                        intermediate_overflow(fmt, op, c, out)
                                    };
                                    with_daz(fmt, sub, &[c], |v| at(v[0]))
                                })
                                .collect(),
                        )
                    }
                }
            }
            (Elems::I(_), _) => {
                return self.int_elementwise(
                    op,
                    ty,
                    &dims,
                    &[x],
                    |arrays| crate::elementwise::unary(op, arrays[0], ty),
                    |_| None,
                )
            }
            _ => return Err(invalid(format!("{} of {}", op.name(), x.ty))),
        };
        Ok(SetArray { ty, dims, elems })
    }

    fn binary(&mut self, i: &Instruction, x: &SetArray, y: &SetArray) -> Result<SetArray> {
        use Opcode as O;
        let (ty, dims) = out_dims(i)?;
        let op = i.opcode;
        if x.len() != y.len() {
            return Err(invalid("operands differ in size"));
        }
        let elems = match (&x.elems, &y.elems) {
            (Elems::F(a), Elems::F(b)) if op == O::Complex => {
                let fmt = fmt_of(x.ty)?;
                let sub = self.sub(O::Add, x.ty);
                Elems::C(
                    a.iter()
                        .zip(b)
                        .map(|(&re, &im)| CSet {
                            re: arith::result(fmt, re, sub),
                            im: arith::result(fmt, im, sub),
                            inf: false,
                        })
                        .collect(),
                )
            }
            (Elems::F(a), Elems::F(b)) => {
                let fmt = fmt_of(ty)?;
                let sub = self.sub(op, ty);
                let ulps = self.ulps(op, ty);
                let same = same_operand(i);
                Elems::F(
                    a.iter()
                        .zip(b)
                        .map(|(&p, &q)| {
                            if same {
                                let mut out = FSet::EMPTY;
                                let by_sign =
                                    matches!(op, O::Subtract | O::Divide | O::Remainder | O::Atan2);
                                for (v, sub) in diagonal(fmt, p, sub, by_sign) {
                                    out = out.hull(float_binary(fmt, op, v, v, sub, ulps)?);
                                }
                                Ok(out)
                            } else {
                                float_binary(fmt, op, p, q, sub, ulps)
                            }
                        })
                        .collect::<Result<_>>()?,
                )
            }
            (Elems::C(a), Elems::C(b)) => {
                let fmt = fmt_of(funcs::part_type(ty))?;
                let sub = self.sub(op, ty);
                let ulps = self.normwise_ulps(op, ty);
                Elems::C(
                    a.iter()
                        .zip(b)
                        .map(|(p, q)| complex_binary(fmt, op, p, q, sub, ulps))
                        .collect(),
                )
            }
            (Elems::I(_), Elems::I(_)) => {
                let rule = move |s: &[ISet]| int_range_rule(op, ty, s[0], s[1]);
                return self.int_elementwise(
                    op,
                    ty,
                    &dims,
                    &[x, y],
                    |arrays| crate::elementwise::binary(op, arrays[0], arrays[1], ty),
                    rule,
                );
            }
            _ => return Err(invalid(format!("{} of {} and {}", op.name(), x.ty, y.ty))),
        };
        Ok(SetArray { ty, dims, elems })
    }

    /// An integer or `pred` result element-wise: each element's operand values enumerated
    /// (when there are at most [`ENUMERATE`] combinations) and run by the oracle (`concrete`,
    /// on arrays of all combinations at once), else `rule`, else any value of the type. An
    /// element whose operands may meet a case the semantics table leaves implementation-defined
    /// (integer overflow, division by zero, ...: [`int_condition`]) is any value of the type.
    fn int_elementwise(
        &mut self,
        op: Opcode,
        ty: PrimitiveType,
        dims: &[usize],
        ins: &[&SetArray],
        concrete: impl Fn(&[&Array]) -> Result<Array>,
        rule: impl Fn(&[ISet]) -> Option<ISet>,
    ) -> Result<SetArray> {
        let n = ins.first().map_or(0, |a| a.len());
        let sets: Vec<&[ISet]> = ins.iter().map(|a| a.ints()).collect::<Result<_>>()?;
        // Per element: where its combinations start in the candidate arrays, and how many.
        let mut spans: Vec<Option<(usize, usize)>> = Vec::with_capacity(n);
        let mut cands: Vec<Vec<u128>> = vec![Vec::new(); ins.len()];
        let in_ty = ins.first().map_or(ty, |a| a.ty);
        let mut undefined = vec![false; n];
        for k in 0..n {
            let args: Vec<ISet> = sets.iter().map(|s| s[k]).collect();
            if let Some(c) = int_condition(op, in_ty, ty, &args) {
                if hlo::semantics::implementation_defined(op, ty, c)
                    || hlo::semantics::implementation_defined(op, in_ty, c)
                {
                    undefined[k] = true;
                    spans.push(None);
                    continue;
                }
            }
            let count: u128 = sets
                .iter()
                .fold(1u128, |c, s| c.saturating_mul(s[k].count()));
            if count > ENUMERATE || cands[0].len() + count as usize > ENUMERATE_TOTAL {
                spans.push(None);
                continue;
            }
            let start = cands[0].len();
            let mut idx = vec![0i128; ins.len()];
            loop {
                for (j, s) in sets.iter().enumerate() {
                    cands[j].push(bits_of_int(ins[j].ty, s[k].lo + idx[j]));
                }
                // Next combination (odometer).
                let mut j = 0;
                loop {
                    if j == ins.len() {
                        break;
                    }
                    idx[j] += 1;
                    if s_len(sets[j][k]) > idx[j] {
                        break;
                    }
                    idx[j] = 0;
                    j += 1;
                }
                if j == ins.len() {
                    break;
                }
            }
            spans.push(Some((start, cands[0].len() - start)));
        }
        self.step(cands[0].len() as u64 / 8)?;
        let arrays: Vec<Array> = ins
            .iter()
            .zip(&cands)
            .map(|(a, c)| Ok(Array::new(a.ty, vec![c.len()], from_bits(a.ty, c)?)))
            .collect::<Result<_>>()?;
        let refs: Vec<&Array> = arrays.iter().collect();
        let results: Vec<i128> = if cands[0].is_empty() {
            Vec::new()
        } else {
            let r = concrete(&refs)?;
            to_bits(&r.buf)
                .into_iter()
                .map(|b| int_of_bits(ty, b))
                .collect()
        };
        let (tlo, thi) = int_range(ty);
        let out: Vec<ISet> = (0..n)
            .map(|k| {
                let why = sets.iter().fold(Why::NONE, |w, s| w | s[k].why);
                if undefined[k] {
                    return ISet::undefined(ty, why);
                }
                match spans[k] {
                    Some((start, len)) => {
                        let r = &results[start..start + len];
                        let lo = r.iter().copied().min().unwrap_or(tlo);
                        let hi = r.iter().copied().max().unwrap_or(thi);
                        let s = ISet::range(lo, hi).because(why);
                        if len > 1 && lo != hi {
                            s.because(Why::BRANCH)
                        } else {
                            s
                        }
                    }
                    None => {
                        let args: Vec<ISet> = sets.iter().map(|s| s[k]).collect();
                        match rule(&args) {
                            Some(s) => s.because(why),
                            // What reads an undefined element is undefined too.
                            None if why.has(Why::UNDEFINED) => ISet::undefined(ty, why),
                            None => ISet::range(tlo, thi).because(Why::UNMODELLED | why),
                        }
                    }
                }
            })
            .collect();
        Ok(SetArray {
            ty,
            dims: dims.to_vec(),
            elems: Elems::I(out),
        })
    }

    fn compare(&mut self, i: &Instruction, x: &SetArray, y: &SetArray) -> Result<SetArray> {
        let (ty, dims) = out_dims(i)?;
        let dir = attrs::word(i, "direction")
            .and_then(|d| Dir::parse(&d))
            .ok_or_else(|| invalid("compare without a direction"))?;
        let total = attrs::word(i, "type").as_deref() == Some("TOTALORDER");
        let elems = match (&x.elems, &y.elems) {
            (Elems::F(a), Elems::F(b)) => {
                let fmt = fmt_of(x.ty)?;
                let sub = self.sub(Opcode::Compare, x.ty);
                let same = same_operand(i);
                let fnuz = x.ty.to_string().ends_with("fnuz");
                a.iter()
                    .zip(b)
                    .map(|(&p, &q)| {
                        if same {
                            let sub = if total {
                                Subnormals {
                                    daz: false,
                                    ftz: false,
                                }
                            } else {
                                sub
                            };
                            let mut out: Option<ISet> = None;
                            for (v, _) in diagonal(fmt, p, sub, true) {
                                let c = arith::compare(v, v, dir, total);
                                out = Some(out.map_or(c, |o| o.hull(c)));
                            }
                            return out.unwrap_or(ISet::range(0, 1));
                        }
                        // A total order of an fnuz type, whose one NaN has the bit pattern of
                        // -0: IEEE's totalOrder does not cover it and the texts do not place it
                        // (XLA orders the bits, so the NaN sits where -0 would): either outcome.
                        if total && fnuz && (p.nan || q.nan) {
                            return ISet::range(0, 1).because(p.why | q.why | Why::BRANCH);
                        }
                        // IEEE compares read subnormals as zero; a total order sees the bits.
                        let (p, q) = if total {
                            (p, q)
                        } else {
                            (arith::operand(fmt, p, sub), arith::operand(fmt, q, sub))
                        };
                        arith::compare(p, q, dir, total)
                    })
                    .collect()
            }
            (Elems::I(a), Elems::I(b)) => a
                .iter()
                .zip(b)
                .map(|(&p, &q)| arith::compare_int(p, q, dir))
                .collect(),
            (Elems::C(a), Elems::C(b)) if matches!(dir, Dir::Eq | Dir::Ne) => {
                // Each part is compared as a float is: subnormals read as zero under DAZ.
                let part = funcs::part_type(x.ty);
                let (fmt, sub) = (fmt_of(part)?, self.sub(Opcode::Compare, part));
                let read = |s: FSet| arith::operand(fmt, s, sub);
                a.iter()
                    .zip(b)
                    .map(|(p, q)| {
                        let re = arith::compare(read(p.re), read(q.re), Dir::Eq, false);
                        let im = arith::compare(read(p.im), read(q.im), Dir::Eq, false);
                        // Equal when both parts are equal.
                        let (can_t, can_f) = (re.hi == 1 && im.hi == 1, re.lo == 0 || im.lo == 0);
                        let inf = p.inf || q.inf;
                        let (t, f) = if dir == Dir::Eq {
                            (can_t || inf, can_f || inf)
                        } else {
                            (can_f || inf, can_t || inf)
                        };
                        ISet::range(if f { 0 } else { 1 }, if t { 1 } else { 0 })
                            .because(re.why | im.why)
                    })
                    .collect()
            }
            _ => {
                return SetArray::top(ty, dims, Why::UNMODELLED);
            }
        };
        Ok(SetArray {
            ty,
            dims,
            elems: Elems::I(elems),
        })
    }

    fn clamp(&mut self, lo: &SetArray, x: &SetArray, hi: &SetArray) -> Result<SetArray> {
        let n = x.len();
        let pick = |s: &SetArray, k: usize| if s.len() == 1 { 0 } else { k };
        let elems = match (&lo.elems, &x.elems, &hi.elems) {
            (Elems::F(l), Elems::F(v), Elems::F(h)) => {
                let fmt = fmt_of(x.ty)?;
                let sub = self.sub(Opcode::Clamp, x.ty);
                let op = |s: FSet| arith::operand(fmt, s, sub);
                Elems::F(
                    (0..n)
                        .map(|k| {
                            let m = arith::max_min(op(v[k]), op(l[pick(lo, k)]), true);
                            let r = arith::max_min(m, op(h[pick(hi, k)]), false);
                            arith::result(fmt, r, sub)
                        })
                        .collect(),
                )
            }
            (Elems::I(l), Elems::I(v), Elems::I(h)) => Elems::I(
                (0..n)
                    .map(|k| {
                        let (a, b, c) = (l[pick(lo, k)], v[k], h[pick(hi, k)]);
                        ISet::range(b.lo.max(a.lo).min(c.lo), b.hi.max(a.hi).min(c.hi))
                            .because(a.why | b.why | c.why)
                    })
                    .collect(),
            ),
            _ => return SetArray::top(x.ty, x.dims.clone(), Why::UNMODELLED),
        };
        Ok(SetArray {
            ty: x.ty,
            dims: x.dims.clone(),
            elems,
        })
    }

    fn convert(&mut self, i: &Instruction, x: &SetArray) -> Result<SetArray> {
        let (ty, dims) = out_dims(i)?;
        let sub = self.sub(Opcode::Convert, ty);
        // A widening to f64 (or to c128's f64 parts) reads bf16/f32 subnormals, real or the
        // parts of a c64, as zero (cvtss2sd under DAZ; measured on XLA CPU for f32 -> f64,
        // f32 -> c128, bf16 -> c128 and c64 -> c128).
        let part = |t: PrimitiveType| t.complex_component().unwrap_or(t);
        let daz = self.opts.freedoms.flush_denormals
            && part(ty) == PrimitiveType::F64
            && matches!(part(x.ty), PrimitiveType::Bf16 | PrimitiveType::F32);
        let flush_from = if daz { Some(fmt_of(part(x.ty))?) } else { None };
        let widen = |s: FSet| flush_from.map_or(s, |f| arith::flush(f, s));
        let elems = match (&x.elems, ty.class()) {
            (Elems::F(v), TypeClass::Float) => {
                let to = fmt_of(ty)?;
                Elems::F(
                    v.iter()
                        .map(|&s| arith::result(to, round_set(to, widen(s)), sub))
                        .collect(),
                )
            }
            (Elems::F(v), TypeClass::Complex) => {
                let to = fmt_of(funcs::part_type(ty))?;
                Elems::C(
                    v.iter()
                        .map(|&s| CSet {
                            re: arith::result(to, round_set(to, widen(s)), sub),
                            im: FSet::point(0.0),
                            inf: false,
                        })
                        .collect(),
                )
            }
            (Elems::C(v), TypeClass::Complex) => {
                let to = fmt_of(funcs::part_type(ty))?;
                Elems::C(
                    v.iter()
                        .map(|c| CSet {
                            re: arith::result(to, round_set(to, widen(c.re)), sub),
                            im: arith::result(to, round_set(to, widen(c.im)), sub),
                            inf: c.inf,
                        })
                        .collect(),
                )
            }
            (Elems::F(v), TypeClass::Pred)
                if self.opts.freedoms.flush_denormals
                    && matches!(
                        x.ty,
                        PrimitiveType::Bf16 | PrimitiveType::F32 | PrimitiveType::F64
                    ) =>
            {
                // x != 0 as a float compare, which reads a subnormal as zero under DAZ (a bf16
                // one through f32; see `crate::variant::flush_widened`).
                let from = fmt_of(x.ty)?;
                let flushed: Vec<FSet> = v.iter().map(|&s| arith::flush(from, s)).collect();
                Elems::I(float_to_int(&flushed, ty)?)
            }
            (Elems::F(v), TypeClass::Signed | TypeClass::Unsigned) => {
                // A NaN, an infinity or a value out of the type's range converts to an
                // implementation-defined value (the semantics table's convert row).
                let (lo, hi) = int_range(ty);
                let out_of_range = |s: &FSet| {
                    s.nan
                        || s.pinf
                        || s.ninf
                        || s.meets(-f64::MAX, lo as f64 - 1.0)
                        || s.meets(hi as f64 + 1.0, f64::MAX)
                };
                let undefined = hlo::semantics::implementation_defined(
                    Opcode::Convert,
                    x.ty,
                    hlo::semantics::Condition::FloatToIntOutOfRange,
                );
                let ints = float_to_int(v, ty)?;
                Elems::I(
                    ints.into_iter()
                        .zip(v)
                        .map(|(r, s)| {
                            if undefined && out_of_range(s) {
                                ISet::undefined(ty, s.why)
                            } else {
                                r
                            }
                        })
                        .collect(),
                )
            }
            (Elems::F(v), TypeClass::Pred) => Elems::I(float_to_int(v, ty)?),
            (Elems::I(v), TypeClass::Float) => {
                let to = fmt_of(ty)?;
                Elems::F(v.iter().map(|s| int_to_float(to, s)).collect())
            }
            (Elems::I(v), TypeClass::Complex) => {
                let to = fmt_of(funcs::part_type(ty))?;
                Elems::C(
                    v.iter()
                        .map(|s| CSet {
                            re: int_to_float(to, s),
                            im: FSet::point(0.0),
                            inf: false,
                        })
                        .collect(),
                )
            }
            (Elems::I(_), _) => {
                let (lo, hi) = int_range(ty);
                return self.int_elementwise(
                    Opcode::Convert,
                    ty,
                    &dims,
                    &[x],
                    |a| crate::convert::convert(a[0], ty),
                    |s| (s[0].lo >= lo && s[0].hi <= hi).then_some(s[0]),
                );
            }
            _ => return SetArray::top(ty, dims, Why::UNMODELLED),
        };
        Ok(SetArray { ty, dims, elems })
    }

    /// Data movement by indices: the op runs (as the oracle runs it) on arrays of element
    /// indices, and the indices it returns pick the sets. Index operands (starts, gather
    /// indices, sizes) must be exactly known, or take few enough values to try each.
    fn move_data(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
    ) -> Result<SetValue> {
        use Opcode as O;
        let data_ops = match i.opcode {
            O::DynamicSlice | O::Gather | O::SetDimensionSize | O::DynamicReshape => 1,
            O::DynamicUpdateSlice | O::Pad => 2,
            _ => ops.len(),
        };
        let data: Vec<&Arc<SetArray>> = ops[..data_ops]
            .iter()
            .map(|v| sarr(v))
            .collect::<Result<_>>()?;
        let (ty, _) = out_dims(i)?;
        if i.opcode == O::Bitcast && data.first().is_some_and(|d| d.ty != ty) {
            // A bitcast that reinterprets bits: exact values only.
            return Ok(match self.exactly(comp, i, ops)? {
                Some(v) => v,
                None => SetValue::top(&i.shape, Why::NAN_BITS | Why::UNMODELLED)?,
            });
        }
        let all = Elems::concat(&data.iter().map(|d| &d.elems).collect::<Vec<_>>())
            .ok_or_else(|| invalid("data operands of different kinds"))?;
        // Index arrays of the data operands, numbered through all of them.
        let mut offset = 0i64;
        let mut index_arrays: Vec<Array> = Vec::new();
        for d in &data {
            let n = d.len() as i64;
            index_arrays.push(Array::new(
                PrimitiveType::S64,
                d.dims.clone(),
                Buffer::S64((offset..offset + n).collect()),
            ));
            offset += n;
        }
        let retyped = retype(i);
        let shapes: Vec<Shape> = i
            .operands
            .iter()
            .enumerate()
            .map(|(k, &o)| {
                let s = &comp.instructions[o].shape;
                if k < data_ops {
                    retype_shape(s)
                } else {
                    s.clone()
                }
            })
            .collect();
        let shape_refs: Vec<&Shape> = shapes.iter().collect();
        // The index operands: every combination of the values they may take.
        let idx_sets: Vec<&Arc<SetArray>> = ops[data_ops..]
            .iter()
            .map(|v| sarr(v))
            .collect::<Result<_>>()?;
        let combos = index_combinations(&idx_sets)?;
        let Some(combos) = combos else {
            return SetValue::top(&i.shape, Why::INDEX);
        };
        let mut out: Option<SetArray> = None;
        let uncertain = combos.len() > 1;
        for idx in &combos {
            let mut arrays: Vec<&Array> = index_arrays.iter().collect();
            arrays.extend(idx.iter());
            let moved = crate::shape_ops::eval(&retyped, &arrays, &shape_refs)?;
            self.step(moved.len() as u64 / 16)?;
            let pos: Vec<usize> = match &moved.buf {
                Buffer::S64(v) => v.iter().map(|&p| p as usize).collect(),
                _ => return Err(invalid("data movement of indices gave no indices")),
            };
            if pos.iter().any(|&p| p >= all.len()) {
                return Err(invalid("data movement index out of range"));
            }
            let picked = SetArray {
                ty,
                dims: moved.dims.clone(),
                elems: all.take(&pos),
            };
            out = Some(match out {
                None => picked,
                Some(o) => match SetValue::array(o).hull(&SetValue::array(picked))? {
                    SetValue::Array(a) => (*a).clone(),
                    _ => unreachable!("hull of arrays is an array"),
                },
            });
        }
        let mut out = out.ok_or_else(|| invalid("no index combination"))?;
        if uncertain {
            mark(&mut out, Why::INDEX);
        }
        Ok(SetValue::array(out))
    }

    fn reduce(&mut self, i: &Instruction, ops: &[&SetValue], window: bool) -> Result<SetValue> {
        if ops.is_empty() || ops.len() % 2 != 0 {
            return Err(invalid("expects N inputs and N init values"));
        }
        let n = ops.len() / 2;
        let inputs: Vec<&Arc<SetArray>> =
            ops[..n].iter().map(|v| sarr(v)).collect::<Result<_>>()?;
        let inits: Vec<&Arc<SetArray>> = ops[n..].iter().map(|v| sarr(v)).collect::<Result<_>>()?;
        if inits.iter().any(|a| a.len() != 1) {
            return Err(invalid("init values must be scalars"));
        }
        let c = attrs::comp(i, "to_apply")?;
        let (groups, out_d) = if window {
            let out_d: Vec<usize> = match &i.shape {
                Shape::Tuple(t) => t
                    .first()
                    .map(|s| s.dims().iter().map(|&d| d.max(0) as usize).collect())
                    .unwrap_or_default(),
                _ => out_dims(i)?.1,
            };
            (
                crate::reduce::window_groups(i, &inputs[0].dims, &out_d)?,
                out_d,
            )
        } else {
            crate::reduce::reduce_groups(i, &inputs[0].dims)?
        };
        self.step(groups.positions.len() as u64 / 4)?;
        let Some(binops) = componentwise_binops(self.module, c, n) else {
            // A reducer that is not one binary op per component (argmax's compare and select):
            // exact where it rounds nothing and its operands are known; else nothing bounds
            // the order it is applied in.
            if let Some(outs) = self.reduce_by_exact_reducer(c, &inputs, &inits, &groups, &out_d)? {
                return Ok(match &i.shape {
                    Shape::Tuple(_) => SetValue::Tuple(outs),
                    _ => outs
                        .into_iter()
                        .next()
                        .ok_or_else(|| invalid("reduce without results"))?,
                });
            }
            return SetValue::top(&i.shape, Why::UNMODELLED);
        };
        let mut outs = Vec::with_capacity(n);
        for k in 0..n {
            let red = Reduction {
                op: binops[k],
                ty: inputs[k].ty,
                freedoms: self.opts.freedoms,
                sub: self.sub(binops[k], inputs[k].ty),
            };
            let elems = red.fold_groups(&inputs[k].elems, &inits[k].elems, &groups)?;
            outs.push(SetValue::array(SetArray {
                ty: inputs[k].ty,
                dims: out_d.clone(),
                elems,
            }));
        }
        Ok(match &i.shape {
            Shape::Tuple(_) => SetValue::Tuple(outs),
            _ => outs
                .pop()
                .ok_or_else(|| invalid("reduce without results"))?,
        })
    }

    /// A reduce whose reducer rounds nothing (compares, selects, bitwise ops, maximum and
    /// minimum: argmax and its kin) over exactly known operands. XLA's operation semantics and
    /// the StableHLO spec let the implementation combine the elements in any order and apply
    /// the init value any number of times, and make the result implementation-defined where the
    /// reducer is not an associative, commutative operation with the init value as its
    /// identity. So each group is folded in several orders (in order, reversed, as a pairwise
    /// tree, without the init value and with it twice): where they all agree the result is that
    /// value, where they differ the reducer is no monoid on these values and the result is
    /// implementation-defined. `None`: a reducer that rounds, or operands not exactly known.
    fn reduce_by_exact_reducer(
        &mut self,
        c: usize,
        inputs: &[&Arc<SetArray>],
        inits: &[&Arc<SetArray>],
        groups: &crate::reduce::Groups,
        out_d: &[usize],
    ) -> Result<Option<Vec<SetValue>>> {
        use crate::scalar_prog::{array_of, sv_of, svs_of, ScalarProg, Sv};
        let n = inputs.len();
        let Some(comp) = self.module.computations.get(c) else {
            return Ok(None);
        };
        use Opcode as O;
        let rounds_nothing = comp.instructions.iter().all(|x| {
            matches!(
                x.opcode,
                O::Parameter
                    | O::Constant
                    | O::Tuple
                    | O::GetTupleElement
                    | O::Compare
                    | O::Select
                    | O::And
                    | O::Or
                    | O::Xor
                    | O::Not
                    | O::Maximum
                    | O::Minimum
            )
        });
        if !rounds_nothing {
            return Ok(None);
        }
        let Some(prog) = ScalarProg::compile(self.module, c) else {
            return Ok(None);
        };
        let exact = |a: &SetArray| a.to_exact();
        let (Some(ins), Some(ini)) = (
            inputs
                .iter()
                .map(|a| exact(a))
                .collect::<Option<Vec<Array>>>(),
            inits
                .iter()
                .map(|a| exact(a))
                .collect::<Option<Vec<Array>>>(),
        ) else {
            return Ok(None);
        };
        let types_fit = prog.params.len() == 2 * n
            && prog.out_types.len() == n
            && (0..n).all(|k| {
                prog.params[k] == ini[k].ty
                    && prog.params[n + k] == ins[k].ty
                    && prog.out_types[k] == ini[k].ty
                    && ini[k].ty == ins[k].ty
            });
        if !types_fit {
            return Ok(None);
        }
        let (Some(keys), Some(init)) = (
            ins.iter().map(svs_of).collect::<Option<Vec<_>>>(),
            ini.iter()
                .map(|a| sv_of(a.ty, a, 0))
                .collect::<Option<Vec<_>>>(),
        ) else {
            return Ok(None);
        };
        self.step((groups.positions.len() as u64).saturating_mul(5 * prog.len() as u64))?;
        let mut regs = Vec::with_capacity(prog.len());
        let mut combine = |a: &[Sv], b: &[Sv]| -> Result<Vec<Sv>> {
            let args: Vec<Sv> = a.iter().chain(b).copied().collect();
            prog.run(&args, &mut regs)?;
            Ok((0..n).map(|k| prog.output(&regs, k)).collect())
        };
        let same = |a: &[Sv], b: &[Sv]| {
            a.iter().zip(b).all(|(x, y)| match (x, y) {
                (Sv::F(x), Sv::F(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
                _ => x == y,
            })
        };
        let mut results: Vec<Vec<Sv>> = vec![Vec::with_capacity(groups.len()); n];
        let mut undefined = vec![false; groups.len()];
        for g in 0..groups.len() {
            let elems: Vec<Vec<Sv>> = groups
                .group(g)
                .iter()
                .map(|&p| keys.iter().map(|k| k[p]).collect())
                .collect();
            let mut in_order = init.clone();
            for x in &elems {
                in_order = combine(&in_order, x)?;
            }
            let mut reversed = init.clone();
            for x in elems.iter().rev() {
                reversed = combine(&reversed, x)?;
            }
            let mut twice = combine(&init, &init)?;
            for x in &elems {
                twice = combine(&twice, x)?;
            }
            let mut candidates = vec![reversed, twice];
            if let Some((first, rest)) = elems.split_first() {
                let mut no_init = first.clone();
                for x in rest {
                    no_init = combine(&no_init, x)?;
                }
                candidates.push(no_init);
                let mut level = elems.clone();
                while level.len() > 1 {
                    let mut next = Vec::with_capacity(level.len().div_ceil(2));
                    for pair in level.chunks(2) {
                        next.push(match pair {
                            [a, b] => combine(a, b)?,
                            [a] => a.clone(),
                            _ => unreachable!("chunks of two"),
                        });
                    }
                    level = next;
                }
                candidates.push(combine(&level[0], &init)?);
            }
            undefined[g] = candidates.iter().any(|r| !same(r, &in_order));
            for (k, v) in in_order.into_iter().enumerate() {
                results[k].push(v);
            }
        }
        let mut outs = Vec::with_capacity(n);
        for k in 0..n {
            let a = array_of(ini[k].ty, out_d.to_vec(), &results[k])?;
            let mut sets = SetArray::exact(&a)?;
            for (g, &u) in undefined.iter().enumerate() {
                if u {
                    super::linalg::undefine(&mut sets, g);
                }
            }
            outs.push(SetValue::array(sets));
        }
        Ok(Some(outs))
    }

    fn dot(&mut self, i: &Instruction, l: &SetArray, r: &SetArray) -> Result<SetArray> {
        let p = crate::dot::dot_plan(i, &l.dims, &r.dims)?;
        let demanded = self.demanded.take();
        let outputs = p.bsz * p.m * p.n;
        let some = demanded.filter(|d| d.len() < outputs);
        let computed = some.as_ref().map_or(outputs, |d| d.len());
        self.step((computed * p.k) as u64 / 4)?;
        let (ty, dims) = (p.ty, p.dims.clone());
        match (&l.elems, &r.elems) {
            (Elems::F(a), Elems::F(b)) => {
                let (a, b) = (self.dot_operand(l.ty, a)?, self.dot_operand(r.ty, b)?);
                let la: Vec<FSet> = p.lpos.iter().map(|&k| a[k]).collect();
                let rb: Vec<FSet> = p.rpos.iter().map(|&k| b[k]).collect();
                let fmt = fmt_of(ty)?;
                let sub = self.sub(Opcode::Add, ty);
                let finish = |t: &Terms| arith::result(fmt, t.finish(fmt, sub), sub);
                let elems = match &some {
                    Some(d) => {
                        let mut elems = vec![FSet::top(Why::NONE); outputs];
                        let accs: Vec<Terms> =
                            crate::dot::matmul_elements(&la, &rb, (p.m, p.k, p.n), d);
                        for (&o, t) in d.iter().zip(&accs) {
                            if let Some(e) = elems.get_mut(o) {
                                *e = finish(t);
                            }
                        }
                        elems
                    }
                    None => {
                        let accs: Vec<Terms> =
                            crate::dot::batched_matmul(&la, &rb, p.bsz, p.m, p.k, p.n);
                        accs.iter().map(finish).collect()
                    }
                };
                Ok(SetArray {
                    ty,
                    dims,
                    elems: Elems::F(elems),
                })
            }
            (Elems::C(a), Elems::C(b)) => {
                let la: Vec<CSet> = p.lpos.iter().map(|&k| a[k]).collect();
                let rb: Vec<CSet> = p.rpos.iter().map(|&k| b[k]).collect();
                let accs: Vec<CTerms> = crate::dot::batched_matmul(&la, &rb, p.bsz, p.m, p.k, p.n);
                let fmt = fmt_of(funcs::part_type(ty))?;
                let sub = self.sub(Opcode::Add, ty);
                let elems = accs.iter().map(|t| t.finish(fmt, sub)).collect();
                Ok(SetArray {
                    ty,
                    dims,
                    elems: Elems::C(elems),
                })
            }
            (Elems::I(a), Elems::I(b)) => {
                // Integer dots: the sum of the products' ranges. A signed sum that some order
                // of adding may carry past the type overflows (implementation-defined, the
                // semantics table's dot row); an unsigned one is modular.
                let la: Vec<ISet> = p.lpos.iter().map(|&k| a[k]).collect();
                let rb: Vec<ISet> = p.rpos.iter().map(|&k| b[k]).collect();
                let accs: Vec<IntTerms> =
                    crate::dot::batched_matmul(&la, &rb, p.bsz, p.m, p.k, p.n);
                let elems = accs.iter().map(|t| t.finish(ty)).collect();
                Ok(SetArray {
                    ty,
                    dims,
                    elems: Elems::I(elems),
                })
            }
            _ => SetArray::top(ty, dims, Why::UNMODELLED),
        }
    }

    /// A dot's or convolution's float operand as XLA's kernels read it (subnormals as zero).
    fn dot_operand(&self, ty: PrimitiveType, v: &[FSet]) -> Result<Vec<FSet>> {
        let fmt = fmt_of(ty)?;
        let sub = self.sub(Opcode::Multiply, ty);
        Ok(v.iter().map(|&s| arith::operand(fmt, s, sub)).collect())
    }

    fn convolution(&mut self, i: &Instruction, l: &SetArray, r: &SetArray) -> Result<SetArray> {
        let p = crate::dot::conv_plan(i, &l.dims, &r.dims)?;
        let (ty, dims) = (p.ty, p.dims.clone());
        self.step(r.len() as u64 * (dims.iter().product::<usize>() as u64) / 64)?;
        match (&l.elems, &r.elems) {
            (Elems::F(a), Elems::F(b)) => {
                let (a, b) = (self.dot_operand(l.ty, a)?, self.dot_operand(r.ty, b)?);
                let accs: Vec<Terms> = p.run(&a, &b, false);
                let fmt = fmt_of(ty)?;
                let sub = self.sub(Opcode::Add, ty);
                let elems = accs
                    .iter()
                    .map(|t| arith::result(fmt, t.finish(fmt, sub), sub))
                    .collect();
                Ok(SetArray {
                    ty,
                    dims,
                    elems: Elems::F(elems),
                })
            }
            _ => {
                if let (Some(x), Some(y)) = (l.to_exact(), r.to_exact()) {
                    if !ty.is_float() && !ty.is_complex() {
                        let v = crate::dot::convolution(
                            i,
                            &x,
                            &y,
                            crate::variant::Accumulation::Wide,
                            false,
                        )?;
                        return SetArray::exact(&v);
                    }
                }
                SetArray::top(ty, dims, Why::UNMODELLED)
            }
        }
    }

    fn while_loop(&mut self, i: &Instruction, ops: &[&SetValue]) -> Result<SetValue> {
        let cond = attrs::comp(i, "condition")?;
        let body = attrs::comp(i, "body")?;
        let mut state = ops
            .first()
            .map(|v| (*v).clone())
            .ok_or_else(|| invalid("while takes one operand"))?;
        loop {
            let c = self.call(cond, vec![state.clone()])?;
            let c = sarr(&c)?;
            match c.ints()?.first() {
                Some(s) if s.is_point() && s.lo == 0 => return Ok(state),
                Some(s) if s.is_point() => state = self.call(body, vec![state])?,
                // A loop whose condition may go either way: nothing bounds how often it runs.
                Some(_) => return SetValue::top(&i.shape, Why::BRANCH | Why::UNMODELLED),
                None => return Err(invalid("while condition must return a pred scalar")),
            }
        }
    }

    fn conditional(&mut self, i: &Instruction, ops: &[&SetValue]) -> Result<SetValue> {
        let sel = sarr(
            ops.first()
                .ok_or_else(|| invalid("conditional without a selector"))?,
        )?;
        let branches: Vec<usize> = match i.comps("branch_computations") {
            Some(b) => b.to_vec(),
            None => vec![
                attrs::comp(i, "true_computation")?,
                attrs::comp(i, "false_computation")?,
            ],
        };
        if branches.is_empty() || ops.len() != branches.len() + 1 {
            return Err(invalid("conditional needs one operand per branch"));
        }
        let s = *sel
            .ints()?
            .first()
            .ok_or_else(|| invalid("conditional selector must be a scalar"))?;
        let pick = |v: i128| -> usize {
            if sel.ty == PrimitiveType::Pred {
                if v != 0 {
                    0
                } else {
                    1
                }
            } else if v < 0 || v as usize >= branches.len() {
                branches.len() - 1
            } else {
                v as usize
            }
        };
        let mut taken: Vec<usize> = if s.count() > branches.len() as u128 + 2 {
            (0..branches.len()).collect()
        } else {
            (s.lo..=s.hi).map(pick).collect()
        };
        taken.sort_unstable();
        taken.dedup();
        let mut out: Option<SetValue> = None;
        for &k in &taken {
            let r = self.call(branches[k], vec![ops[k + 1].clone()])?;
            out = Some(match out {
                None => r,
                Some(o) => o.hull(&r)?,
            });
        }
        let mut out = out.ok_or_else(|| invalid("no branch"))?;
        if taken.len() > 1 {
            mark_value(&mut out, Why::BRANCH);
        }
        Ok(out)
    }

    /// `scan` step by step, as XLA CPU's expander runs it (`crate::control::scan`): each step's
    /// sets through `to_apply`. A scan marked `is_associative` may be combined in another
    /// order (a parallel prefix), which float rounding can tell apart: any value then.
    fn scan(&mut self, i: &Instruction, ops: &[&SetValue]) -> Result<SetValue> {
        if attrs::flag(i, "is_associative", false) {
            return SetValue::top(&i.shape, Why::ORDER | Why::UNMODELLED);
        }
        let n_in = ops
            .len()
            .checked_sub(usize::try_from(attrs::req_int(i, "num_carries")?).unwrap_or(usize::MAX))
            .ok_or_else(|| invalid("num_carries exceeds the operands"))?;
        let inputs: Vec<&Arc<SetArray>> =
            ops[..n_in].iter().map(|v| sarr(v)).collect::<Result<_>>()?;
        let dims: Vec<&[usize]> = inputs.iter().map(|a| a.dims.as_slice()).collect();
        let crate::control::ScanPlan {
            body,
            dim,
            len,
            carries,
            reverse,
            tuple,
            outputs: out_types,
            ..
        } = crate::control::ScanPlan::new(i, ops.len(), &dims)?;
        let n_out = out_types.len();
        let split = |dims: &[usize]| (product(&dims[..dim]), product(&dims[dim + 1..]));
        let mut carry: Vec<SetValue> = ops[n_in..].iter().map(|v| (*v).clone()).collect();
        // Each output's slices by scan index.
        let mut slices: Vec<Vec<Option<Elems>>> = vec![vec![None; len]; n_out];
        for step in 0..len {
            let k = if reverse { len - 1 - step } else { step };
            let mut args = Vec::with_capacity(ops.len());
            for a in &inputs {
                let (outer, inner) = split(&a.dims);
                let idx: Vec<usize> = (0..outer)
                    .flat_map(|o| (0..inner).map(move |x| (o * len + k) * inner + x))
                    .collect();
                self.step(idx.len() as u64)?;
                let mut dims = a.dims.clone();
                dims.remove(dim);
                args.push(SetValue::array(SetArray {
                    ty: a.ty,
                    dims,
                    elems: a.elems.take(&idx),
                }));
            }
            args.append(&mut carry);
            let mut results = match self.call(body, args)? {
                SetValue::Tuple(t) => t,
                v => vec![v],
            };
            if results.len() != n_out + carries {
                return Err(invalid(
                    "scan's to_apply returned the wrong number of values",
                ));
            }
            carry = results.split_off(n_out);
            for (o, v) in results.iter().enumerate() {
                let v = sarr(v)?;
                let (ty, dims) = &out_types[o];
                let mut want = dims.clone();
                want.remove(dim);
                if v.ty != *ty || v.dims != want {
                    return Err(invalid(
                        "scan's to_apply returned an output of the wrong shape",
                    ));
                }
                slices[o][k] = Some(v.elems.clone());
            }
        }
        let mut all = Vec::with_capacity(n_out + carries);
        for (o, (ty, dims)) in out_types.into_iter().enumerate() {
            let (outer, inner) = split(&dims);
            let elems = if len == 0 || outer * inner == 0 {
                SetArray::exact(&Array::zeros(ty, dims.clone())?)?.elems
            } else {
                let parts: Vec<&Elems> = slices[o].iter().flatten().collect();
                let joined = Elems::concat(&parts)
                    .ok_or_else(|| invalid("scan outputs of different kinds"))?;
                // Slice k holds (outer, inner) at k * outer * inner + o * inner + x.
                let idx: Vec<usize> = (0..outer)
                    .flat_map(|o| {
                        (0..len)
                            .flat_map(move |k| (0..inner).map(move |x| (k * outer + o) * inner + x))
                    })
                    .collect();
                joined.take(&idx)
            };
            all.push(SetValue::array(SetArray { ty, dims, elems }));
        }
        all.append(&mut carry);
        Ok(if tuple {
            SetValue::Tuple(all)
        } else {
            all.pop().expect("one result")
        })
    }

    fn map(&mut self, i: &Instruction, ops: &[&SetValue]) -> Result<SetValue> {
        let c = attrs::comp(i, "to_apply")?;
        let (ty, dims) = out_dims(i)?;
        let arrays: Vec<&Arc<SetArray>> = ops.iter().map(|v| sarr(v)).collect::<Result<_>>()?;
        let n: usize = dims.iter().product();
        let mut outs: Vec<SetArray> = Vec::with_capacity(n);
        for k in 0..n {
            let args: Vec<SetValue> = arrays
                .iter()
                .map(|a| {
                    SetValue::array(SetArray {
                        ty: a.ty,
                        dims: vec![],
                        elems: a.elems.take(&[k]),
                    })
                })
                .collect();
            outs.push((**sarr(&self.call(c, args)?)?).clone());
        }
        let parts: Vec<&Elems> = outs.iter().map(|a| &a.elems).collect();
        let elems = if parts.is_empty() {
            SetArray::top(ty, vec![0], Why::NONE)?.elems
        } else {
            Elems::concat(&parts).ok_or_else(|| invalid("map results of different kinds"))?
        };
        Ok(SetValue::array(SetArray { ty, dims, elems }))
    }

    fn scatter(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
    ) -> Result<SetValue> {
        if ops.len() != 3 {
            // Variadic scatters: exactly known operands only.
            return Ok(match self.exactly(comp, i, ops)? {
                Some(v) => v,
                None => SetValue::top(&i.shape, Why::UNMODELLED)?,
            });
        }
        let (operand, idx, upd) = (sarr(ops[0])?, sarr(ops[1])?, sarr(ops[2])?);
        let Some(idx) = idx.to_exact() else {
            return SetValue::top(&i.shape, Why::INDEX);
        };
        let targets = crate::reduce::scatter_targets(i, &operand.dims, &idx, &upd.dims)?;
        self.step(targets.len() as u64)?;
        let c = attrs::comp(i, "to_apply")?;
        let assign = crate::reduce::is_assign(self.module, c);
        let binop = crate::reduce::simple_binop(self.module, c).map(|(op, _)| op);
        // Updates per operand position, in update order.
        let mut per: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
        for &(p, u) in &targets {
            per.entry(p).or_default().push(u);
        }
        let unique = attrs::flag(i, "unique_indices", false);
        let mut out = (**operand).clone();
        match (&mut out.elems, &upd.elems) {
            (Elems::F(o), Elems::F(u)) => {
                for (&p, us) in &per {
                    o[p] = if assign {
                        let s = us.iter().fold(FSet::EMPTY, |h, &k| h.hull(u[k]));
                        if us.len() > 1 {
                            s.because(Why::ORDER)
                        } else {
                            s
                        }
                    } else if let Some(op) = binop {
                        let red = Reduction {
                            op,
                            ty: operand.ty,
                            freedoms: Freedoms {
                                init_anywhere: false,
                                ..self.opts.freedoms
                            },
                            sub: self.sub(op, operand.ty),
                        };
                        red.fold_f(us.iter().map(|&k| u[k]), Some(o[p]))?
                    } else {
                        return SetValue::top(&i.shape, Why::UNMODELLED);
                    };
                    if unique && us.len() > 1 {
                        o[p] = FSet::top(Why::UNDEFINED);
                    }
                }
            }
            (Elems::I(o), Elems::I(u)) => {
                for (&p, us) in &per {
                    o[p] = if assign {
                        us.iter()
                            .map(|&k| u[k])
                            .reduce(|a, b| a.hull(b).because(Why::ORDER))
                            .unwrap_or(o[p])
                    } else if let Some(op) = binop {
                        let red = Reduction {
                            op,
                            ty: operand.ty,
                            freedoms: self.opts.freedoms,
                            sub: self.sub(op, operand.ty),
                        };
                        red.fold_i(us.iter().map(|&k| u[k]).chain([o[p]]), None)
                    } else {
                        return SetValue::top(&i.shape, Why::UNMODELLED);
                    };
                }
            }
            _ => {
                return Ok(match self.exactly(comp, i, ops)? {
                    Some(v) => v,
                    None => SetValue::top(&i.shape, Why::UNMODELLED)?,
                })
            }
        }
        Ok(SetValue::array(out))
    }

    fn select_and_scatter(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
    ) -> Result<SetValue> {
        if ops.len() != 3 {
            return Err(invalid(
                "select-and-scatter takes operand, source and init value",
            ));
        }
        let (a, src, init) = (sarr(ops[0])?, sarr(ops[1])?, sarr(ops[2])?);
        let sel = attrs::comp(i, "select")?;
        let sc = attrs::comp(i, "scatter")?;
        let dir = simple_compare(self.module, sel);
        let Some(op) = crate::reduce::simple_binop(self.module, sc)
            .map(|(op, _)| op)
            .filter(|op| matches!(op, Opcode::Add | Opcode::Maximum | Opcode::Minimum))
        else {
            return Ok(match self.exactly(comp, i, ops)? {
                Some(v) => v,
                None => SetValue::top(&i.shape, Why::UNMODELLED)?,
            });
        };
        let groups = crate::reduce::window_groups(i, &a.dims, &src.dims)?;
        self.step(groups.positions.len() as u64)?;
        // For each window, the positions it may select: those no other element of the window
        // is certainly preferred to (ties: any of them, as XLA chooses per window); with a
        // select that is no plain compare, any position.
        // The select's compare reads subnormals as zero under DAZ, as any IEEE compare does
        // (a total order sees the bits): the operand as it reads it, once.
        let read: Option<Vec<FSet>> = match (&a.elems, fmt_of(a.ty), dir) {
            (Elems::F(v), Ok(fmt), Some((_, false))) => {
                let sub = self.sub(Opcode::Compare, a.ty);
                Some(v.iter().map(|&x| arith::operand(fmt, x, sub)).collect())
            }
            _ => None,
        };
        let certainly_beats = |q: usize, p: usize| -> bool {
            let Some((dir, total)) = dir else {
                return false;
            };
            let (x, y) = match &a.elems {
                Elems::F(v) => {
                    let v = read.as_deref().unwrap_or(v);
                    (
                        arith::compare(v[q], v[p], dir, total),
                        arith::compare(v[p], v[q], dir, total),
                    )
                }
                Elems::I(v) => (
                    arith::compare_int(v[q], v[p], dir),
                    arith::compare_int(v[p], v[q], dir),
                ),
                Elems::C(_) => return false,
            };
            x.lo == 1 && y.hi == 0
        };
        // Per output position: the sources it certainly gets, and those it may.
        let mut sure: Vec<Vec<usize>> = vec![Vec::new(); a.len()];
        let mut maybe: Vec<Vec<usize>> = vec![Vec::new(); a.len()];
        // An IEEE compare is no order once a NaN is in the window: the fold takes whatever
        // follows the NaN, and the fold's order is the implementation's (StableHLO defines
        // select_and_scatter through reduce_window, whose schedule is implementation-defined),
        // so any position may end up selected.
        // Nor is a total order of an fnuz type, whose one NaN the texts do not place.
        let fnuz = a.ty.to_string().ends_with("fnuz");
        let unordered = |win: &[usize]| match (&a.elems, dir) {
            (Elems::F(v), Some((_, false))) => {
                let v = read.as_deref().unwrap_or(v);
                win.iter().any(|&p| v[p].nan)
            }
            (Elems::F(v), Some((_, true))) if fnuz => win.iter().any(|&p| v[p].nan),
            _ => false,
        };
        for g in 0..groups.len() {
            let win = groups.group(g);
            let cands: Vec<usize> = if unordered(win) {
                Vec::new()
            } else {
                win.iter()
                    .copied()
                    .filter(|&p| win.iter().all(|&q| q == p || !certainly_beats(q, p)))
                    .collect()
            };
            let cands = if cands.is_empty() {
                win.to_vec()
            } else {
                cands
            };
            for &p in &cands {
                if cands.len() == 1 {
                    sure[p].push(g);
                } else {
                    maybe[p].push(g);
                }
            }
        }
        let red = Reduction {
            op,
            ty: src.ty,
            freedoms: Freedoms {
                init_anywhere: false,
                ..self.opts.freedoms
            },
            sub: self.sub(op, src.ty),
        };
        let elems = match (&src.elems, &init.elems) {
            (Elems::F(s), Elems::F(i0)) => Elems::F(
                (0..a.len())
                    .map(|p| {
                        let base = red.fold_f(sure[p].iter().map(|&g| s[g]), Some(i0[0]))?;
                        if maybe[p].is_empty() {
                            return Ok(base);
                        }
                        // Every subset of the optional sources: the sum with each one or a zero
                        // for it; maximum and minimum are monotone in what they take, NaN
                        // aside (a subset without the NaN sources has none).
                        let nan = maybe[p].iter().any(|&g| s[g].nan);
                        let all =
                            red.fold_f(
                                sure[p]
                                    .iter()
                                    .chain(maybe[p].iter().filter(|&&g| {
                                        op == Opcode::Add || !s[g].pieces().is_empty()
                                    }))
                                    .map(|&g| {
                                        let t = s[g].because(Why::BRANCH);
                                        if op == Opcode::Add {
                                            t.hull(FSet::point(0.0)).hull(FSet::point(-0.0))
                                        } else if maybe[p].contains(&g) {
                                            FSet {
                                                nan: false,
                                                nan_sign: None,
                                                ..t
                                            }
                                        } else {
                                            t
                                        }
                                    }),
                                Some(i0[0]),
                            )?;
                        // Maximum and minimum over a subset: any value between.
                        Ok(if op == Opcode::Add {
                            base.hull(all)
                        } else {
                            base.hull(all).convex().with_nan(nan || base.nan || all.nan)
                        })
                    })
                    .collect::<Result<_>>()?,
            ),
            (Elems::I(s), Elems::I(i0)) => Elems::I(
                (0..a.len())
                    .map(|p| {
                        let base = red.fold_i(sure[p].iter().map(|&g| s[g]), Some(i0[0]));
                        if maybe[p].is_empty() {
                            return base;
                        }
                        let all = red.fold_i(
                            sure[p].iter().chain(&maybe[p]).map(|&g| {
                                let t = s[g].because(Why::BRANCH);
                                if op == Opcode::Add {
                                    t.hull(ISet::point(0))
                                } else {
                                    t
                                }
                            }),
                            Some(i0[0]),
                        );
                        base.hull(all)
                    })
                    .collect(),
            ),
            _ => return SetValue::top(&i.shape, Why::UNMODELLED),
        };
        Ok(SetValue::array(SetArray {
            ty: src.ty,
            dims: a.dims.clone(),
            elems,
        }))
    }

    fn sort(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
    ) -> Result<SetValue> {
        if let Some(v) = self.exactly(comp, i, ops)? {
            return match self.sort_reading_subnormal_keys_as_zero(comp, i, ops)? {
                Some(w) => v.hull(&w),
                None => Ok(v),
            };
        }
        let arrays: Vec<&Arc<SetArray>> = ops.iter().map(|v| sarr(v)).collect::<Result<_>>()?;
        let c = attrs::comp(i, "to_apply")?;
        let d = attrs::dims(i, "dimensions")?;
        let d = *d
            .first()
            .ok_or_else(|| invalid("sort without dimensions"))?;
        let dims = arrays[0].dims.clone();
        if d >= dims.len() {
            return Err(invalid("sort dimension out of range"));
        }
        let stable = attrs::flag(i, "is_stable", false);
        let cmp = simple_sort_comparator(self.module, c, arrays.len());
        let st = crate::value::strides(&dims);
        let n = dims[d];
        let total: usize = dims.iter().product();
        self.step(total as u64)?;
        let rows: Vec<usize> = (0..total).filter(|&p| (p / st[d]) % n == 0).collect();
        let mut outs: Vec<SetArray> = arrays.iter().map(|a| (***a).clone()).collect();
        for &base in &rows {
            let pos: Vec<usize> = (0..n).map(|j| base + j * st[d]).collect();
            // Clusters of keys whose order is not certain: each output position of a cluster
            // may hold any of its elements.
            let order = match &cmp {
                Some((k, dir, total_order)) => match &arrays[*k].elems {
                    Elems::F(keys) => {
                        sort_clusters(&pos, |p| key_range(&keys[p], *total_order), *dir, stable)
                    }
                    Elems::I(keys) => sort_clusters(
                        &pos,
                        |p| Some((keys[p].lo as f64, keys[p].hi as f64, keys[p].is_point())),
                        *dir,
                        stable,
                    ),
                    _ => None,
                },
                None => None,
            };
            let clusters = order.unwrap_or_else(|| vec![pos.clone()]);
            let mut out_pos = 0;
            for cl in &clusters {
                for (o, a) in outs.iter_mut().zip(&arrays) {
                    let targets = &pos[out_pos..out_pos + cl.len()];
                    if cl.len() == 1 {
                        set_elem(&mut o.elems, targets[0], &a.elems, cl[0]);
                    } else {
                        hull_into(&mut o.elems, targets, &a.elems, cl);
                    }
                }
                out_pos += cl.len();
            }
        }
        sort_result(i, outs.into_iter().map(SetValue::array).collect())
    }
}

impl Ctx<'_> {
    /// The result of an exactly known sort whose comparator's IEEE compares read subnormal
    /// operands as zero (XLA CPU's denormals-are-zero mode; measured on jaxlib 0.10.2 and the
    /// 0.11.2 plugin: f32 and bf16 keys -1e-40 and -0 tie under compares without TOTALORDER, and
    /// the next key orders them; under TOTALORDER f32 keys do not tie), each element carried
    /// with its own values: `None` when no compare is IEEE or no compared operand holds a
    /// subnormal its type reads as zero.
    fn sort_reading_subnormal_keys_as_zero(
        &mut self,
        comp: &hlo::Computation,
        i: &Instruction,
        ops: &[&SetValue],
    ) -> Result<Option<SetValue>> {
        let c = attrs::comp(i, "to_apply")?;
        let cmp = self
            .module
            .computations
            .get(c)
            .ok_or_else(|| invalid("sort comparator out of range"))?;
        let ieee = cmp.instructions.iter().any(|x| {
            x.opcode == Opcode::Compare
                && attrs::word(x, "type").as_deref() != Some("TOTALORDER")
                && x.operands.first().is_some_and(|&o| {
                    cmp.instructions
                        .get(o)
                        .is_some_and(|o| o.shape.element_type().is_some_and(|t| t.is_float()))
                })
        });
        if !ieee {
            return Ok(None);
        }
        let Some(vals) = exact_values(ops) else {
            return Ok(None);
        };
        let arrays: Vec<&crate::value::Array> = vals
            .iter()
            .map(|v| v.as_array().ok_or_else(|| invalid("sort of a tuple")))
            .collect::<Result<_>>()?;
        let bits: Vec<Vec<u128>> = arrays.iter().map(|a| to_bits(&a.buf)).collect();
        let mut flushed = bits.clone();
        let mut changed = false;
        for (k, a) in arrays.iter().enumerate() {
            let Some(fmt) = format(a.ty) else { continue };
            if !self.sub(Opcode::Compare, a.ty).daz {
                continue;
            }
            let sign = 1u128 << (a.ty.bit_width() - 1);
            for (j, x) in crate::elementwise::to_f64s(&a.buf).into_iter().enumerate() {
                if x != 0.0 && x.abs() < fmt.min_normal {
                    flushed[k][j] &= sign;
                    changed = true;
                }
            }
        }
        if !changed {
            return Ok(None);
        }
        let read: Vec<Value> = arrays
            .iter()
            .zip(&flushed)
            .map(|(a, f)| {
                Ok(Value::array(crate::value::Array::new(
                    a.ty,
                    a.dims.clone(),
                    from_bits(a.ty, f)?,
                )))
            })
            .collect::<Result<_>>()?;
        let refs: Vec<&Value> = read.iter().collect();
        let sorted = crate::eval::eval_one(self.module, &self.oracle, comp, i, &refs)?;
        let sorted: Vec<Vec<u128>> = match &sorted {
            Value::Tuple(t) => t
                .iter()
                .map(|v| v.as_array().map(|a| to_bits(&a.buf)))
                .collect::<Option<_>>(),
            Value::Array(a) => Some(vec![to_bits(&a.buf)]),
            Value::Token => None,
        }
        .ok_or_else(|| invalid("sort result is no array"))?;
        // Which element went where: the first unused one of its row with the same values as
        // read (equal ones are interchangeable but for a subnormal read as zero, and a stable
        // sort keeps such ties in their order, which the first unused one follows).
        let dims = &arrays[0].dims;
        let d = *attrs::dims(i, "dimensions")?
            .first()
            .ok_or_else(|| invalid("sort without dimensions"))?;
        let (Some(&n), st) = (dims.get(d), crate::value::strides(dims)) else {
            return Ok(None);
        };
        let total: usize = dims.iter().product();
        let mut out = bits.clone();
        for base in (0..total).filter(|&p| (p / st[d]) % n.max(1) == 0) {
            let pos: Vec<usize> = (0..n).map(|j| base + j * st[d]).collect();
            let mut used = vec![false; n];
            for &q in &pos {
                let Some(j) = (0..n).find(|&j| {
                    !used[j] && (0..arrays.len()).all(|k| flushed[k][pos[j]] == sorted[k][q])
                }) else {
                    return Ok(None);
                };
                used[j] = true;
                for k in 0..arrays.len() {
                    out[k][q] = bits[k][pos[j]];
                }
            }
        }
        let outs: Vec<SetValue> = arrays
            .iter()
            .zip(&out)
            .map(|(a, o)| {
                let v = crate::value::Array::new(a.ty, a.dims.clone(), from_bits(a.ty, o)?);
                let mut set = SetArray::exact(&v)?;
                if let Elems::F(e) = &mut set.elems {
                    e.iter_mut().for_each(|x| x.why |= Why::FLUSH);
                }
                Ok(SetValue::array(set))
            })
            .collect::<Result<_>>()?;
        sort_result(i, outs).map(Some)
    }
}

/// Every operand's exact value, when all are exactly known.
fn exact_values(ops: &[&SetValue]) -> Option<Vec<Value>> {
    ops.iter().map(|v| v.to_exact()).collect()
}

/// A sort's result from its sorted operands: a tuple, or the one array of a one-operand sort.
fn sort_result(i: &Instruction, outs: Vec<SetValue>) -> Result<SetValue> {
    Ok(match &i.shape {
        Shape::Tuple(_) => SetValue::Tuple(outs),
        _ => outs
            .into_iter()
            .next()
            .ok_or_else(|| invalid("sort without operands"))?,
    })
}

/// Whether both operands of a binary instruction are the same value (`x op x`): then the op
/// sees one value twice, not two independent ones.
fn same_operand(i: &Instruction) -> bool {
    i.operands.len() == 2 && i.operands[0] == i.operands[1]
}

/// The values `x op x` may see for an element set `s`, each with the subnormal handling to
/// apply to it: every exactly known piece alone (read as zero by both operands together when
/// it is a subnormal the op flushes), other pieces as they are (their values are then taken
/// independently, which encloses the diagonal), and a NaN of the set as one value.
fn diagonal(fmt: &Format, s: FSet, sub: Subnormals, by_sign: bool) -> Vec<(FSet, Subnormals)> {
    let none = Subnormals {
        daz: false,
        ftz: sub.ftz,
    };
    let mut out = Vec::new();
    for (lo, hi) in s.pieces() {
        let piece = FSet {
            why: s.why,
            ..FSet::range(lo, hi)
        };
        if lo.to_bits() != hi.to_bits() {
            if by_sign {
                // `x op x` depends on x's sign alone (x - x, x / x, fmod(x, x), atan2(x, x),
                // compare(x, x)): a value of each sign the piece holds stands for all, its zeros
                // for themselves (read as zero by both operands together).
                for (a, b, rep) in [
                    (f64::NEG_INFINITY, -5e-324, -1.0),
                    (5e-324, f64::INFINITY, 1.0),
                ] {
                    if piece.meets(a, b) {
                        out.push((
                            FSet {
                                why: s.why,
                                ..FSet::point(rep)
                            },
                            none,
                        ));
                    }
                }
                let below = fmt.min_normal;
                for (z, a, b) in [(-0.0, -below, -0.0), (0.0, 0.0, below)] {
                    // A zero of the piece, or a subnormal both operands read as zero.
                    let flushed = sub.daz && piece.meets(a, b);
                    if piece.contains(z) || flushed {
                        let w = if flushed { Why::FLUSH } else { Why::NONE };
                        out.push((
                            FSet {
                                why: s.why | w,
                                ..FSet::point(z)
                            },
                            none,
                        ));
                    }
                }
                continue;
            }
            out.push((piece, sub));
            continue;
        }
        out.push((piece, none));
        if sub.daz && lo != 0.0 && lo.abs() < fmt.min_normal {
            out.push((
                FSet {
                    why: s.why | Why::FLUSH,
                    ..FSet::point(0.0f64.copysign(lo))
                },
                none,
            ));
        }
    }
    if s.nan {
        // One NaN, of the set's sign when known (comparing it with itself does not depend on
        // the sign).
        let n = FSet {
            why: s.why,
            ..FSet::point(if s.nan_sign == Some(true) {
                -f64::NAN
            } else {
                f64::NAN
            })
        };
        out.push((n, none));
    }
    out
}

/// The key of a sort element as an ordered range `(lo, hi, exact)`, or `None` when it may be
/// NaN (whose place depends on the comparator and, under a total order, on its free sign).
fn key_range(s: &FSet, total: bool) -> Option<(f64, f64, bool)> {
    if s.nan {
        return None;
    }
    let (lo, hi) = s.extent()?;
    let z = |v: f64| if !total && v == 0.0 { 0.0 } else { v };
    Some((z(lo), z(hi), s.is_point()))
}

/// The elements of one sort row in output order, grouped into clusters whose relative order is
/// not certain (keys whose ranges overlap, or tied keys of an unstable sort); `None` when some
/// key has no range.
fn sort_clusters(
    pos: &[usize],
    key: impl Fn(usize) -> Option<(f64, f64, bool)>,
    descending: bool,
    stable: bool,
) -> Option<Vec<Vec<usize>>> {
    let mut items: Vec<(f64, f64, bool, usize, usize)> = Vec::with_capacity(pos.len());
    for (j, &p) in pos.iter().enumerate() {
        let (lo, hi, exact) = key(p)?;
        items.push((lo, hi, exact, j, p));
    }
    let tot = |a: f64, b: f64| a.total_cmp(&b);
    if descending {
        items.sort_by(|a, b| tot(b.1, a.1).then(a.3.cmp(&b.3)));
    } else {
        items.sort_by(|a, b| tot(a.0, b.0).then(a.3.cmp(&b.3)));
    }
    let mut clusters: Vec<Vec<usize>> = Vec::new();
    // The far end of the current cluster's keys, and the latest input position in it.
    let mut reach = f64::NAN;
    let mut latest = 0;
    for &(lo, hi, exact, j, p) in &items {
        let separate = match clusters.last() {
            None => true,
            Some(_) => {
                let (near, tie_exact) = if descending { (hi, exact) } else { (lo, exact) };
                // In the total order (key_range makes the zeros of other orders one): -0 is
                // below +0, so a -0 that may be either key is no tie with a +0.
                let ord = tot(near, reach);
                let strictly = if descending {
                    ord == Ordering::Less
                } else {
                    ord == Ordering::Greater
                };
                // An exact key equal to the cluster's far end: every key of the cluster comes
                // first or ties with it, and a stable sort puts tied keys in input order, so
                // it comes after them all when every one was before it in the input. (A key
                // that is a range may tie with it: a subnormal sum XLA CPU may flush to the
                // +0 here.)
                let tied_ok = stable && tie_exact && ord == Ordering::Equal && latest < j;
                strictly || tied_ok
            }
        };
        if separate {
            clusters.push(vec![p]);
            reach = if descending { lo } else { hi };
            latest = j;
        } else {
            latest = latest.max(j);
            clusters.last_mut().expect("a cluster").push(p);
            reach = if descending {
                tmin(reach, lo)
            } else {
                tmax(reach, hi)
            };
        }
    }
    Some(clusters)
}

fn set_elem(dst: &mut Elems, at: usize, src: &Elems, from: usize) {
    match (dst, src) {
        (Elems::F(d), Elems::F(s)) => d[at] = s[from],
        (Elems::I(d), Elems::I(s)) => d[at] = s[from],
        (Elems::C(d), Elems::C(s)) => d[at] = s[from],
        _ => {}
    }
}

/// Every position of `at` gets the hull of the elements `from` (an uncertain permutation).
fn hull_into(dst: &mut Elems, at: &[usize], src: &Elems, from: &[usize]) {
    match (dst, src) {
        (Elems::F(d), Elems::F(s)) => {
            let h = from
                .iter()
                .fold(FSet::EMPTY, |h, &k| h.hull(s[k]))
                .because(Why::BRANCH);
            at.iter().for_each(|&p| d[p] = h);
        }
        (Elems::I(d), Elems::I(s)) => {
            let h = from
                .iter()
                .map(|&k| s[k])
                .reduce(|a, b| a.hull(b))
                .map(|h| h.because(Why::BRANCH));
            if let Some(h) = h {
                at.iter().for_each(|&p| d[p] = h);
            }
        }
        (Elems::C(d), Elems::C(s)) => {
            let h = from.iter().map(|&k| s[k]).reduce(|a, b| a.hull(b));
            if let Some(mut h) = h {
                h.re.why |= Why::BRANCH;
                at.iter().for_each(|&p| d[p] = h);
            }
        }
        _ => {}
    }
}

/// `(key operand, descending, total order)` of a comparator that is one `compare` of one
/// operand's pair of parameters (LT ascending, GT descending).
fn simple_sort_comparator(module: &Module, c: CompId, n: usize) -> Option<(usize, bool, bool)> {
    let comp = module.computations.get(c)?;
    let root = comp.root_instruction();
    if root.opcode != Opcode::Compare || root.operands.len() != 2 {
        return None;
    }
    let pn = |k: usize| {
        let x = comp.instructions.get(root.operands[k])?;
        (x.opcode == Opcode::Parameter).then_some(x.parameter_number?)
    };
    let (a, b) = (pn(0)?, pn(1)?);
    let dir = Dir::parse(&attrs::word(root, "direction")?)?;
    let total = attrs::word(root, "type").as_deref() == Some("TOTALORDER");
    let (lo, swapped) = if b == a + 1 && a % 2 == 0 {
        (a, false)
    } else if a == b + 1 && b % 2 == 0 {
        (b, true)
    } else {
        return None;
    };
    let k = (lo / 2) as usize;
    if k >= n {
        return None;
    }
    let dir = if swapped { dir.swapped() } else { dir };
    match dir {
        Dir::Lt => Some((k, false, total)),
        Dir::Gt => Some((k, true, total)),
        _ => None,
    }
}

/// The direction (and whether it is a total order) of a `select` computation that is
/// `compare(p0, p1)`.
fn simple_compare(module: &Module, c: CompId) -> Option<(Dir, bool)> {
    let comp = module.computations.get(c)?;
    let root = comp.root_instruction();
    let params_ok = root.opcode == Opcode::Compare
        && root.operands.len() == 2
        && root.operands.iter().enumerate().all(|(k, &o)| {
            comp.instructions.get(o).is_some_and(|x| {
                x.opcode == Opcode::Parameter && x.parameter_number == Some(k as i64)
            })
        });
    if !params_ok {
        return None;
    }
    let total = attrs::word(root, "type").as_deref() == Some("TOTALORDER");
    Some((Dir::parse(&attrs::word(root, "direction")?)?, total))
}

/// For a reducer of `n` components, each component's binary op when component `k` is
/// `op(parameter(k), parameter(n + k))` (either way round): one op per component.
fn componentwise_binops(module: &Module, c: CompId, n: usize) -> Option<Vec<Opcode>> {
    if n == 1 {
        return crate::reduce::simple_binop(module, c).map(|(op, _)| vec![op]);
    }
    let comp = module.computations.get(c)?;
    let root = comp.root_instruction();
    if root.opcode != Opcode::Tuple || root.operands.len() != n {
        return None;
    }
    let param = |id: usize| {
        let x = comp.instructions.get(id)?;
        (x.opcode == Opcode::Parameter).then_some(x.parameter_number?)
    };
    root.operands
        .iter()
        .enumerate()
        .map(|(k, &o)| {
            let x = comp.instructions.get(o)?;
            use Opcode as O;
            if !matches!(
                x.opcode,
                O::Add | O::Multiply | O::Maximum | O::Minimum | O::And | O::Or | O::Xor
            ) || x.operands.len() != 2
            {
                return None;
            }
            let (a, b) = (param(x.operands[0])?, param(x.operands[1])?);
            let (k, n) = (k as i64, n as i64);
            ((a, b) == (k, n + k) || (a, b) == (n + k, k)).then_some(x.opcode)
        })
        .collect()
}

/// One component of a reduction: its op, element type and freedoms.
struct Reduction {
    op: Opcode,
    ty: PrimitiveType,
    freedoms: Freedoms,
    sub: Subnormals,
}

impl Reduction {
    fn fold_groups(
        &self,
        data: &Elems,
        init: &Elems,
        groups: &crate::reduce::Groups,
    ) -> Result<Elems> {
        Ok(match (data, init) {
            (Elems::F(d), Elems::F(i0)) => Elems::F(
                (0..groups.len())
                    .map(|g| self.fold_f(groups.group(g).iter().map(|&p| d[p]), Some(i0[0])))
                    .collect::<Result<_>>()?,
            ),
            (Elems::I(d), Elems::I(i0)) => Elems::I(
                (0..groups.len())
                    .map(|g| self.fold_i(groups.group(g).iter().map(|&p| d[p]), Some(i0[0])))
                    .collect(),
            ),
            (Elems::C(d), Elems::C(i0)) => Elems::C(
                (0..groups.len())
                    .map(|g| self.fold_c(groups.group(g).iter().map(|&p| d[p]), i0[0]))
                    .collect::<Result<_>>()?,
            ),
            _ => return Err(invalid("reduce operand and init differ in kind")),
        })
    }

    /// The set of float results: the terms in any order, the init value (the init of a reduce,
    /// the operand value of a scatter) inserted once, or (when `init_anywhere`) any number of
    /// times: none, or once more than it changes (add +-0, multiply 1 or 0, maximum and minimum
    /// any value: applying them again changes nothing); other inits leave the result undefined.
    fn fold_f(
        &self,
        terms: impl Iterator<Item = FSet> + Clone,
        init: Option<FSet>,
    ) -> Result<FSet> {
        let fmt = fmt_of(self.ty)?;
        let acc = accumulation(self.ty);
        let terms: Vec<FSet> = terms.map(|t| arith::operand(fmt, t, self.sub)).collect();
        let fold = |with_init: Option<FSet>| -> Result<FSet> {
            let all = terms.iter().copied().chain(with_init);
            if !self.freedoms.any_order {
                return self.sequential_f(all);
            }
            Ok(match self.op {
                Opcode::Add => {
                    let mut s = SumAcc::new();
                    all.for_each(|t| s.add(t));
                    s.finish(acc, fmt)
                }
                Opcode::Multiply => {
                    let mut p = ProdAcc::default();
                    p.flush = self.sub.ftz || self.sub.daz;
                    all.for_each(|t| p.add(t));
                    p.finish(acc, fmt)
                }
                Opcode::Maximum | Opcode::Minimum => {
                    let mut m = MaxAcc::new(self.op == Opcode::Maximum);
                    all.for_each(|t| m.add(t));
                    m.finish()
                }
                _ => FSet::top(Why::UNMODELLED),
            })
        };
        let Some(init) = init else {
            return Ok(arith::result(fmt, fold(None)?, self.sub));
        };
        if terms.is_empty() {
            // The init value alone (read as arithmetic reads it).
            return Ok(round_set(fmt, arith::operand(fmt, init, self.sub)));
        }
        let with = fold(Some(init))?;
        if !self.freedoms.init_anywhere {
            return Ok(round_set(fmt, arith::result(fmt, with, self.sub)));
        }
        let idempotent = match self.op {
            Opcode::Add => init.is_point() && init.lo == 0.0,
            Opcode::Multiply => init.is_point() && (init.lo == 1.0 || init.lo == 0.0),
            Opcode::Maximum | Opcode::Minimum => true,
            _ => false,
        };
        if !idempotent {
            return Ok(FSet::top(Why::UNDEFINED));
        }
        let without = fold(None)?;
        let s = with.hull(without);
        let s = if s != with { s.because(Why::INIT) } else { s };
        Ok(round_set(fmt, arith::result(fmt, s, self.sub)))
    }

    /// Terms folded in the order given, each step rounded to the element type.
    fn sequential_f(&self, mut terms: impl Iterator<Item = FSet>) -> Result<FSet> {
        let fmt = fmt_of(self.ty)?;
        let Some(mut acc) = terms.next() else {
            return Ok(FSet::EMPTY);
        };
        for t in terms {
            acc = float_binary(fmt, self.op, acc, t, self.sub, Some(0))?;
        }
        Ok(acc)
    }

    fn fold_i(&self, terms: impl Iterator<Item = ISet>, init: Option<ISet>) -> ISet {
        let (tlo, thi) = int_range(self.ty);
        let terms: Vec<ISet> = terms.collect();
        let why = terms.iter().fold(Why::NONE, |w, t| w | t.why);
        let top = ISet::range(tlo, thi).because(Why::UNMODELLED | why);
        // Any value, as the semantics table leaves it (an overflow, a reducer that is not a
        // monoid).
        let undefined = ISet::undefined(self.ty, why);
        let pred = self.ty == PrimitiveType::Pred;
        // Whether some order of combining `all` overflows a partial result: the largest and
        // smallest partial sums are those of the positive and the negative terms; a partial
        // product is at most the product of the magnitudes.
        let overflows = |all: &[ISet]| -> bool {
            // Unsigned sums and products are modular: only signed ones overflow.
            if pred || !self.ty.is_signed_integer() {
                return false;
            }
            match self.op {
                Opcode::Add => {
                    let up: i128 = all.iter().map(|s| s.hi.max(0)).sum();
                    let down: i128 = all.iter().map(|s| s.lo.min(0)).sum();
                    up > thi || down < tlo
                }
                Opcode::Multiply => {
                    let limit = thi.max(-tlo) as f64;
                    let m: f64 = all
                        .iter()
                        .map(|s| (s.lo.unsigned_abs().max(s.hi.unsigned_abs()).max(1)) as f64)
                        .product();
                    m > limit
                }
                _ => false,
            }
        };
        let overflow_defined = !hlo::semantics::implementation_defined(
            Opcode::Reduce,
            self.ty,
            hlo::semantics::Condition::IntegerOverflow,
        );
        let fold = |with: Option<ISet>| -> ISet {
            let all: Vec<ISet> = terms.iter().copied().chain(with).collect();
            if all.is_empty() {
                return ISet::point(0);
            }
            if !overflow_defined && overflows(&all) {
                return undefined;
            }
            match self.op {
                Opcode::Maximum | Opcode::Or if pred || self.op == Opcode::Maximum => ISet::range(
                    all.iter().map(|s| s.lo).max().unwrap_or(tlo),
                    all.iter().map(|s| s.hi).max().unwrap_or(thi),
                ),
                Opcode::Minimum | Opcode::And if pred || self.op == Opcode::Minimum => ISet::range(
                    all.iter().map(|s| s.lo).min().unwrap_or(tlo),
                    all.iter().map(|s| s.hi).min().unwrap_or(thi),
                ),
                _ if all.iter().all(|s| s.is_point()) => {
                    // Exact and order-free: modular arithmetic and bitwise ops.
                    let f = crate::elementwise::int_binary_fn(
                        self.op,
                        self.ty.bit_width(),
                        self.ty.is_signed_integer(),
                    );
                    let pf = crate::elementwise::pred_binop(self.op);
                    let mut acc = all[0].lo;
                    for s in &all[1..] {
                        acc = if pred {
                            match pf {
                                Some(g) => g(acc != 0, s.lo != 0) as i128,
                                None => return top,
                            }
                        } else {
                            match &f {
                                Some(g) => {
                                    int_of_bits(self.ty, g(acc as i64, s.lo as i64) as u64 as u128)
                                }
                                None => return top,
                            }
                        };
                    }
                    ISet::point(acc)
                }
                Opcode::Add => {
                    let lo: i128 = all.iter().map(|s| s.lo).sum();
                    let hi: i128 = all.iter().map(|s| s.hi).sum();
                    if lo >= tlo && hi <= thi {
                        ISet::range(lo, hi)
                    } else {
                        top
                    }
                }
                Opcode::Multiply => {
                    // The product's range: corners of each factor, multiplied along (no
                    // overflow: checked above).
                    let mut acc = ISet::point(1);
                    for t in &all {
                        let c = [acc.lo * t.lo, acc.lo * t.hi, acc.hi * t.lo, acc.hi * t.hi];
                        acc = ISet::range(
                            c.iter().copied().min().unwrap_or(tlo),
                            c.iter().copied().max().unwrap_or(thi),
                        );
                    }
                    if acc.lo >= tlo && acc.hi <= thi {
                        acc
                    } else {
                        top
                    }
                }
                _ => top,
            }
        };
        let Some(init) = init else {
            return fold(None).because(why);
        };
        if terms.is_empty() {
            return init;
        }
        let with = fold(Some(init));
        if !self.freedoms.init_anywhere {
            return with.because(why);
        }
        let idempotent = match self.op {
            Opcode::Add | Opcode::Or | Opcode::Xor => init.is_point() && init.lo == 0,
            Opcode::Multiply => init.is_point() && (init.lo == 1 || init.lo == 0),
            Opcode::And => {
                init.is_point()
                    && (init.lo == -1
                        || init.lo == thi
                        || self.ty == PrimitiveType::Pred && init.lo == 1)
            }
            Opcode::Maximum | Opcode::Minimum => true,
            _ => false,
        };
        if !idempotent {
            return undefined;
        }
        let s = with.hull(fold(None));
        (if s != with { s.because(Why::INIT) } else { s }).because(why)
    }

    fn fold_c(&self, terms: impl Iterator<Item = CSet>, init: CSet) -> Result<CSet> {
        let terms: Vec<CSet> = terms.collect();
        if matches!(self.op, Opcode::Maximum | Opcode::Minimum) {
            // Each step selects one of its operands (`complex_pick`): whatever the order and
            // however often the init value joins, the result is one of the terms or the init.
            let mut out = terms.iter().fold(init, |acc, c| acc.hull(*c));
            if !terms.is_empty() {
                out.re.why |= Why::ORDER;
            }
            return Ok(out);
        }
        if self.op != Opcode::Add || terms.iter().chain([&init]).any(|c| c.inf) {
            return Ok(CSet::top(Why::UNMODELLED));
        }
        let part = Reduction {
            op: Opcode::Add,
            ty: funcs::part_type(self.ty),
            freedoms: self.freedoms,
            sub: self.sub,
        };
        Ok(CSet {
            re: part.fold_f(terms.iter().map(|c| c.re), Some(init.re))?,
            im: part.fold_f(terms.iter().map(|c| c.im), Some(init.im))?,
            inf: false,
        })
    }
}

/// The products of a float dot or convolution, accumulated as an order-free sum.
#[derive(Clone, Copy, Debug)]
struct Terms {
    sum: SumAcc,
    /// How many products may be subnormal ([`Tiny`]).
    tiny: Tiny,
}

impl Terms {
    fn finish(&self, fmt: &Format, sub: Subnormals) -> FSet {
        self.tiny.flushed(self.sum.finish(fmt, fmt), fmt, sub)
    }
}

/// How many products of a dot may be subnormal in the type they are summed in (f64 for f64
/// results, f32 for f32 and narrower, whose kernels compute in f32): under XLA CPU's
/// flush-to-zero each of them may be zero instead (an f32 dot of 1.2e-38 by -0.14 and -0.99 is
/// -0 on XLA CPU, measured: both products flush), so the sum may move by up to the smallest
/// normal magnitude per such product. (A partial sum that cancels into the subnormals is not
/// counted.)
#[derive(Clone, Copy, Debug, Default)]
struct Tiny {
    f32: u32,
    f64: u32,
}

impl Tiny {
    fn count(&mut self, p: &FSet) {
        let may_be_subnormal = |min: f64| {
            p.meets(5e-324, min.next_down_f64()) || p.meets(-min.next_down_f64(), -5e-324)
        };
        // f64's subnormals lie inside f32's band: one test in the common case.
        if may_be_subnormal(f32::MIN_POSITIVE as f64) {
            self.f32 += 1;
            self.f64 += u32::from(may_be_subnormal(f64::MIN_POSITIVE));
        }
    }

    /// [`Tiny::count`] of one exact value.
    fn count_point(&mut self, p: f64) {
        let a = p.abs();
        if a != 0.0 && a < f32::MIN_POSITIVE as f64 {
            self.f32 += 1;
            self.f64 += u32::from(a < f64::MIN_POSITIVE);
        }
    }

    /// `s` widened by what flushing the subnormal products may move it (when `sub` flushes).
    fn flushed(&self, s: FSet, fmt: &Format, sub: Subnormals) -> FSet {
        let (n, min) = if fmt.ty == PrimitiveType::F64 {
            (self.f64, f64::MIN_POSITIVE)
        } else {
            (self.f32, f32::MIN_POSITIVE as f64)
        };
        if !(sub.ftz || sub.daz) || n == 0 || !s.num {
            return s;
        }
        let w = n as f64 * min;
        s.hull(FSet::range(
            (s.lo - w).next_down_f64(),
            (s.hi + w).next_up_f64(),
        ))
        .because(Why::FLUSH)
    }
}

/// The product of two finite points where f64 holds it exactly (always for operands of f32
/// and narrower types, short of an f64 underflow): most of a dot's terms, summed without set
/// arithmetic.
fn exact_point_product(a: &FSet, b: &FSet) -> Option<f64> {
    if !(a.is_point() && b.is_point() && a.lo.is_finite() && b.lo.is_finite()) {
        return None;
    }
    // Two f32 values (24 significant bits each, magnitudes within 2^-149..2^128) multiply
    // exactly in f64, inside its normal range: no check needed.
    let in_f32 = |x: f64| (x as f32) as f64 == x;
    if in_f32(a.lo) && in_f32(b.lo) {
        return Some(a.lo * b.lo);
    }
    let p = arith::mul_ex(a.lo, b.lo);
    (p.e == 0.0 && p.r.is_finite()).then_some(p.r)
}

/// The exact product of two sets (rounded outward in f64, a hair wider than exact).
fn exact_product(a: FSet, b: FSet) -> FSet {
    let f64fmt = format(PrimitiveType::F64).expect("f64");
    let none = Subnormals {
        daz: false,
        ftz: false,
    };
    arith::multiply(f64fmt, a, b, none)
}

/// An integer dot's running sum: the range of the sum, and the largest and smallest partial
/// sums any order of adding could reach (the positive and the negative products' sums).
#[derive(Clone, Copy, Debug)]
struct IntTerms {
    lo: Option<i128>,
    hi: Option<i128>,
    up: Option<i128>,
    down: Option<i128>,
    why: Why,
}

impl IntTerms {
    fn finish(&self, ty: PrimitiveType) -> ISet {
        let (tlo, thi) = int_range(ty);
        let why = self.why;
        if why.has(Why::UNDEFINED) {
            return ISet::undefined(ty, why);
        }
        let (Some(lo), Some(hi)) = (self.lo, self.hi) else {
            return if ty.is_signed_integer() {
                ISet::undefined(ty, why)
            } else {
                ISet::range(tlo, thi).because(why | Why::BRANCH)
            };
        };
        if ty.is_signed_integer() {
            let past = self.up.is_none_or(|u| u > thi) || self.down.is_none_or(|d| d < tlo);
            if past
                && hlo::semantics::implementation_defined(
                    Opcode::Dot,
                    ty,
                    hlo::semantics::Condition::IntegerOverflow,
                )
            {
                return ISet::undefined(ty, why);
            }
        }
        if lo >= tlo && hi <= thi {
            ISet::range(lo, hi).because(why)
        } else if lo == hi && ty != PrimitiveType::Pred {
            // Modular: the exact sum wraps.
            let m = 1i128 << ty.bit_width();
            let w = lo.rem_euclid(m);
            ISet::point(if w > thi { w - m } else { w }).because(why)
        } else {
            ISet::range(tlo, thi).because(why | Why::BRANCH)
        }
    }
}

impl crate::dot::Accumulate<ISet> for IntTerms {
    fn zero() -> Self {
        IntTerms {
            lo: Some(0),
            hi: Some(0),
            up: Some(0),
            down: Some(0),
            why: Why::NONE,
        }
    }

    fn mul_add(&mut self, a: ISet, b: ISet) {
        self.why |= a.why | b.why;
        let c = [
            a.lo.checked_mul(b.lo),
            a.lo.checked_mul(b.hi),
            a.hi.checked_mul(b.lo),
            a.hi.checked_mul(b.hi),
        ];
        let (plo, phi) = if c.iter().all(Option::is_some) {
            let c: Vec<i128> = c.into_iter().flatten().collect();
            (c.iter().min().copied(), c.iter().max().copied())
        } else {
            (None, None)
        };
        let add =
            |acc: Option<i128>, x: Option<i128>| acc.zip(x).and_then(|(u, v)| u.checked_add(v));
        self.lo = add(self.lo, plo);
        self.hi = add(self.hi, phi);
        self.up = add(self.up, phi.map(|h| h.max(0)));
        self.down = add(self.down, plo.map(|l| l.min(0)));
    }

    fn pad(&mut self, _b: ISet) {}
}

impl crate::dot::Accumulate<FSet> for Terms {
    fn zero() -> Self {
        Terms {
            sum: SumAcc::from_zero(),
            tiny: Tiny::default(),
        }
    }
    fn mul_add(&mut self, a: FSet, b: FSet) {
        if let Some(p) = exact_point_product(&a, &b) {
            self.tiny.count_point(p);
            self.sum.add_exact(p, a.why | b.why);
            return;
        }
        let p = exact_product(a, b);
        self.tiny.count(&p);
        self.sum.add(p);
    }
    fn pad(&mut self, b: FSet) {
        // A padding zero may be multiplied (0 * inf is NaN) or skipped.
        self.sum.add_optional(exact_product(FSet::point(0.0), b));
    }
}

/// The products of a complex dot: each part an order-free sum of real products.
#[derive(Clone, Copy, Debug)]
struct CTerms {
    re: SumAcc,
    im: SumAcc,
    /// Per part, how many real products may be subnormal ([`Tiny`]).
    tiny: [Tiny; 2],
    inf: bool,
    /// The largest format maximum at which a product may be recovered as an infinity
    /// ([`annex_g_recovery`]).
    recover_at: f64,
}

impl CTerms {
    fn finish(&self, fmt: &Format, sub: Subnormals) -> CSet {
        if self.inf {
            return CSet::top(Why::COMPLEX_INF);
        }
        let (mut re, mut im) = (
            self.tiny[0].flushed(self.re.finish(fmt, fmt), fmt, sub),
            self.tiny[1].flushed(self.im.finish(fmt, fmt), fmt, sub),
        );
        if self.recover_at >= fmt.max {
            (re, im) = (recovered(re), recovered(im));
        }
        // XLA CPU's complex matrix products scale the sum by alpha = 1+0i, as a GEMM defines
        // its result (alpha * A * B; measured on jaxlib 0.10.2: c64[m,2] x c64[3,2] for m of 1
        // to 8 and c64[5698,23] x c64[9,23] give (NaN, NaN) where the vector product of the
        // same row gives (NaN, 0) and (NaN, inf), seen in a campaign at seed 2718281): the part
        // `0 * x` of that complex product is NaN where x is an infinite or NaN part, so either
        // part makes the other NaN ((inf, 2) becomes (inf, NaN), (NaN, inf) becomes (NaN, NaN)).
        let nonfinite = |s: &FSet| s.nan || s.pinf || s.ninf;
        let scaled = |s: FSet, by: &FSet| {
            if nonfinite(by) {
                s.with_nan(true).because(Why::COMPLEX_INF)
            } else {
                s
            }
        };
        CSet {
            re: scaled(re, &im),
            im: scaled(im, &re),
            inf: false,
        }
    }
}

impl crate::dot::Accumulate<CSet> for CTerms {
    fn zero() -> Self {
        CTerms {
            re: SumAcc::from_zero(),
            im: SumAcc::from_zero(),
            tiny: [Tiny::default(); 2],
            inf: false,
            recover_at: f64::NEG_INFINITY,
        }
    }
    fn mul_add(&mut self, a: CSet, b: CSet) {
        self.inf |= a.inf || b.inf;
        let products = [
            (0, exact_product(a.re, b.re)),
            (0, arith::negate(exact_product(a.im, b.im))),
            (1, exact_product(a.re, b.im)),
            (1, exact_product(a.im, b.re)),
        ];
        let p = products.map(|(_, p)| p);
        self.recover_at = self.recover_at.max(annex_g_recovery(&a, &b, p));
        for (part, p) in products {
            self.tiny[part].count(&p);
            if part == 0 {
                self.re.add(p);
            } else {
                self.im.add(p);
            }
        }
    }
    fn pad(&mut self, _b: CSet) {
        self.inf = true;
    }
}

/// C's complex multiplication (Annex G.5.1 of the C standard, as compiler-rt's and libgcc's
/// `__mulsc3` implement it) recovers an infinity where the plain formula gives NaN in both
/// parts while an operand part is infinite or a partial product overflowed, counting the
/// operands' NaN parts as 0. XLA CPU's complex dot does (measured on jaxlib 0.10.2 and the
/// 0.11.2 PJRT plugin, nightly at seed 6931471: c64 (NaN, -3.4e38) * (-3.4e38, -0.54) gives
/// (-inf, inf) in a batched dot, (NaN, NaN) in an elementwise multiply). Returns the largest
/// format maximum at which it may happen for `a * b` with the partial products `p` (re*re,
/// -im*im, re*im, im*re; -inf when it cannot): both parts must possibly be NaN, directly or as
/// the difference of two overflowing products, and something must overflow or be infinite.
fn annex_g_recovery(a: &CSet, b: &CSet, p: [FSet; 4]) -> f64 {
    let part = |x: &FSet, y: &FSet| {
        if x.nan || y.nan {
            f64::INFINITY
        } else {
            x.max_abs().min(y.max_abs())
        }
    };
    let operand_inf = [a.re, a.im, b.re, b.im]
        .iter()
        .any(|s| s.may_be_pos_inf() || s.may_be_neg_inf());
    let largest = if operand_inf {
        f64::INFINITY
    } else {
        p.iter().map(FSet::max_abs).fold(0.0, f64::max)
    };
    let both_nan = part(&p[0], &p[1]).min(part(&p[2], &p[3]));
    if both_nan == 0.0 {
        return f64::NEG_INFINITY;
    }
    largest.min(both_nan)
}

/// A part of a complex product that [`annex_g_recovery`] may have made an infinity.
fn recovered(s: FSet) -> FSet {
    s.hull(FSet::point(f64::INFINITY))
        .hull(FSet::point(f64::NEG_INFINITY))
        .because(Why::COMPLEX_INF)
}

/// A float iota: each index as its type holds it, as arithmetic's results are rounded (a value
/// the type lacks is either neighbour; past the largest finite value of a type without
/// infinities, NaN or the f16 value XLA computed it in: with excess precision allowed, XLA CPU
/// evaluates an f8e4m3fn iota in a wider type and a following convert to f16 keeps 465, which
/// is NaN in f8e4m3fn; measured, and NaN with `xla_allow_excess_precision=false`).
fn float_iota(i: &Instruction) -> Result<SetArray> {
    let (ty, dims) = out_dims(i)?;
    let fmt = fmt_of(ty)?;
    let d = attrs::req_int(i, "iota_dimension")?;
    let d = usize::try_from(d)
        .ok()
        .filter(|&d| d < dims.len())
        .ok_or_else(|| invalid("bad iota_dimension"))?;
    let n: usize = dims.iter().product();
    let inner: usize = dims[d + 1..].iter().product::<usize>().max(1);
    let elems: Vec<FSet> = (0..n)
        .map(|k| {
            let mut o = arith::Out::new(fmt);
            o.value(((k / inner) % dims[d]) as f64);
            o.done(Why::NONE)
        })
        .collect();
    Ok(SetArray {
        ty,
        elems: Elems::F(elems),
        dims,
    })
}

fn fmt_of(ty: PrimitiveType) -> Result<&'static Format> {
    format(ty).ok_or_else(|| unsupported(format!("float sets of {ty}")))
}

fn out_dims(i: &Instruction) -> Result<(PrimitiveType, Vec<usize>)> {
    crate::eval::out_dims(i)
}

fn s_len(s: ISet) -> i128 {
    s.hi - s.lo + 1
}

/// A float unary op on a set.
fn float_unary(
    fmt: &Format,
    op: Opcode,
    s: FSet,
    sub: Subnormals,
    ulps: Option<u32>,
) -> Result<FSet> {
    use Opcode as O;
    // The operand as the op reads it (a subnormal may be read as zero: ceil(9e-41) is 0
    // under XLA CPU's denormals-are-zero).
    let s = arith::operand(fmt, s, sub);
    // Exact in reals; a result the type cannot hold (16 in a type whose largest value is 15.5)
    // rounds.
    let mono = |f: fn(f64) -> f64| -> FSet {
        round_set(fmt, map_pieces(&s, |lo, hi| FSet::range(f(lo), f(hi))))
    };
    Ok(match op {
        // A type of positive values only (f8e8m0fnu) holds no negation.
        O::Negate => round_set(fmt, arith::negate(s)),
        O::Abs => arith::abs(s),
        O::Copy => s,
        O::Real => arith::result(fmt, s, sub),
        O::Imag => FSet::point(0.0).because(s.why),
        O::Floor => mono(f64::floor),
        O::Ceil => mono(f64::ceil),
        O::RoundNearestEven => mono(f64::round_ties_even),
        O::RoundNearestAfz => mono(f64::round),
        O::Sign => {
            let v = arith::operand(fmt, s, sub);
            let mut out = FSet::EMPTY.with_nan(s.nan);
            if v.meets(f64::NEG_INFINITY, -5e-324) {
                out = out.hull(FSet::point(-1.0));
            }
            if v.meets(5e-324, f64::INFINITY) {
                out = out.hull(FSet::point(1.0));
            }
            for z in [-0.0, 0.0] {
                if v.contains(z) {
                    out = out.hull(FSet::point(z));
                }
            }
            out.because(s.why)
        }
        O::Sqrt => arith::sqrt(fmt, s, sub),
        _ => match ulps {
            Some(u) => match funcs::unary(fmt, op, s, sub, u) {
                Some(r) => r,
                None => FSet::top(Why::UNMODELLED),
            },
            None => FSet::top(Why::UNMODELLED | Why::ULPS),
        },
    })
}

/// A float binary op on sets.
fn float_binary(
    fmt: &Format,
    op: Opcode,
    a: FSet,
    b: FSet,
    sub: Subnormals,
    ulps: Option<u32>,
) -> Result<FSet> {
    use Opcode as O;
    Ok(match op {
        O::Add => arith::add(fmt, a, b, sub),
        O::Subtract => arith::subtract(fmt, a, b, sub),
        O::Multiply => arith::multiply(fmt, a, b, sub),
        O::Divide => arith::divide(fmt, a, b, sub),
        O::Remainder => arith::remainder(fmt, a, b, sub),
        O::Maximum | O::Minimum => {
            let (a, b) = (arith::operand(fmt, a, sub), arith::operand(fmt, b, sub));
            arith::max_min(a, b, op == O::Maximum)
        }
        // Its value is left to the implementation, not its range: atan2 is in [-pi, pi] for
        // every operand that is not NaN (C 7.12.4.4; Annex F.9.1.4 has no domain error), so a
        // NaN of subnormal operands stays outside.
        O::Atan2 if subnormal_operand(fmt, op, fmt.ty, &[a, b]) => {
            let pi = fmt.up(std::f64::consts::PI).v;
            FSet::range(-pi, pi)
                .hull(FSet::point(-0.0))
                .hull(FSet::point(0.0))
                .with_nan(a.nan || b.nan)
                .because(Why::UNDEFINED)
        }
        O::Power if subnormal_operand(fmt, op, fmt.ty, &[a, b]) => FSet::top(Why::UNDEFINED),
        O::Power => match ulps {
            Some(u) => funcs::power(fmt, a, b, sub, u),
            None => FSet::top(Why::UNMODELLED | Why::ULPS),
        },
        O::Atan2 => match ulps {
            Some(u) => funcs::atan2(fmt, a, b, sub, u),
            None => FSet::top(Why::UNMODELLED | Why::ULPS),
        },
        _ => FSet::top(Why::UNMODELLED),
    })
}

/// Range rules for integer ops whose operands take too many values to enumerate: exact where
/// nothing can wrap.
/// `topk` of uncertain values (the semantics table's top-k row: the values are selected, not
/// computed): per row, the `j`-th largest value lies between the `j`-th largest of the
/// elements' least and greatest values (in IEEE's total order), and its index is any element's
/// whose set meets that range. A row that may hold a NaN is any value (where NaN sorts, the
/// texts do not say).
fn topk_sets(i: &Instruction, x: &SetArray) -> Result<SetValue> {
    let n = *x.dims.last().ok_or_else(|| invalid("topk of a scalar"))?;
    let k = match attrs::int(i, "k")? {
        Some(k) => usize::try_from(k).map_err(|_| invalid("bad k"))?,
        None => match &i.shape {
            Shape::Tuple(t) => t
                .first()
                .and_then(|s| s.dims().last().copied())
                .and_then(|d| usize::try_from(d).ok())
                .unwrap_or(0),
            _ => 0,
        },
    };
    if k > n {
        return Err(invalid("bad k"));
    }
    let largest = attrs::flag(i, "largest", true);
    let rows = if n == 0 { 0 } else { x.len() / n };
    let mut odims = x.dims.clone();
    *odims.last_mut().expect("rank >= 1") = k;
    // Each element's least and greatest value on one line of totally ordered keys (f64 total
    // order for floats), or None where it may be NaN.
    let key = |v: f64| -> i128 {
        let b = v.to_bits() as i64;
        (if b < 0 { b ^ i64::MAX } else { b }) as i128
    };
    let extents: Vec<Option<(i128, i128)>> = match &x.elems {
        Elems::F(v) => v
            .iter()
            .map(|s| {
                if s.nan {
                    return None;
                }
                s.extent().map(|(lo, hi)| (key(lo), key(hi)))
            })
            .collect(),
        Elems::I(v) => v.iter().map(|s| Some((s.lo, s.hi))).collect(),
        Elems::C(_) => return Err(invalid("topk of complex values")),
    };
    let mut vals: Vec<Option<(i128, i128)>> = Vec::with_capacity(rows * k);
    let mut idx: Vec<ISet> = Vec::with_capacity(rows * k);
    let flip = |v: i128| if largest { v } else { -v };
    for r in 0..rows {
        let line = &extents[r * n..(r + 1) * n];
        if line.iter().any(Option::is_none) {
            for _ in 0..k {
                vals.push(None);
                idx.push(ISet::range(0, n as i128 - 1).because(Why::UNDEFINED));
            }
            continue;
        }
        let line: Vec<(i128, i128)> = line.iter().flatten().copied().collect();
        // In "largest first" order: keys flipped for the smallest.
        let mut lows: Vec<i128> = line
            .iter()
            .map(|&(lo, hi)| flip(lo).min(flip(hi)))
            .collect();
        let mut highs: Vec<i128> = line
            .iter()
            .map(|&(lo, hi)| flip(lo).max(flip(hi)))
            .collect();
        lows.sort_unstable_by(|a, b| b.cmp(a));
        highs.sort_unstable_by(|a, b| b.cmp(a));
        for j in 0..k {
            let (lo, hi) = (lows[j], highs[j]);
            vals.push(Some((lo, hi)));
            let cands: Vec<usize> = line
                .iter()
                .enumerate()
                .filter(|(_, &(a, b))| {
                    let (a, b) = (flip(a).min(flip(b)), flip(a).max(flip(b)));
                    a <= hi && b >= lo
                })
                .map(|(c, _)| c)
                .collect();
            let (first, last) = (
                cands.first().copied().unwrap_or(0),
                cands.last().copied().unwrap_or(n.saturating_sub(1)),
            );
            let s = ISet::range(first as i128, last as i128);
            idx.push(if first == last {
                s
            } else {
                s.because(Why::BRANCH)
            });
        }
    }
    let unkey = |v: i128| -> f64 {
        let b = v as i64;
        f64::from_bits((if b < 0 { b ^ i64::MAX } else { b }) as u64)
    };
    let values = match &x.elems {
        Elems::F(_) => Elems::F(
            vals.iter()
                .map(|v| match v {
                    None => FSet::top(Why::UNDEFINED),
                    Some((lo, hi)) => {
                        let (a, b) = (
                            unkey(if largest { *lo } else { -*hi }),
                            unkey(if largest { *hi } else { -*lo }),
                        );
                        let s = FSet::range(tmin(a, b), tmax(a, b));
                        if lo == hi {
                            s
                        } else {
                            s.because(Why::BRANCH)
                        }
                    }
                })
                .collect(),
        ),
        _ => Elems::I(
            vals.iter()
                .map(|v| match v {
                    None => {
                        let (lo, hi) = int_range(x.ty);
                        ISet::range(lo, hi).because(Why::UNDEFINED)
                    }
                    Some((lo, hi)) => {
                        let (a, b) = if largest { (*lo, *hi) } else { (-*hi, -*lo) };
                        ISet::range(a.min(b), a.max(b))
                    }
                })
                .collect(),
        ),
    };
    Ok(SetValue::Tuple(vec![
        SetValue::array(SetArray {
            ty: x.ty,
            dims: odims.clone(),
            elems: values,
        }),
        SetValue::array(SetArray {
            ty: PrimitiveType::S32,
            dims: odims,
            elems: Elems::I(idx),
        }),
    ]))
}

/// An integer iota whose indices its type cannot hold: the index converted to the element type
/// overflows (the StableHLO spec's iota is `constant(index, element_type)`), which the semantics
/// table leaves implementation-defined (any value of the type), unsigned types included.
fn int_iota_overflow(i: &Instruction, v: SetValue) -> Result<SetValue> {
    let SetValue::Array(a) = &v else {
        return Ok(v);
    };
    let Elems::I(sets) = &a.elems else {
        return Ok(v);
    };
    if a.ty == PrimitiveType::Pred
        || !hlo::semantics::implementation_defined(
            Opcode::Iota,
            a.ty,
            hlo::semantics::Condition::IntegerOverflow,
        )
    {
        return Ok(v);
    }
    let (_, thi) = int_range(a.ty);
    let d = usize::try_from(attrs::req_int(i, "iota_dimension")?).unwrap_or(usize::MAX);
    let Some(&extent) = a.dims.get(d) else {
        return Ok(v);
    };
    if (extent as i128) <= thi + 1 {
        return Ok(v);
    }
    let inner: usize = a.dims[d + 1..].iter().product();
    let out: Vec<ISet> = sets
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let index = (k / inner.max(1)) % extent;
            if index as i128 > thi {
                ISet::undefined(a.ty, Why::NONE)
            } else {
                *s
            }
        })
        .collect();
    Ok(SetValue::array(SetArray {
        ty: a.ty,
        dims: a.dims.clone(),
        elems: Elems::I(out),
    }))
}

/// The case of the semantics table an integer `op` from `in_ty` to `ty` may meet on operands
/// in `sets` (a set that may hold a triggering value triggers it): integer overflow of the
/// exact result, division by zero or `INT_MIN / -1`, a shift by at least the bit width (the
/// amount read unsigned), a negative exponent, a conversion out of range.
fn int_condition(
    op: Opcode,
    in_ty: PrimitiveType,
    ty: PrimitiveType,
    sets: &[ISet],
) -> Option<hlo::semantics::Condition> {
    use hlo::semantics::Condition as C;
    use Opcode as O;
    if ty == PrimitiveType::Pred || in_ty == PrimitiveType::Pred {
        return None;
    }
    // Unsigned arithmetic is modular (as C's; jax's random bits rely on it): only signed
    // results overflow.
    let signed = ty.is_signed_integer();
    let (tlo, thi) = int_range(ty);
    let outside = |lo: i128, hi: i128| lo < tlo || hi > thi;
    let a = *sets.first()?;
    let b = sets.get(1).copied();
    let overflow =
        |c: [Option<i128>; 4]| -> bool { c.iter().any(|x| x.is_none_or(|v| v < tlo || v > thi)) };
    match (op, b) {
        (O::Add | O::Subtract | O::Multiply, _) if !signed => None,
        (O::Add, Some(b)) => overflow([
            a.lo.checked_add(b.lo),
            a.hi.checked_add(b.hi),
            Some(tlo),
            Some(tlo),
        ])
        .then_some(C::IntegerOverflow),
        (O::Subtract, Some(b)) => overflow([
            a.lo.checked_sub(b.hi),
            a.hi.checked_sub(b.lo),
            Some(tlo),
            Some(tlo),
        ])
        .then_some(C::IntegerOverflow),
        (O::Multiply, Some(b)) => overflow([
            a.lo.checked_mul(b.lo),
            a.lo.checked_mul(b.hi),
            a.hi.checked_mul(b.lo),
            a.hi.checked_mul(b.hi),
        ])
        .then_some(C::IntegerOverflow),
        // Unsigned negation is modular by definition (the spec negates the bit pattern).
        (O::Negate | O::Abs, None) => {
            (ty.is_signed_integer() && a.lo <= tlo).then_some(C::IntegerOverflow)
        }
        (O::Divide | O::Remainder, Some(b)) => {
            let zero = b.lo <= 0 && b.hi >= 0;
            let min_by_minus_one =
                ty.is_signed_integer() && a.lo <= tlo && b.lo <= -1 && b.hi >= -1;
            (zero || min_by_minus_one).then_some(C::IntegerDivisionOverflow)
        }
        (O::ShiftLeft | O::ShiftRightLogical | O::ShiftRightArithmetic, Some(b)) => {
            let w = ty.bit_width() as i128;
            (b.lo < 0 || b.hi >= w).then_some(C::ShiftOutOfRange)
        }
        (O::Power, Some(b)) => {
            if b.lo < 0 {
                return Some(C::NegativeExponent);
            }
            if !signed {
                return None;
            }
            // |a|^b grows with |a| and b (for |a| >= 2): the largest magnitude at the corners.
            let m = a.lo.unsigned_abs().max(a.hi.unsigned_abs());
            let e = u32::try_from(b.hi).unwrap_or(u32::MAX);
            let big = m >= 2 && (m as f64).powf(e as f64) > (thi as f64);
            big.then_some(C::IntegerOverflow)
        }
        (O::Convert, None) if outside(a.lo, a.hi) => Some(C::IntToIntOutOfRange),
        _ => None,
    }
}

fn int_range_rule(op: Opcode, ty: PrimitiveType, a: ISet, b: ISet) -> Option<ISet> {
    let (tlo, thi) = int_range(ty);
    // Unsigned arithmetic is modular: a result past the type wraps, exactly for known
    // operands, to any value of the type otherwise (the operands' uncertainty, not a gap).
    let modular =
        ty.is_unsigned_integer() && matches!(op, Opcode::Add | Opcode::Subtract | Opcode::Multiply);
    let fits = |lo: i128, hi: i128| {
        if lo >= tlo && hi <= thi {
            Some(ISet::range(lo, hi))
        } else if modular && lo == hi {
            let m = 1i128 << ty.bit_width();
            Some(ISet::point(lo.rem_euclid(m)))
        } else if modular {
            Some(ISet::range(tlo, thi).because(Why::BRANCH))
        } else {
            None
        }
    };
    let wide = || modular.then(|| ISet::range(tlo, thi).because(Why::BRANCH));
    match op {
        Opcode::Add => match (a.lo.checked_add(b.lo), a.hi.checked_add(b.hi)) {
            (Some(lo), Some(hi)) => fits(lo, hi),
            _ => wide(),
        },
        Opcode::Subtract => match (a.lo.checked_sub(b.hi), a.hi.checked_sub(b.lo)) {
            (Some(lo), Some(hi)) => fits(lo, hi),
            _ => wide(),
        },
        Opcode::Multiply => {
            let c = [
                a.lo.checked_mul(b.lo),
                a.lo.checked_mul(b.hi),
                a.hi.checked_mul(b.lo),
                a.hi.checked_mul(b.hi),
            ];
            if c.iter().any(Option::is_none) {
                return wide();
            }
            let c: Vec<i128> = c.into_iter().flatten().collect();
            fits(*c.iter().min()?, *c.iter().max()?)
        }
        Opcode::Maximum => Some(ISet::range(a.lo.max(b.lo), a.hi.max(b.hi))),
        Opcode::Minimum => Some(ISet::range(a.lo.min(b.lo), a.hi.min(b.hi))),
        _ => None,
    }
}

/// A set rounded to another float type (a conversion).
fn round_set(to: &Format, s: FSet) -> FSet {
    let mut out = FSet::EMPTY;
    // To nearest, as a conversion rounds; outward into a type narrower than f32, which XLA
    // CPU may reach through f32 (two roundings) or leave wider (excess precision).
    let nearest = to.ty.bit_width() >= 32;
    for (lo, hi) in s.pieces() {
        let (d, u) = if nearest {
            (to.nearest2(lo, 0.0, false), to.nearest2(hi, 0.0, true))
        } else {
            (to.down(lo), to.up(hi))
        };
        if d.v.is_nan() || u.v.is_nan() {
            out = out.with_nan(true);
            continue;
        }
        let r = FSet::range(d.v, u.v).with_nan(d.nan || u.nan);
        out = out.hull(if d.v != lo || u.v != hi {
            r.because(Why::ROUNDING)
        } else {
            r
        });
    }
    // A NaN converts to a NaN of the same sign between the IEEE types (the f8 and f4 types are
    // converted in software, their NaNs may be unsigned).
    let ieee = matches!(
        to.ty,
        PrimitiveType::F16 | PrimitiveType::Bf16 | PrimitiveType::F32 | PrimitiveType::F64
    );
    let nan_sign = if out.nan || !ieee { None } else { s.nan_sign };
    FSet {
        nan: s.nan || out.nan,
        nan_sign: if s.nan { nan_sign } else { out.nan_sign },
        why: s.why | out.why,
        ..out
    }
}

/// `f` over each piece of `s` (hulled), NaN and its sign kept as they are.
fn map_pieces(s: &FSet, f: impl Fn(f64, f64) -> FSet) -> FSet {
    let mut out = FSet::EMPTY;
    for (lo, hi) in s.pieces() {
        out = out.hull(f(lo, hi));
    }
    // The op makes its NaN anew: of either sign.
    FSet {
        nan: s.nan || out.nan,
        nan_sign: None,
        why: s.why | out.why,
        ..out
    }
}

/// The ends of every piece of every set, in order, and where each set's start.
fn piece_ends(v: &[FSet]) -> (Vec<f64>, Vec<usize>) {
    let mut ends = Vec::with_capacity(2 * v.len());
    let mut starts = Vec::with_capacity(v.len() + 1);
    for s in v {
        starts.push(ends.len());
        for (lo, hi) in s.pieces() {
            ends.push(lo);
            ends.push(hi);
        }
    }
    starts.push(ends.len());
    (ends, starts)
}

/// Float sets converted to integers (saturating, NaN to 0, as XLA's evaluator and CPU code).
fn float_to_int(v: &[FSet], ty: PrimitiveType) -> Result<Vec<ISet>> {
    // The ends of each piece converted by the oracle's own conversion (monotone).
    let (ends, starts) = piece_ends(v);
    let a = Array::new(
        PrimitiveType::F64,
        vec![ends.len()],
        Buffer::F64(ends.clone()),
    );
    let c = crate::convert::convert(&a, ty)?;
    let ints: Vec<i128> = to_bits(&c.buf)
        .into_iter()
        .map(|b| int_of_bits(ty, b))
        .collect();
    let pred = ty == PrimitiveType::Pred;
    Ok(v.iter()
        .enumerate()
        .map(|(k, s)| {
            let mut r: Option<ISet> = None;
            for j in (starts[k]..starts[k + 1]).step_by(2) {
                let (lo, hi) = (ints[j], ints[j + 1]);
                let mut x = ISet::range(lo.min(hi), lo.max(hi));
                if pred {
                    // x != 0: false for a zero, true for anything else.
                    let (l, h) = (ends[j], ends[j + 1]);
                    let zero = le(l, 0.0) && le(-0.0, h);
                    let other = l < 0.0 || h > 0.0;
                    x = ISet::range(if zero { 0 } else { 1 }, if other { 1 } else { 0 });
                }
                r = Some(r.map_or(x, |y| y.hull(x)));
            }
            if s.nan {
                // NaN converts to 0 (to pred: true, as any nonzero value).
                let n = ISet::point(if pred { 1 } else { 0 });
                r = Some(r.map_or(n, |x| x.hull(n)));
            }
            r.unwrap_or(ISet::point(0)).because(s.why)
        })
        .collect())
}

/// An integer set converted to a float type (rounded outward).
fn int_to_float(to: &Format, s: &ISet) -> FSet {
    let ex = |v: i128| -> arith::Ex {
        let r = v as f64;
        let back = r as i128;
        arith::Ex {
            r,
            e: (v - back).signum() as f64,
        }
    };
    let mut o = arith::Out::new(to);
    o.range(ex(s.lo), ex(s.hi));
    o.set.because(s.why)
}

fn reduce_precision(i: &Instruction, x: &SetArray) -> Result<SetArray> {
    let e = attrs::req_int(i, "exponent_bits")?;
    let m = attrs::req_int(i, "mantissa_bits")?;
    let v = x.floats()?;
    let (ends, starts) = piece_ends(v);
    // An unbounded end in a type without infinities: its largest value.
    let fmt = fmt_of(x.ty)?;
    let ends: Vec<f64> = ends
        .into_iter()
        .map(|v| {
            if v.is_infinite() && !fmt.has_inf {
                fmt.max.copysign(v)
            } else {
                v
            }
        })
        .collect();
    let a = Array::new(
        PrimitiveType::F64,
        vec![ends.len()],
        Buffer::F64(ends.clone()),
    );
    let r = crate::convert::reduce_precision(&crate::convert::convert(&a, x.ty)?, e, m)?;
    let r = crate::elementwise::to_f64s(&r.buf);
    // The reduced format's largest finite value, in the operand's type: where an end overflows
    // and the type has no infinity (the overflow reads as NaN), the values below the end still
    // reach it.
    let rmax = {
        let emax = (1i64 << (e.clamp(1, 11) - 1)) - 1;
        let top = (2.0 - 2f64.powi(-(m.clamp(0, 52) as i32))) * 2f64.powi(emax as i32);
        top.min(fmt.max)
    };
    let elems = v
        .iter()
        .enumerate()
        .map(|(k, s)| {
            // NaN stays NaN (XLA: "NaN values are retained, although they may be converted to
            // canonical NaN values"); with no mantissa bits, where the reduced format has no
            // NaN, the StableHLO reference gives +inf.
            let mut out = FSet::EMPTY.with_nan(s.nan);
            if s.nan && m == 0 {
                out = out.hull(FSet::point(f64::INFINITY));
            }
            for j in (starts[k]..starts[k + 1]).step_by(2) {
                let (mut lo, mut hi) = (r[j], r[j + 1]);
                if lo.is_nan() {
                    // Overflowed: from below (then so did the whole piece), or from above.
                    out = out.with_nan(true);
                    lo = if ends[j] > 0.0 { f64::INFINITY } else { -rmax };
                }
                if hi.is_nan() {
                    out = out.with_nan(true);
                    hi = if ends[j + 1] < 0.0 {
                        f64::NEG_INFINITY
                    } else {
                        rmax
                    };
                }
                if lo <= hi {
                    out = out.hull(FSet::range(lo, hi));
                }
            }
            out.because(s.why)
        })
        .collect();
    Ok(SetArray {
        ty: x.ty,
        dims: x.dims.clone(),
        elems: Elems::F(elems),
    })
}

fn select(p: &SetArray, t: &SetArray, f: &SetArray) -> Result<SetArray> {
    let ps = p.ints()?;
    let n = t.len();
    if f.len() != n || (ps.len() != n && ps.len() != 1) {
        return Err(invalid("select operands differ in size"));
    }
    let pk = |k: usize| ps[if ps.len() == 1 { 0 } else { k }];
    macro_rules! pick {
        ($a:expr, $b:expr, $hull:expr) => {
            (0..n)
                .map(|k| {
                    let s = pk(k);
                    if s.is_point() {
                        if s.lo != 0 {
                            $a[k]
                        } else {
                            $b[k]
                        }
                    } else {
                        $hull($a[k], $b[k])
                    }
                })
                .collect()
        };
    }
    let elems = match (&t.elems, &f.elems) {
        (Elems::F(a), Elems::F(b)) => Elems::F(pick!(a, b, |x: FSet, y: FSet| x
            .hull(y)
            .because(Why::BRANCH))),
        (Elems::I(a), Elems::I(b)) => Elems::I(pick!(a, b, |x: ISet, y: ISet| x
            .hull(y)
            .because(Why::BRANCH))),
        (Elems::C(a), Elems::C(b)) => Elems::C(pick!(a, b, |x: CSet, y: CSet| {
            let mut h = x.hull(y);
            h.re.why |= Why::BRANCH;
            h
        })),
        _ => return Err(invalid("select branches differ in type")),
    };
    Ok(SetArray {
        ty: t.ty,
        dims: t.dims.clone(),
        elems,
    })
}

/// The real (or imaginary) part of a complex set: any value when it may be a complex infinity
/// (whose other part is unspecified).
fn part_of(c: &CSet, re: bool) -> FSet {
    let p = if re { c.re } else { c.im };
    if c.inf {
        return p.hull(FSet::top(Why::COMPLEX_INF));
    }
    p
}

/// |z| of a complex set: the modulus' range over the set, widened by `ulps`.
fn complex_abs(fmt: &Format, c: &CSet, sub: Subnormals, ulps: Option<u32>) -> FSet {
    let Some(u) = ulps else {
        return FSet::top(Why::UNMODELLED | Why::ULPS);
    };
    let (re, im) = (
        arith::operand(fmt, c.re, sub),
        arith::operand(fmt, c.im, sub),
    );
    // hypot: an infinite part makes +inf even beside a NaN (C99 Annex G.6p6, F.9.4.3), so a
    // NaN result needs a NaN part next to a part that may be finite.
    let finite_or_nan = |s: &FSet| s.num || s.nzero || s.pzero || s.nan;
    let nan = (re.nan && finite_or_nan(&im)) || (im.nan && finite_or_nan(&re));
    let mut out = FSet::EMPTY.with_nan(nan || c.inf && (re.nan || im.nan));
    if c.inf
        || re.may_be_pos_inf()
        || re.may_be_neg_inf()
        || im.may_be_pos_inf()
        || im.may_be_neg_inf()
    {
        out = out.hull(FSet::point(f64::INFINITY));
    }
    if re.has_number() && im.has_number() {
        let lo = re.min_abs().hypot(im.min_abs());
        let hi = re.max_abs().hypot(im.max_abs());
        let l = funcs::around(fmt, lo, u);
        let h = funcs::around(fmt, hi, u);
        out = out.hull(l).hull(h);
        if lo == 0.0 {
            out = out.hull(FSet::point(0.0));
        }
    }
    arith::result(fmt, out.because(re.why | im.why | Why::NORMWISE), sub)
}

/// A complex function at an exactly known point: its value there (the oracle's c128 formula),
/// each part widened by `ulps` of the modulus; any complex infinity where a part is infinite.
/// Sets that are not points are any value (not modelled).
fn complex_point_fn(
    fmt: &Format,
    c: &CSet,
    ulps: Option<u32>,
    floor: f64,
    f: impl Fn(num_complex::Complex64) -> Option<num_complex::Complex64>,
) -> CSet {
    let Some(u) = ulps else {
        return CSet::top(Why::UNMODELLED | Why::ULPS);
    };
    if !c.is_point() {
        return CSet::top(Why::UNMODELLED | Why::NORMWISE);
    }
    // Backward error: XLA's formulas round their intermediates, which is the exact function
    // at an input up to 2 ulps away in each nonzero part (what an ill-conditioned function, such as
    // tanh next to a pole, turns into a large difference); the hull over those inputs.
    let (re, im) = (c.re.lo, c.im.lo);
    let mut out: Option<CSet> = None;
    for dr in -2..=2 {
        for di in -2..=2 {
            // Rounding errors are relative: a zero part (and its sign) stays.
            let step = |x: f64, d: i32| {
                let y = if x == 0.0 { x } else { fmt.step(x, d) };
                // Nor does a part cross zero (a subnormal's neighbours can).
                if y == 0.0 || y.is_sign_negative() != x.is_sign_negative() {
                    x
                } else {
                    y
                }
            };
            if (re == 0.0 && dr != 0) || (im == 0.0 && di != 0) {
                continue;
            }
            let (r, i) = if re.is_finite() && im.is_finite() {
                (step(re, dr), step(im, di))
            } else if dr == 0 && di == 0 {
                (re, im)
            } else {
                continue;
            };
            let Some(z) = f(num_complex::Complex64::new(r, i)) else {
                return CSet::top(Why::UNMODELLED);
            };
            let w = normwise(fmt, z, u, floor);
            out = Some(match out {
                Some(o) => o.hull(w),
                None => w,
            });
        }
    }
    out.unwrap_or_else(|| CSet::top(Why::UNMODELLED))
}

/// Whether an approximated function's operand (a real set, or a complex set's parts) may be a
/// nonzero subnormal of `fmt`, where the semantics table leaves the result
/// implementation-defined (`Condition::SubnormalOperand`).
fn subnormal_operand(fmt: &Format, op: Opcode, ty: PrimitiveType, sets: &[FSet]) -> bool {
    // Complex arithmetic shares the approximated complex row but approximates no function.
    if matches!(
        op,
        Opcode::Multiply | Opcode::Divide | Opcode::Abs | Opcode::Sign
    ) {
        return false;
    }
    let tiny = fmt.smallest_positive();
    let top = fmt.min_normal - tiny;
    // An operand known to be subnormal: every value of its set subnormal or zero, one not zero
    // (a wide set that merely reaches the subnormals, such as an error bound around zero, keeps
    // the flushed and unflushed readings).
    let subnormal = |s: &FSet| {
        (s.meets(tiny, top) || s.meets(-top, -tiny))
            && !s.nan
            && !s.meets(fmt.min_normal, f64::INFINITY)
            && !s.meets(f64::NEG_INFINITY, -fmt.min_normal)
    };
    top >= tiny
        && sets.iter().any(subnormal)
        && hlo::semantics::implementation_defined(
            op,
            ty,
            hlo::semantics::Condition::SubnormalOperand,
        )
}

/// XLA CPU computes complex cos and sin from the cosh and sinh of the imaginary part, and exp
/// from the real exponential of the real part (`exp(y)` and `exp(-y)`): past `exp(|y|)`'s
/// overflow a part is an infinity of its sign (or NaN where it meets a zero) though the exact
/// value is finite. The texts leave that accuracy to the implementation (StableHLO spec,
/// "Accuracy"); `out` widened by those infinities.
fn intermediate_overflow(fmt: &Format, op: Opcode, c: &CSet, out: CSet) -> CSet {
    let y = match op {
        Opcode::Cos | Opcode::Sin => c.im.lo.abs().max(c.im.hi.abs()),
        Opcode::Exp => c.re.hi,
        _ => return out,
    };
    if !(y.exp() > fmt.max) || c.re.nan || c.im.nan {
        return out;
    }
    let widen = |p: FSet| {
        let mut w = p;
        if p.meets(f64::MIN_POSITIVE, f64::INFINITY) {
            w = w.hull(FSet::point(f64::INFINITY));
        }
        if p.meets(f64::NEG_INFINITY, -f64::MIN_POSITIVE) {
            w = w.hull(FSet::point(f64::NEG_INFINITY));
        }
        if p.meets(-0.0, 0.0) {
            w = w.with_nan(true);
        }
        w.because(Why::OVERFLOW)
    };
    CSet {
        re: widen(out.re),
        im: widen(out.im),
        inf: out.inf,
    }
}

/// The smallest magnitude a complex op's error is relative to: an angle's (pi) for the
/// functions whose imaginary part is an argument (log, log1p, atan2), else none.
fn error_floor(op: Opcode) -> f64 {
    match op {
        Opcode::Log | Opcode::Log1p | Opcode::Atan2 => std::f64::consts::PI,
        _ => 0.0,
    }
}

/// A complex value with each part widened by `ulps` ulps of its modulus (at least of `floor`).
fn normwise(fmt: &Format, z: num_complex::Complex64, u: u32, floor: f64) -> CSet {
    let inf = !z.re.is_finite() || !z.im.is_finite();
    if inf {
        return CSet {
            re: FSet::top(Why::COMPLEX_INF),
            im: FSet::top(Why::COMPLEX_INF),
            inf: true,
        };
    }
    normwise_box(fmt, (z.re, z.re), (z.im, z.im), u, floor)
}

/// The finite box `re x im` with each part widened by `u` ulps of its largest modulus (at
/// least of `floor`).
fn normwise_box(fmt: &Format, re: (f64, f64), im: (f64, f64), u: u32, floor: f64) -> CSet {
    let m = [re.0, re.1, im.0, im.1]
        .iter()
        .fold(floor, |m, x| m.max(x.abs()));
    // One ulp of the modulus in the part type, at least the smallest positive value.
    let ulp = (fmt.next(fmt.up(m).v) - fmt.up(m).v).max(fmt.smallest_positive());
    let w = ulp * u as f64;
    let part = |(lo, hi): (f64, f64)| {
        let lo = fmt.down((lo - w).next_down_f64()).v;
        let hi = fmt.up((hi + w).next_up_f64()).v;
        FSet::range(lo, hi).because(Why::NORMWISE | Why::ULPS)
    };
    let mut out = CSet {
        re: part(re),
        im: part(im),
        inf: false,
    };
    if m + w >= fmt.max {
        out.inf = true;
        out.re.why |= Why::COMPLEX_INF;
    }
    out
}

use super::arith::F64Ext;

/// A complex binary op on sets.
fn complex_binary(
    fmt: &Format,
    op: Opcode,
    a: &CSet,
    b: &CSet,
    sub: Subnormals,
    ulps: Option<u32>,
) -> CSet {
    use Opcode as O;
    if matches!(op, O::Maximum | O::Minimum) {
        return complex_pick(fmt, a, b, op == O::Maximum, sub);
    }
    if a.inf || b.inf {
        return CSet::top(Why::COMPLEX_INF);
    }
    match op {
        O::Add | O::Subtract => {
            let f = if op == O::Add {
                arith::add
            } else {
                arith::subtract
            };
            CSet {
                re: f(fmt, a.re, b.re, sub),
                im: f(fmt, a.im, b.im, sub),
                inf: false,
            }
        }
        O::Multiply => {
            // Exactly known operands whose textbook product is NaN in both parts: C99 Annex
            // G.5.1 makes it an infinity (`crate::annex_g::mul`), which a NaN is not.
            if a.is_point() && b.is_point() {
                let (x, y) = (
                    num_complex::Complex64::new(a.re.lo, a.im.lo),
                    num_complex::Complex64::new(b.re.lo, b.im.lo),
                );
                let textbook = (x.re * y.re - x.im * y.im, x.re * y.im + x.im * y.re);
                let z = crate::annex_g::mul(x, y);
                if textbook.0.is_nan()
                    && textbook.1.is_nan()
                    && (z.re.is_infinite() || z.im.is_infinite())
                {
                    return CSet {
                        re: FSet::point(z.re).because(Why::COMPLEX_INF),
                        im: FSet::point(z.im).because(Why::COMPLEX_INF),
                        inf: true,
                    };
                }
            }
            let m = |x, y| arith::multiply(fmt, x, y, sub);
            let p = [
                m(a.re, b.re),
                arith::negate(m(a.im, b.im)),
                m(a.re, b.im),
                m(a.im, b.re),
            ];
            let re = arith::add(fmt, p[0], p[1], sub);
            let im = arith::add(fmt, p[2], p[3], sub);
            let mut c = CSet { re, im, inf: false };
            // C leaves the other part of an infinite product unspecified.
            c.inf = infinite(&c);
            // A recovered infinity is infinite or NaN in both parts: no part is unspecified.
            if annex_g_recovery(a, b, p) >= fmt.max {
                (c.re, c.im) = (recovered(c.re), recovered(c.im));
            }
            c
        }
        _ => with_daz(fmt, sub, &[a, b], |v| {
            complex_point_binary(fmt, op, v[0], v[1], ulps)
        }),
    }
}

/// Complex `maximum` (`max`) or `minimum`: XLA CPU selects `a` where `a.re >= b.re` (`<=`),
/// else `b`, the imaginary parts unread (`crate::elementwise::complex_max`). XLA also takes the
/// op for commutative (its CSE merges `maximum(b, a)` into `maximum(a, b)`: measured on jaxlib
/// 0.10.2), and where the real parts tie or one is NaN the operand order decides: then either
/// operand. So the result is `a` where every pair of real parts the sets allow compares strictly
/// so, `b` where every pair compares strictly the other way, and either operand otherwise.
/// Under denormals-are-zero the compare may read a subnormal real part as zero of its sign (a
/// tie), while the operand picked keeps its bits: both readings take part in the decision.
fn complex_pick(fmt: &Format, a: &CSet, b: &CSet, max: bool, sub: Subnormals) -> CSet {
    let read = |c: &CSet| {
        let re = part_of(c, true);
        if sub.daz {
            arith::flush(fmt, re)
        } else {
            re
        }
    };
    // `a` is taken where `p > q`, `b` where `p < q`.
    let (p, q) = if max {
        (read(a), read(b))
    } else {
        (read(b), read(a))
    };
    let ordered = !p.nan && !q.nan;
    match (p.extent(), q.extent()) {
        (Some((plo, _)), Some((_, qhi))) if ordered && plo > qhi => *a,
        (Some((_, phi)), Some((qlo, _))) if ordered && phi < qlo => *b,
        _ => {
            let mut h = a.hull(*b);
            h.re.why |= Why::BRANCH;
            h
        }
    }
}

/// Under denormals-are-zero, a complex op computed by a formula (division, sign, the complex
/// functions) reads a subnormal part of an operand as a zero of the same sign in some of its
/// steps and not in others (measured on jaxlib 0.10.2, c64: sign of (-0, 1e-45) is the operand
/// itself, the branch for a zero modulus; (1e-45, 1e-45) / itself is (nan, nan), as 0 / 0): the
/// result set is the hull of `f` at the operands as given and at the operands so read.
fn with_daz(fmt: &Format, sub: Subnormals, ops: &[&CSet], f: impl Fn(&[&CSet]) -> CSet) -> CSet {
    // Each part of the result may be flushed (FTZ), as a real result is.
    let f = |v: &[&CSet]| {
        let c = f(v);
        CSet {
            re: arith::result(fmt, c.re, sub),
            im: arith::result(fmt, c.im, sub),
            inf: c.inf,
        }
    };
    let exact = f(ops);
    if !sub.daz {
        return exact;
    }
    let subnormal = |x: FSet| x.is_point() && x.lo != 0.0 && x.lo.abs() < fmt.min_normal;
    if !ops.iter().any(|c| subnormal(c.re) || subnormal(c.im)) {
        return exact;
    }
    let flush = |x: FSet| {
        if subnormal(x) {
            FSet::point(0f64.copysign(x.lo))
        } else {
            x
        }
    };
    let flushed: Vec<CSet> = ops
        .iter()
        .map(|c| CSet {
            re: flush(c.re),
            im: flush(c.im),
            inf: c.inf,
        })
        .collect();
    let refs: Vec<&CSet> = flushed.iter().collect();
    let mut out = exact.hull(f(&refs));
    out.re.why |= Why::FLUSH;
    out.im.why |= Why::FLUSH;
    out
}

/// Whether a part of `c` may be infinite.
fn infinite(c: &CSet) -> bool {
    c.re.may_be_pos_inf() || c.re.may_be_neg_inf() || c.im.may_be_pos_inf() || c.im.may_be_neg_inf()
}

/// Division and the other binary complex ops computed by a formula, at point operands.
fn complex_point_binary(fmt: &Format, op: Opcode, a: &CSet, b: &CSet, ulps: Option<u32>) -> CSet {
    let Some(u) = ulps else {
        return CSet::top(Why::UNMODELLED | Why::ULPS);
    };
    if !a.is_point() || !b.is_point() {
        if op == Opcode::Divide {
            if let Some(q) = box_quotient(fmt, a, b, u) {
                return q;
            }
        }
        return CSet::top(Why::UNMODELLED | Why::NORMWISE);
    }
    let complex_ty = if fmt.ty == PrimitiveType::F64 {
        PrimitiveType::C128
    } else {
        PrimitiveType::C64
    };
    if subnormal_operand(fmt, op, complex_ty, &[a.re, a.im, b.re, b.im]) {
        return CSet::top(Why::UNDEFINED);
    }
    let zero = |s: &FSet| s.lo == 0.0 && s.hi == 0.0;
    if op == Opcode::Power
        && zero(&a.re)
        && zero(&a.im)
        && hlo::semantics::implementation_defined(
            op,
            PrimitiveType::C64,
            hlo::semantics::Condition::ComplexPowerOfZero,
        )
    {
        return CSet::top(Why::UNDEFINED);
    }
    if infinite(a) || infinite(b) || a.re.nan || a.im.nan || b.re.nan || b.im.nan {
        // An infinite or NaN part: the formula's special cases are XLA's own (no
        // limit of the exact function is assumed).
        return CSet::top(Why::COMPLEX_INF);
    }
    let Some(f) = crate::elementwise::complex_binop(op, crate::variant::ComplexMul::Fused) else {
        return CSet::top(Why::UNMODELLED);
    };
    let z = f(
        num_complex::Complex64::new(a.re.lo, a.im.lo),
        num_complex::Complex64::new(b.re.lo, b.im.lo),
    );
    if z.re.is_nan() && z.im.is_nan() {
        return CSet {
            re: FSet::NAN,
            im: FSet::NAN,
            inf: true,
        };
    }
    let mut out = normwise(fmt, z, u, error_floor(op));
    if op == Opcode::Power {
        // Backward error, as for the unary functions (`complex_point_fn`): XLA's formula
        // rounds its intermediates (|z|, the angle, w * log z), which is the exact power at
        // operands up to 2 ulps away in each nonzero part; ill-conditioned where |w log z| is
        // large. The oracle's own evaluation at each of those operands rounds the same
        // intermediates and errs as much again there (seen: z^z at z = (0.0302, -60.88), where
        // the angle is about -250 and a part is off by 1.1e-13 relative), so the hull is taken
        // over operands up to 4 ulps away.
        let step = |x: f64, d: i32| {
            let y = if x == 0.0 || !x.is_finite() {
                x
            } else {
                fmt.step(x, d)
            };
            if y == 0.0 || y.is_sign_negative() != x.is_sign_negative() {
                x
            } else {
                y
            }
        };
        for d in 0..81 {
            let ds = [d % 3, d / 3 % 3, d / 9 % 3, d / 27 % 3].map(|k| 4 * k as i32 - 4);
            if ds == [0; 4] {
                continue;
            }
            let w = f(
                num_complex::Complex64::new(step(a.re.lo, ds[0]), step(a.im.lo, ds[1])),
                num_complex::Complex64::new(step(b.re.lo, ds[2]), step(b.im.lo, ds[3])),
            );
            if w.re.is_nan() && w.im.is_nan() {
                continue;
            }
            out = out.hull(normwise(fmt, w, u, error_floor(op)));
        }
    }
    match op {
        Opcode::Power => out.hull_opt(power_of_overflowed_modulus(fmt, a)),
        // atan2(y, x) is -i log((x + iy) / sqrt(x^2 + y^2)) (StableHLO spec, atan2): with y
        // zero that quotient is -1 wherever Re x < 0, on log's branch cut, and which side it
        // lands on is the sign of a zero or of a rounding error in its imaginary part, which
        // the formula does not fix: the real part is +pi or -pi.
        Opcode::Atan2 if zero(&a.re) && zero(&a.im) && b.re.hi < 0.0 => {
            let other = CSet {
                re: arith::negate(out.re),
                ..out
            };
            let h = out.hull(other);
            CSet {
                re: h.re.because(Why::BRANCH),
                ..h
            }
        }
        _ => out,
    }
}

/// XLA's complex power, `|z|^c e^(-d t) (cos q + i sin q)` with `q = c t + d ln|z|`, takes
/// ln|z| from |z| in the component type: where |z| overflows it, ln|z| is inf, and the angle q
/// is NaN (d = 0: 0 * inf) or infinite, so both parts are NaN. Measured on jaxlib 0.10.2: in
/// c128 z = (1.3e308, 1.3e308) to the powers -1 + 62.6i (exactly about 1e-245), 0.5, 0.5 +
/// 0.25i and i gives (NaN, NaN), while (1.2e308, 1.2e308), whose modulus the type holds, gives
/// finite powers; in c64 (3e38, 3e38) to 0.5 and -1 + 2i gives (NaN, NaN). `None` where |z|
/// does not overflow.
fn power_of_overflowed_modulus(fmt: &Format, x: &CSet) -> Option<CSet> {
    if x.re.lo.hypot(x.im.lo) <= fmt.max {
        return None;
    }
    let nan = FSet::NAN.because(Why::OVERFLOW);
    Some(CSet {
        re: nan,
        im: nan,
        inf: false,
    })
}

/// `a / b` for operands that are boxes of finite values, `b`'s away from zero: the exact
/// quotients' hull (`a` times the hull of `1 / b`), each part widened by `u` ulps of the largest
/// modulus, as a quotient at points is. `None` when a part may be infinite or NaN, or `b` may be
/// zero.
fn box_quotient(fmt: &Format, a: &CSet, b: &CSet, u: u32) -> Option<CSet> {
    let extent = |s: &FSet| {
        if s.nan || s.ninf || s.pinf {
            None
        } else {
            arith::parts(s).fin
        }
    };
    if a.inf || b.inf {
        return None;
    }
    let (ar, ai) = (extent(&a.re)?, extent(&a.im)?);
    let (br, bi) = (extent(&b.re)?, extent(&b.im)?);
    let (rr, ri) = reciprocal_hull(br, bi)?;
    // Interval products and sums in f64, each bound then moved out by a few f64 ulps for
    // their own rounding.
    let mul = |x: (f64, f64), y: (f64, f64)| {
        let c = [x.0 * y.0, x.0 * y.1, x.1 * y.0, x.1 * y.1];
        (
            c.iter().copied().fold(f64::INFINITY, f64::min),
            c.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        )
    };
    let (p, q) = (mul(ar, rr), mul(ai, ri));
    let (r, t) = (mul(ar, ri), mul(ai, rr));
    let out = |lo: f64, hi: f64| {
        let slack = |x: f64| x.abs() * 8.0 * f64::EPSILON + f64::MIN_POSITIVE;
        (lo - slack(lo), hi + slack(hi))
    };
    let re = out(p.0 - q.1, p.1 - q.0);
    let im = out(r.0 + t.0, r.1 + t.1);
    if ![re.0, re.1, im.0, im.1].iter().all(|x| x.is_finite()) {
        return None;
    }
    let mut q = normwise_box(fmt, re, im, u, 0.0);
    let why = a.why() | b.why();
    q.re.why |= why;
    q.im.why |= why;
    Some(q)
}

/// The hull of `1 / d` over the box `re x im` (not holding zero), or `None`. The parts of
/// `1 / d`, `x / |d|^2` and `-y / |d|^2`, are harmonic away from zero, so their extremes over
/// the box lie on its edges: at the corners, or where a part's derivative along an edge
/// vanishes (on an edge of fixed `x`, at `y = 0` and `y = +-x`; of fixed `y`, at `x = 0` and
/// `x = +-y`). Bounds as f64 evaluates them (the caller widens them).
fn reciprocal_hull(re: (f64, f64), im: (f64, f64)) -> Option<((f64, f64), (f64, f64))> {
    let holds = |r: (f64, f64), v: f64| r.0 <= v && v <= r.1;
    if holds(re, 0.0) && holds(im, 0.0) {
        return None;
    }
    let mut at: Vec<(f64, f64)> = Vec::with_capacity(16);
    for x in [re.0, re.1] {
        for y in [im.0, im.1, 0.0, x, -x] {
            if holds(im, y) {
                at.push((x, y));
            }
        }
    }
    for y in [im.0, im.1] {
        for x in [0.0, y, -y] {
            if holds(re, x) {
                at.push((x, y));
            }
        }
    }
    let (mut r, mut i) = (
        (f64::INFINITY, f64::NEG_INFINITY),
        (f64::INFINITY, f64::NEG_INFINITY),
    );
    for (x, y) in at {
        let d = x * x + y * y;
        if d == 0.0 || !d.is_finite() {
            return None;
        }
        let (p, q) = (x / d, -y / d);
        r = (r.0.min(p), r.1.max(p));
        i = (i.0.min(q), i.1.max(q));
    }
    Some((r, i))
}

/// Complex logistic as XLA computes it (LogisticExpander: `1 / (1 + exp(-z))`): the set of the
/// expansion, op by op, so that an exp's rounding near the pole at `1 + exp(-z) = 0` is
/// amplified as XLA's own is. `exp` and `div` are the ops' normwise ulps.
fn complex_logistic(
    fmt: &Format,
    z: &CSet,
    sub: Subnormals,
    exp: Option<u32>,
    div: Option<u32>,
) -> CSet {
    let neg = CSet {
        re: arith::negate(z.re),
        im: arith::negate(z.im),
        inf: z.inf,
    };
    let e = complex_point_fn(fmt, &neg, exp, error_floor(Opcode::Exp), |w| Some(w.exp()));
    let one = CSet::point(1.0, 0.0);
    let d = complex_binary(fmt, Opcode::Add, &one, &e, sub, None);
    complex_binary(fmt, Opcode::Divide, &one, &d, sub, div)
}

/// Every combination of the values the index operands may take (`None`: more than 64).
fn index_combinations(sets: &[&Arc<SetArray>]) -> Result<Option<Vec<Vec<Array>>>> {
    let mut uncertain: Vec<(usize, usize)> = Vec::new();
    let mut count: u128 = 1;
    for (j, s) in sets.iter().enumerate() {
        let v = s.ints()?;
        for (k, e) in v.iter().enumerate() {
            if !e.is_point() {
                uncertain.push((j, k));
                count = count.saturating_mul(e.count());
                if count > ENUMERATE {
                    return Ok(None);
                }
            }
        }
    }
    let mut out = Vec::with_capacity(count as usize);
    let mut pick = vec![0i128; uncertain.len()];
    loop {
        let mut arrays = Vec::with_capacity(sets.len());
        for (j, s) in sets.iter().enumerate() {
            let v = s.ints()?;
            let bits: Vec<u128> = v
                .iter()
                .enumerate()
                .map(|(k, e)| {
                    let off = uncertain
                        .iter()
                        .position(|&u| u == (j, k))
                        .map_or(0, |u| pick[u]);
                    bits_of_int(s.ty, e.lo + off)
                })
                .collect();
            arrays.push(Array::new(s.ty, s.dims.clone(), from_bits(s.ty, &bits)?));
        }
        out.push(arrays);
        let mut u = 0;
        loop {
            if u == uncertain.len() {
                return Ok(Some(out));
            }
            let (j, k) = uncertain[u];
            pick[u] += 1;
            if pick[u] < s_len(sets[j].ints()?[k]) {
                break;
            }
            pick[u] = 0;
            u += 1;
        }
    }
}

/// The instruction with its result retyped to s64 (data movement of indices).
fn retype(i: &Instruction) -> Instruction {
    let mut r = i.clone();
    r.shape = retype_shape(&i.shape);
    r
}

fn retype_shape(s: &Shape) -> Shape {
    match s {
        Shape::Array(a) => {
            let mut a = a.clone();
            a.ty = PrimitiveType::S64;
            Shape::Array(a)
        }
        other => other.clone(),
    }
}

fn mark(a: &mut SetArray, w: Why) {
    match &mut a.elems {
        Elems::F(v) => v.iter_mut().for_each(|s| s.why |= w),
        Elems::I(v) => v.iter_mut().for_each(|s| s.why |= w),
        Elems::C(v) => v.iter_mut().for_each(|s| s.re.why |= w),
    }
}

fn mark_value(v: &mut SetValue, w: Why) {
    match v {
        SetValue::Array(a) => mark(Arc::make_mut(a), w),
        SetValue::Tuple(t) => t.iter_mut().for_each(|x| mark_value(x, w)),
        SetValue::Token => {}
    }
}

/// Per instruction of the entry computation (in `order`), the elements of its result that
/// `demand` (per output leaf of the root) looks at, where that is fewer than all: an
/// instruction used only by elementwise ops, conversions and copies of its own dimensions
/// (directly or through more of them) up to an output leaf is looked at where that leaf is.
/// Any other use looks at every element (`None`).
fn entry_demand(
    module: &Module,
    order: &[hlo::InstrId],
    demand: &[Option<Vec<usize>>],
) -> Vec<Option<Rc<Vec<usize>>>> {
    #[derive(Clone)]
    enum D {
        Unused,
        Some(std::collections::BTreeSet<usize>),
        All,
    }
    fn merge(into: &mut D, from: &D) {
        *into = match (std::mem::replace(into, D::Unused), from) {
            (D::All, _) | (_, D::All) => D::All,
            (D::Unused, x) => x.clone(),
            (x, D::Unused) => x,
            (D::Some(mut a), D::Some(b)) => {
                a.extend(b.iter().copied());
                D::Some(a)
            }
        };
    }
    let e = module.entry_computation();
    let mut d = vec![D::Unused; e.instructions.len()];
    let root = e.root_instruction();
    let leaf = |k: usize| match demand.get(k) {
        Some(Some(v)) => D::Some(v.iter().copied().collect()),
        _ => D::All,
    };
    let array = |id: hlo::InstrId| e.instructions[id].shape.is_array();
    if root.opcode == Opcode::Tuple && root.operands.iter().all(|&o| array(o)) {
        if demand.len() != root.operands.len() {
            return vec![None; e.instructions.len()];
        }
        for (k, &o) in root.operands.iter().enumerate() {
            merge(&mut d[o], &leaf(k));
        }
        // The root tuple passes each leaf's demand on (above), nothing more.
    } else if array(e.root) && demand.len() == 1 {
        d[e.root] = leaf(0);
    } else {
        return vec![None; e.instructions.len()];
    }
    for &id in order.iter().rev() {
        let i = &e.instructions[id];
        let here = d[id].clone();
        if matches!(here, D::Unused) {
            continue;
        }
        // (`bitcast-convert` is enclosed from its operand known exactly as a whole: it looks
        // at every element.)
        let same_elements = i.opcode.is_elementwise()
            || (i.opcode.category() == hlo::opcode::Category::Conversion
                && i.opcode != Opcode::BitcastConvert)
            || i.opcode == Opcode::Copy;
        for &o in &i.operands {
            let keeps =
                same_elements && array(o) && e.instructions[o].shape.dims() == i.shape.dims();
            merge(&mut d[o], if keeps { &here } else { &D::All });
        }
    }
    d.into_iter()
        .map(|x| match x {
            D::Some(s) => Some(Rc::new(s.into_iter().collect())),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reciprocal's hull holds 1/d at every point of a grid over boxes that straddle the
    /// axes and the diagonals (where the parts' extremes are inside an edge), and its bounds are
    /// attained (each within 1e-12 of a grid value on a fine grid).
    #[test]
    fn the_reciprocal_hull_holds_every_point_of_the_box_and_is_tight() {
        let boxes = [
            ((1.0, 2.0), (-0.5, 0.5)),
            ((-3.0, -1.0), (-2.5, 2.0)),
            ((-1.0, 1.0), (0.5, 1.5)),
            ((0.25, 4.0), (0.5, 3.0)),
            ((-1e-3, -9e-4), (-2e-3, 1e-3)),
        ];
        for (re, im) in boxes {
            let ((rl, rh), (il, ih)) = reciprocal_hull(re, im).unwrap();
            let n = 400;
            let (mut seen_r, mut seen_i) = (
                (f64::INFINITY, f64::NEG_INFINITY),
                (f64::INFINITY, f64::NEG_INFINITY),
            );
            for j in 0..=n {
                for k in 0..=n {
                    let x = re.0 + (re.1 - re.0) * j as f64 / n as f64;
                    let y = im.0 + (im.1 - im.0) * k as f64 / n as f64;
                    let d = num_complex::Complex64::new(x, y).inv();
                    assert!(rl <= d.re && d.re <= rh, "{re:?} {im:?} at ({x}, {y}): {d}");
                    assert!(il <= d.im && d.im <= ih, "{re:?} {im:?} at ({x}, {y}): {d}");
                    seen_r = (seen_r.0.min(d.re), seen_r.1.max(d.re));
                    seen_i = (seen_i.0.min(d.im), seen_i.1.max(d.im));
                }
            }
            let close = |a: f64, b: f64| (a - b).abs() <= 1e-3 * a.abs().max(b.abs());
            assert!(
                close(seen_r.0, rl) && close(seen_r.1, rh),
                "{re:?} {im:?}: {seen_r:?} vs {rl} {rh}"
            );
            assert!(
                close(seen_i.0, il) && close(seen_i.1, ih),
                "{re:?} {im:?}: {seen_i:?} vs {il} {ih}"
            );
        }
        assert!(
            reciprocal_hull((-1.0, 1.0), (-1.0, 1.0)).is_none(),
            "a box around zero"
        );
    }

    /// A product of two f32 values is taken as exact without a check, and it is: the same as
    /// the checked product for extreme and subnormal f32 values; an f64 product that rounds is
    /// no exact point.
    #[test]
    fn f32_point_products_are_exact_and_f64_ones_are_checked() {
        let vals = [
            f32::MAX,
            -f32::MAX,
            f32::MIN_POSITIVE,
            1.4e-45,
            -3.3,
            0.1,
            16_777_215.0,
            -0.0,
            1.0,
        ];
        for &a in &vals {
            for &b in &vals {
                let (x, y) = (a as f64, b as f64);
                let p = exact_point_product(&FSet::point(x), &FSet::point(y));
                let checked = arith::mul_ex(x, y);
                assert_eq!(checked.e, 0.0, "{a} * {b}");
                assert_eq!(p.map(f64::to_bits), Some(checked.r.to_bits()), "{a} * {b}");
            }
        }
        assert_eq!(
            exact_point_product(&FSet::point(0.1), &FSet::point(0.3)),
            None
        );
        assert_eq!(
            exact_point_product(&FSet::point(1e-200), &FSet::point(1e-200)),
            None
        );
    }
}
