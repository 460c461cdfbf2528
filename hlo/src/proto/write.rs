//! [`Module`] → `xla.HloModuleProto`.

use super::messages::*;
use super::raw::{key_values, top_level_items, unquote, Tok, Toks};
use super::{type_number, ProtoError, TUPLE_TYPE};
use crate::ir::{Attr, CompId, Computation, Constant, Instruction, Module};
use crate::literal::{ArrayLiteral, Literal};
use crate::opcode::Opcode;
use crate::shape::{Layout, Shape};
use crate::types::PrimitiveType;

/// The module as an `HloModuleProto`: computations callees first, ids assigned in order (each
/// instruction a module-wide unique id), array shapes without a layout given the default one
/// (as XLA's text parser does), constants in their layout's physical order.
pub fn module_to_proto(m: &Module) -> Result<HloModuleProto, ProtoError> {
    if m.computations.get(m.entry).is_none() {
        return Err(ProtoError::Malformed(
            "the module has no entry computation".into(),
        ));
    }
    let order = callees_first(m);
    let mut next_id = 0i64;
    // Instruction ids per computation, by instruction index.
    let mut ids: Vec<Vec<i64>> = vec![Vec::new(); m.computations.len()];
    for &c in &order {
        ids[c] = (0..m.computations[c].instructions.len())
            .map(|_| {
                next_id += 1;
                next_id
            })
            .collect();
    }
    let mut computations = Vec::with_capacity(order.len());
    for &cid in &order {
        computations.push(computation_to_proto(m, cid, &ids)?);
    }
    let entry = &m.computations[m.entry];
    let mut host_program_shape = program_shape(entry)?;
    let mut input_output_alias = None;
    let mut schedule = None;
    let mut frontend_attributes = None;
    for (k, v) in &m.header_attrs {
        match k.as_str() {
            "entry_computation_layout" => {
                host_program_shape = entry_layout(v, entry)?;
            }
            "input_output_alias" => input_output_alias = Some(io_alias(v)?),
            "frontend_attributes" => frontend_attributes = Some(frontend(v)?),
            // A scheduled module's schedule is its instruction order, for every computation
            // no fusion calls.
            "is_scheduled" if v == "true" => {
                let fused: std::collections::HashSet<CompId> = m
                    .computations
                    .iter()
                    .flat_map(|c| c.instructions.iter())
                    .filter(|i| i.opcode == Opcode::Fusion)
                    .flat_map(|i| i.called_computations())
                    .collect();
                schedule = Some(HloScheduleProto {
                    sequences: (0..m.computations.len())
                        .filter(|c| !fused.contains(c))
                        .map(|c| {
                            (
                                c as i64,
                                InstructionSequence {
                                    instruction_ids: ids[c].clone(),
                                },
                            )
                        })
                        .collect(),
                });
            }
            // Module configuration and scheduling: not part of HloModuleProto.
            _ => {}
        }
    }
    Ok(HloModuleProto {
        name: m.name.clone(),
        entry_computation_name: entry.name.clone(),
        entry_computation_id: m.entry as i64,
        computations,
        host_program_shape: Some(host_program_shape),
        id: 0,
        schedule,
        input_output_alias,
        is_dynamic: false,
        stack_frame_index: stack_frames(&m.stack_frame_tables)?,
        frontend_attributes,
    })
}

/// The stack-frame tables of the text (`FileNames`, then `1 "a.py"` lines, ...).
fn stack_frames(lines: &[String]) -> Result<Option<StackFrameIndexProto>, ProtoError> {
    if lines.is_empty() {
        return Ok(None);
    }
    let mut idx = StackFrameIndexProto::default();
    let mut table = "";
    for line in lines {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if ["FileNames", "FunctionNames", "FileLocations", "StackFrames"].contains(&line) {
            table = match line {
                "FileNames" => "f",
                "FunctionNames" => "n",
                "FileLocations" => "l",
                _ => "s",
            };
            continue;
        }
        let bad = || ProtoError::Attr("stack frame tables".into(), format!("cannot read {line:?}"));
        let (_, value) = line.split_once(' ').ok_or_else(bad)?;
        let fields = || -> Result<std::collections::HashMap<String, i32>, ProtoError> {
            key_values(value, "stack frame tables")?
                .into_iter()
                .map(|(k, v)| v.parse::<i32>().map(|v| (k, v)).map_err(|_| bad()))
                .collect()
        };
        match table {
            "f" => idx.file_names.push(unquote(value).map_err(|_| bad())?),
            "n" => idx.function_names.push(unquote(value).map_err(|_| bad())?),
            "l" => {
                let f = fields()?;
                let g = |k: &str| f.get(k).copied().unwrap_or(0);
                idx.file_locations.push(FileLocation {
                    file_name_id: g("file_name_id"),
                    function_name_id: g("function_name_id"),
                    line: g("line"),
                    end_line: g("end_line"),
                    column: g("column"),
                    end_column: g("end_column"),
                });
            }
            "s" => {
                let f = fields()?;
                let g = |k: &str| f.get(k).copied().unwrap_or(0);
                idx.stack_frames.push(StackFrame {
                    file_location_id: g("file_location_id"),
                    // The text counts parents from 1 where the proto counts from 0.
                    parent_frame_id: g("parent_frame_id") - 1,
                });
            }
            _ => return Err(bad()),
        }
    }
    Ok(Some(idx))
}

