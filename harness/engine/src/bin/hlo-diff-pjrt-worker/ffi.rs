//! Hand-written bindings to the parts of XLA's PJRT C API (`xla/pjrt/c/pjrt_c_api.h`) this
//! worker uses: the layouts of the argument structs and the positions of the functions in the
//! `PJRT_Api` table (facts of the ABI).
//!
//! Every argument struct ends in a zeroed reserve and says its size including the reserve: a
//! plugin refuses a struct smaller than the one it was built with, and reads the fields it knows
//! beyond ours as zero (their defaults).
#![allow(non_camel_case_types, dead_code)]

use std::ffi::c_void;

pub type Error = c_void;
pub type Client = c_void;
pub type Device = c_void;
pub type Event = c_void;
pub type Buffer = c_void;
pub type LoadedExecutable = c_void;
pub type Executable = c_void;

/// Words of zeroed reserve at the end of every argument struct.
const RESERVE: usize = 24;

macro_rules! args {
    ($name:ident { $($field:ident : $ty:ty),* $(,)? }) => {
        #[repr(C)]
        pub struct $name {
            pub struct_size: usize,
            pub extension_start: *mut c_void,
            $(pub $field: $ty,)*
            _reserve: [u64; RESERVE],
        }
        impl $name {
            /// All fields zero (null), `struct_size` set.
            pub fn new() -> Box<$name> {
                // SAFETY: every field is an integer, a float or a raw pointer, for which all
                // zero bits is a valid value.
                let mut a: Box<$name> = Box::new(unsafe { std::mem::zeroed() });
                a.struct_size = std::mem::size_of::<$name>();
                a
            }
        }
    };
}

