//! A PJRT plugin loaded through its C API: the client, compiling an `HloModuleProto`, buffers in
//! and out, executing. Every call's error becomes a `String` (the plugin's message).

use super::ffi::{self, f};
use std::ffi::c_void;
use std::path::Path;

type ArgFn = unsafe extern "C" fn(*mut c_void) -> *mut ffi::Error;
type VoidFn = unsafe extern "C" fn(*mut c_void);

pub struct Plugin {
    _lib: libloading::Library,
    api: *const ffi::ApiHead,
    pub client: *mut ffi::Client,
    /// The client's addressable devices, in its order (on XLA CPU, device `k` has id `k`).
    pub devices: Vec<*mut ffi::Device>,
    pub api_version: (i32, i32),
    pub platform: String,
    pub platform_version: String,
    pub attributes: Vec<(String, String)>,
}

/// A PJRT error: its code and message.
pub struct PjrtError {
    pub code: i32,
    pub message: String,
}

impl Plugin {
    /// Loads the plugin, initializes it and creates a client; with `devices` above 1, a client
    /// of that many devices (the CPU client's `cpu_device_count` create option).
    pub fn open(path: &Path, devices: usize) -> Result<Plugin, String> {
        // SAFETY: loading a shared library runs its initializers; a PJRT plugin is meant to be
        // loaded this way, and this process exists to contain whatever it does.
        let lib = unsafe { libloading::Library::new(path) }
            .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
        // SAFETY: `GetPjrtApi` is the plugin's documented entry point, `const PJRT_Api* (void)`.
        let get: libloading::Symbol<unsafe extern "C" fn() -> *const ffi::ApiHead> =
            unsafe { lib.get(b"GetPjrtApi\0") }
                .map_err(|e| format!("{} exports no GetPjrtApi: {e}", path.display()))?;
        let api = unsafe { get() };
        if api.is_null() {
            return Err("GetPjrtApi returned null".into());
        }
        // SAFETY: the plugin's table lives as long as the library.
        let head = unsafe { &*api };
        let mut p = Plugin {
            _lib: lib,
            api,
            client: std::ptr::null_mut(),
            devices: Vec::new(),
            api_version: (head.major_version, head.minor_version),
            platform: String::new(),
            platform_version: String::new(),
            attributes: Vec::new(),
        };
        let mut init = ffi::PluginInitializeArgs::new();
        p.call(f::PLUGIN_INITIALIZE, &mut *init)
            .map_err(|e| format!("PJRT_Plugin_Initialize: {}", e.message))?;
        let mut attrs = ffi::PluginAttributesArgs::new();
        if p.call(f::PLUGIN_ATTRIBUTES, &mut *attrs).is_ok() {
            for k in 0..attrs.num_attributes {
                // SAFETY: the plugin returned `num_attributes` entries living as long as it.
                let nv = unsafe { &*attrs.attributes.add(k) };
                let name = unsafe { text(nv.name, nv.name_size) };
                let value = match nv.value_type {
                    0 => unsafe { text(nv.value as *const u8, nv.value_size) },
                    1 => (nv.value as i64).to_string(),
                    2 => {
                        let v = unsafe {
                            std::slice::from_raw_parts(nv.value as *const i64, nv.value_size)
                        };
                        format!("{v:?}")
                    }
                    3 => f32::from_bits(nv.value as u32).to_string(),
                    4 => ((nv.value & 0xff) != 0).to_string(),
                    _ => continue,
                };
                p.attributes.push((name, value));
            }
        }
        let count_name = b"cpu_device_count";
        let count = ffi::NamedValue {
            struct_size: std::mem::size_of::<ffi::NamedValue>(),
            extension_start: std::ptr::null_mut(),
            name: count_name.as_ptr(),
            name_size: count_name.len(),
            value_type: 1,
            value: devices as u64,
            value_size: 1,
        };
        let mut create = ffi::ClientCreateArgs::new();
        if devices > 1 {
            create.create_options = &count;
            create.num_options = 1;
        }
        p.call(f::CLIENT_CREATE, &mut *create)
            .map_err(|e| format!("PJRT_Client_Create: {}", e.message))?;
        p.client = create.client;
        let mut name = ffi::ClientStringArgs::new();
        name.client = p.client;
        if p.call(f::CLIENT_PLATFORM_NAME, &mut *name).is_ok() {
            p.platform = unsafe { text(name.value, name.value_size) };
        }
        let mut version = ffi::ClientStringArgs::new();
        version.client = p.client;
        if p.call(f::CLIENT_PLATFORM_VERSION, &mut *version).is_ok() {
            p.platform_version = unsafe { text(version.value, version.value_size) };
        }
        let mut devs = ffi::ClientAddressableDevicesArgs::new();
        devs.client = p.client;
        p.call(f::CLIENT_ADDRESSABLE_DEVICES, &mut *devs)
            .map_err(|e| format!("PJRT_Client_AddressableDevices: {}", e.message))?;
        if devs.num_devices == 0 {
            return Err(format!(
                "the {} client has no addressable device",
                p.platform
            ));
        }
        // SAFETY: `num_devices` entries, owned by the client.
        p.devices = unsafe { std::slice::from_raw_parts(devs.devices, devs.num_devices) }.to_vec();
        if p.devices.len() < devices {
            return Err(format!(
                "the {} client has {} devices, {devices} were asked for",
                p.platform,
                p.devices.len()
            ));
        }
        Ok(p)
    }