/// Computation indices in an order where every callee comes before its callers (module order
/// where it already holds).
fn callees_first(m: &Module) -> Vec<CompId> {
    let n = m.computations.len();
    let mut state = vec![0u8; n]; // 0 new, 1 on the stack, 2 done
    let mut out = Vec::with_capacity(n);
    for root in 0..n {
        if state[root] != 0 {
            continue;
        }
        // Iterative DFS: (computation, its callees, next callee index).
        let mut stack: Vec<(CompId, Vec<CompId>, usize)> = vec![(root, callees(m, root), 0)];
        state[root] = 1;
        while let Some((c, cs, i)) = stack.last_mut() {
            if *i < cs.len() {
                let next = cs[*i];
                *i += 1;
                if next < n && state[next] == 0 {
                    state[next] = 1;
                    let nc = callees(m, next);
                    stack.push((next, nc, 0));
                }
            } else {
                state[*c] = 2;
                out.push(*c);
                stack.pop();
            }
        }
    }
    out
}

fn callees(m: &Module, c: CompId) -> Vec<CompId> {
    let mut v: Vec<CompId> = m.computations[c]
        .instructions
        .iter()
        .flat_map(|i| i.called_computations())
        .collect();
    v.dedup();
    v
}

fn program_shape(c: &Computation) -> Result<ProgramShapeProto, ProtoError> {
    let params = c.parameters();
    Ok(ProgramShapeProto {
        parameters: params
            .iter()
            .map(|(_, i)| shape_to_proto(&i.shape))
            .collect::<Result<_, _>>()?,
        result: Some(shape_to_proto(&c.root_instruction().shape)?),
        parameter_names: params.iter().map(|(_, i)| i.name.clone()).collect(),
    })
}

/// `{(f32[2]{0}, s32[])->f32[2]{0}}`.
fn entry_layout(v: &str, entry: &Computation) -> Result<ProgramShapeProto, ProtoError> {
    let bad = |m: &str| ProtoError::Attr("entry_computation_layout".into(), m.to_string());
    let inner = v
        .trim()
        .strip_prefix('{')
        .and_then(|s| s.strip_suffix('}'))
        .ok_or_else(|| bad("expected {(...)->...}"))?;
    // The arrow at bracket depth 0.
    let mut depth = 0i32;
    let b = inner.as_bytes();
    let mut arrow = None;
    for i in 0..b.len() {
        match b[i] {
            b'(' | b'{' | b'[' => depth += 1,
            b')' | b'}' | b']' => depth -= 1,
            b'-' if depth == 0 && b.get(i + 1) == Some(&b'>') => {
                arrow = Some(i);
                break;
            }
            _ => {}
        }
    }
    let arrow = arrow.ok_or_else(|| bad("no ->"))?;
    let params = crate::parse::parse_shape(inner[..arrow].trim()).map_err(|e| bad(&e.message))?;
    let result =
        crate::parse::parse_shape(inner[arrow + 2..].trim()).map_err(|e| bad(&e.message))?;
    let params = match params {
        Shape::Tuple(t) => t,
        _ => return Err(bad("the parameters are not in parentheses")),
    };
    Ok(ProgramShapeProto {
        parameters: params
            .iter()
            .map(shape_to_proto)
            .collect::<Result<_, _>>()?,
        result: Some(shape_to_proto(&result)?),
        parameter_names: entry
            .parameters()
            .iter()
            .map(|(_, i)| i.name.clone())
            .collect(),
    })
}

/// A shape as a `ShapeProto`; an array without a layout gets the default (row-major) one.
pub fn shape_to_proto(s: &Shape) -> Result<ShapeProto, ProtoError> {
    Ok(match s {
        Shape::Array(a) => ShapeProto {
            element_type: type_number(a.ty),
            dimensions: a.dims.clone(),
            is_dynamic_dimension: if a.dynamic.len() == a.dims.len() {
                a.dynamic.clone()
            } else {
                vec![false; a.dims.len()]
            },
            tuple_shapes: vec![],
            layout: Some(layout_to_proto(
                a.layout
                    .clone()
                    .unwrap_or_else(|| Layout::row_major(a.dims.len())),
                a.dims.len(),
            )?),
        },
        Shape::Tuple(t) => ShapeProto {
            element_type: TUPLE_TYPE,
            tuple_shapes: t.iter().map(shape_to_proto).collect::<Result<_, _>>()?,
            ..Default::default()
        },
        Shape::Token => ShapeProto {
            element_type: type_number(PrimitiveType::Token),
            ..Default::default()
        },
        Shape::Opaque => ShapeProto {
            element_type: type_number(PrimitiveType::Opaque),
            ..Default::default()
        },
        Shape::Buffer(_) => {
            return Err(ProtoError::Unsupported(
                "buffer shapes (b(...)) in an HloModuleProto".into(),
            ))
        }
    })
}

fn layout_to_proto(l: Layout, rank: usize) -> Result<LayoutProto, ProtoError> {
    if !l.other.is_empty() {
        return Err(ProtoError::Unsupported(format!(
            "layout items {} cannot be written to a proto",
            l.other.join("")
        )));
    }
    let minor_to_major = if l.minor_to_major.is_empty() && rank > 0 {
        Layout::row_major(rank).minor_to_major
    } else {
        l.minor_to_major
    };
    Ok(LayoutProto {
        minor_to_major,
        tiles: l
            .tiles
            .into_iter()
            .map(|dimensions| TileProto { dimensions })
            .collect(),
        element_size_in_bits: l.element_size_bits,
        memory_space: l.memory_space,
        ..Default::default()
    })
}

fn computation_to_proto(
    m: &Module,
    cid: CompId,
    ids: &[Vec<i64>],
) -> Result<HloComputationProto, ProtoError> {
    let c = &m.computations[cid];
    let mut instructions = Vec::with_capacity(c.instructions.len());
    for (k, i) in c.instructions.iter().enumerate() {
        instructions.push(
            instruction_to_proto(m, cid, i, ids[cid][k], ids)
                .map_err(|e| in_instruction(e, &c.name, &i.name))?,
        );
    }
    let mut execution_thread = String::new();
    for (k, v) in &c.trailing_attrs {
        if k == "execution_thread" {
            execution_thread = unquote(v).map_err(|e| ProtoError::Attr(k.clone(), e))?;
        }
    }
    Ok(HloComputationProto {
        name: c.name.clone(),
        instructions,
        program_shape: Some(program_shape(c)?),
        id: cid as i64,
        root_id: *ids[cid]
            .get(c.root)
            .ok_or_else(|| ProtoError::Malformed(format!("computation {} has no root", c.name)))?,
        is_fusion_computation: false,
        execution_thread,
    })
}

