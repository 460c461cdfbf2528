//! XLA's protobuf messages for an HLO module, as far as hlo-diff writes and reads them.
//!
//! Each struct is one message of XLA's `xla/service/hlo.proto` or `xla/xla_data.proto`, with the
//! field numbers those files give (facts of the wire format). Only the fields hlo-diff uses are
//! declared; prost skips the others when decoding. Enums are kept as their `int32` numbers.

/// `xla.HloModuleProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloModuleProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub entry_computation_name: String,
    #[prost(int64, tag = "6")]
    pub entry_computation_id: i64,
    #[prost(message, repeated, tag = "3")]
    pub computations: Vec<HloComputationProto>,
    #[prost(message, optional, tag = "4")]
    pub host_program_shape: Option<ProgramShapeProto>,
    #[prost(int64, tag = "5")]
    pub id: i64,
    #[prost(message, optional, tag = "7")]
    pub schedule: Option<HloScheduleProto>,
    #[prost(message, optional, tag = "8")]
    pub input_output_alias: Option<HloInputOutputAliasProto>,
    #[prost(bool, tag = "11")]
    pub is_dynamic: bool,
    #[prost(message, optional, tag = "17")]
    pub stack_frame_index: Option<StackFrameIndexProto>,
    #[prost(message, optional, tag = "19")]
    pub frontend_attributes: Option<FrontendAttributes>,
}

/// `xla.HloScheduleProto`: per computation id, its instruction ids in order.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloScheduleProto {
    #[prost(map = "int64, message", tag = "1")]
    pub sequences: std::collections::HashMap<i64, InstructionSequence>,
}

/// `xla.HloScheduleProto.InstructionSequence`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InstructionSequence {
    #[prost(int64, repeated, tag = "1")]
    pub instruction_ids: Vec<i64>,
}

/// `xla.HloInputOutputAliasProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloInputOutputAliasProto {
    #[prost(message, repeated, tag = "1")]
    pub entries: Vec<AliasEntryProto>,
}

/// `xla.HloInputOutputAliasProto.AliasEntryProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct AliasEntryProto {
    #[prost(int64, repeated, tag = "1")]
    pub output_shape_index: Vec<i64>,
    #[prost(int64, tag = "2")]
    pub parameter_number: i64,
    #[prost(int64, repeated, tag = "3")]
    pub parameter_shape_index: Vec<i64>,
    /// `xla.Kind`: 1 may-alias, 2 must-alias.
    #[prost(int32, tag = "4")]
    pub kind: i32,
}

/// `xla.HloComputationProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloComputationProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, repeated, tag = "2")]
    pub instructions: Vec<HloInstructionProto>,
    #[prost(message, optional, tag = "4")]
    pub program_shape: Option<ProgramShapeProto>,
    #[prost(int64, tag = "5")]
    pub id: i64,
    #[prost(int64, tag = "6")]
    pub root_id: i64,
    #[prost(bool, tag = "7")]
    pub is_fusion_computation: bool,
    #[prost(string, tag = "8")]
    pub execution_thread: String,
}