    /// The extension of `extension_type` the plugin offers, if any.
    fn extension(&self, extension_type: i32) -> Option<*const ffi::ExtensionBase> {
        // SAFETY: the table and its extension chain live as long as the library.
        let mut e = unsafe { (*self.api).extension_start } as *const ffi::ExtensionBase;
        while !e.is_null() {
            let base = unsafe { &*e };
            if base.extension_type == extension_type {
                return Some(e);
            }
            e = base.next;
        }
        None
    }

    fn fn_at(&self, index: usize) -> Option<*const c_void> {
        // SAFETY: the table holds `struct_size` bytes; entries past it are not read.
        let head = unsafe { &*self.api };
        let offset = std::mem::size_of::<ffi::ApiHead>() + index * 8;
        if offset + 8 > head.struct_size {
            return None;
        }
        let p = unsafe { *((self.api as *const u8).add(offset) as *const *const c_void) };
        (!p.is_null()).then_some(p)
    }

    /// Calls the function at `index` with `args`; its error, if any, read and freed.
    pub fn call<T>(&self, index: usize, args: &mut T) -> Result<(), PjrtError> {
        let Some(fp) = self.fn_at(index) else {
            return Err(PjrtError {
                code: 12,
                message: format!("this plugin's PJRT_Api has no function {index}"),
            });
        };
        // SAFETY: every PJRT function takes one pointer to its argument struct and returns a
        // `PJRT_Error*`; `args` is the struct this index expects (see `ffi::f`).
        let func: ArgFn = unsafe { std::mem::transmute(fp) };
        let err = unsafe { func(args as *mut T as *mut c_void) };
        if err.is_null() {
            return Ok(());
        }
        Err(self.take_error(err))
    }

    fn take_error(&self, err: *mut ffi::Error) -> PjrtError {
        let mut msg = ffi::ErrorMessageArgs::new();
        msg.error = err;
        let mut message = String::from("(no message)");
        if let Some(fp) = self.fn_at(f::ERROR_MESSAGE) {
            // SAFETY: PJRT_Error_Message returns void.
            let func: VoidFn = unsafe { std::mem::transmute(fp) };
            unsafe { func(&mut *msg as *mut ffi::ErrorMessageArgs as *mut c_void) };
            message = unsafe { text(msg.message, msg.message_size) };
        }
        let mut code = ffi::ErrorGetCodeArgs::new();
        code.error = err;
        let mut c = 2;
        if let Some(fp) = self.fn_at(f::ERROR_GET_CODE) {
            let func: ArgFn = unsafe { std::mem::transmute(fp) };
            unsafe { func(&mut *code as *mut ffi::ErrorGetCodeArgs as *mut c_void) };
            c = code.code;
        }
        let mut d = ffi::ErrorDestroyArgs::new();
        d.error = err;
        if let Some(fp) = self.fn_at(f::ERROR_DESTROY) {
            let func: VoidFn = unsafe { std::mem::transmute(fp) };
            unsafe { func(&mut *d as *mut ffi::ErrorDestroyArgs as *mut c_void) };
        }
        PjrtError { code: c, message }
    }