fn in_instruction(e: ProtoError, comp: &str, instr: &str) -> ProtoError {
    match e {
        ProtoError::Unsupported(m) => {
            ProtoError::Unsupported(format!("%{instr} (in %{comp}): {m}"))
        }
        ProtoError::Attr(a, m) => ProtoError::Attr(format!("{a} of %{instr} (in %{comp})"), m),
        e => e,
    }
}

fn instruction_to_proto(
    m: &Module,
    cid: CompId,
    i: &Instruction,
    id: i64,
    ids: &[Vec<i64>],
) -> Result<HloInstructionProto, ProtoError> {
    let c = &m.computations[cid];
    let local = |k: usize| -> Result<i64, ProtoError> {
        ids[cid]
            .get(k)
            .copied()
            .ok_or_else(|| ProtoError::Malformed(format!("operand index {k} out of range")))
    };
    let mut p = HloInstructionProto {
        name: i.name.clone(),
        opcode: i.opcode.name().to_string(),
        shape: Some(shape_to_proto(&i.shape)?),
        id,
        operand_ids: i
            .operands
            .iter()
            .map(|&o| local(o))
            .collect::<Result<_, _>>()?,
        ..Default::default()
    };
    if i.opcode == Opcode::CustomCall {
        // XLA's parser's default when the text gives none.
        p.custom_call_api_version = 1;
    }
    if let Some(n) = i.parameter_number {
        p.parameter_number = n;
    }
    match &i.constant {
        Some(Constant::Literal(l)) => p.literal = Some(literal_to_proto(l, &i.shape)?),
        Some(Constant::Elided) => {
            return Err(ProtoError::Unsupported(
                "a constant elided from the dump ({...}) has no value to write".into(),
            ))
        }
        None => {}
    }
    let comp_id = |c: CompId| -> Result<i64, ProtoError> {
        if c < m.computations.len() {
            Ok(c as i64)
        } else {
            Err(ProtoError::Malformed(format!(
                "computation index {c} out of range"
            )))
        }
    };
    // Called computations by attribute name; their order in the proto is the opcode's.
    let mut called: Vec<(&str, Vec<CompId>)> = Vec::new();
    let mut operand_precision: Option<Vec<i32>> = None;
    let mut algorithm: Option<i32> = None;
    for (name, a) in &i.attrs {
        let name = name.as_str();
        let bad = |m: &str| ProtoError::Attr(name.to_string(), m.to_string());
        let ints = || -> Result<Vec<i64>, ProtoError> {
            match a {
                Attr::Ints(v) => Ok(v.clone()),
                _ => Err(bad("expected {integers}")),
            }
        };
        let int = || -> Result<i64, ProtoError> {
            match a {
                Attr::Int(v) => Ok(*v),
                _ => Err(bad("expected an integer")),
            }
        };
        let flag = || -> Result<bool, ProtoError> {
            match a {
                Attr::Bool(v) => Ok(*v),
                _ => Err(bad("expected true or false")),
            }
        };
        let word = || -> Result<String, ProtoError> {
            match a {
                Attr::Ident(v) | Attr::Str(v) => Ok(v.clone()),
                Attr::Raw(v) => Ok(v.trim().to_string()),
                _ => Err(bad("expected a word")),
            }
        };
        let raw = || -> Result<&str, ProtoError> {
            match a {
                Attr::Raw(v) => Ok(v.as_str()),
                _ => Err(bad("expected a verbatim value")),
            }
        };
        match name {
            "dimensions" => p.dimensions = ints()?,
            "iota_dimension"
            | "all_gather_dimension"
            | "scatter_dimension"
            | "split_dimension"
            | "concat_dimension" => p.dimensions = vec![int()?],
            "index" => p.tuple_index = int()?,
            "slice" => match a {
                Attr::Slice(s) => {
                    p.slice_dimensions = s
                        .iter()
                        .map(|d| SliceDimensions {
                            start: d.start,
                            limit: d.limit,
                            stride: d.stride,
                        })
                        .collect()
                }
                _ => return Err(bad("expected {[start:limit:stride], ...}")),
            },
            "window" => match a {
                Attr::Window(w) => {
                    p.window = Some(WindowProto {
                        dimensions: w
                            .dims
                            .iter()
                            .map(|d| WindowDimension {
                                size: d.size,
                                stride: d.stride,
                                padding_low: d.padding_low,
                                padding_high: d.padding_high,
                                window_dilation: d.window_dilation,
                                base_dilation: d.base_dilation,
                                window_reversal: d.window_reversal,
                            })
                            .collect(),
                    })
                }
                _ => return Err(bad("expected a window")),
            },
            "dim_labels" => match a {
                Attr::ConvDims(d) => {
                    p.convolution_dimension_numbers = Some(ConvolutionDimensionNumbers {
                        input_batch_dimension: d.input_batch,
                        input_feature_dimension: d.input_feature,
                        input_spatial_dimensions: d.input_spatial.clone(),
                        kernel_input_feature_dimension: d.kernel_input_feature,
                        kernel_output_feature_dimension: d.kernel_output_feature,
                        kernel_spatial_dimensions: d.kernel_spatial.clone(),
                        output_batch_dimension: d.output_batch,
                        output_feature_dimension: d.output_feature,
                        output_spatial_dimensions: d.output_spatial.clone(),
                    })
                }
                _ => return Err(bad("expected dimension labels")),
            },
            "feature_group_count" => p.feature_group_count = int()?,
            "batch_group_count" => p.batch_group_count = int()?,
            "padding" => match a {
                Attr::Padding(d) => {
                    p.padding_config = Some(PaddingConfig {
                        dimensions: d
                            .iter()
                            .map(|d| PaddingConfigDimension {
                                edge_padding_low: d.low,
                                edge_padding_high: d.high,
                                interior_padding: d.interior,
                            })
                            .collect(),
                    })
                }
                _ => return Err(bad("expected low_high_interior")),
            },
            "exponent_bits" => p.exponent_bits = int()? as i32,
            "mantissa_bits" => p.mantissa_bits = int()? as i32,
            "dynamic_slice_sizes" => p.dynamic_slice_sizes = ints()?,
            "distribution" => {
                p.distribution = match word()?.as_str() {
                    "rng_uniform" => 1,
                    "rng_normal" => 2,
                    w => return Err(bad(&format!("unknown distribution {w}"))),
                }
            }
            "epsilon" => {
                p.epsilon = word()?
                    .parse::<f32>()
                    .map_err(|_| bad("expected a number"))?
            }
            "feature_index" => p.feature_index = int()?,
            "channel_id" => p.channel_id = int()?,
            "custom_call_target" => p.custom_call_target = word()?,
            "lhs_contracting_dims" => {
                dot(&mut p).lhs_contracting_dimensions = ints()?;
            }
            "rhs_contracting_dims" => {
                dot(&mut p).rhs_contracting_dimensions = ints()?;
            }
            "lhs_batch_dims" => dot(&mut p).lhs_batch_dimensions = ints()?,
            "rhs_batch_dims" => dot(&mut p).rhs_batch_dimensions = ints()?,
            "fft_type" => {
                p.fft_type = match word()?.as_str() {
                    "FFT" => 0,
                    "IFFT" => 1,
                    "RFFT" => 2,
                    "IRFFT" => 3,
                    w => return Err(bad(&format!("unknown fft_type {w}"))),
                }
            }
            "fft_length" => p.fft_length = ints()?,
            "direction" => p.comparison_direction = word()?,
            "type" if i.opcode == Opcode::Compare => p.comparison_type = word()?,
            "offset_dims" => gather(&mut p).offset_dims = ints()?,
            "collapsed_slice_dims" => gather(&mut p).collapsed_slice_dims = ints()?,
            "start_index_map" => gather(&mut p).start_index_map = ints()?,
            "operand_batching_dims" => gather(&mut p).operand_batching_dims = ints()?,
            "start_indices_batching_dims" => gather(&mut p).start_indices_batching_dims = ints()?,
            "index_vector_dim" => {
                let v = int()?;
                if i.opcode == Opcode::Scatter {
                    scatter(&mut p).index_vector_dim = v;
                } else {
                    gather(&mut p).index_vector_dim = v;
                }
            }
            "slice_sizes" => p.gather_slice_sizes = ints()?,
            "update_window_dims" => scatter(&mut p).update_window_dims = ints()?,
            "inserted_window_dims" => scatter(&mut p).inserted_window_dims = ints()?,
            "scatter_dims_to_operand_dims" => {
                scatter(&mut p).scatter_dims_to_operand_dims = ints()?
            }
            "input_batching_dims" => scatter(&mut p).input_batching_dims = ints()?,
            "scatter_indices_batching_dims" => {
                scatter(&mut p).scatter_indices_batching_dims = ints()?
            }
            "indices_are_sorted" => p.indices_are_sorted = flag()?,
            "unique_indices" => p.unique_indices = flag()?,
            "is_stable" => p.is_stable = flag()?,
            "is_host_transfer" => p.is_host_transfer = flag()?,
            "constrain_layout" => p.constrain_layout = flag()?,
            "use_global_device_ids" => p.use_global_device_ids = flag()?,
            "custom_call_has_side_effect" => p.custom_call_has_side_effect = flag()?,
            "largest" => p.largest = flag()?,
            "k" => p.k = int()?,
            "kind" if i.opcode == Opcode::Fusion => p.fusion_kind = word()?,
            "left_side" => tri(&mut p).left_side = flag()?,
            "unit_diagonal" => tri(&mut p).unit_diagonal = flag()?,
            "transpose_a" => {
                tri(&mut p).transpose_a = match word()?.as_str() {
                    "NO_TRANSPOSE" => 1,
                    "TRANSPOSE" => 2,
                    "ADJOINT" => 3,
                    w => return Err(bad(&format!("unknown transpose_a {w}"))),
                }
            }
            "lower" => {
                if i.opcode == Opcode::Cholesky {
                    p.cholesky_options = Some(CholeskyOptions { lower: flag()? });
                } else {
                    tri(&mut p).lower = flag()?;
                }
            }
            "api_version" => {
                p.custom_call_api_version = match word()?.as_str() {
                    "API_VERSION_UNSPECIFIED" => 0,
                    "API_VERSION_ORIGINAL" => 1,
                    "API_VERSION_STATUS_RETURNING" => 2,
                    "API_VERSION_STATUS_RETURNING_UNIFIED" => 3,
                    "API_VERSION_TYPED_FFI" => 4,
                    w => return Err(bad(&format!("unknown api_version {w}"))),
                }
            }
            "custom_call_schedule" => {
                p.custom_call_schedule = match word()?.as_str() {
                    "SCHEDULE_NONE" => 0,
                    "SCHEDULE_LATEST" => 1,
                    "SCHEDULE_EARLIEST" => 2,
                    w => return Err(bad(&format!("unknown custom_call_schedule {w}"))),
                }
            }
            "algorithm" => {
                let w = word()?;
                if i.opcode == Opcode::RngBitGenerator {
                    p.rng_algorithm = match w.as_str() {
                        "rng_default" => 0,
                        "rng_three_fry" => 1,
                        "rng_philox" => 2,
                        w => return Err(bad(&format!("unknown rng algorithm {w}"))),
                    };
                } else {
                    algorithm = Some(
                        dot_algorithm(&w)
                            .ok_or_else(|| bad(&format!("unknown dot algorithm {w}")))?,
                    );
                }
            }
            "operand_precision" => {
                let items = top_level_items(raw()?, name)?;
                operand_precision = Some(
                    items
                        .iter()
                        .map(|s| match s.as_str() {
                            "default" | "DEFAULT" => Ok(0),
                            "high" | "HIGH" => Ok(1),
                            "highest" | "HIGHEST" => Ok(2),
                            w => Err(bad(&format!("unknown precision {w}"))),
                        })
                        .collect::<Result<_, _>>()?,
                );
            }
            "async_execution_thread" => p.async_execution_thread = word()?,
            "backend_config" => {
                let v = raw()?.trim();
                p.backend_config = if v.starts_with('"') {
                    unquote(v).map_err(|e| bad(&e))?.into_bytes()
                } else {
                    v.as_bytes().to_vec()
                };
            }
            "metadata" => p.metadata = Some(metadata(raw()?)?),
            "frontend_attributes" => p.frontend_attributes = Some(frontend(raw()?)?),
            "sharding" => p.sharding = Some(sharding(raw()?)?),
            "operand_layout_constraints" => {
                p.constrain_layout = true;
                p.operand_shapes_with_layout = top_level_items(raw()?, name)?
                    .iter()
                    .map(|s| {
                        crate::parse::parse_shape(s)
                            .map_err(|e| bad(&e.message))
                            .and_then(|s| shape_to_proto(&s))
                    })
                    .collect::<Result<_, _>>()?;
            }
            "output_to_operand_aliasing" => p.output_operand_aliasing = aliasing(raw()?)?,
            "result_accuracy" => p.result_accuracy = Some(result_accuracy(raw()?)?),
            "replica_groups" => p.collective_device_list = Some(replica_groups(raw()?)?),
            "control-predecessors" => match a {
                Attr::Instrs(v) => {
                    p.control_predecessor_ids =
                        v.iter().map(|&k| local(k)).collect::<Result<_, _>>()?
                }
                _ => return Err(bad("expected {%a, ...}")),
            },
            "is_composite" => {
                p.is_composite = flag().or_else(|_| Ok::<_, ProtoError>(word()? == "true"))?
            }
            // What only tools read.
            "statistics" | "origin" | "original_value" => {}
            _ => match a {
                Attr::Comp(c) => called.push((name, vec![*c])),
                Attr::Comps(cs) => called.push((name, cs.clone())),
                _ => {
                    return Err(ProtoError::Unsupported(format!(
                        "attribute {name} has no HloModuleProto field this writer knows"
                    )))
                }
            },
        }
    }
    // Messages XLA requires of these opcodes even when every field has its default.
    match i.opcode {
        Opcode::Dot => {
            dot(&mut p);
        }
        Opcode::Gather => {
            gather(&mut p);
        }
        Opcode::Scatter => {
            scatter(&mut p);
        }
        Opcode::Convolution => {
            p.convolution_dimension_numbers
                .get_or_insert_with(Default::default);
            p.window.get_or_insert_with(Default::default);
        }
        _ => {}
    }
    if operand_precision.is_some() || algorithm.is_some() {
        p.precision_config = Some(PrecisionConfig {
            operand_precision: operand_precision.unwrap_or_default(),
            algorithm: algorithm.unwrap_or(0),
        });
    }
    let take = |called: &mut Vec<(&str, Vec<CompId>)>, n: &str| -> Option<Vec<CompId>> {
        let k = called.iter().position(|(name, _)| *name == n)?;
        Some(called.remove(k).1)
    };
    let mut order: Vec<CompId> = Vec::new();
    match i.opcode {
        // XLA keeps a while's body before its condition.
        Opcode::While => {
            order.extend(take(&mut called, "body").unwrap_or_default());
            order.extend(take(&mut called, "condition").unwrap_or_default());
        }
        Opcode::SelectAndScatter => {
            order.extend(take(&mut called, "select").unwrap_or_default());
            order.extend(take(&mut called, "scatter").unwrap_or_default());
        }
        Opcode::Conditional => {
            if let Some(t) = take(&mut called, "true_computation") {
                order.extend(t);
                order.extend(take(&mut called, "false_computation").unwrap_or_default());
            }
        }
        _ => {}
    }
    for (_, cs) in called {
        order.extend(cs);
    }
    p.called_computation_ids = order.into_iter().map(comp_id).collect::<Result<_, _>>()?;
    let _ = c;
    Ok(p)
}