/// `xla.HloInstructionProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloInstructionProto {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub opcode: String,
    #[prost(message, optional, tag = "3")]
    pub shape: Option<ShapeProto>,
    #[prost(message, optional, tag = "7")]
    pub metadata: Option<OpMetadata>,
    #[prost(message, optional, tag = "8")]
    pub literal: Option<LiteralProto>,
    #[prost(int64, tag = "9")]
    pub parameter_number: i64,
    #[prost(string, tag = "11")]
    pub fusion_kind: String,
    #[prost(int64, tag = "13")]
    pub tuple_index: i64,
    #[prost(int64, repeated, tag = "14")]
    pub dimensions: Vec<i64>,
    #[prost(message, optional, tag = "15")]
    pub window: Option<WindowProto>,
    #[prost(message, optional, tag = "16")]
    pub convolution_dimension_numbers: Option<ConvolutionDimensionNumbers>,
    #[prost(int64, tag = "50")]
    pub feature_group_count: i64,
    #[prost(int64, tag = "58")]
    pub batch_group_count: i64,
    #[prost(message, repeated, tag = "17")]
    pub slice_dimensions: Vec<SliceDimensions>,
    #[prost(int32, tag = "18")]
    pub exponent_bits: i32,
    #[prost(int32, tag = "19")]
    pub mantissa_bits: i32,
    #[prost(int64, repeated, tag = "20")]
    pub dynamic_slice_sizes: Vec<i64>,
    #[prost(message, optional, tag = "21")]
    pub padding_config: Option<PaddingConfig>,
    /// `xla.RandomDistribution`: 1 uniform, 2 normal.
    #[prost(int32, tag = "23")]
    pub distribution: i32,
    #[prost(float, tag = "24")]
    pub epsilon: f32,
    #[prost(int64, tag = "25")]
    pub feature_index: i64,
    #[prost(int64, tag = "26")]
    pub channel_id: i64,
    #[prost(string, tag = "28")]
    pub custom_call_target: String,
    #[prost(message, optional, tag = "30")]
    pub dot_dimension_numbers: Option<DotDimensionNumbers>,
    /// `xla.FftType`: 0 FFT, 1 IFFT, 2 RFFT, 3 IRFFT.
    #[prost(int32, tag = "31")]
    pub fft_type: i32,
    #[prost(int64, repeated, tag = "32")]
    pub fft_length: Vec<i64>,
    #[prost(string, tag = "63")]
    pub comparison_direction: String,
    #[prost(message, optional, tag = "33")]
    pub gather_dimension_numbers: Option<GatherDimensionNumbers>,
    #[prost(int64, repeated, tag = "34")]
    pub gather_slice_sizes: Vec<i64>,
    #[prost(int64, tag = "35")]
    pub id: i64,
    #[prost(int64, repeated, tag = "36")]
    pub operand_ids: Vec<i64>,
    #[prost(int64, repeated, tag = "37")]
    pub control_predecessor_ids: Vec<i64>,
    #[prost(int64, repeated, tag = "38")]
    pub called_computation_ids: Vec<i64>,
    #[prost(message, optional, tag = "40")]
    pub sharding: Option<OpSharding>,
    #[prost(bytes = "vec", tag = "43")]
    pub backend_config: Vec<u8>,
    #[prost(bool, tag = "47")]
    pub is_host_transfer: bool,
    #[prost(message, optional, tag = "48")]
    pub scatter_dimension_numbers: Option<ScatterDimensionNumbers>,
    #[prost(message, optional, tag = "51")]
    pub precision_config: Option<PrecisionConfig>,
    #[prost(bool, tag = "56")]
    pub constrain_layout: bool,
    #[prost(message, repeated, tag = "57")]
    pub operand_shapes_with_layout: Vec<ShapeProto>,
    #[prost(message, optional, tag = "59")]
    pub triangular_solve_options: Option<TriangularSolveOptions>,
    #[prost(bool, tag = "60")]
    pub is_stable: bool,
    #[prost(message, optional, tag = "62")]
    pub cholesky_options: Option<CholeskyOptions>,
    #[prost(bool, tag = "65")]
    pub custom_call_has_side_effect: bool,
    #[prost(int64, tag = "66")]
    pub delta: i64,
    #[prost(bool, tag = "67")]
    pub indices_are_sorted: bool,
    #[prost(message, optional, tag = "68")]
    pub frontend_attributes: Option<FrontendAttributes>,
    #[prost(bool, tag = "69")]
    pub unique_indices: bool,
    /// `xla.RandomAlgorithm`: 0 default, 1 three-fry, 2 philox.
    #[prost(int32, tag = "70")]
    pub rng_algorithm: i32,
    #[prost(bool, tag = "71")]
    pub use_global_device_ids: bool,
    #[prost(string, tag = "72")]
    pub comparison_type: String,
    #[prost(message, repeated, tag = "74")]
    pub output_operand_aliasing: Vec<OutputOperandAliasing>,
    /// `xla.CustomCallSchedule`: 0 none, 1 latest, 2 earliest.
    #[prost(int32, tag = "76")]
    pub custom_call_schedule: i32,
    /// `xla.CustomCallApiVersion`: 1 original, 2 status-returning, 3 unified, 4 typed FFI.
    #[prost(int32, tag = "77")]
    pub custom_call_api_version: i32,
    #[prost(string, tag = "79")]
    pub async_execution_thread: String,
    #[prost(int64, tag = "81")]
    pub k: i64,
    #[prost(bool, tag = "85")]
    pub largest: bool,
    #[prost(message, optional, tag = "87")]
    pub collective_device_list: Option<CollectiveDeviceListProto>,
    #[prost(bool, tag = "89")]
    pub is_composite: bool,
    #[prost(message, optional, tag = "91")]
    pub result_accuracy: Option<ResultAccuracy>,
}