    /// Waits for an event, frees it, and returns its error.
    pub fn await_event(&self, ev: *mut ffi::Event) -> Result<(), PjrtError> {
        if ev.is_null() {
            return Ok(());
        }
        let mut a = ffi::EventAwaitArgs::new();
        a.event = ev;
        let r = self.call(f::EVENT_AWAIT, &mut *a);
        let mut d = ffi::EventDestroyArgs::new();
        d.event = ev;
        let _ = self.call(f::EVENT_DESTROY, &mut *d);
        r
    }

    /// Compiles a serialized `HloModuleProto` (format `"hlo"`) with a serialized
    /// `CompileOptionsProto`.
    pub fn compile(
        &self,
        module_proto: &[u8],
        options: &[u8],
    ) -> Result<Executable<'_>, PjrtError> {
        let mut code = module_proto.to_vec();
        let format = b"hlo";
        let mut program = ffi::Program::new();
        program.code = code.as_mut_ptr();
        program.code_size = code.len();
        program.format = format.as_ptr();
        program.format_size = format.len();
        let mut a = ffi::ClientCompileArgs::new();
        a.client = self.client;
        a.program = &*program;
        a.compile_options = options.as_ptr();
        a.compile_options_size = options.len();
        self.call(f::CLIENT_COMPILE, &mut *a)?;
        Ok(Executable {
            plugin: self,
            loaded: a.executable,
        })
    }

    /// A buffer on device `device` (an index into [`Plugin::devices`]) holding `data`
    /// (row-major, dense) of type `ty` and `dims`, laid out on the device as `m2m` says
    /// (`None`: the default layout).
    pub fn buffer_from_host(
        &self,
        device: usize,
        ty: i32,
        dims: &[i64],
        data: &[u8],
        m2m: Option<&[i64]>,
    ) -> Result<DeviceBuffer<'_>, PjrtError> {
        let mut layout = m2m.map(ffi::MemoryLayout::minor_to_major);
        let mut a = ffi::BufferFromHostBufferArgs::new();
        a.client = self.client;
        a.data = data.as_ptr() as *const c_void;
        a.buffer_type = ty;
        a.dims = dims.as_ptr();
        a.num_dims = dims.len();
        a.host_buffer_semantics = 0; // kImmutableOnlyDuringCall
        a.device = self.devices[device];
        if let Some(l) = layout.as_mut() {
            a.device_layout = &mut **l;
        }
        self.call(f::CLIENT_BUFFER_FROM_HOST_BUFFER, &mut *a)?;
        let buf = DeviceBuffer {
            plugin: self,
            buffer: a.buffer,
        };
        self.await_event(a.done_with_host_buffer)?;
        Ok(buf)
    }
}

/// A string the plugin owns, copied.
unsafe fn text(p: *const u8, n: usize) -> String {
    if p.is_null() || n == 0 {
        return String::new();
    }
    String::from_utf8_lossy(std::slice::from_raw_parts(p, n)).into_owned()
}

pub struct DeviceBuffer<'a> {
    plugin: &'a Plugin,
    pub buffer: *mut ffi::Buffer,
}