fn dot(p: &mut HloInstructionProto) -> &mut DotDimensionNumbers {
    p.dot_dimension_numbers.get_or_insert_with(Default::default)
}
fn gather(p: &mut HloInstructionProto) -> &mut GatherDimensionNumbers {
    p.gather_dimension_numbers
        .get_or_insert_with(Default::default)
}
fn scatter(p: &mut HloInstructionProto) -> &mut ScatterDimensionNumbers {
    p.scatter_dimension_numbers
        .get_or_insert_with(Default::default)
}
fn tri(p: &mut HloInstructionProto) -> &mut TriangularSolveOptions {
    p.triangular_solve_options
        .get_or_insert_with(|| TriangularSolveOptions {
            transpose_a: 1,
            ..Default::default()
        })
}

/// The dot algorithms' text names (`dot_bf16_bf16_f32`), by their proto number.
pub(super) const DOT_ALGORITHMS: [(&str, i32); 14] = [
    ("unset", 0),
    ("dot_any_f8_any_f8_f32", 1),
    ("dot_any_f8_any_f8_f32_fast_accum", 2),
    ("dot_f16_f16_f16", 3),
    ("dot_f16_f16_f32", 4),
    ("dot_bf16_bf16_bf16", 5),
    ("dot_bf16_bf16_f32", 6),
    ("dot_bf16_bf16_f32_x3", 7),
    ("dot_bf16_bf16_f32_x6", 8),
    ("dot_tf32_tf32_f32", 9),
    ("dot_tf32_tf32_f32_x3", 10),
    ("dot_f32_f32_f32", 11),
    ("dot_f64_f64_f64", 12),
    ("dot_bf16_bf16_f32_x9", 13),
];