/// `xla.HloInstructionProto.SliceDimensions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct SliceDimensions {
    #[prost(int64, tag = "1")]
    pub start: i64,
    #[prost(int64, tag = "2")]
    pub limit: i64,
    #[prost(int64, tag = "3")]
    pub stride: i64,
}

/// `xla.ShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ShapeProto {
    /// `xla.PrimitiveType`.
    #[prost(int32, tag = "2")]
    pub element_type: i32,
    #[prost(int64, repeated, tag = "3")]
    pub dimensions: Vec<i64>,
    #[prost(bool, repeated, tag = "6")]
    pub is_dynamic_dimension: Vec<bool>,
    #[prost(message, repeated, tag = "4")]
    pub tuple_shapes: Vec<ShapeProto>,
    #[prost(message, optional, tag = "5")]
    pub layout: Option<LayoutProto>,
}

/// `xla.LayoutProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LayoutProto {
    #[prost(int64, repeated, tag = "1")]
    pub minor_to_major: Vec<i64>,
    #[prost(message, repeated, tag = "6")]
    pub tiles: Vec<TileProto>,
    #[prost(int64, tag = "7")]
    pub element_size_in_bits: i64,
    #[prost(int64, tag = "8")]
    pub memory_space: i64,
    /// `xla.PrimitiveType` of the indices of a sparse layout (`#(s32)`).
    #[prost(int32, tag = "11")]
    pub index_primitive_type: i32,
    /// `xla.PrimitiveType` of the pointers of a sparse layout (`*(u32)`).
    #[prost(int32, tag = "12")]
    pub pointer_primitive_type: i32,
    #[prost(int64, tag = "15")]
    pub dynamic_shape_metadata_prefix_bytes: i64,
    #[prost(int64, tag = "16")]
    pub tail_padding_alignment_in_elements: i64,
}

/// `xla.TileProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TileProto {
    #[prost(int64, repeated, tag = "1")]
    pub dimensions: Vec<i64>,
}

/// `xla.ProgramShapeProto`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ProgramShapeProto {
    #[prost(message, repeated, tag = "1")]
    pub parameters: Vec<ShapeProto>,
    #[prost(message, optional, tag = "2")]
    pub result: Option<ShapeProto>,
    #[prost(string, repeated, tag = "3")]
    pub parameter_names: Vec<String>,
}