impl DeviceBuffer<'_> {
    pub fn element_type(&self) -> Result<i32, PjrtError> {
        let mut a = ffi::BufferElementTypeArgs::new();
        a.buffer = self.buffer;
        self.plugin.call(f::BUFFER_ELEMENT_TYPE, &mut *a)?;
        Ok(a.buffer_type)
    }

    pub fn dims(&self) -> Result<Vec<i64>, PjrtError> {
        let mut a = ffi::BufferDimensionsArgs::new();
        a.buffer = self.buffer;
        self.plugin.call(f::BUFFER_DIMENSIONS, &mut *a)?;
        if a.num_dims == 0 {
            return Ok(Vec::new());
        }
        // SAFETY: `num_dims` entries owned by the buffer.
        Ok(unsafe { std::slice::from_raw_parts(a.dims, a.num_dims) }.to_vec())
    }

    /// The buffer's contents in row-major order (the host layout asked for explicitly, so the
    /// device's layout never leaks into the bytes).
    pub fn to_host(&self, rank: usize) -> Result<Vec<u8>, PjrtError> {
        let m2m: Vec<i64> = (0..rank as i64).rev().collect();
        let mut layout = ffi::MemoryLayout::minor_to_major(&m2m);
        let mut a = ffi::BufferToHostBufferArgs::new();
        a.src = self.buffer;
        a.host_layout = &mut *layout;
        self.plugin.call(f::BUFFER_TO_HOST_BUFFER, &mut *a)?;
        let mut out = vec![0u8; a.dst_size];
        let mut b = ffi::BufferToHostBufferArgs::new();
        b.src = self.buffer;
        b.host_layout = &mut *layout;
        b.dst = out.as_mut_ptr() as *mut c_void;
        b.dst_size = out.len();
        self.plugin.call(f::BUFFER_TO_HOST_BUFFER, &mut *b)?;
        self.plugin.await_event(b.event)?;
        Ok(out)
    }
}

impl Drop for DeviceBuffer<'_> {
    fn drop(&mut self) {
        if !self.buffer.is_null() {
            let mut a = ffi::BufferDestroyArgs::new();
            a.buffer = self.buffer;
            let _ = self.plugin.call(f::BUFFER_DESTROY, &mut *a);
        }
    }
}

pub struct Executable<'a> {
    plugin: &'a Plugin,
    pub loaded: *mut ffi::LoadedExecutable,
}

impl<'a> Executable<'a> {
    fn with_executable<R>(
        &self,
        f_: impl FnOnce(*mut ffi::Executable) -> Result<R, PjrtError>,
    ) -> Result<R, PjrtError> {
        let mut g = ffi::LoadedExecutableGetExecutableArgs::new();
        g.loaded_executable = self.loaded;
        self.plugin
            .call(f::LOADED_EXECUTABLE_GET_EXECUTABLE, &mut *g)?;
        let r = f_(g.executable);
        let mut d = ffi::ExecutableDestroyArgs::new();
        d.executable = g.executable;
        let _ = self.plugin.call(f::EXECUTABLE_DESTROY, &mut *d);
        r
    }

    pub fn num_outputs(&self) -> Result<usize, PjrtError> {
        self.with_executable(|e| {
            let mut a = ffi::ExecutableNumOutputsArgs::new();
            a.executable = e;
            self.plugin.call(f::EXECUTABLE_NUM_OUTPUTS, &mut *a)?;
            Ok(a.num_outputs)
        })
    }

    /// The shardings XLA's compiled SPMD program gives its parameters and its outputs (the
    /// plugin's shardings extension; serialized `xla.OpSharding`s), `None` where the plugin does
    /// not say.
    pub fn shardings(&self) -> Result<Option<(Vec<Vec<u8>>, Vec<Vec<u8>>)>, PjrtError> {
        let Some(ext) = self.plugin.extension(ffi::EXTENSION_SHARDINGS) else {
            return Ok(None);
        };
        // SAFETY: the extension is `PJRT_Shardings_Extension`: its base, then two function
        // pointers, present when its size covers them.
        let base = unsafe { &*ext };
        let head = std::mem::size_of::<ffi::ExtensionBase>();
        if base.struct_size < head + 16 {
            return Ok(None);
        }
        let fns = unsafe { (ext as *const u8).add(head) as *const Option<ArgFn> };
        let (params_fn, outputs_fn) = unsafe { (*fns, *fns.add(1)) };
        let (Some(params_fn), Some(outputs_fn)) = (params_fn, outputs_fn) else {
            return Ok(None);
        };
        self.with_executable(|e| {
            let read = |f: ArgFn| -> Result<Option<Vec<Vec<u8>>>, PjrtError> {
                let mut a = ffi::ExecutableShardingsArgs::new();
                a.executable = e;
                // SAFETY: the plugin's function with its argument struct.
                let err = unsafe { f(&mut *a as *mut ffi::ExecutableShardingsArgs as *mut c_void) };
                if !err.is_null() {
                    return Err(self.plugin.take_error(err));
                }
                if a.shardings.is_null() || a.sharding_sizes.is_null() {
                    return Ok(None);
                }
                // SAFETY: `num` serialized protos with their sizes, owned by the executable.
                Ok(Some(
                    (0..a.num)
                        .map(|k| unsafe {
                            let p = *a.shardings.add(k);
                            let n = *a.sharding_sizes.add(k);
                            if p.is_null() {
                                Vec::new()
                            } else {
                                std::slice::from_raw_parts(p, n).to_vec()
                            }
                        })
                        .collect(),
                ))
            };
            match (read(params_fn)?, read(outputs_fn)?) {
                (Some(p), Some(o)) => Ok(Some((p, o))),
                _ => Ok(None),
            }
        })
    }