fn dot_algorithm(w: &str) -> Option<i32> {
    let w = w.to_ascii_lowercase();
    let w = w.strip_prefix("alg_").unwrap_or(&w);
    DOT_ALGORITHMS
        .iter()
        .find(|(n, _)| *n == w)
        .map(|(_, v)| *v)
}

fn metadata(v: &str) -> Result<OpMetadata, ProtoError> {
    let mut md = OpMetadata::default();
    for (k, val) in key_values(v, "metadata")? {
        let int = |s: &str| {
            s.parse::<i32>()
                .map_err(|_| ProtoError::Attr("metadata".into(), format!("{k}={s}")))
        };
        match k.as_str() {
            "op_type" => md.op_type = val,
            "op_name" => md.op_name = val,
            "source_file" => md.source_file = val,
            "source_line" => md.source_line = int(&val)?,
            "source_end_line" => md.source_end_line = int(&val)?,
            "source_column" => md.source_column = int(&val)?,
            "source_end_column" => md.source_end_column = int(&val)?,
            "deduplicated_name" => md.deduplicated_name = val,
            "stack_frame_id" => md.stack_frame_id = int(&val)?,
            "scheduling_name" => md.scheduling_name = val,
            // Profile and size fields: not semantics, not kept.
            _ => {}
        }
    }
    Ok(md)
}