/// `xla.LiteralProto`. Element data is in the physical order of `shape`'s layout.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LiteralProto {
    #[prost(message, optional, tag = "1")]
    pub shape: Option<ShapeProto>,
    #[prost(bool, repeated, tag = "2")]
    pub preds: Vec<bool>,
    #[prost(bytes = "vec", tag = "30")]
    pub s1s: Vec<u8>,
    #[prost(bytes = "vec", tag = "26")]
    pub s2s: Vec<u8>,
    #[prost(bytes = "vec", tag = "21")]
    pub s4s: Vec<u8>,
    #[prost(bytes = "vec", tag = "15")]
    pub s8s: Vec<u8>,
    #[prost(bytes = "vec", tag = "31")]
    pub u1s: Vec<u8>,
    #[prost(bytes = "vec", tag = "27")]
    pub u2s: Vec<u8>,
    #[prost(bytes = "vec", tag = "22")]
    pub u4s: Vec<u8>,
    #[prost(bytes = "vec", tag = "3")]
    pub u8s: Vec<u8>,
    #[prost(int32, repeated, tag = "4")]
    pub s32s: Vec<i32>,
    #[prost(int64, repeated, tag = "5")]
    pub s64s: Vec<i64>,
    #[prost(uint32, repeated, tag = "6")]
    pub u32s: Vec<u32>,
    #[prost(uint64, repeated, tag = "7")]
    pub u64s: Vec<u64>,
    #[prost(float, repeated, tag = "8")]
    pub f32s: Vec<f32>,
    #[prost(double, repeated, tag = "9")]
    pub f64s: Vec<f64>,
    #[prost(float, repeated, tag = "12")]
    pub c64s: Vec<f32>,
    #[prost(double, repeated, tag = "18")]
    pub c128s: Vec<f64>,
    #[prost(message, repeated, tag = "10")]
    pub tuple_literals: Vec<LiteralProto>,
    #[prost(bytes = "vec", tag = "11")]
    pub f16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "13")]
    pub bf16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "16")]
    pub u16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "17")]
    pub s16s: Vec<u8>,
    #[prost(bytes = "vec", tag = "32")]
    pub f4e2m1fns: Vec<u8>,
    #[prost(bytes = "vec", tag = "29")]
    pub f8e3m4s: Vec<u8>,
    #[prost(bytes = "vec", tag = "23")]
    pub f8e4m3b11fnuzs: Vec<u8>,
    #[prost(bytes = "vec", tag = "20")]
    pub f8e4m3fns: Vec<u8>,
    #[prost(bytes = "vec", tag = "25")]
    pub f8e4m3fnuzs: Vec<u8>,
    #[prost(bytes = "vec", tag = "28")]
    pub f8e4m3s: Vec<u8>,
    #[prost(bytes = "vec", tag = "24")]
    pub f8e5m2fnuzs: Vec<u8>,
    #[prost(bytes = "vec", tag = "19")]
    pub f8e5m2s: Vec<u8>,
    #[prost(bytes = "vec", tag = "33")]
    pub f8e8m0fnus: Vec<u8>,
}

/// `xla.WindowDimension`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WindowDimension {
    #[prost(int64, tag = "1")]
    pub size: i64,
    #[prost(int64, tag = "2")]
    pub stride: i64,
    #[prost(int64, tag = "3")]
    pub padding_low: i64,
    #[prost(int64, tag = "4")]
    pub padding_high: i64,
    #[prost(int64, tag = "5")]
    pub window_dilation: i64,
    #[prost(int64, tag = "6")]
    pub base_dilation: i64,
    #[prost(bool, tag = "7")]
    pub window_reversal: bool,
}

/// `xla.Window`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct WindowProto {
    #[prost(message, repeated, tag = "1")]
    pub dimensions: Vec<WindowDimension>,
}

/// `xla.ConvolutionDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ConvolutionDimensionNumbers {
    #[prost(int64, tag = "7")]
    pub input_batch_dimension: i64,
    #[prost(int64, tag = "8")]
    pub input_feature_dimension: i64,
    #[prost(int64, repeated, tag = "11")]
    pub input_spatial_dimensions: Vec<i64>,
    #[prost(int64, tag = "3")]
    pub kernel_input_feature_dimension: i64,
    #[prost(int64, tag = "4")]
    pub kernel_output_feature_dimension: i64,
    #[prost(int64, repeated, tag = "6")]
    pub kernel_spatial_dimensions: Vec<i64>,
    #[prost(int64, tag = "9")]
    pub output_batch_dimension: i64,
    #[prost(int64, tag = "10")]
    pub output_feature_dimension: i64,
    #[prost(int64, repeated, tag = "12")]
    pub output_spatial_dimensions: Vec<i64>,
}

/// `xla.PaddingConfig`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PaddingConfig {
    #[prost(message, repeated, tag = "1")]
    pub dimensions: Vec<PaddingConfigDimension>,
}

/// `xla.PaddingConfig.PaddingConfigDimension`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PaddingConfigDimension {
    #[prost(int64, tag = "1")]
    pub edge_padding_low: i64,
    #[prost(int64, tag = "2")]
    pub edge_padding_high: i64,
    #[prost(int64, tag = "3")]
    pub interior_padding: i64,
}