    /// The optimized module, as the plugin serializes it (format and bytes).
    pub fn optimized_program(&self) -> Result<(String, Vec<u8>), PjrtError> {
        self.with_executable(|e| {
            let mut program = ffi::Program::new();
            let mut a = ffi::ExecutableOptimizedProgramArgs::new();
            a.executable = e;
            a.program = &mut *program;
            self.plugin.call(f::EXECUTABLE_OPTIMIZED_PROGRAM, &mut *a)?;
            let mut code = vec![0u8; program.code_size];
            program.code = code.as_mut_ptr();
            let mut b = ffi::ExecutableOptimizedProgramArgs::new();
            b.executable = e;
            b.program = &mut *program;
            self.plugin.call(f::EXECUTABLE_OPTIMIZED_PROGRAM, &mut *b)?;
            let format = unsafe { text(program.format, program.format_size) };
            Ok((format, code))
        })
    }

    /// Runs on the first devices, one per argument list (the executable's devices in order),
    /// each with its `args`; per device, the output buffers, one per result leaf of the
    /// top-level tuple (or the one array).
    pub fn execute(
        &self,
        args: &[Vec<DeviceBuffer<'a>>],
    ) -> Result<Vec<Vec<DeviceBuffer<'a>>>, PjrtError> {
        let n_out = self.num_outputs()?;
        let n_dev = args.len();
        let arg_ptrs: Vec<Vec<*mut ffi::Buffer>> = args
            .iter()
            .map(|l| l.iter().map(|b| b.buffer).collect())
            .collect();
        let arg_lists: Vec<*const *mut ffi::Buffer> = arg_ptrs.iter().map(|l| l.as_ptr()).collect();
        let mut outs: Vec<Vec<*mut ffi::Buffer>> =
            vec![vec![std::ptr::null_mut(); n_out.max(1)]; n_dev];
        let out_lists: Vec<*mut *mut ffi::Buffer> =
            outs.iter_mut().map(|l| l.as_mut_ptr()).collect();
        let mut events: Vec<*mut ffi::Event> = vec![std::ptr::null_mut(); n_dev];
        let mut opts = ffi::ExecuteOptions::new();
        let mut a = ffi::LoadedExecutableExecuteArgs::new();
        a.executable = self.loaded;
        a.options = &mut *opts;
        a.argument_lists = arg_lists.as_ptr();
        a.num_devices = n_dev;
        a.num_args = arg_ptrs.first().map_or(0, Vec::len);
        a.output_lists = out_lists.as_ptr();
        a.device_complete_events = events.as_mut_ptr();
        self.plugin.call(f::LOADED_EXECUTABLE_EXECUTE, &mut *a)?;
        let buffers: Vec<Vec<DeviceBuffer<'a>>> = outs
            .iter()
            .map(|l| {
                l[..n_out]
                    .iter()
                    .map(|&b| DeviceBuffer {
                        plugin: self.plugin,
                        buffer: b,
                    })
                    .collect()
            })
            .collect();
        for e in events {
            self.plugin.await_event(e)?;
        }
        Ok(buffers)
    }
}

impl Drop for Executable<'_> {
    fn drop(&mut self) {
        if !self.loaded.is_null() {
            let mut a = ffi::LoadedExecutableDestroyArgs::new();
            a.executable = self.loaded;
            let _ = self.plugin.call(f::LOADED_EXECUTABLE_DESTROY, &mut *a);
        }
    }
}