/// `{k="v",k2={...}}`: a value is a quoted string, or a dictionary written as it is
/// (`xla.sdy.meshes={mesh = #sdy.mesh<["x"=2]>}`), kept verbatim.
fn frontend(v: &str) -> Result<FrontendAttributes, ProtoError> {
    let mut map = std::collections::BTreeMap::new();
    for item in top_level_items(v, "frontend_attributes")? {
        let (k, value) = item.split_once('=').ok_or_else(|| {
            ProtoError::Attr("frontend_attributes".into(), format!("{item:?} is not k=v"))
        })?;
        let k = k.trim();
        let k = if k.starts_with('"') {
            unquote(k).map_err(|e| ProtoError::Attr("frontend_attributes".into(), e))?
        } else {
            k.to_string()
        };
        let value = value.trim();
        let value = if value.starts_with('"') {
            unquote(value).map_err(|e| ProtoError::Attr("frontend_attributes".into(), e))?
        } else {
            value.to_string()
        };
        map.insert(k, value);
    }
    Ok(FrontendAttributes { map })
}

/// `{replicated}`, `{maximal device=N}`, `{manual}`, or a tuple of those.
pub(super) fn sharding(v: &str) -> Result<OpSharding, ProtoError> {
    let mut t = Toks::new(v, "sharding")?;
    let s = sharding_in(&mut t)?;
    t.done()?;
    Ok(s)
}

fn sharding_in(t: &mut Toks) -> Result<OpSharding, ProtoError> {
    t.expect(Tok::Open('{'))?;
    if t.eat(&Tok::Close('}')) {
        return Ok(OpSharding {
            r#type: 2,
            ..Default::default()
        });
    }
    if matches!(t.peek(), Some(Tok::Open('{'))) {
        let mut tuple = Vec::new();
        loop {
            tuple.push(sharding_in(t)?);
            if t.eat(&Tok::Close('}')) {
                break;
            }
            t.expect(Tok::Comma)?;
        }
        return Ok(OpSharding {
            r#type: 2,
            tuple_shardings: tuple,
            ..Default::default()
        });
    }
    let kind = t.word()?;
    let s = match kind.as_str() {
        "replicated" => OpSharding::default(),
        "manual" => OpSharding {
            r#type: 4,
            ..Default::default()
        },
        "maximal" => {
            if t.word()? != "device" {
                return t.err("expected device=N");
            }
            t.expect(Tok::Eq)?;
            let d = t.int()?;
            OpSharding {
                r#type: 1,
                tile_assignment_dimensions: vec![1],
                tile_assignment_devices: vec![d],
                ..Default::default()
            }
        }
        "devices" => tiled_sharding(t)?,
        other => {
            return Err(ProtoError::Unsupported(format!(
                "sharding {{{other} ...}} cannot be written to a proto by this writer"
            )))
        }
    };
    t.expect(Tok::Close('}'))?;
    Ok(s)
}

/// `[a,b,...]` (or with `(`/`)`): the integers.
fn delimited_ints(t: &mut Toks, open: char, close: char) -> Result<Vec<i64>, ProtoError> {
    t.expect(Tok::Open(open))?;
    let mut v = Vec::new();
    if t.eat(&Tok::Close(close)) {
        return Ok(v);
    }
    loop {
        v.push(t.int()?);
        if t.eat(&Tok::Close(close)) {
            return Ok(v);
        }
        t.expect(Tok::Comma)?;
    }
}