/// `xla.DotDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DotDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub lhs_contracting_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub rhs_contracting_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub lhs_batch_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "4")]
    pub rhs_batch_dimensions: Vec<i64>,
}

/// `xla.GatherDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GatherDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub offset_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub collapsed_slice_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub start_index_map: Vec<i64>,
    #[prost(int64, tag = "4")]
    pub index_vector_dim: i64,
    #[prost(int64, repeated, tag = "5")]
    pub operand_batching_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "6")]
    pub start_indices_batching_dims: Vec<i64>,
}

/// `xla.ScatterDimensionNumbers`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ScatterDimensionNumbers {
    #[prost(int64, repeated, tag = "1")]
    pub update_window_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "2")]
    pub inserted_window_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "3")]
    pub scatter_dims_to_operand_dims: Vec<i64>,
    #[prost(int64, tag = "4")]
    pub index_vector_dim: i64,
    #[prost(int64, repeated, tag = "5")]
    pub input_batching_dims: Vec<i64>,
    #[prost(int64, repeated, tag = "6")]
    pub scatter_indices_batching_dims: Vec<i64>,
}

/// `xla.PrecisionConfig`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PrecisionConfig {
    /// `xla.PrecisionConfig.Precision`: 0 default, 1 high, 2 highest.
    #[prost(int32, repeated, tag = "1")]
    pub operand_precision: Vec<i32>,
    /// `xla.PrecisionConfig.Algorithm`.
    #[prost(int32, tag = "2")]
    pub algorithm: i32,
}

/// `xla.TriangularSolveOptions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TriangularSolveOptions {
    #[prost(bool, tag = "1")]
    pub left_side: bool,
    #[prost(bool, tag = "2")]
    pub lower: bool,
    #[prost(bool, tag = "3")]
    pub unit_diagonal: bool,
    /// 1 NO_TRANSPOSE, 2 TRANSPOSE, 3 ADJOINT.
    #[prost(int32, tag = "4")]
    pub transpose_a: i32,
}

/// `xla.CholeskyOptions`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CholeskyOptions {
    #[prost(bool, tag = "1")]
    pub lower: bool,
}

/// `xla.FrontendAttributes`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FrontendAttributes {
    #[prost(btree_map = "string, string", tag = "1")]
    pub map: std::collections::BTreeMap<String, String>,
}

/// `xla.OpMetadata` (the fields HLO text prints).
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpMetadata {
    #[prost(string, tag = "1")]
    pub op_type: String,
    #[prost(string, tag = "2")]
    pub op_name: String,
    #[prost(string, tag = "3")]
    pub source_file: String,
    #[prost(int32, tag = "4")]
    pub source_line: i32,
    #[prost(int32, tag = "17")]
    pub source_end_line: i32,
    #[prost(int32, tag = "18")]
    pub source_column: i32,
    #[prost(int32, tag = "19")]
    pub source_end_column: i32,
    #[prost(string, tag = "12")]
    pub deduplicated_name: String,
    #[prost(int32, tag = "15")]
    pub stack_frame_id: i32,
    #[prost(string, tag = "16")]
    pub scheduling_name: String,
}

/// `xla.OpSharding`: replicated, maximal, manual, tuple, and tiled (`other`: the tile
/// assignment's dimensions, its devices as a list or as an iota reshaped and transposed, the
/// last tile dimension replicated or the last tile dimensions of other kinds).
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpSharding {
    /// 0 replicated, 1 maximal, 2 tuple, 3 other, 4 manual, 5 unknown, 6 unreduced.
    #[prost(int32, tag = "1")]
    pub r#type: i32,
    #[prost(int64, repeated, tag = "3")]
    pub tile_assignment_dimensions: Vec<i64>,
    #[prost(int64, repeated, tag = "4")]
    pub tile_assignment_devices: Vec<i64>,
    #[prost(message, repeated, tag = "5")]
    pub tuple_shardings: Vec<OpSharding>,
    #[prost(bool, tag = "6")]
    pub replicate_on_last_tile_dim: bool,
    /// Sharding types of the last tile dimensions (`last_tile_dims={manual, replicated}`).
    #[prost(int32, repeated, tag = "8")]
    pub last_tile_dims: Vec<i32>,
    #[prost(int64, repeated, tag = "9")]
    pub iota_reshape_dims: Vec<i64>,
    #[prost(int32, repeated, tag = "10")]
    pub iota_transpose_perm: Vec<i32>,
}