args!(ErrorDestroyArgs { error: *mut Error });
args!(ErrorMessageArgs { error: *const Error, message: *const u8, message_size: usize });
args!(ErrorGetCodeArgs { error: *const Error, code: i32 });
args!(PluginInitializeArgs {});
args!(PluginAttributesArgs { attributes: *const NamedValue, num_attributes: usize });
args!(EventDestroyArgs { event: *mut Event });
args!(EventAwaitArgs { event: *mut Event });
args!(ClientCreateArgs {
    create_options: *const NamedValue,
    num_options: usize,
    kv_get_callback: *mut c_void,
    kv_get_user_arg: *mut c_void,
    kv_put_callback: *mut c_void,
    kv_put_user_arg: *mut c_void,
    client: *mut Client,
    kv_try_get_callback: *mut c_void,
    kv_try_get_user_arg: *mut c_void,
});
args!(ClientDestroyArgs { client: *mut Client });
args!(ClientStringArgs { client: *mut Client, value: *const u8, value_size: usize });
args!(ClientAddressableDevicesArgs {
    client: *mut Client,
    devices: *const *mut Device,
    num_devices: usize,
});
args!(Program {
    code: *mut u8,
    code_size: usize,
    format: *const u8,
    format_size: usize,
});
args!(ClientCompileArgs {
    client: *mut Client,
    program: *const Program,
    compile_options: *const u8,
    compile_options_size: usize,
    executable: *mut LoadedExecutable,
});
args!(BufferFromHostBufferArgs {
    client: *mut Client,
    data: *const c_void,
    buffer_type: i32,
    dims: *const i64,
    num_dims: usize,
    byte_strides: *const i64,
    num_byte_strides: usize,
    host_buffer_semantics: i32,
    device: *mut Device,
    memory: *mut c_void,
    device_layout: *mut MemoryLayout,
    done_with_host_buffer: *mut Event,
    buffer: *mut Buffer,
});
args!(MemoryLayoutTiled {
    minor_to_major: *const i64,
    minor_to_major_size: usize,
    tile_dims: *const i64,
    tile_dim_sizes: *const usize,
    num_tiles: usize,
});
/// `PJRT_Buffer_MemoryLayout`: a union of the tiled and strided layouts, then the type
/// (0 tiled). Not built by the macro: its union sits between the header and the type.
#[repr(C)]
pub struct MemoryLayout {
    pub struct_size: usize,
    pub extension_start: *mut c_void,
    pub tiled: MemoryLayoutTiledInline,
    pub layout_type: i32,
    _reserve: [u64; RESERVE],
}
/// The tiled layout as it sits inside the union (exactly its C size: no reserve).
#[repr(C)]
pub struct MemoryLayoutTiledInline {
    pub struct_size: usize,
    pub extension_start: *mut c_void,
    pub minor_to_major: *const i64,
    pub minor_to_major_size: usize,
    pub tile_dims: *const i64,
    pub tile_dim_sizes: *const usize,
    pub num_tiles: usize,
}
impl MemoryLayout {
    /// A tiled layout without tiles: `minor_to_major` only (it must outlive the call).
    pub fn minor_to_major(m2m: &[i64]) -> Box<MemoryLayout> {
        // SAFETY: integers and raw pointers only.
        let mut l: Box<MemoryLayout> = Box::new(unsafe { std::mem::zeroed() });
        // The size C gives it: the header, the union (the tiled member is the larger) and the type.
        l.struct_size = 16 + std::mem::size_of::<MemoryLayoutTiledInline>() + 8;
        l.tiled.struct_size = std::mem::size_of::<MemoryLayoutTiledInline>();
        l.tiled.minor_to_major = m2m.as_ptr();
        l.tiled.minor_to_major_size = m2m.len();
        l.layout_type = 0;
        l
    }
}
args!(BufferDestroyArgs { buffer: *mut Buffer });
args!(BufferElementTypeArgs { buffer: *mut Buffer, buffer_type: i32 });
args!(BufferDimensionsArgs { buffer: *mut Buffer, dims: *const i64, num_dims: usize });
args!(BufferToHostBufferArgs {
    src: *mut Buffer,
    host_layout: *mut MemoryLayout,
    dst: *mut c_void,
    dst_size: usize,
    event: *mut Event,
});
args!(ExecuteOptions {
    send_callbacks: *mut c_void,
    recv_callbacks: *mut c_void,
    num_send_ops: usize,
    num_recv_ops: usize,
    launch_id: i32,
    non_donatable_input_indices: *const i64,
    num_non_donatable_input_indices: usize,
    context: *mut c_void,
});
args!(LoadedExecutableExecuteArgs {
    executable: *mut LoadedExecutable,
    options: *mut ExecuteOptions,
    argument_lists: *const *const *mut Buffer,
    num_devices: usize,
    num_args: usize,
    output_lists: *const *mut *mut Buffer,
    device_complete_events: *mut *mut Event,
    execute_device: *mut Device,
});
args!(LoadedExecutableDestroyArgs { executable: *mut LoadedExecutable });
args!(LoadedExecutableGetExecutableArgs {
    loaded_executable: *mut LoadedExecutable,
    executable: *mut Executable,
});
args!(ExecutableDestroyArgs { executable: *mut Executable });
args!(ExecutableNumOutputsArgs { executable: *mut Executable, num_outputs: usize });
args!(ExecutableOptimizedProgramArgs { executable: *mut Executable, program: *mut Program });

args!(ExecutableShardingsArgs {
    executable: *mut Executable,
    num: usize,
    shardings: *const *const u8,
    sharding_sizes: *const usize,
});

/// `PJRT_Extension_Base`: the head of every extension in the chain that starts at
/// `PJRT_Api.extension_start`.
#[repr(C)]
pub struct ExtensionBase {
    pub struct_size: usize,
    pub extension_type: i32,
    pub next: *const ExtensionBase,
}

/// `PJRT_Extension_Type_Shardings` (`PJRT_Shardings_Extension`, pjrt_c_api_shardings_extension.h,
/// API 0.91): after its base, `PJRT_Executable_ParameterShardings` then
/// `PJRT_Executable_OutputShardings`, each filling [`ExecutableShardingsArgs`] with serialized
/// `xla.OpSharding`s.
pub const EXTENSION_SHARDINGS: i32 = 19;

/// `PJRT_NamedValue`.
#[repr(C)]
pub struct NamedValue {
    pub struct_size: usize,
    pub extension_start: *mut c_void,
    pub name: *const u8,
    pub name_size: usize,
    /// 0 string, 1 int64, 2 int64 list, 3 float, 4 bool.
    pub value_type: i32,
    /// The union: a pointer, an int64, a float or a bool.
    pub value: u64,
    pub value_size: usize,
}

