//! The generator's core: computations under construction, the typed pool of available values,
//! and the helpers every opcode builder uses.
//!
//! Every choice reads the fuzzer's bytes through [`Gen::below`] and friends; once the bytes run
//! out each choice takes its first option, so generation never fails and stays valid.

use crate::config::{Config, OpFamily};
use crate::ops;
use arbitrary::Unstructured;
use hlo::{
    ArrayLiteral, ArrayShape, Attr, CompId, Computation, Constant, InstrId, Instruction, Literal,
    Module, Opcode, PrimitiveType, Scalar, Shape, TypeClass,
};

/// A computation under construction.
pub(crate) struct Comp {
    pub name: String,
    pub instrs: Vec<Instruction>,
    /// Array-valued instructions usable as operands.
    pub pool: Vec<InstrId>,
    /// How many times each instruction is used as an operand.
    pub uses: Vec<u32>,
    /// Only the entry computation may grow new parameters.
    pub entry: bool,
    pub n_params: usize,
    /// Nesting depth of called computations with bodies (0 for the entry).
    pub depth: usize,
    /// A map body: scalar, elementwise instructions only.
    pub scalar_only: bool,
}

pub(crate) struct Gen<'a, 'b> {
    pub u: &'a mut Unstructured<'b>,
    pub cfg: &'a Config,
    /// Finished computations, callees before callers.
    pub comps: Vec<Computation>,
    next_id: usize,
    /// Every data type the configuration allows.
    pub types: Vec<PrimitiveType>,
    /// Data types with arithmetic (a subset of `types`).
    pub arith: Vec<PrimitiveType>,
    /// (family, weight) with weight > 0, in a fixed order.
    pub families: Vec<(OpFamily, u32)>,
    /// The devices the module is partitioned over (`num_partitions`; 1: one device).
    pub partitions: i64,
}

pub(crate) fn product(dims: &[i64]) -> u64 {
    dims.iter()
        .fold(1u64, |a, &d| a.saturating_mul(d.max(0) as u64))
}

/// Whether XLA allows `convert` from `a` to `b` (complex -> real is not allowed).
pub(crate) fn convertible(a: PrimitiveType, b: PrimitiveType) -> bool {
    !a.is_complex() || b.is_complex()
}

impl<'a, 'b> Gen<'a, 'b> {
    pub fn new(u: &'a mut Unstructured<'b>, cfg: &'a Config) -> Self {
        let types = cfg.data_types();
        let arith: Vec<PrimitiveType> = types
            .iter()
            .copied()
            .filter(|t| cfg.arithmetic_types.contains(t))
            .collect();
        let families = crate::config::OpFamily::ALL
            .iter()
            .map(|f| (*f, cfg.weight(*f)))
            .filter(|(_, w)| *w > 0)
            .collect();
        Gen {
            u,
            cfg,
            comps: Vec::new(),
            next_id: 0,
            types,
            arith,
            families,
            partitions: 1,
        }
    }

    // ----- choices -----

