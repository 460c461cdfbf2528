//! The HLO IR: a module of computations, each a list of instructions in definition order.
//!
//! Instructions refer to their operands by index ([`InstrId`]) within their computation and to
//! called computations by index ([`CompId`]) within the module. Attributes that semantics need are
//! typed ([`Attr`]); everything else is kept verbatim so a print/parse round trip loses nothing.

use crate::literal::Literal;
use crate::opcode::Opcode;
use crate::shape::Shape;
use serde::{Deserialize, Serialize};

/// Index of an instruction in its computation's `instructions`.
pub type InstrId = usize;
/// Index of a computation in its module's `computations`.
pub type CompId = usize;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Module {
    pub name: String,
    /// Header attributes after the module name (`entry_computation_layout={...}`,
    /// `is_scheduled=true`, `input_output_alias={...}`, ...), verbatim, in text order.
    pub header_attrs: Vec<(String, String)>,
    /// The `FileNames` / `FunctionNames` / `FileLocations` / `StackFrames` tables, verbatim lines.
    pub stack_frame_tables: Vec<String>,
    /// Computations in text order (callees before callers, as XLA prints them).
    pub computations: Vec<Computation>,
    pub entry: CompId,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Computation {
    pub name: String,
    pub instructions: Vec<Instruction>,
    pub root: InstrId,
    /// Attributes written after the closing brace (e.g. `execution_thread="..."`), verbatim.
    pub trailing_attrs: Vec<(String, String)>,
}

/// A constant's value: the literal, or `{...}` when XLA elided a large constant from a dump.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Constant {
    Literal(Literal),
    Elided,
}

/// Where an instruction was written: the 1-based line and column (in characters) of its name in
/// the text it was parsed from. Displays as `LINE:COL`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SourcePos {
    pub line: u32,
    pub col: u32,
}

impl std::fmt::Display for SourcePos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.col)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Instruction {
    pub name: String,
    pub shape: Shape,
    pub opcode: Opcode,
    pub operands: Vec<InstrId>,
    /// `parameter(N)`.
    pub parameter_number: Option<i64>,
    /// `constant(...)`.
    pub constant: Option<Constant>,
    /// Attributes in text order.
    pub attrs: Vec<(String, Attr)>,
    /// Where the parser read the instruction (`None` for instructions made in memory); the
    /// verifier names it in its errors. Provenance only: `==` ignores it, serde skips it and
    /// the printer never writes it, so print∘parse stays a fixpoint and equal modules stay
    /// equal wherever they came from. An instruction keeps it through edits and clones.
    #[serde(skip)]
    pub pos: Option<SourcePos>,
}

/// Equality of everything but [`Instruction::pos`].
impl PartialEq for Instruction {
    fn eq(&self, other: &Self) -> bool {
        // Destructured so that a new field must be considered here.
        let Instruction {
            name,
            shape,
            opcode,
            operands,
            parameter_number,
            constant,
            attrs,
            pos: _,
        } = self;
        *name == other.name
            && *shape == other.shape
            && *opcode == other.opcode
            && *operands == other.operands
            && *parameter_number == other.parameter_number
            && *constant == other.constant
            && *attrs == other.attrs
    }
}

/// An attribute value. Which variant an attribute gets is decided by its name (see the parser);
/// unknown attributes are `Raw`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Attr {
    Int(i64),
    Bool(bool),
    /// `{0,1,2}` (dimensions, contracting dims, slice_sizes, ...).
    Ints(Vec<i64>),
    /// A quoted string, unescaped (custom_call_target, ...).
    Str(String),
    /// A bare word (`kLoop`, `EQ`, `TOTALORDER`, `API_VERSION_STATUS_RETURNING`, ...).
    Ident(String),
    /// One called computation (to_apply, body, condition, calls, ...).
    Comp(CompId),
    /// A list of called computations (branch_computations, calls={...}).
    Comps(Vec<CompId>),
    Window(Window),
    ConvDims(ConvDimLabels),
    /// `padding=0_1_0x2_2_1` of a `pad` instruction.
    Padding(Vec<PaddingDim>),
    /// `slice={[0:4:1], [1:3]}`.
    Slice(Vec<SliceDim>),
    /// Instruction references (control-predecessors={%a, %b}).
    Instrs(Vec<InstrId>),
    /// Verbatim text of the value (metadata, sharding, backend_config, frontend_attributes, ...).
    Raw(String),
}