/// The head of `PJRT_Api`: its size, the extension chain and the API version.
#[repr(C)]
pub struct ApiHead {
    pub struct_size: usize,
    pub extension_start: *mut c_void,
    pub version_struct_size: usize,
    pub version_extension_start: *mut c_void,
    pub major_version: i32,
    pub minor_version: i32,
}

/// Positions of the functions used in `PJRT_Api`'s table (after [`ApiHead`]).
pub mod f {
    pub const ERROR_DESTROY: usize = 0;
    pub const ERROR_MESSAGE: usize = 1;
    pub const ERROR_GET_CODE: usize = 2;
    pub const PLUGIN_INITIALIZE: usize = 3;
    pub const PLUGIN_ATTRIBUTES: usize = 4;
    pub const EVENT_DESTROY: usize = 5;
    pub const EVENT_AWAIT: usize = 8;
    pub const CLIENT_CREATE: usize = 10;
    pub const CLIENT_DESTROY: usize = 11;
    pub const CLIENT_PLATFORM_NAME: usize = 12;
    pub const CLIENT_PLATFORM_VERSION: usize = 14;
    pub const CLIENT_ADDRESSABLE_DEVICES: usize = 16;
    pub const CLIENT_COMPILE: usize = 20;
    pub const CLIENT_BUFFER_FROM_HOST_BUFFER: usize = 22;
    pub const EXECUTABLE_DESTROY: usize = 40;
    pub const EXECUTABLE_NUM_OUTPUTS: usize = 44;
    pub const EXECUTABLE_OPTIMIZED_PROGRAM: usize = 48;
    pub const LOADED_EXECUTABLE_DESTROY: usize = 50;
    pub const LOADED_EXECUTABLE_GET_EXECUTABLE: usize = 51;
    pub const LOADED_EXECUTABLE_EXECUTE: usize = 55;
    pub const BUFFER_DESTROY: usize = 58;
    pub const BUFFER_ELEMENT_TYPE: usize = 59;
    pub const BUFFER_DIMENSIONS: usize = 60;
    pub const BUFFER_TO_HOST_BUFFER: usize = 70;
}

/// `PJRT_Buffer_Type` numbers by HLO element type name (types the header does not list: none).
pub fn buffer_type(name: &str) -> Option<i32> {
    Some(match name {
        "pred" => 1,
        "s8" => 2,
        "s16" => 3,
        "s32" => 4,
        "s64" => 5,
        "u8" => 6,
        "u16" => 7,
        "u32" => 8,
        "u64" => 9,
        "f16" => 10,
        "f32" => 11,
        "f64" => 12,
        "bf16" => 13,
        "c64" => 14,
        "c128" => 15,
        "f8e5m2" => 16,
        "f8e4m3fn" => 17,
        "f8e4m3b11fnuz" => 18,
        "f8e5m2fnuz" => 19,
        "f8e4m3fnuz" => 20,
        "s4" => 21,
        "u4" => 22,
        "s2" => 24,
        "u2" => 25,
        "f8e4m3" => 26,
        "f8e3m4" => 27,
        "f8e8m0fnu" => 28,
        "f4e2m1fn" => 29,
        _ => return None,
    })
}

/// The HLO element type name of a `PJRT_Buffer_Type` number.
pub fn buffer_type_name(n: i32) -> Option<&'static str> {
    [
        "pred",
        "s8",
        "s16",
        "s32",
        "s64",
        "u8",
        "u16",
        "u32",
        "u64",
        "f16",
        "f32",
        "f64",
        "bf16",
        "c64",
        "c128",
        "f8e5m2",
        "f8e4m3fn",
        "f8e4m3b11fnuz",
        "f8e5m2fnuz",
        "f8e4m3fnuz",
        "s4",
        "u4",
        "s2",
        "u2",
        "f8e4m3",
        "f8e3m4",
        "f8e8m0fnu",
        "f4e2m1fn",
    ]
    .into_iter()
    .find(|t| buffer_type(t) == Some(n))
}
