//! `xla.HloModuleProto` → [`Module`], with attributes named, typed and ordered as XLA's text
//! printer writes them (so printing the result gives the text XLA would print).

use super::messages::*;
use super::raw::quote;
use super::write::DOT_ALGORITHMS;
use super::{type_of_number, ProtoError, TUPLE_TYPE};
use crate::ir::{
    Attr, CompId, Computation, Constant, ConvDimLabels, InstrId, Instruction, Module, PaddingDim,
    SliceDim, Window, WindowDim,
};
use crate::literal::{ArrayLiteral, Literal};
use crate::opcode::Opcode;
use crate::print::shape_to_string;
use crate::shape::{ArrayShape, Layout, Shape};
use crate::types::PrimitiveType;
use std::collections::HashMap;

/// The module an `HloModuleProto` holds.
pub fn module_from_proto(p: &HloModuleProto) -> Result<Module, ProtoError> {
    let bad = |m: String| ProtoError::Malformed(m);
    let comp_index: HashMap<i64, CompId> = p
        .computations
        .iter()
        .enumerate()
        .map(|(k, c)| (c.id, k))
        .collect();
    if comp_index.len() != p.computations.len() {
        return Err(bad("two computations share an id".into()));
    }
    let entry = comp_index
        .get(&p.entry_computation_id)
        .copied()
        .or_else(|| {
            p.computations
                .iter()
                .position(|c| c.name == p.entry_computation_name)
        })
        .ok_or_else(|| bad("the entry computation id names no computation".into()))?;
    let mut computations = Vec::with_capacity(p.computations.len());
    for c in &p.computations {
        let order = p
            .schedule
            .as_ref()
            .and_then(|s| s.sequences.get(&c.id))
            .map(|s| s.instruction_ids.as_slice());
        computations.push(computation_from_proto(c, &comp_index, order)?);
    }
    let mut header_attrs = Vec::new();
    if p.schedule.as_ref().is_some_and(|s| !s.sequences.is_empty()) {
        header_attrs.push(("is_scheduled".to_string(), "true".to_string()));
    }
    if let Some(ps) = &p.host_program_shape {
        let params = ps
            .parameters
            .iter()
            .map(|s| shape_from_proto(s).map(|s| shape_to_string(&s)))
            .collect::<Result<Vec<_>, _>>()?;
        let result = match &ps.result {
            Some(r) => shape_to_string(&shape_from_proto(r)?),
            None => "()".into(),
        };
        header_attrs.push((
            "entry_computation_layout".to_string(),
            format!("{{({})->{result}}}", params.join(", ")),
        ));
    }
    if let Some(a) = &p.input_output_alias {
        if !a.entries.is_empty() {
            let items: Vec<String> = a
                .entries
                .iter()
                .map(|e| {
                    format!(
                        "{}: ({}, {}, {})",
                        index_text(&e.output_shape_index),
                        e.parameter_number,
                        index_text(&e.parameter_shape_index),
                        if e.kind == 2 {
                            "must-alias"
                        } else {
                            "may-alias"
                        }
                    )
                })
                .collect();
            header_attrs.push((
                "input_output_alias".to_string(),
                format!("{{ {} }}", items.join(", ")),
            ));
        }
    }
    if let Some(f) = &p.frontend_attributes {
        if !f.map.is_empty() {
            header_attrs.push(("frontend_attributes".into(), frontend_text(f)));
        }
    }
    Ok(Module {
        name: p.name.clone(),
        header_attrs,
        stack_frame_tables: p
            .stack_frame_index
            .as_ref()
            .map(stack_frame_lines)
            .unwrap_or_default(),
        computations,
        entry,
    })
}

/// The stack-frame tables as HLO text lines.
fn stack_frame_lines(x: &StackFrameIndexProto) -> Vec<String> {
    let mut out = Vec::new();
    if !x.file_names.is_empty() {
        out.push("FileNames".to_string());
        for (k, n) in x.file_names.iter().enumerate() {
            out.push(format!("{} {}", k + 1, quote(n)));
        }
    }
    if !x.function_names.is_empty() {
        out.push("FunctionNames".to_string());
        for (k, n) in x.function_names.iter().enumerate() {
            out.push(format!("{} {}", k + 1, quote(n)));
        }
    }
    if !x.file_locations.is_empty() {
        out.push("FileLocations".to_string());
        for (k, l) in x.file_locations.iter().enumerate() {
            out.push(format!(
                "{} {{file_name_id={} function_name_id={} line={} end_line={} column={} end_column={}}}",
                k + 1,
                l.file_name_id,
                l.function_name_id,
                l.line,
                l.end_line,
                l.column,
                l.end_column
            ));
        }
    }
    if !x.stack_frames.is_empty() {
        out.push("StackFrames".to_string());
        for (k, f) in x.stack_frames.iter().enumerate() {
            out.push(format!(
                "{} {{file_location_id={} parent_frame_id={}}}",
                k + 1,
                f.file_location_id,
                f.parent_frame_id + 1
            ));
        }
    }
    out
}