    /// A number in `0..n` (0 when `n <= 1` or the bytes ran out).
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        self.u.int_in_range(0..=n - 1).unwrap_or(0)
    }

    /// An integer in `lo..=hi` (`lo` when the range is empty or the bytes ran out).
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        self.u.int_in_range(lo..=hi).unwrap_or(lo)
    }

    /// True with `pct` percent chance; false once the bytes ran out.
    pub fn coin(&mut self, pct: u32) -> bool {
        if pct == 0 || self.u.is_empty() {
            return false;
        }
        (self.below(100) as u32) < pct
    }

    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    pub fn pick_opt<T: Copy>(&mut self, xs: &[T]) -> Option<T> {
        if xs.is_empty() {
            None
        } else {
            Some(self.pick(xs))
        }
    }

    /// An index chosen with the given weights (the first nonzero one when the bytes ran out).
    pub fn weighted(&mut self, weights: &[u32]) -> Option<usize> {
        let total: u64 = weights.iter().map(|&w| w as u64).sum();
        if total == 0 {
            return None;
        }
        let mut r = if total == 1 || self.u.is_empty() {
            0
        } else {
            self.u.int_in_range(0..=total - 1).unwrap_or(0)
        };
        for (i, &w) in weights.iter().enumerate() {
            if r < w as u64 {
                return Some(i);
            }
            r -= w as u64;
        }
        None
    }

    /// A random subset of `0..n` in increasing order.
    pub fn subset(&mut self, n: usize, pct: u32) -> Vec<usize> {
        (0..n).filter(|_| self.coin(pct)).collect()
    }

    /// A random permutation of `0..n`.
    pub fn permutation(&mut self, n: usize) -> Vec<usize> {
        let mut v: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            let j = self.below(i + 1);
            v.swap(i, j);
        }
        v
    }

    // ----- shapes -----

    pub fn fresh_dim(&mut self) -> i64 {
        let (z, o) = (self.cfg.zero_extent_percent, self.cfg.one_extent_percent);
        if self.coin(z) {
            0
        } else if self.coin(o) {
            1
        } else {
            self.range(1, self.cfg.max_extent.max(1))
        }
    }

    pub fn fresh_rank(&mut self) -> usize {
        self.range(0, self.cfg.max_rank as i64) as usize
    }

    /// Fresh dimensions of the given rank, sometimes with one large dimension, within `max_elements`.
    pub fn fresh_dims(&mut self, rank: usize) -> Vec<i64> {
        let mut d: Vec<i64> = (0..rank).map(|_| self.fresh_dim()).collect();
        if rank > 0 && self.coin(self.cfg.large_dim_percent) {
            let i = self.below(rank);
            let hi = self.cfg.large_extent.max(1);
            d[i] = self.range((hi / 4).max(1), hi);
        }
        self.fit(&mut d);
        d
    }

    /// Shrinks the largest dimensions until the element count is within `max_elements`.
    pub fn fit(&self, d: &mut [i64]) {
        while product(d) > self.cfg.max_elements.max(1) {
            let (i, _) = d.iter().enumerate().max_by_key(|(_, &x)| x).unwrap();
            d[i] = (d[i] / 2).max(1);
        }
    }

    pub fn fits(&self, dims: &[i64]) -> bool {
        dims.iter().all(|&d| d >= 0) && product(dims) <= self.cfg.max_elements.max(1)
    }

    // ----- instructions -----

    pub fn fresh_name(&mut self, base: &str) -> String {
        self.next_id += 1;
        format!("{}.{}", base, self.next_id)
    }

    pub fn new_comp(&mut self, base: &str, depth: usize, entry: bool, scalar_only: bool) -> Comp {
        Comp {
            name: self.fresh_name(base),
            instrs: Vec::new(),
            pool: Vec::new(),
            uses: Vec::new(),
            entry,
            n_params: 0,
            depth,
            scalar_only,
        }
    }

    /// Appends an instruction; array results join the pool.
    pub fn push(&mut self, c: &mut Comp, mut instr: Instruction) -> InstrId {
        if instr.name.is_empty() {
            instr.name = self.fresh_name(instr.opcode.name());
        }
        for &o in &instr.operands {
            c.uses[o] += 1;
        }
        let id = c.instrs.len();
        let is_array = instr.shape.is_array();
        c.instrs.push(instr);
        c.uses.push(0);
        if is_array && !(c.scalar_only && c.instrs[id].shape.rank() > 0) {
            c.pool.push(id);
        }
        id
    }

    pub fn add(
        &mut self,
        c: &mut Comp,
        op: Opcode,
        shape: Shape,
        operands: Vec<InstrId>,
        attrs: Vec<(&str, Attr)>,
    ) -> InstrId {
        let mut i = Instruction::new(String::new(), op, shape);
        i.operands = operands;
        i.attrs = attrs.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        self.push(c, i)
    }

    pub fn add_param(&mut self, c: &mut Comp, shape: Shape) -> InstrId {
        let mut i = Instruction::new(self.fresh_name("p"), Opcode::Parameter, shape);
        i.parameter_number = Some(c.n_params as i64);
        c.n_params += 1;
        self.push(c, i)
    }

    pub fn add_constant(&mut self, c: &mut Comp, lit: ArrayLiteral) -> InstrId {
        let shape = Shape::Array(lit.shape());
        let mut i = Instruction::new(self.fresh_name("constant"), Opcode::Constant, shape);
        i.constant = Some(Constant::Literal(Literal::Array(lit)));
        self.push(c, i)
    }

    pub fn const_scalar(&mut self, c: &mut Comp, ty: PrimitiveType, v: Scalar) -> InstrId {
        let lit = ArrayLiteral::from_scalars(ty, vec![], &[v]).expect("scalar literal");
        self.add_constant(c, lit)
    }

    pub fn gte(&mut self, c: &mut Comp, t: InstrId, index: usize) -> InstrId {
        let shape = c.instrs[t].shape.tuple_elements().expect("tuple")[index].clone();
        self.add(
            c,
            Opcode::GetTupleElement,
            shape,
            vec![t],
            vec![("index", Attr::Int(index as i64))],
        )
    }

    pub fn tuple(&mut self, c: &mut Comp, elems: Vec<InstrId>) -> InstrId {
        let shape = Shape::Tuple(elems.iter().map(|&e| c.instrs[e].shape.clone()).collect());
        self.add(c, Opcode::Tuple, shape, elems, vec![])
    }

    pub fn finish(&mut self, c: Comp, root: InstrId) -> CompId {
        self.comps.push(Computation {
            name: c.name,
            instructions: c.instrs,
            root,
            trailing_attrs: Vec::new(),
        });
        self.comps.len() - 1
    }

    // ----- values -----

    pub fn arr<'c>(&self, c: &'c Comp, id: InstrId) -> &'c ArrayShape {
        c.instrs[id]
            .shape
            .as_array()
            .expect("pool values are arrays")
    }

    /// A pool value whose shape satisfies `pred`.
    pub fn pool_pick(&mut self, c: &Comp, pred: impl Fn(&ArrayShape) -> bool) -> Option<InstrId> {
        let cands: Vec<InstrId> = c
            .pool
            .iter()
            .copied()
            .filter(|&i| pred(self.arr(c, i)))
            .collect();
        self.pick_opt(&cands)
    }

    /// A value of exactly this type and these dimensions.
    pub fn value(&mut self, c: &mut Comp, ty: PrimitiveType, dims: &[i64]) -> InstrId {
        let matches: Vec<InstrId> = c
            .pool
            .iter()
            .copied()
            .filter(|&i| {
                let s = self.arr(c, i);
                s.ty == ty && s.dims == dims
            })
            .collect();
        if !matches.is_empty() && !self.coin(10) {
            return self.pick(&matches);
        }
        self.make_value(c, ty, dims)
    }

    fn make_value(&mut self, c: &mut Comp, ty: PrimitiveType, dims: &[i64]) -> InstrId {
        #[derive(Clone, Copy)]
        enum How {
            Param,
            Convert,
            Broadcast,
            Reshape,
            Const,
            Iota,
        }
        let mut how = Vec::with_capacity(6);
        if c.entry && c.n_params < self.cfg.max_params {
            how.push(How::Param);
        }
        let conv: Vec<InstrId> = c
            .pool
            .iter()
            .copied()
            .filter(|&i| {
                let s = self.arr(c, i);
                s.dims == dims && s.ty != ty && convertible(s.ty, ty)
            })
            .collect();
        if !conv.is_empty() {
            how.push(How::Convert);
        }
        let scalars: Vec<InstrId> = if dims.is_empty() {
            Vec::new()
        } else {
            c.pool
                .iter()
                .copied()
                .filter(|&i| {
                    let s = self.arr(c, i);
                    s.ty == ty && s.dims.is_empty()
                })
                .collect()
        };
        if !scalars.is_empty() {
            how.push(How::Broadcast);
        }
        let n = product(dims);
        let reshapes: Vec<InstrId> = c
            .pool
            .iter()
            .copied()
            .filter(|&i| {
                let s = self.arr(c, i);
                s.ty == ty && s.dims != dims && product(&s.dims) == n
            })
            .collect();
        if !reshapes.is_empty() {
            how.push(How::Reshape);
        }
        how.push(How::Const);
        if !dims.is_empty() && self.arith.contains(&ty) && (ty.is_integer() || ty.is_float()) {
            how.push(How::Iota);
        }
        let shape = Shape::array(ty, dims.to_vec());
        match self.pick(&how) {
            How::Param => self.add_param(c, shape),
            How::Convert => {
                let x = self.pick(&conv);
                self.add(c, Opcode::Convert, shape, vec![x], vec![])
            }
            How::Broadcast => {
                let x = self.pick(&scalars);
                self.add(
                    c,
                    Opcode::Broadcast,
                    shape,
                    vec![x],
                    vec![("dimensions", Attr::Ints(vec![]))],
                )
            }
            How::Reshape => {
                let x = self.pick(&reshapes);
                self.add(c, Opcode::Reshape, shape, vec![x], vec![])
            }
            How::Iota => {
                let d = self.below(dims.len()) as i64;
                self.add(
                    c,
                    Opcode::Iota,
                    shape,
                    vec![],
                    vec![("iota_dimension", Attr::Int(d))],
                )
            }
            How::Const => self.constant(c, ty, dims),
        }
    }

    /// A constant: a literal when small, else a broadcast scalar constant.
    pub fn constant(&mut self, c: &mut Comp, ty: PrimitiveType, dims: &[i64]) -> InstrId {
        let n = product(dims);
        if n <= 8 && n > 0 {
            let vals: Vec<Scalar> = (0..n).map(|_| self.rand_scalar(ty)).collect();
            let lit = ArrayLiteral::from_scalars(ty, dims.to_vec(), &vals).expect("literal");
            return self.add_constant(c, lit);
        }
        let v = self.rand_scalar(ty);
        let s = self.const_scalar(c, ty, v);
        if dims.is_empty() {
            return s;
        }
        self.add(
            c,
            Opcode::Broadcast,
            Shape::array(ty, dims.to_vec()),
            vec![s],
            vec![("dimensions", Attr::Ints(vec![]))],
        )
    }

    /// A random element value of `ty`: small numbers mostly, boundary values sometimes.
    pub fn rand_scalar(&mut self, ty: PrimitiveType) -> Scalar {
        let special = self.coin(self.cfg.special_constant_percent);
        match ty.class() {
            TypeClass::Pred => Scalar::Pred(self.coin(50)),
            TypeClass::Signed => {
                let bits = ty.bit_width();
                let (min, max) = (i64::MIN >> (64 - bits), i64::MAX >> (64 - bits));
                if special {
                    Scalar::S(self.pick(&[min, max, -1, 0, 1]))
                } else {
                    Scalar::S(self.range(min.max(-16), max.min(16)))
                }
            }
            TypeClass::Unsigned => {
                let bits = ty.bit_width();
                let max = if bits >= 64 {
                    u64::MAX
                } else {
                    (1u64 << bits) - 1
                };
                if special {
                    Scalar::U(self.pick(&[max, 0, 1, max / 2 + 1]))
                } else {
                    Scalar::U(self.range(0, max.min(16) as i64) as u64)
                }
            }
            TypeClass::Float => Scalar::F(self.rand_float(special)),
            TypeClass::Complex => {
                let mut re = self.rand_float(special);
                let im = self.rand_float(false);
                // XLA's HLO parser reads a complex constant with one NaN part as NaN in both
                // (corpora/regressions/xla_miscompile_complex_constant_nan_part.hlo).
                if re.is_nan() && self.cfg.avoid_known_xla_bugs {
                    re = f64::INFINITY;
                }
                Scalar::C(re, im)
            }
            TypeClass::Other => Scalar::U(0),
        }
    }

    fn rand_float(&mut self, special: bool) -> f64 {
        if special {
            return self.pick(&[
                f64::NAN,
                f64::INFINITY,
                f64::NEG_INFINITY,
                -0.0,
                1e-40,
                65504.0,
                -1.0,
            ]);
        }
        // Quarter steps in [-8, 8]: exact in every float type with >= 2 mantissa bits.
        self.range(-32, 32) as f64 / 4.0
    }

    /// A scalar index operand of integer type `ty` whose in-range values are `0..=bound`:
    /// a pool value, a new parameter, or a constant (mostly in range).
    pub fn index_scalar(&mut self, c: &mut Comp, ty: PrimitiveType, bound: i64) -> InstrId {
        let r = self.below(100);
        if r < 20 {
            if let Some(v) = self.pool_pick(c, |s| s.ty == ty && s.dims.is_empty()) {
                return v;
            }
        }
        if r < 55 && c.entry && c.n_params < self.cfg.max_params {
            return self.add_param(c, Shape::scalar(ty));
        }
        let v = self.index_constant_value(ty, bound);
        self.const_scalar(c, ty, v)
    }

    pub fn index_constant_value(&mut self, ty: PrimitiveType, bound: i64) -> Scalar {
        let bound = bound.max(0);
        let v = if self.coin(self.cfg.out_of_range_index_percent) {
            if self.coin(50) && ty.is_signed_integer() {
                self.range(-5, -1)
            } else {
                bound + self.range(1, 5)
            }
        } else {
            self.range(0, bound)
        };
        if ty.is_signed_integer() {
            Scalar::S(v)
        } else {
            Scalar::U(v.max(0) as u64)
        }
    }

    /// An integer type for indices.
    pub fn index_type(&mut self) -> PrimitiveType {
        use PrimitiveType::*;
        self.pick(&[S32, S32, S32, S64, U32, S64, U64, S8, U8, S16])
    }

    // ----- bodies -----

    /// Adds up to `n` random instructions to `c`.
    pub fn fill(&mut self, c: &mut Comp, n: usize) {
        let mut failures = 0;
        let mut added = 0;
        while added < n && failures < 2 * n + 4 {
            let before = c.instrs.len();
            if ops::random_op(self, c).is_some() && c.instrs.len() > before {
                added += 1;
            } else {
                failures += 1;
            }
            if self.u.is_empty() && added >= 1 {
                break;
            }
        }
    }

    /// Generates the whole module.
    pub fn module(mut self, name: &str) -> Module {
        let mut c = self.new_comp("main", 0, true, false);
        c.name = "main".to_string();
        let lo = self.cfg.min_instructions.max(1);
        let hi = self.cfg.max_instructions.max(lo);
        let n = self.range(lo as i64, hi as i64) as usize;
        // A realistic pattern first (no byte is read when the share is 0); its result is kept
        // as an output below, whatever the random instructions after it do.
        let pattern = if self.coin(self.cfg.realistic_percent) {
            crate::realistic::pattern(&mut self, &mut c)
        } else {
            None
        };
        // Input/output aliasing (no byte is read when its share is 0): half the time through
        // the in-place pattern, a dynamic-update-slice of a fresh parameter that becomes the
        // aliased output.
        let alias = self.coin(self.cfg.alias_percent);
        let in_place = if alias && self.coin(50) {
            crate::structure::in_place_update(&mut self, &mut c)
        } else {
            None
        };
        self.fill(&mut c, n);
        if c.pool.is_empty() {
            let ty = self.types[0];
            self.value(&mut c, ty, &[]);
        }
        // Outputs: the values nobody uses (newest first), at least one.
        let mut outs: Vec<InstrId> = c
            .pool
            .iter()
            .rev()
            .copied()
            .filter(|&i| c.uses[i] == 0 && c.instrs[i].opcode != Opcode::Parameter)
            .collect();
        let max_out = self.cfg.max_outputs.max(1);
        outs.truncate(max_out);
        if outs.is_empty() {
            outs.push(*c.pool.last().expect("pool is not empty"));
        }
        if let Some(p) = pattern {
            if !outs.contains(&p) {
                if outs.len() >= max_out {
                    outs.pop();
                }
                outs.push(p);
            }
        }
        // The in-place update is an output too, in place of a value other than the pattern's
        // (when there is no such value to give up, it stays unused and gets no alias).
        if let Some((_, dus)) = in_place {
            if !outs.contains(&dus) {
                let free = outs.iter().position(|&o| Some(o) != pattern);
                if outs.len() < max_out {
                    outs.push(dus);
                } else if let Some(k) = free {
                    outs.remove(k);
                    outs.push(dus);
                }
            }
        }
        if outs.len() < max_out && self.coin(20) {
            let extra = self.pick(&c.pool.clone());
            outs.push(extra);
        }
        outs.reverse();
        // Layouts and shardings go on the finished entry's instructions, before the root tuple
        // takes its elements' shapes.
        if self.coin(self.cfg.layout_percent) {
            crate::structure::assign_layouts(&mut self, &mut c, in_place);
        }
        crate::structure::annotate_shardings(&mut self, &mut c);
        let root = self.tuple(&mut c, outs.clone());
        // jaxlib's XLA CPU rejects an alias of the only output of a 1-tuple root (registry
        // entry xla-alias-one-tuple-root-rejected).
        let one_output = outs.len() == 1 && self.cfg.avoid_known_xla_bugs;
        let aliases = if alias && !one_output {
            crate::structure::choose_aliases(&mut self, &c, &outs, in_place)
        } else {
            Vec::new()
        };
        let entry = self.finish(c, root);
        let mut m = Module {
            name: name.to_string(),
            header_attrs: Vec::new(),
            stack_frame_tables: Vec::new(),
            computations: self.comps,
            entry,
        };
        crate::structure::write_header(&mut m, &aliases);
        if self.partitions > 1 {
            m.header_attrs
                .push(("num_partitions".to_string(), self.partitions.to_string()));
        }
        m
    }
}
