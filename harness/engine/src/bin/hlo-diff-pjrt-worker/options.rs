//! The `CompileOptionsProto` a compile gets (xla/pjrt/proto/compile_options.proto; field numbers
//! are facts of that file): one replica, one partition or SPMD partitions, the entry computation's layouts as the
//! argument and result layouts, and every per-compile DebugOptions field as an
//! `env_option_overrides` entry (XLA applies them by field name on top of its defaults and
//! `XLA_FLAGS`; a repeated field such as `xla_disable_hlo_passes` takes a comma-separated list).
//! `debug_options` itself is left out: a proto's would replace XLA's defaults with zeros.
//! One override is always there: `xla_cpu_enable_fast_min_max=false`, as jaxlib sets it.

use hlo::proto::{ProgramShapeProto, ShapeProto};

use serde_json::Value;
use std::path::Path;

/// `xla.CompileOptionsProto` (xla/pjrt/proto/compile_options.proto): what PJRT's compile takes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct CompileOptionsProto {
    #[prost(message, repeated, tag = "1")]
    pub argument_layouts: Vec<ShapeProto>,
    #[prost(bool, tag = "2")]
    pub parameter_is_tupled_arguments: bool,
    #[prost(message, optional, tag = "3")]
    pub executable_build_options: Option<ExecutableBuildOptionsProto>,
    #[prost(btree_map = "string, message", tag = "7")]
    pub env_option_overrides: std::collections::BTreeMap<String, OptionOverrideProto>,
}

/// `xla.ExecutableBuildOptionsProto` (no `debug_options`: left out, the compiler takes XLA's
/// defaults and `XLA_FLAGS`, and `env_option_overrides` change single fields of them).
#[derive(Clone, PartialEq, prost::Message)]
pub struct ExecutableBuildOptionsProto {
    #[prost(int64, tag = "1")]
    pub device_ordinal: i64,
    #[prost(message, optional, tag = "2")]
    pub result_layout: Option<ShapeProto>,
    #[prost(int64, tag = "4")]
    pub num_replicas: i64,
    #[prost(int64, tag = "5")]
    pub num_partitions: i64,
    #[prost(bool, tag = "6")]
    pub use_spmd_partitioning: bool,
    #[prost(message, optional, tag = "9")]
    pub device_assignment: Option<DeviceAssignmentProto>,
    #[prost(bool, tag = "19")]
    pub use_shardy_partitioner: bool,
}

/// `xla.DeviceAssignmentProto` (xla/xla_data.proto): for each computation (partition), the
/// device of each replica.
#[derive(Clone, PartialEq, prost::Message)]
pub struct DeviceAssignmentProto {
    #[prost(int32, tag = "1")]
    pub replica_count: i32,
    #[prost(int32, tag = "2")]
    pub computation_count: i32,
    #[prost(message, repeated, tag = "3")]
    pub computation_devices: Vec<ComputationDevice>,
}

/// `xla.DeviceAssignmentProto.ComputationDevice`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ComputationDevice {
    #[prost(int64, repeated, tag = "1")]
    pub replica_device_ids: Vec<i64>,
}

/// How a compile partitions the program: one partition, or SPMD partitioning over devices
/// `0..partitions` (one replica), by Shardy when the module carries Shardy shardings (a module
/// jax wrote), else by GSPMD (its `sharding=` attributes), as the Python worker compiles them.
#[derive(Clone, Copy, Debug)]
pub struct Partitioning {
    pub partitions: usize,
    pub shardy: bool,
}

/// `xla.OptionOverrideProto`: one DebugOptions field's value, by the field's name.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OptionOverrideProto {
    #[prost(oneof = "OptionValue", tags = "1, 2, 3, 4")]
    pub value: Option<OptionValue>,
}

/// The `value` oneof of [`OptionOverrideProto`].
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum OptionValue {
    #[prost(string, tag = "1")]
    String(String),
    #[prost(bool, tag = "2")]
    Bool(bool),
    #[prost(int64, tag = "3")]
    Int(i64),
    #[prost(double, tag = "4")]
    Double(f64),
}

/// The options of one compile from a run request's `"options"`.
pub fn compile_options(
    opts: &Value,
    dump_to: Option<&Path>,
    host: &ProgramShapeProto,
    partitioning: Partitioning,
) -> CompileOptionsProto {
    let mut overrides = std::collections::BTreeMap::new();
    let mut set = |k: &str, v: OptionValue| {
        overrides.insert(k.to_string(), OptionOverrideProto { value: Some(v) });
    };
    // What jaxlib's CompileOptions changes from XLA's defaults, so that both routes test one
    // configuration: XLA CPU's default `xla_cpu_enable_fast_min_max=true` drops NaN in
    // maximum/minimum (checked: maximum(1, NaN) is 1 on the 0.11.2 plugin by default, NaN with
    // this set). A request's own value replaces it.
    set("xla_cpu_enable_fast_min_max", OptionValue::Bool(false));
    if let Some(d) = dump_to {
        set("xla_dump_to", OptionValue::String(d.display().to_string()));
    }
    if let Some(re) = opts.get("pass_re").and_then(Value::as_str) {
        set("xla_dump_hlo_pass_re", OptionValue::String(re.to_string()));
    }
    let disabled: Vec<&str> = opts
        .get("disabled_passes")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if !disabled.is_empty() {
        set(
            "xla_disable_hlo_passes",
            OptionValue::String(disabled.join(",")),
        );
    }
    if let Some(pairs) = opts.get("env_option_overrides").and_then(Value::as_array) {
        for p in pairs {
            let (Some(k), Some(v)) = (
                p.get(0).and_then(Value::as_str),
                p.get(1).and_then(Value::as_str),
            ) else {
                continue;
            };
            set(k, coerce(v));
        }
    }
    CompileOptionsProto {
        argument_layouts: host.parameters.clone(),
        parameter_is_tupled_arguments: false,
        executable_build_options: Some(ExecutableBuildOptionsProto {
            device_ordinal: -1,
            result_layout: host.result.clone(),
            num_replicas: 1,
            num_partitions: partitioning.partitions.max(1) as i64,
            use_spmd_partitioning: partitioning.partitions > 1,
            device_assignment: (partitioning.partitions > 1).then(|| DeviceAssignmentProto {
                replica_count: 1,
                computation_count: partitioning.partitions as i32,
                computation_devices: (0..partitioning.partitions as i64)
                    .map(|d| ComputationDevice {
                        replica_device_ids: vec![d],
                    })
                    .collect(),
            }),
            use_shardy_partitioner: partitioning.partitions > 1 && partitioning.shardy,
        }),
        env_option_overrides: overrides,
    }
}

/// A value as its override kind: booleans and integers typed, the rest text (as the Python
/// worker coerces them).
fn coerce(v: &str) -> OptionValue {
    match v {
        "true" | "True" => OptionValue::Bool(true),
        "false" | "False" => OptionValue::Bool(false),
        _ => match v.parse::<i64>() {
            Ok(i) => OptionValue::Int(i),
            Err(_) => OptionValue::String(v.to_string()),
        },
    }
}