fn index_text(v: &[i64]) -> String {
    format!(
        "{{{}}}",
        v.iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(",")
    )
}

/// A computation; `schedule`, when the module is scheduled, is its instruction order.
fn computation_from_proto(
    c: &HloComputationProto,
    comp_index: &HashMap<i64, CompId>,
    schedule: Option<&[i64]>,
) -> Result<Computation, ProtoError> {
    // The instructions in schedule order (those the schedule leaves out after, in proto order).
    let mut protos: Vec<&HloInstructionProto> = Vec::with_capacity(c.instructions.len());
    if let Some(seq) = schedule {
        let by_id: HashMap<i64, &HloInstructionProto> =
            c.instructions.iter().map(|i| (i.id, i)).collect();
        let mut seen = std::collections::HashSet::new();
        for id in seq {
            if let Some(i) = by_id.get(id) {
                if seen.insert(*id) {
                    protos.push(i);
                }
            }
        }
        protos.extend(c.instructions.iter().filter(|i| !seen.contains(&i.id)));
    } else {
        protos.extend(c.instructions.iter());
    }
    let local: HashMap<i64, InstrId> = protos.iter().enumerate().map(|(k, i)| (i.id, k)).collect();
    let mut instructions = Vec::with_capacity(c.instructions.len());
    for (k, ip) in protos.iter().enumerate() {
        let i =
            instruction_from_proto(ip, k, &local, &protos, comp_index).map_err(|e| match e {
                ProtoError::Unsupported(m) => {
                    ProtoError::Unsupported(format!("%{} (in %{}): {m}", ip.name, c.name))
                }
                ProtoError::Malformed(m) => {
                    ProtoError::Malformed(format!("%{} (in %{}): {m}", ip.name, c.name))
                }
                e => e,
            })?;
        instructions.push(i);
    }
    let root = *local.get(&c.root_id).ok_or_else(|| {
        ProtoError::Malformed(format!(
            "computation %{}: root id names no instruction",
            c.name
        ))
    })?;
    let mut trailing_attrs = Vec::new();
    if !c.execution_thread.is_empty() && c.execution_thread != "main" {
        trailing_attrs.push(("execution_thread".into(), quote(&c.execution_thread)));
    }
    Ok(Computation {
        name: c.name.clone(),
        instructions,
        root,
        trailing_attrs,
    })
}

/// A `ShapeProto` as a shape; an array of rank 1 or more keeps its layout (XLA prints it),
/// a scalar's empty layout is dropped (XLA does not print it).
pub fn shape_from_proto(s: &ShapeProto) -> Result<Shape, ProtoError> {
    if s.element_type == TUPLE_TYPE {
        return Ok(Shape::Tuple(
            s.tuple_shapes
                .iter()
                .map(shape_from_proto)
                .collect::<Result<_, _>>()?,
        ));
    }
    let ty = type_of_number(s.element_type).ok_or_else(|| {
        ProtoError::Unsupported(format!("element type number {}", s.element_type))
    })?;
    match ty {
        PrimitiveType::Token => return Ok(Shape::Token),
        PrimitiveType::Opaque => return Ok(Shape::Opaque),
        _ => {}
    }
    let rank = s.dimensions.len();
    let mut dynamic = s.is_dynamic_dimension.clone();
    dynamic.resize(rank, false);
    let layout = match &s.layout {
        Some(l) if rank > 0 || !l.tiles.is_empty() || l.memory_space != 0 => {
            if l.index_primitive_type != 0
                || l.pointer_primitive_type != 0
                || l.dynamic_shape_metadata_prefix_bytes != 0
                || l.tail_padding_alignment_in_elements > 1
            {
                return Err(ProtoError::Unsupported(
                    "sparse and padded layouts are not read".into(),
                ));
            }
            Some(Layout {
                minor_to_major: l.minor_to_major.clone(),
                tiles: l.tiles.iter().map(|t| t.dimensions.clone()).collect(),
                element_size_bits: l.element_size_in_bits,
                memory_space: l.memory_space,
                other: Vec::new(),
            })
        }
        _ => None,
    };
    Ok(Shape::Array(ArrayShape {
        ty,
        dims: s.dimensions.clone(),
        dynamic,
        layout,
    }))
}