/// One dimension of a `window={...}` attribute.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct WindowDim {
    pub size: i64,
    pub stride: i64,
    pub padding_low: i64,
    pub padding_high: i64,
    /// `lhs_dilate` (base dilation).
    pub base_dilation: i64,
    /// `rhs_dilate` (window dilation).
    pub window_dilation: i64,
    /// `rhs_reversal`.
    pub window_reversal: bool,
}

impl Default for WindowDim {
    fn default() -> Self {
        WindowDim {
            size: 1,
            stride: 1,
            padding_low: 0,
            padding_high: 0,
            base_dilation: 1,
            window_dilation: 1,
            window_reversal: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Window {
    pub dims: Vec<WindowDim>,
}

/// `dim_labels=b01f_01io->b01f` of a convolution.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct ConvDimLabels {
    pub input_batch: i64,
    pub input_feature: i64,
    pub input_spatial: Vec<i64>,
    pub kernel_input_feature: i64,
    pub kernel_output_feature: i64,
    pub kernel_spatial: Vec<i64>,
    pub output_batch: i64,
    pub output_feature: i64,
    pub output_spatial: Vec<i64>,
}

/// One dimension of a `pad` instruction's padding: `lo_hi[_interior]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct PaddingDim {
    pub low: i64,
    pub high: i64,
    pub interior: i64,
}

/// One dimension of a `slice` instruction: `[start:limit:stride]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SliceDim {
    pub start: i64,
    pub limit: i64,
    pub stride: i64,
}

impl Instruction {
    /// A new instruction with no operands or attributes.
    pub fn new(name: impl Into<String>, opcode: Opcode, shape: Shape) -> Instruction {
        Instruction {
            name: name.into(),
            shape,
            opcode,
            operands: Vec::new(),
            parameter_number: None,
            constant: None,
            attrs: Vec::new(),
            pos: None,
        }
    }

    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// Sets (or replaces) an attribute, keeping its position if it existed.
    pub fn set_attr(&mut self, name: &str, value: Attr) {
        match self.attrs.iter_mut().find(|(k, _)| k == name) {
            Some(slot) => slot.1 = value,
            None => self.attrs.push((name.to_string(), value)),
        }
    }

    pub fn remove_attr(&mut self, name: &str) -> Option<Attr> {
        let pos = self.attrs.iter().position(|(k, _)| k == name)?;
        Some(self.attrs.remove(pos).1)
    }

    pub fn int(&self, name: &str) -> Option<i64> {
        match self.attr(name)? {
            Attr::Int(v) => Some(*v),
            _ => None,
        }
    }
    pub fn ints(&self, name: &str) -> Option<&[i64]> {
        match self.attr(name)? {
            Attr::Ints(v) => Some(v),
            _ => None,
        }
    }
    /// A boolean attribute; absent means false.
    pub fn flag(&self, name: &str) -> bool {
        matches!(self.attr(name), Some(Attr::Bool(true)))
    }
    pub fn ident(&self, name: &str) -> Option<&str> {
        match self.attr(name)? {
            Attr::Ident(v) => Some(v),
            _ => None,
        }
    }
    pub fn string(&self, name: &str) -> Option<&str> {
        match self.attr(name)? {
            Attr::Str(v) => Some(v),
            _ => None,
        }
    }
    pub fn comp(&self, name: &str) -> Option<CompId> {
        match self.attr(name)? {
            Attr::Comp(c) => Some(*c),
            Attr::Comps(c) if c.len() == 1 => Some(c[0]),
            _ => None,
        }
    }
    pub fn comps(&self, name: &str) -> Option<&[CompId]> {
        match self.attr(name)? {
            Attr::Comps(c) => Some(c),
            Attr::Comp(c) => Some(std::slice::from_ref(c)),
            _ => None,
        }
    }
    pub fn window(&self) -> Option<&Window> {
        match self.attr("window")? {
            Attr::Window(w) => Some(w),
            _ => None,
        }
    }
    pub fn conv_dims(&self) -> Option<&ConvDimLabels> {
        match self.attr("dim_labels")? {
            Attr::ConvDims(d) => Some(d),
            _ => None,
        }
    }
    pub fn padding(&self) -> Option<&[PaddingDim]> {
        match self.attr("padding")? {
            Attr::Padding(p) => Some(p),
            _ => None,
        }
    }
    pub fn slice(&self) -> Option<&[SliceDim]> {
        match self.attr("slice")? {
            Attr::Slice(s) => Some(s),
            _ => None,
        }
    }
    /// `dimensions={...}`.
    pub fn dimensions(&self) -> Option<&[i64]> {
        self.ints("dimensions")
    }