/// The rest of a tiled sharding after `devices`: `=[2,1]` the tile assignment's dimensions,
/// then its devices, `<=[4]` (an iota, reshaped: `<=[2,2]`, and transposed: `T(1,0)`) or a
/// list `0,1`, then `last_tile_dim_replicate` or `last_tile_dims={manual, replicated}`.
fn tiled_sharding(t: &mut Toks) -> Result<OpSharding, ProtoError> {
    t.expect(Tok::Eq)?;
    let mut s = OpSharding {
        r#type: 3,
        tile_assignment_dimensions: delimited_ints(t, '[', ']')?,
        ..Default::default()
    };
    if t.peek() == Some(&Tok::Word("<".into())) {
        t.next();
        t.expect(Tok::Eq)?;
        s.iota_reshape_dims = delimited_ints(t, '[', ']')?;
        if t.peek() == Some(&Tok::Word("T".into())) {
            t.next();
            s.iota_transpose_perm = delimited_ints(t, '(', ')')?
                .into_iter()
                .map(|p| p as i32)
                .collect();
        } else {
            s.iota_transpose_perm = (0..s.iota_reshape_dims.len() as i32).collect();
        }
    } else {
        loop {
            s.tile_assignment_devices.push(t.int()?);
            if !t.eat(&Tok::Comma) {
                break;
            }
        }
    }
    while let Some(Tok::Word(w)) = t.peek().cloned() {
        t.next();
        match w.as_str() {
            "last_tile_dim_replicate" => s.replicate_on_last_tile_dim = true,
            "last_tile_dims" => {
                t.expect(Tok::Eq)?;
                t.expect(Tok::Open('{'))?;
                loop {
                    let name = t.word()?;
                    let Some((n, _)) = SHARDING_TYPE_NAMES.iter().find(|(_, k)| *k == name) else {
                        return t.err(format!("unknown last tile dimension kind {name:?}"));
                    };
                    s.last_tile_dims.push(*n);
                    if t.eat(&Tok::Close('}')) {
                        break;
                    }
                    t.expect(Tok::Comma)?;
                }
            }
            other => {
                return Err(ProtoError::Unsupported(format!(
                    "sharding {{devices=... {other}}} cannot be written to a proto by this writer"
                )))
            }
        }
    }
    Ok(s)
}

/// `{{0}: (1, {}), {1}: (0, {2})}`.
fn aliasing(v: &str) -> Result<Vec<OutputOperandAliasing>, ProtoError> {
    let mut t = Toks::new(v, "output_to_operand_aliasing")?;
    t.expect(Tok::Open('{'))?;
    let mut out = Vec::new();
    if t.eat(&Tok::Close('}')) {
        t.done()?;
        return Ok(out);
    }
    loop {
        let output_shape_index = t.int_list()?;
        t.expect(Tok::Colon)?;
        t.expect(Tok::Open('('))?;
        let operand_index = t.int()?;
        t.expect(Tok::Comma)?;
        let operand_shape_index = t.int_list()?;
        t.expect(Tok::Close(')'))?;
        out.push(OutputOperandAliasing {
            output_shape_index,
            operand_index,
            operand_shape_index,
        });
        if t.eat(&Tok::Close('}')) {
            break;
        }
        t.expect(Tok::Comma)?;
    }
    t.done()?;
    Ok(out)
}

/// `{ {0}: (0, {}, may-alias), ... }` of the module header.
fn io_alias(v: &str) -> Result<HloInputOutputAliasProto, ProtoError> {
    let mut t = Toks::new(v, "input_output_alias")?;
    t.expect(Tok::Open('{'))?;
    let mut entries = Vec::new();
    if t.eat(&Tok::Close('}')) {
        return Ok(HloInputOutputAliasProto { entries });
    }
    loop {
        let output_shape_index = t.int_list()?;
        t.expect(Tok::Colon)?;
        t.expect(Tok::Open('('))?;
        let parameter_number = t.int()?;
        t.expect(Tok::Comma)?;
        let parameter_shape_index = t.int_list()?;
        let mut kind = 1;
        if t.eat(&Tok::Comma) {
            kind = match t.word()?.as_str() {
                "may-alias" => 1,
                "must-alias" => 2,
                w => return t.err(format!("unknown alias kind {w}")),
            };
        }
        t.expect(Tok::Close(')'))?;
        entries.push(AliasEntryProto {
            output_shape_index,
            parameter_number,
            parameter_shape_index,
            kind,
        });
        if t.eat(&Tok::Close('}')) {
            break;
        }
        t.expect(Tok::Comma)?;
    }
    t.done()?;
    Ok(HloInputOutputAliasProto { entries })
}

/// `{mode=highest}` or `{tolerance={atol=0.1,rtol=0,ulps=2}}`.
fn result_accuracy(v: &str) -> Result<ResultAccuracy, ProtoError> {
    let compact: String = v.chars().filter(|c| !c.is_whitespace()).collect();
    if let Some(mode) = compact
        .strip_prefix("{mode=")
        .and_then(|s| s.strip_suffix('}'))
    {
        let mode = match mode.to_ascii_lowercase().as_str() {
            "default" => 0,
            "highest" => 1,
            m => {
                return Err(ProtoError::Attr(
                    "result_accuracy".into(),
                    format!("mode {m}"),
                ))
            }
        };
        return Ok(ResultAccuracy {
            mode: Some(mode),
            tolerance: None,
        });
    }
    if let Some(tol) = compact
        .strip_prefix("{tolerance=")
        .and_then(|s| s.strip_suffix('}'))
    {
        let mut t = Tolerance::default();
        for (k, val) in key_values(tol, "result_accuracy")? {
            let bad = || ProtoError::Attr("result_accuracy".into(), format!("{k}={val}"));
            match k.as_str() {
                "atol" => t.atol = val.parse().map_err(|_| bad())?,
                "rtol" => t.rtol = val.parse().map_err(|_| bad())?,
                "ulps" => t.ulps = val.parse().map_err(|_| bad())?,
                _ => return Err(bad()),
            }
        }
        return Ok(ResultAccuracy {
            mode: None,
            tolerance: Some(t),
        });
    }
    Err(ProtoError::Attr(
        "result_accuracy".into(),
        format!("cannot read {v}"),
    ))
}