fn instruction_from_proto(
    p: &HloInstructionProto,
    at: usize,
    local: &HashMap<i64, InstrId>,
    comp: &[&HloInstructionProto],
    comp_index: &HashMap<i64, CompId>,
) -> Result<Instruction, ProtoError> {
    let opcode = Opcode::from_name(&p.opcode)
        .ok_or_else(|| ProtoError::Unsupported(format!("opcode {:?}", p.opcode)))?;
    let shape = shape_from_proto(
        p.shape
            .as_ref()
            .ok_or_else(|| ProtoError::Malformed("no shape".into()))?,
    )?;
    let operand = |id: &i64| -> Result<InstrId, ProtoError> {
        match local.get(id) {
            Some(&k) if k < at => Ok(k),
            Some(_) => Err(ProtoError::Malformed(format!(
                "operand id {id} is not defined before its use"
            ))),
            None => Err(ProtoError::Malformed(format!(
                "operand id {id} names nothing"
            ))),
        }
    };
    let mut i = Instruction::new(p.name.clone(), opcode, shape.clone());
    i.operands = p
        .operand_ids
        .iter()
        .map(operand)
        .collect::<Result<_, _>>()?;
    if opcode == Opcode::Parameter {
        i.parameter_number = Some(p.parameter_number);
    }
    if opcode == Opcode::Constant {
        let l = p
            .literal
            .as_ref()
            .ok_or_else(|| ProtoError::Malformed("a constant without a literal".into()))?;
        i.constant = Some(Constant::Literal(literal_from_proto(l)?));
    }
    let comps: Vec<CompId> = p
        .called_computation_ids
        .iter()
        .map(|id| {
            comp_index.get(id).copied().ok_or_else(|| {
                ProtoError::Malformed(format!("called computation id {id} names nothing"))
            })
        })
        .collect::<Result<_, _>>()?;
    let a = &mut i.attrs;
    let push = |a: &mut Vec<(String, Attr)>, k: &str, v: Attr| a.push((k.to_string(), v));
    use Opcode as O;
    // Opcode-specific attributes, in the printer's order.
    match opcode {
        O::GetTupleElement => push(a, "index", Attr::Int(p.tuple_index)),
        O::Iota => push(
            a,
            "iota_dimension",
            Attr::Int(p.dimensions.first().copied().unwrap_or(0)),
        ),
        O::Compare => {
            push(a, "direction", Attr::Ident(p.comparison_direction.clone()));
            if !p.comparison_type.is_empty()
                && !default_comparison(&p.comparison_type, &shape_of(p, local, comp))
            {
                push(a, "type", Attr::Ident(p.comparison_type.clone()));
            }
        }
        O::Slice => push(
            a,
            "slice",
            Attr::Slice(
                p.slice_dimensions
                    .iter()
                    .map(|d| SliceDim {
                        start: d.start,
                        limit: d.limit,
                        stride: d.stride,
                    })
                    .collect(),
            ),
        ),
        O::Pad => push(
            a,
            "padding",
            Attr::Padding(
                p.padding_config
                    .as_ref()
                    .map(|c| {
                        c.dimensions
                            .iter()
                            .map(|d| PaddingDim {
                                low: d.edge_padding_low,
                                high: d.edge_padding_high,
                                interior: d.interior_padding,
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
        ),
        O::ReducePrecision => {
            push(a, "exponent_bits", Attr::Int(p.exponent_bits as i64));
            push(a, "mantissa_bits", Attr::Int(p.mantissa_bits as i64));
        }
        O::DynamicSlice => push(
            a,
            "dynamic_slice_sizes",
            Attr::Ints(p.dynamic_slice_sizes.clone()),
        ),
        O::Fft => {
            let t = ["FFT", "IFFT", "RFFT", "IRFFT"]
                .get(p.fft_type as usize)
                .ok_or_else(|| ProtoError::Unsupported(format!("fft_type {}", p.fft_type)))?;
            push(a, "fft_type", Attr::Ident(t.to_string()));
            push(a, "fft_length", Attr::Ints(p.fft_length.clone()));
        }
        O::Rng => {
            let d = match p.distribution {
                1 => "rng_uniform",
                2 => "rng_normal",
                d => return Err(ProtoError::Unsupported(format!("rng distribution {d}"))),
            };
            push(a, "distribution", Attr::Ident(d.into()));
        }
        O::RngBitGenerator => {
            let alg = match p.rng_algorithm {
                1 => "rng_three_fry",
                2 => "rng_philox",
                _ => "rng_default",
            };
            push(a, "algorithm", Attr::Ident(alg.into()));
        }
        O::Fusion => push(a, "kind", Attr::Ident(p.fusion_kind.clone())),
        O::Dot => {
            if let Some(d) = &p.dot_dimension_numbers {
                // Batch dimensions when there are any, contracting ones always.
                for (k, v, always) in [
                    ("lhs_batch_dims", &d.lhs_batch_dimensions, false),
                    ("lhs_contracting_dims", &d.lhs_contracting_dimensions, true),
                    ("rhs_batch_dims", &d.rhs_batch_dimensions, false),
                    ("rhs_contracting_dims", &d.rhs_contracting_dimensions, true),
                ] {
                    if always || !v.is_empty() {
                        push(a, k, Attr::Ints(v.clone()));
                    }
                }
            }
            precision(a, p)?;
        }
        O::Convolution => {
            window(a, p);
            if let Some(d) = &p.convolution_dimension_numbers {
                push(
                    a,
                    "dim_labels",
                    Attr::ConvDims(ConvDimLabels {
                        input_batch: d.input_batch_dimension,
                        input_feature: d.input_feature_dimension,
                        input_spatial: d.input_spatial_dimensions.clone(),
                        kernel_input_feature: d.kernel_input_feature_dimension,
                        kernel_output_feature: d.kernel_output_feature_dimension,
                        kernel_spatial: d.kernel_spatial_dimensions.clone(),
                        output_batch: d.output_batch_dimension,
                        output_feature: d.output_feature_dimension,
                        output_spatial: d.output_spatial_dimensions.clone(),
                    }),
                );
            }
            if p.feature_group_count > 1 {
                push(a, "feature_group_count", Attr::Int(p.feature_group_count));
            }
            if p.batch_group_count > 1 {
                push(a, "batch_group_count", Attr::Int(p.batch_group_count));
            }
            precision(a, p)?;
        }
        O::ReduceWindow | O::SelectAndScatter => window(a, p),
        O::Gather => {
            let d = p.gather_dimension_numbers.clone().unwrap_or_default();
            push(a, "offset_dims", Attr::Ints(d.offset_dims));
            push(
                a,
                "collapsed_slice_dims",
                Attr::Ints(d.collapsed_slice_dims),
            );
            push(a, "start_index_map", Attr::Ints(d.start_index_map));
            if !d.operand_batching_dims.is_empty() {
                push(
                    a,
                    "operand_batching_dims",
                    Attr::Ints(d.operand_batching_dims),
                );
                push(
                    a,
                    "start_indices_batching_dims",
                    Attr::Ints(d.start_indices_batching_dims),
                );
            }
            push(a, "index_vector_dim", Attr::Int(d.index_vector_dim));
            push(a, "slice_sizes", Attr::Ints(p.gather_slice_sizes.clone()));
            if p.indices_are_sorted {
                push(a, "indices_are_sorted", Attr::Bool(true));
            }
        }
        O::Scatter => {
            let d = p.scatter_dimension_numbers.clone().unwrap_or_default();
            push(a, "update_window_dims", Attr::Ints(d.update_window_dims));
            push(
                a,
                "inserted_window_dims",
                Attr::Ints(d.inserted_window_dims),
            );
            push(
                a,
                "scatter_dims_to_operand_dims",
                Attr::Ints(d.scatter_dims_to_operand_dims),
            );
            if !d.input_batching_dims.is_empty() {
                push(a, "input_batching_dims", Attr::Ints(d.input_batching_dims));
                push(
                    a,
                    "scatter_indices_batching_dims",
                    Attr::Ints(d.scatter_indices_batching_dims),
                );
            }
            push(a, "index_vector_dim", Attr::Int(d.index_vector_dim));
            if p.indices_are_sorted {
                push(a, "indices_are_sorted", Attr::Bool(true));
            }
            if p.unique_indices {
                push(a, "unique_indices", Attr::Bool(true));
            }
        }
        O::Sort => {
            push(a, "dimensions", Attr::Ints(p.dimensions.clone()));
            if p.is_stable {
                push(a, "is_stable", Attr::Bool(true));
            }
        }
        O::TopK => {
            push(a, "k", Attr::Int(p.k));
            push(a, "largest", Attr::Bool(p.largest));
        }
        O::TriangularSolve => {
            let o = p.triangular_solve_options.clone().unwrap_or_default();
            if o.left_side {
                push(a, "left_side", Attr::Bool(true));
            }
            if o.lower {
                push(a, "lower", Attr::Bool(true));
            }
            if o.unit_diagonal {
                push(a, "unit_diagonal", Attr::Bool(true));
            }
            let t = match o.transpose_a {
                2 => "TRANSPOSE",
                3 => "ADJOINT",
                _ => "NO_TRANSPOSE",
            };
            push(a, "transpose_a", Attr::Ident(t.into()));
        }
        O::Cholesky => {
            if p.cholesky_options.as_ref().is_some_and(|o| o.lower) {
                push(a, "lower", Attr::Bool(true));
            }
        }
        O::BatchNormTraining | O::BatchNormInference | O::BatchNormGrad => {
            push(a, "epsilon", Attr::Raw(format_f32(p.epsilon)));
            push(a, "feature_index", Attr::Int(p.feature_index));
        }
        O::CustomCall => {
            push(
                a,
                "custom_call_target",
                Attr::Str(p.custom_call_target.clone()),
            );
            if p.window.is_some() {
                window(a, p);
            }
            if p.constrain_layout || !p.operand_shapes_with_layout.is_empty() {
                let shapes = p
                    .operand_shapes_with_layout
                    .iter()
                    .map(|s| shape_from_proto(s).map(|s| shape_to_string(&s)))
                    .collect::<Result<Vec<_>, _>>()?;
                push(
                    a,
                    "operand_layout_constraints",
                    Attr::Raw(format!("{{{}}}", shapes.join(", "))),
                );
            }
            if p.custom_call_has_side_effect {
                push(a, "custom_call_has_side_effect", Attr::Bool(true));
            }
            if !p.output_operand_aliasing.is_empty() {
                let items: Vec<String> = p
                    .output_operand_aliasing
                    .iter()
                    .map(|x| {
                        format!(
                            "{}: ({}, {})",
                            index_text(&x.output_shape_index),
                            x.operand_index,
                            index_text(&x.operand_shape_index)
                        )
                    })
                    .collect();
                push(
                    a,
                    "output_to_operand_aliasing",
                    Attr::Raw(format!("{{{}}}", items.join(", "))),
                );
            }
            if p.custom_call_schedule != 0 {
                let s = match p.custom_call_schedule {
                    1 => "SCHEDULE_LATEST",
                    _ => "SCHEDULE_EARLIEST",
                };
                push(a, "custom_call_schedule", Attr::Ident(s.into()));
            }
            if p.custom_call_api_version != 1 {
                let v = match p.custom_call_api_version {
                    0 => "API_VERSION_UNSPECIFIED",
                    2 => "API_VERSION_STATUS_RETURNING",
                    3 => "API_VERSION_STATUS_RETURNING_UNIFIED",
                    _ => "API_VERSION_TYPED_FFI",
                };
                push(a, "api_version", Attr::Ident(v.into()));
            }
        }
        O::Broadcast
        | O::Transpose
        | O::Reverse
        | O::Reduce
        | O::Concatenate
        | O::Map
        | O::AllGather
        | O::ReduceScatter
        | O::AllToAll
        | O::GetDimensionSize
        | O::SetDimensionSize => {
            let name = match opcode {
                O::AllGather => "all_gather_dimension",
                O::ReduceScatter => "scatter_dimension",
                O::AllToAll => "split_dimension",
                _ => "dimensions",
            };
            if name == "dimensions" {
                push(a, name, Attr::Ints(p.dimensions.clone()));
            } else if let Some(&d) = p.dimensions.first() {
                push(a, name, Attr::Int(d));
            }
        }
        _ => {
            if !p.dimensions.is_empty() {
                push(a, "dimensions", Attr::Ints(p.dimensions.clone()));
            }
        }
    }
    if p.channel_id > 0 {
        push(a, "channel_id", Attr::Int(p.channel_id));
    }
    if let Some(r) = &p.result_accuracy {
        if let Some(t) = &r.tolerance {
            push(
                a,
                "result_accuracy",
                Attr::Raw(format!(
                    "{{tolerance={{atol={},rtol={},ulps={}}}}}",
                    t.atol, t.rtol, t.ulps
                )),
            );
        } else if r.mode == Some(1) {
            push(a, "result_accuracy", Attr::Raw("{mode=highest}".into()));
        }
    }
    // Called computations.
    match opcode {
        O::While => {
            if comps.len() != 2 {
                return Err(ProtoError::Malformed(
                    "a while needs two computations".into(),
                ));
            }
            // Body first in the proto; the text writes the condition first.
            push(a, "condition", Attr::Comp(comps[1]));
            push(a, "body", Attr::Comp(comps[0]));
        }
        O::SelectAndScatter => {
            if comps.len() != 2 {
                return Err(ProtoError::Malformed(
                    "a select-and-scatter needs two computations".into(),
                ));
            }
            push(a, "select", Attr::Comp(comps[0]));
            push(a, "scatter", Attr::Comp(comps[1]));
        }
        O::Conditional => {
            let pred = i
                .operands
                .first()
                .and_then(|&o| comp.get(o))
                .and_then(|o| o.shape.as_ref())
                .is_some_and(|s| s.element_type == super::type_number(PrimitiveType::Pred));
            if pred && comps.len() == 2 {
                push(a, "true_computation", Attr::Comp(comps[0]));
                push(a, "false_computation", Attr::Comp(comps[1]));
            } else {
                push(a, "branch_computations", Attr::Comps(comps.clone()));
            }
        }
        O::Call
        | O::Map
        | O::Reduce
        | O::ReduceWindow
        | O::Scatter
        | O::Sort
        | O::AllReduce
        | O::ReduceScatter
        | O::AllReduceStart
        | O::TopK => {
            if let Some(&c) = comps.first() {
                push(a, "to_apply", Attr::Comp(c));
            }
        }
        O::CustomCall => {
            if !comps.is_empty() {
                push(a, "called_computations", Attr::Comps(comps.clone()));
            }
        }
        _ => match comps.len() {
            0 => {}
            1 => push(a, "calls", Attr::Comp(comps[0])),
            _ => push(a, "calls", Attr::Comps(comps.clone())),
        },
    }
    if !p.async_execution_thread.is_empty() && p.async_execution_thread != "main" {
        push(
            a,
            "async_execution_thread",
            Attr::Str(p.async_execution_thread.clone()),
        );
    }
    if p.is_host_transfer {
        push(a, "is_host_transfer", Attr::Bool(true));
    }
    if let Some(s) = &p.sharding {
        push(a, "sharding", Attr::Raw(sharding_text(s)?));
    }
    if let Some(f) = &p.frontend_attributes {
        if !f.map.is_empty() {
            push(a, "frontend_attributes", Attr::Raw(frontend_text(f)));
        }
    }
    if !p.control_predecessor_ids.is_empty() {
        let preds = p
            .control_predecessor_ids
            .iter()
            .map(|id| {
                local.get(id).copied().ok_or_else(|| {
                    ProtoError::Malformed(format!("control predecessor id {id} names nothing"))
                })
            })
            .collect::<Result<_, _>>()?;
        push(a, "control-predecessors", Attr::Instrs(preds));
    }
    if let Some(m) = &p.metadata {
        let t = metadata_text(m);
        if t != "{}" {
            push(a, "metadata", Attr::Raw(t));
        }
    }
    if !p.backend_config.is_empty() {
        let s = String::from_utf8_lossy(&p.backend_config).into_owned();
        let v = if s.starts_with('{') { s } else { quote(&s) };
        push(a, "backend_config", Attr::Raw(v));
    }
    Ok(i)
}

/// The shape of the first operand of `p` (for the comparison type's default).
fn shape_of(
    p: &HloInstructionProto,
    local: &HashMap<i64, InstrId>,
    comp: &[&HloInstructionProto],
) -> Option<PrimitiveType> {
    let k = *local.get(p.operand_ids.first()?)?;
    type_of_number(comp.get(k)?.shape.as_ref()?.element_type)
}

/// Whether a comparison type is the one XLA infers for the operands' type (then it is not
/// printed).
fn default_comparison(t: &str, ty: &Option<PrimitiveType>) -> bool {
    let Some(ty) = ty else { return false };
    let d = if ty.is_floating_or_complex() {
        "FLOAT"
    } else if ty.is_unsigned_integer() || *ty == PrimitiveType::Pred {
        "UNSIGNED"
    } else {
        "SIGNED"
    };
    t == d
}

fn window(a: &mut Vec<(String, Attr)>, p: &HloInstructionProto) {
    if let Some(w) = &p.window {
        a.push((
            "window".into(),
            Attr::Window(Window {
                dims: w
                    .dimensions
                    .iter()
                    .map(|d| WindowDim {
                        size: d.size,
                        stride: d.stride,
                        padding_low: d.padding_low,
                        padding_high: d.padding_high,
                        base_dilation: d.base_dilation,
                        window_dilation: d.window_dilation,
                        window_reversal: d.window_reversal,
                    })
                    .collect(),
            }),
        ));
    }
}

fn precision(a: &mut Vec<(String, Attr)>, p: &HloInstructionProto) -> Result<(), ProtoError> {
    let Some(pc) = &p.precision_config else {
        return Ok(());
    };
    if pc.operand_precision.iter().any(|&x| x != 0) {
        let names: Vec<&str> = pc
            .operand_precision
            .iter()
            .map(|&x| match x {
                1 => "high",
                2 => "highest",
                _ => "default",
            })
            .collect();
        a.push((
            "operand_precision".into(),
            Attr::Raw(format!("{{{}}}", names.join(","))),
        ));
    }
    if pc.algorithm != 0 {
        let n = DOT_ALGORITHMS
            .iter()
            .find(|(_, v)| *v == pc.algorithm)
            .ok_or_else(|| ProtoError::Unsupported(format!("dot algorithm {}", pc.algorithm)))?;
        a.push(("algorithm".into(), Attr::Ident(n.0.to_string())));
    }
    Ok(())
}

fn format_f32(v: f32) -> String {
    let mut s = String::new();
    crate::print::write_float(&mut s, PrimitiveType::F32, v as f64, v.to_bits() as u128)
        .expect("writing to a String cannot fail");
    s
}

fn frontend_text(f: &FrontendAttributes) -> String {
    let items: Vec<String> = f
        .map
        .iter()
        // A dictionary value is written as it is, like XLA writes it; anything else quoted.
        .map(|(k, v)| {
            if v.starts_with('{') && v.ends_with('}') {
                format!("{k}={v}")
            } else {
                format!("{k}={}", quote(v))
            }
        })
        .collect();
    format!("{{{}}}", items.join(","))
}

fn metadata_text(m: &OpMetadata) -> String {
    let mut items = Vec::new();
    for (k, v) in [
        ("op_type", &m.op_type),
        ("op_name", &m.op_name),
        ("source_file", &m.source_file),
    ] {
        if !v.is_empty() {
            items.push(format!("{k}={}", quote(v)));
        }
    }
    for (k, v) in [
        ("source_line", m.source_line),
        ("source_end_line", m.source_end_line),
        ("source_column", m.source_column),
        ("source_end_column", m.source_end_column),
    ] {
        if v != 0 {
            items.push(format!("{k}={v}"));
        }
    }
    if !m.deduplicated_name.is_empty() {
        items.push(format!("deduplicated_name={}", quote(&m.deduplicated_name)));
    }
    if !m.scheduling_name.is_empty() {
        items.push(format!("scheduling_name={}", quote(&m.scheduling_name)));
    }
    if m.stack_frame_id != 0 {
        items.push(format!("stack_frame_id={}", m.stack_frame_id));
    }
    format!("{{{}}}", items.join(" "))
}

pub(super) fn sharding_text(s: &OpSharding) -> Result<String, ProtoError> {
    Ok(match s.r#type {
        0 => "{replicated}".into(),
        1 => format!(
            "{{maximal device={}}}",
            s.tile_assignment_devices.first().copied().unwrap_or(0)
        ),
        4 => "{manual}".into(),
        3 => tiled_sharding_text(s)?,
        2 => {
            let items = s
                .tuple_shardings
                .iter()
                .map(sharding_text)
                .collect::<Result<Vec<_>, _>>()?;
            format!("{{{}}}", items.join(", "))
        }
        t => {
            return Err(ProtoError::Unsupported(format!(
                "sharding of type {t} is not read"
            )))
        }
    })
}

/// A tiled sharding as XLA prints it: `{devices=[2,1]<=[2]}`, `{devices=[2,2]<=[2,2]T(1,0)}`,
/// `{devices=[2,1]1,0}`, with ` last_tile_dim_replicate` or ` last_tile_dims={manual}`.
fn tiled_sharding_text(s: &OpSharding) -> Result<String, ProtoError> {
    let ints = |v: &[i64]| {
        v.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut out = format!("{{devices=[{}]", ints(&s.tile_assignment_dimensions));
    if !s.iota_reshape_dims.is_empty() {
        out.push_str(&format!("<=[{}]", ints(&s.iota_reshape_dims)));
        let identity = s
            .iota_transpose_perm
            .iter()
            .enumerate()
            .all(|(i, &p)| p as usize == i);
        if !identity {
            let perm: Vec<i64> = s.iota_transpose_perm.iter().map(|&p| p as i64).collect();
            out.push_str(&format!("T({})", ints(&perm)));
        }
    } else {
        out.push_str(&ints(&s.tile_assignment_devices));
    }
    if s.replicate_on_last_tile_dim {
        out.push_str(" last_tile_dim_replicate");
    }
    if !s.last_tile_dims.is_empty() {
        let names = s
            .last_tile_dims
            .iter()
            .map(|n| {
                SHARDING_TYPE_NAMES
                    .iter()
                    .find(|(k, _)| k == n)
                    .map(|(_, name)| *name)
                    .ok_or_else(|| {
                        ProtoError::Unsupported(format!("last tile dimension of sharding type {n}"))
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        out.push_str(&format!(" last_tile_dims={{{}}}", names.join(", ")));
    }
    out.push('}');
    Ok(out)
}

/// A `LiteralProto` as a literal (elements from the layout's physical order to row-major).
pub(super) fn literal_from_proto(p: &LiteralProto) -> Result<Literal, ProtoError> {
    let shape = shape_from_proto(
        p.shape
            .as_ref()
            .ok_or_else(|| ProtoError::Malformed("a literal without a shape".into()))?,
    )?;
    match &shape {
        Shape::Tuple(_) => Ok(Literal::Tuple(
            p.tuple_literals
                .iter()
                .map(literal_from_proto)
                .collect::<Result<_, _>>()?,
        )),
        Shape::Token => Ok(Literal::Token),
        Shape::Opaque => Err(ProtoError::Unsupported("opaque literals".into())),
        Shape::Buffer(_) => Err(ProtoError::Unsupported("buffer literals".into())),
        Shape::Array(a) => {
            let data = elements(p, a.ty)?;
            let n = a
                .element_count()
                .ok_or_else(|| ProtoError::Malformed("a literal with a dynamic dimension".into()))?
                as usize;
            let es = a.ty.byte_size();
            if data.len() != n * es {
                return Err(ProtoError::Malformed(format!(
                    "{} literal has {} bytes of elements, its shape needs {}",
                    shape_to_string(&shape),
                    data.len(),
                    n * es
                )));
            }
            let m2m = a.minor_to_major();
            let data = from_physical(&data, &a.dims, &m2m, es);
            ArrayLiteral::from_bytes(a.ty, a.dims.clone(), data)
                .map(Literal::Array)
                .map_err(|e| ProtoError::Malformed(e.to_string()))
        }
    }
}

fn from_physical(data: &[u8], dims: &[i64], m2m: &[i64], es: usize) -> Vec<u8> {
    let rank = dims.len();
    let row_major: Vec<i64> = (0..rank as i64).rev().collect();
    if m2m.len() != rank || m2m == row_major.as_slice() {
        return data.to_vec();
    }
    let dims: Vec<usize> = dims.iter().map(|&d| d.max(0) as usize).collect();
    let mut stride = vec![0usize; rank];
    let mut s = 1usize;
    for &d in m2m {
        stride[d as usize] = s;
        s *= dims[d as usize];
    }
    let n: usize = dims.iter().product();
    let mut out = vec![0u8; n * es];
    let mut idx = vec![0usize; rank];
    for lin in 0..n {
        let phys: usize = idx.iter().zip(&stride).map(|(i, s)| i * s).sum();
        out[lin * es..(lin + 1) * es].copy_from_slice(&data[phys * es..(phys + 1) * es]);
        for k in (0..rank).rev() {
            idx[k] += 1;
            if idx[k] < dims[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    out
}

/// The element bytes of a literal proto (our storage: little-endian, one byte per sub-byte
/// element, signed sub-byte values sign-extended).
fn elements(p: &LiteralProto, ty: PrimitiveType) -> Result<Vec<u8>, ProtoError> {
    use PrimitiveType::*;
    let sub = |v: &[u8], bits: u32, signed: bool| -> Vec<u8> {
        v.iter()
            .map(|&b| {
                let m = b & ((1u16 << bits) - 1) as u8;
                if signed && m >> (bits - 1) & 1 == 1 {
                    m | !(((1u16 << bits) - 1) as u8)
                } else {
                    m
                }
            })
            .collect()
    };
    Ok(match ty {
        Pred => p.preds.iter().map(|&b| b as u8).collect(),
        S1 => sub(&p.s1s, 1, true),
        S2 => sub(&p.s2s, 2, true),
        S4 => sub(&p.s4s, 4, true),
        U1 => sub(&p.u1s, 1, false),
        U2 => sub(&p.u2s, 2, false),
        U4 => sub(&p.u4s, 4, false),
        S8 => p.s8s.clone(),
        U8 => p.u8s.clone(),
        S16 => p.s16s.clone(),
        U16 => p.u16s.clone(),
        F16 => p.f16s.clone(),
        Bf16 => p.bf16s.clone(),
        S32 => p.s32s.iter().flat_map(|v| v.to_le_bytes()).collect(),
        U32 => p.u32s.iter().flat_map(|v| v.to_le_bytes()).collect(),
        S64 => p.s64s.iter().flat_map(|v| v.to_le_bytes()).collect(),
        U64 => p.u64s.iter().flat_map(|v| v.to_le_bytes()).collect(),
        F32 => p
            .f32s
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect(),
        F64 => p
            .f64s
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect(),
        C64 => p
            .c64s
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect(),
        C128 => p
            .c128s
            .iter()
            .flat_map(|v| v.to_bits().to_le_bytes())
            .collect(),
        F8E5M2 => p.f8e5m2s.clone(),
        F8E4M3 => p.f8e4m3s.clone(),
        F8E4M3FN => p.f8e4m3fns.clone(),
        F8E4M3B11FNUZ => p.f8e4m3b11fnuzs.clone(),
        F8E3M4 => p.f8e3m4s.clone(),
        F8E5M2FNUZ => p.f8e5m2fnuzs.clone(),
        F8E4M3FNUZ => p.f8e4m3fnuzs.clone(),
        F8E8M0FNU => p.f8e8m0fnus.clone(),
        F4E2M1FN => p.f4e2m1fns.clone(),
        Token | Opaque => Vec::new(),
    })
}