    /// Every computation this instruction calls, in attribute order.
    pub fn called_computations(&self) -> Vec<CompId> {
        let mut out = Vec::new();
        for (_, a) in &self.attrs {
            match a {
                Attr::Comp(c) => out.push(*c),
                Attr::Comps(cs) => out.extend_from_slice(cs),
                _ => {}
            }
        }
        out
    }

    /// Whether the instruction has an effect beyond its result and so stays even when nothing
    /// uses its value: its opcode's [`Opcode::has_side_effect`], or a `custom-call` with
    /// `custom_call_has_side_effect=true`.
    pub fn has_side_effect(&self) -> bool {
        self.opcode.has_side_effect()
            || (self.opcode == Opcode::CustomCall && self.flag("custom_call_has_side_effect"))
    }

    /// Control predecessors (`control-predecessors={...}`).
    pub fn control_predecessors(&self) -> &[InstrId] {
        match self.attr("control-predecessors") {
            Some(Attr::Instrs(v)) => v,
            _ => &[],
        }
    }
}

impl Computation {
    pub fn root_instruction(&self) -> &Instruction {
        &self.instructions[self.root]
    }

    /// Parameter instructions ordered by parameter number.
    pub fn parameters(&self) -> Vec<(InstrId, &Instruction)> {
        let mut ps: Vec<(InstrId, &Instruction)> = self
            .instructions
            .iter()
            .enumerate()
            .filter(|(_, i)| i.opcode == Opcode::Parameter)
            .collect();
        ps.sort_by_key(|(_, i)| i.parameter_number.unwrap_or(i64::MAX));
        ps
    }

    /// Parameter shapes ordered by parameter number.
    pub fn parameter_shapes(&self) -> Vec<Shape> {
        self.parameters()
            .into_iter()
            .map(|(_, i)| i.shape.clone())
            .collect()
    }

    pub fn find(&self, name: &str) -> Option<InstrId> {
        self.instructions.iter().position(|i| i.name == name)
    }
}

impl Module {
    /// The SPMD partitions the module is written for (its header's `num_partitions`, XLA's
    /// module config); 1 when it says none.
    pub fn num_partitions(&self) -> usize {
        self.header_attrs
            .iter()
            .find(|(k, _)| k == "num_partitions")
            .and_then(|(_, v)| v.trim().parse().ok())
            .filter(|&n| n >= 1)
            .unwrap_or(1)
    }

    pub fn entry_computation(&self) -> &Computation {
        &self.computations[self.entry]
    }

    pub fn find_computation(&self, name: &str) -> Option<CompId> {
        self.computations.iter().position(|c| c.name == name)
    }

    /// Number of instructions over all computations.
    pub fn instruction_count(&self) -> usize {
        self.computations.iter().map(|c| c.instructions.len()).sum()
    }

    /// Elements of every instruction's result (all leaves), over all computations: with
    /// [`Module::instruction_count`], how large a module is (the minimizer never grows it; a
    /// campaign calibrates its stage limits by it).
    pub fn result_elements(&self) -> u128 {
        self.computations
            .iter()
            .flat_map(|c| &c.instructions)
            .flat_map(|i| i.shape.leaves())
            .map(|a| u128::from(a.element_count().unwrap_or(0)))
            .sum()
    }

    /// Every opcode used anywhere in the module, with its count.
    pub fn opcode_histogram(&self) -> std::collections::BTreeMap<Opcode, usize> {
        let mut m = std::collections::BTreeMap::new();
        for c in &self.computations {
            for i in &c.instructions {
                *m.entry(i.opcode).or_insert(0) += 1;
            }
        }
        m
    }
}