/// `{{0,1},{2,3}}` or `{}` (iota forms are not written).
fn replica_groups(v: &str) -> Result<CollectiveDeviceListProto, ProtoError> {
    let mut t = Toks::new(v, "replica_groups")?;
    if !matches!(t.peek(), Some(Tok::Open('{'))) {
        return Err(ProtoError::Unsupported(format!(
            "replica_groups={v} (iota form) cannot be written by this writer"
        )));
    }
    t.expect(Tok::Open('{'))?;
    let mut groups = Vec::new();
    if !t.eat(&Tok::Close('}')) {
        loop {
            groups.push(ReplicaGroup {
                replica_ids: t.int_list()?,
            });
            if t.eat(&Tok::Close('}')) {
                break;
            }
            t.expect(Tok::Comma)?;
        }
    }
    t.done()?;
    Ok(CollectiveDeviceListProto {
        replica_groups: groups,
    })
}

/// A literal as a `LiteralProto` whose shape is `shape` (the instruction's, layout filled in) and
/// whose elements are in that layout's physical order.
pub(super) fn literal_to_proto(l: &Literal, shape: &Shape) -> Result<LiteralProto, ProtoError> {
    match (l, shape) {
        (Literal::Tuple(items), Shape::Tuple(shapes)) if items.len() == shapes.len() => {
            Ok(LiteralProto {
                shape: Some(shape_to_proto(shape)?),
                tuple_literals: items
                    .iter()
                    .zip(shapes)
                    .map(|(l, s)| literal_to_proto(l, s))
                    .collect::<Result<_, _>>()?,
                ..Default::default()
            })
        }
        (Literal::Array(a), Shape::Array(s)) if a.ty == s.ty && a.dims == s.dims => {
            let sp = shape_to_proto(shape)?;
            let m2m = sp
                .layout
                .as_ref()
                .map(|l| l.minor_to_major.clone())
                .unwrap_or_default();
            let data = to_physical(a, &m2m);
            let mut p = LiteralProto {
                shape: Some(sp),
                ..Default::default()
            };
            fill_elements(&mut p, a.ty, &data);
            Ok(p)
        }
        (Literal::Token, Shape::Token) => Ok(LiteralProto {
            shape: Some(shape_to_proto(shape)?),
            ..Default::default()
        }),
        _ => Err(ProtoError::Malformed(
            "a constant's literal does not have the instruction's shape".into(),
        )),
    }
}

/// Row-major element bytes reordered into the physical order of `m2m` (minor to major).
fn to_physical(a: &ArrayLiteral, m2m: &[i64]) -> Vec<u8> {
    let rank = a.dims.len();
    let row_major: Vec<i64> = (0..rank as i64).rev().collect();
    if m2m.len() != rank || m2m == row_major.as_slice() {
        return a.data.clone();
    }
    let es = a.ty.byte_size();
    let dims: Vec<usize> = a.dims.iter().map(|&d| d.max(0) as usize).collect();
    // Physical stride of each logical dimension.
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
        out[phys * es..(phys + 1) * es].copy_from_slice(&a.data[lin * es..(lin + 1) * es]);
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

fn fill_elements(p: &mut LiteralProto, ty: PrimitiveType, data: &[u8]) {
    use PrimitiveType::*;
    let words = |n: usize| data.chunks_exact(n);
    match ty {
        Pred => p.preds = data.iter().map(|&b| b != 0).collect(),
        S1 => p.s1s = data.to_vec(),
        S2 => p.s2s = data.to_vec(),
        S4 => p.s4s = data.to_vec(),
        S8 => p.s8s = data.to_vec(),
        U1 => p.u1s = data.to_vec(),
        U2 => p.u2s = data.to_vec(),
        U4 => p.u4s = data.to_vec(),
        U8 => p.u8s = data.to_vec(),
        S16 => p.s16s = data.to_vec(),
        U16 => p.u16s = data.to_vec(),
        F16 => p.f16s = data.to_vec(),
        Bf16 => p.bf16s = data.to_vec(),
        S32 => {
            p.s32s = words(4)
                .map(|w| i32::from_le_bytes(w.try_into().unwrap()))
                .collect()
        }
        U32 => {
            p.u32s = words(4)
                .map(|w| u32::from_le_bytes(w.try_into().unwrap()))
                .collect()
        }
        S64 => {
            p.s64s = words(8)
                .map(|w| i64::from_le_bytes(w.try_into().unwrap()))
                .collect()
        }
        U64 => {
            p.u64s = words(8)
                .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
                .collect()
        }
        F32 => {
            p.f32s = words(4)
                .map(|w| f32::from_bits(u32::from_le_bytes(w.try_into().unwrap())))
                .collect()
        }
        F64 => {
            p.f64s = words(8)
                .map(|w| f64::from_bits(u64::from_le_bytes(w.try_into().unwrap())))
                .collect()
        }
        C64 => {
            p.c64s = words(4)
                .map(|w| f32::from_bits(u32::from_le_bytes(w.try_into().unwrap())))
                .collect()
        }
        C128 => {
            p.c128s = words(8)
                .map(|w| f64::from_bits(u64::from_le_bytes(w.try_into().unwrap())))
                .collect()
        }
        F8E5M2 => p.f8e5m2s = data.to_vec(),
        F8E4M3 => p.f8e4m3s = data.to_vec(),
        F8E4M3FN => p.f8e4m3fns = data.to_vec(),
        F8E4M3B11FNUZ => p.f8e4m3b11fnuzs = data.to_vec(),
        F8E3M4 => p.f8e3m4s = data.to_vec(),
        F8E5M2FNUZ => p.f8e5m2fnuzs = data.to_vec(),
        F8E4M3FNUZ => p.f8e4m3fnuzs = data.to_vec(),
        F8E8M0FNU => p.f8e8m0fnus = data.to_vec(),
        F4E2M1FN => p.f4e2m1fns = data.to_vec(),
        Token | Opaque => {}
    }
}