/// The `OpSharding` type numbers of the kinds a last tile dimension may have, by the names
/// HLO text gives them.
pub const SHARDING_TYPE_NAMES: [(i32, &str); 4] = [
    (0, "replicated"),
    (1, "maximal"),
    (4, "manual"),
    (6, "unreduced"),
];

/// `xla.OutputOperandAliasing`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OutputOperandAliasing {
    #[prost(int64, repeated, tag = "1")]
    pub output_shape_index: Vec<i64>,
    #[prost(int64, tag = "2")]
    pub operand_index: i64,
    #[prost(int64, repeated, tag = "3")]
    pub operand_shape_index: Vec<i64>,
}

/// `xla.CollectiveDeviceListProto` (explicit replica groups).
#[derive(Clone, PartialEq, prost::Message)]
pub struct CollectiveDeviceListProto {
    #[prost(message, repeated, tag = "1")]
    pub replica_groups: Vec<ReplicaGroup>,
}

/// `xla.ReplicaGroup`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReplicaGroup {
    #[prost(int64, repeated, tag = "1")]
    pub replica_ids: Vec<i64>,
}

/// `xla.ResultAccuracy`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ResultAccuracy {
    /// `Mode`: 0 default, 1 highest (field 1 of the `specs` oneof).
    #[prost(int32, optional, tag = "1")]
    pub mode: Option<i32>,
    #[prost(message, optional, tag = "2")]
    pub tolerance: Option<Tolerance>,
}

/// `xla.ResultAccuracy.Tolerance`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Tolerance {
    #[prost(double, tag = "1")]
    pub atol: f64,
    #[prost(double, tag = "2")]
    pub rtol: f64,
    #[prost(int64, tag = "3")]
    pub ulps: i64,
}

/// `xla.StackFrameIndexProto`: the `FileNames` / `FunctionNames` / `FileLocations` /
/// `StackFrames` tables of HLO text (ids are 1-based positions in these lists).
#[derive(Clone, PartialEq, prost::Message)]
pub struct StackFrameIndexProto {
    #[prost(string, repeated, tag = "1")]
    pub file_names: Vec<String>,
    #[prost(string, repeated, tag = "2")]
    pub function_names: Vec<String>,
    #[prost(message, repeated, tag = "3")]
    pub file_locations: Vec<FileLocation>,
    #[prost(message, repeated, tag = "4")]
    pub stack_frames: Vec<StackFrame>,
}

/// `xla.StackFrameIndexProto.FileLocation`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct FileLocation {
    #[prost(int32, tag = "1")]
    pub file_name_id: i32,
    #[prost(int32, tag = "2")]
    pub function_name_id: i32,
    #[prost(int32, tag = "3")]
    pub line: i32,
    #[prost(int32, tag = "5")]
    pub end_line: i32,
    #[prost(int32, tag = "4")]
    pub column: i32,
    #[prost(int32, tag = "6")]
    pub end_column: i32,
}

/// `xla.StackFrameIndexProto.StackFrame`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct StackFrame {
    #[prost(int32, tag = "1")]
    pub file_location_id: i32,
    #[prost(int32, tag = "2")]
    pub parent_frame_id: i32,
}

/// `xla.HloModuleProtoWithConfig` (`xla/xla.proto`): a module with its configuration, the
/// program format `"hlo_with_config"`; the configuration is not read.
#[derive(Clone, PartialEq, prost::Message)]
pub struct HloModuleProtoWithConfig {
    #[prost(message, optional, tag = "1")]
    pub hlo_module: Option<HloModuleProto>,
}
