//! hlo-diff's PJRT worker: runs HLO modules on an XLA PJRT C API plugin (a shared library
//! exporting `GetPjrtApi`, such as `pjrt_c_api_cpu_plugin.so`), on behalf of the engine's
//! `pjrt` backend.
//!
//! ```text
//! hlo-diff-pjrt-worker --plugin PATH [--devices N]
//! ```
//!
//! With `--devices N` (N above 1) the client has N devices (XLA CPU's host devices), and a
//! request whose `num_partitions` option is above 1 is an SPMD program: it is compiled with SPMD
//! partitioning over that many devices, each global input is split by the sharding XLA's
//! compiled program gives its parameter (`hlo::sharding`), and each result is put back together
//! from the devices' shards, so the engine sees global arrays as from one device.
//!
//! It speaks the Python worker's protocol (`harness/engine/src/protocol.rs`: framed JSON header
//! and raw buffers; `hello`, `stage`, `result` messages), so the engine's pool isolates it the
//! same way: its own process group, per-stage timeouts, killed and restarted on a crash or hang.
//! A request's module text is parsed by hlo-diff's parser and handed to XLA as an
//! `HloModuleProto` (program format `"hlo"`), with no StableHLO round trip: the layouts written
//! are kept (the entry computation's layout is passed as the compile's argument and result
//! layouts), nothing is folded before XLA's own passes. Per-compile options (dumps, disabled
//! passes, any DebugOptions field) travel as the `CompileOptionsProto`'s
//! `env_option_overrides`, applied on top of XLA's defaults and `XLA_FLAGS`.

mod ffi;
mod options;
mod pjrt;

use engine::protocol::{Frame, FrameError, DEFAULT_MAX_FRAME};
use hlo::sharding::DeviceSplit;
use hlo::{Module, Opcode, Shape};
use pjrt::{Executable, PjrtError, Plugin};
use prost::Message;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufReader, Write};
use std::os::fd::FromRawFd;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Executables kept for later requests of the same module and options (as the Python worker).
const EXECUTABLES_KEPT: usize = 2;

struct Failure {
    kind: &'static str,
    stage: &'static str,
    message: String,
}

fn fail(kind: &'static str, stage: &'static str, message: impl Into<String>) -> Failure {
    Failure {
        kind,
        stage,
        message: message.into(),
    }
}

fn pjrt_fail(stage: &'static str, e: PjrtError) -> Failure {
    // UNIMPLEMENTED: something this XLA does not do (an unsupported op or type); a custom-call
    // whose handler the embedder registers (jaxlib's LAPACK kernels) and this plugin lacks.
    let kind = if e.code == 12
        || e.message.contains("No FFI handler registered")
        || e.message
            .contains("No registered implementation for custom call")
    {
        "unsupported"
    } else {
        "rejected"
    };
    fail(kind, stage, e.message)
}

struct Kept {
    key: String,
    exe: Executable<'static>,
    params: Vec<hlo::ArrayShape>,
    result: Shape,
    spmd: Option<Spmd>,
}

/// How an SPMD program's global arrays lie on its devices: each parameter's split and each
/// result leaf's, as XLA's compiled program shards them.
struct Spmd {
    partitions: usize,
    params: Vec<DeviceSplit>,
    results: Vec<DeviceSplit>,
}

struct Worker {
    plugin: &'static Plugin,
    out: File,
    kept: Vec<Kept>,
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let plugin_path = args
        .iter()
        .position(|a| a == "--plugin")
        .and_then(|i| args.get(i + 1))
        .map(PathBuf::from);
    let devices: usize = args
        .iter()
        .position(|a| a == "--devices")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    // The protocol gets its own copy of stdout; fd 1 then points at stderr, so whatever the
    // plugin prints cannot corrupt the frames.
    // SAFETY: dup/dup2 on the process's own standard descriptors.
    let out = unsafe {
        let fd = libc::dup(1);
        libc::dup2(2, 1);
        File::from_raw_fd(fd)
    };
    let mut out = out;
    let Some(plugin_path) = plugin_path else {
        let _ = hello_failure(&mut out, "no --plugin PATH given".into());
        std::process::exit(2);
    };
    let plugin = match Plugin::open(&plugin_path, devices) {
        Ok(p) => Box::leak(Box::new(p)),
        Err(e) => {
            let _ = hello_failure(&mut out, e);
            std::process::exit(0);
        }
    };
    let attrs: serde_json::Map<String, Value> = plugin
        .attributes
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
        .collect();
    let hello = json!({
        "kind": "hello",
        "ok": true,
        "api": "pjrt",
        "plugin": plugin_path.display().to_string(),
        "platform": plugin.platform,
        "platform_version": plugin.platform_version,
        "pjrt_api_version": format!("{}.{}", plugin.api_version.0, plugin.api_version.1),
        "plugin_attributes": attrs,
        "devices": vec![plugin.platform.clone(); plugin.devices.len()],
        "worker": env!("CARGO_PKG_VERSION"),
    });
    if Frame::new(hello, vec![]).write_to(&mut out).is_err() {
        std::process::exit(3);
    }
    let mut w = Worker {
        plugin,
        out,
        kept: Vec::new(),
    };
    let stdin = std::io::stdin();
    let mut input = BufReader::with_capacity(1 << 16, stdin.lock());
    loop {
        let req = match Frame::read_from(&mut input, DEFAULT_MAX_FRAME) {
            Ok(f) => f,
            Err(FrameError::Eof) => std::process::exit(0),
            Err(e) => {
                eprintln!("hlo-diff-pjrt-worker: bad request frame: {e}");
                std::process::exit(3);
            }
        };
        let op = req.header.get("op").and_then(Value::as_str).unwrap_or("");
        let (header, bufs) = match op {
            "shutdown" => {
                let _ =
                    Frame::new(json!({"kind": "result", "ok": true}), vec![]).write_to(&mut w.out);
                std::process::exit(0);
            }
            "info" => (
                json!({"kind": "result", "ok": true, "platform": w.plugin.platform}),
                vec![],
            ),
            "parse" | "print" => match parse(&req.header) {
                Ok(m) => {
                    let mut h = json!({"kind": "result", "ok": true});
                    if op == "print" {
                        h["text"] = Value::String(hlo::print::module_to_string(&m));
                    }
                    (h, vec![])
                }
                Err(f) => failure(f),
            },
            "run" => match w.run(&req) {
                Ok(r) => r,
                Err(f) => failure(f),
            },
            other => failure(fail(
                "bad_inputs",
                "parse",
                format!("unknown request {other:?}"),
            )),
        };
        if Frame::new(header, bufs).write_to(&mut w.out).is_err() {
            std::process::exit(3);
        }
    }
}

fn hello_failure(out: &mut File, why: String) -> std::io::Result<()> {
    Frame::new(json!({"kind": "hello", "ok": false, "why": why}), vec![]).write_to(out)?;
    out.flush()
}

fn failure(f: Failure) -> (Value, Vec<Vec<u8>>) {
    (
        json!({"kind": "result", "ok": false,
               "error": {"type": f.kind, "stage": f.stage, "message": f.message}}),
        vec![],
    )
}

fn parse(header: &Value) -> Result<Module, Failure> {
    let text = header.get("hlo").and_then(Value::as_str).unwrap_or("");
    hlo::parse::parse_module(text).map_err(|e| fail("rejected", "parse", e.to_string()))
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

impl Worker {
    fn stage(&mut self, name: &str) -> Result<(), Failure> {
        Frame::new(json!({"kind": "stage", "stage": name}), vec![])
            .write_to(&mut self.out)
            .map_err(|e| fail("rejected", "execute", format!("writing to the engine: {e}")))
    }

    fn run(&mut self, req: &Frame) -> Result<(Value, Vec<Vec<u8>>), Failure> {
        let h = &req.header;
        let text = h.get("hlo").and_then(Value::as_str).unwrap_or("");
        let opts = h.get("options").cloned().unwrap_or(Value::Null);
        let flag = |k: &str| opts.get(k).and_then(Value::as_bool) == Some(true);
        let dump_to = opts
            .get("dump_to")
            .and_then(Value::as_str)
            .map(PathBuf::from);
        let cacheable = dump_to.is_none()
            && opts.get("pass_re").map_or(true, Value::is_null)
            && !flag("return_optimized_hlo")
            && !flag("return_before_optimizations_hlo")
            && !flag("fresh_compile");
        let key = format!("{text}\u{0}{opts}");
        let mut timings = serde_json::Map::new();
        if cacheable {
            if let Some(k) = self.kept.iter().position(|e| e.key == key) {
                let e = self.kept.remove(k);
                timings.insert("cached".into(), json!(1));
                let r = self.execute(&e, h, &req.buffers, timings);
                self.kept.push(e);
                return r.map(|(mut hd, b)| {
                    hd["kept"] = json!(true);
                    (hd, b)
                });
            }
        }

        self.stage("parse")?;
        let t = Instant::now();
        let mut module = parse(h)?;
        timings.insert("parse_ms".into(), json!(ms(t)));

        self.stage("convert")?;
        let t = Instant::now();
        // Tuple parameters as the host passes them: their leaves, one parameter each.
        flatten_tuple_parameters(&mut module);
        // Nested tuple results as leaves of one flat tuple (PJRT returns only the top level's
        // elements); the engine rebuilds the tree from the result shape reported.
        let result_shape = module.entry_computation().root_instruction().shape.clone();
        flatten_nested_result(&mut module);
        let entry = module.entry_computation();
        let params: Vec<Shape> = entry.parameter_shapes();
        let mut leaves = Vec::new();
        for p in &params {
            match p {
                Shape::Array(a) => leaves.push(a.clone()),
                _ => {
                    return Err(fail(
                        "unsupported",
                        "convert",
                        "tuple and token entry parameters cannot be fed through the PJRT C API",
                    ))
                }
            }
        }
        if entry
            .instructions
            .iter()
            .any(|i| i.opcode == Opcode::Parameter && i.shape.is_tuple())
        {
            return Err(fail(
                "unsupported",
                "convert",
                "tuple entry parameters cannot be fed through the PJRT C API",
            ));
        }
        let proto = hlo::proto::module_to_proto(&module).map_err(|e| match e {
            hlo::proto::ProtoError::Unsupported(m) => fail("unsupported", "convert", m),
            e => fail("rejected", "convert", e.to_string()),
        })?;
        let host = proto.host_program_shape.clone().unwrap_or_default();
        let result = result_shape;
        let layouts: Vec<hlo::ArrayShape> = host
            .parameters
            .iter()
            .map(|s| match hlo::proto::shape_from_proto(s) {
                Ok(Shape::Array(a)) => Ok(a),
                Ok(_) => Err(fail("unsupported", "convert", "a tuple entry parameter")),
                Err(e) => Err(fail("rejected", "convert", e.to_string())),
            })
            .collect::<Result<_, _>>()?;
        if layouts.len() != leaves.len() {
            return Err(fail(
                "rejected",
                "convert",
                "entry_computation_layout does not list the entry's parameters",
            ));
        }
        let module_bytes = proto.encode_to_vec();
        timings.insert("convert_ms".into(), json!(ms(t)));

        check_inputs(&layouts, h, &req.buffers)?;

        let tmp_dump;
        let dump_dir = match (&dump_to, flag("return_before_optimizations_hlo")) {
            (Some(d), _) => Some(d.clone()),
            (None, true) => {
                tmp_dump = tempfile::tempdir()
                    .map_err(|e| fail("rejected", "compile", format!("temp dir: {e}")))?;
                Some(tmp_dump.path().to_path_buf())
            }
            (None, false) => None,
        };
        if let Some(d) = &dump_dir {
            let _ = std::fs::create_dir_all(d);
        }
        let before_files = list(dump_dir.as_deref());

        let partitions = opts
            .get("num_partitions")
            .and_then(Value::as_u64)
            .unwrap_or(1) as usize;
        if partitions > self.plugin.devices.len() {
            return Err(fail(
                "unsupported",
                "compile",
                format!(
                    "an SPMD program on {partitions} devices; this worker has {}",
                    self.plugin.devices.len()
                ),
            ));
        }
        self.stage("compile")?;
        let t = Instant::now();
        let partitioning = options::Partitioning {
            partitions,
            shardy: text.contains("sdy."),
        };
        let copts = options::compile_options(&opts, dump_dir.as_deref(), &host, partitioning);
        let exe = self
            .plugin
            .compile(&module_bytes, &copts.encode_to_vec())
            .map_err(|e| pjrt_fail("compile", e))?;
        let spmd = if partitions > 1 {
            Some(spmd_of(&exe, partitions, &layouts, &result)?)
        } else {
            None
        };
        timings.insert("compile_ms".into(), json!(ms(t)));

        let kept = Kept {
            key,
            exe,
            params: layouts,
            result,
            spmd,
        };
        let (mut header, bufs) = self.execute(&kept, h, &req.buffers, timings)?;
        let exe = &kept.exe;
        if flag("return_optimized_hlo") {
            match exe.optimized_program() {
                Ok((format, bytes))
                    if format == "hlo" || format == "hlo_with_config" || format.is_empty() =>
                {
                    let m = if format == "hlo_with_config" {
                        hlo::proto::decode_module_with_config(&bytes)
                    } else {
                        hlo::proto::decode_module(&bytes)
                    };
                    match m {
                        Ok(mut m) => {
                            // The module config XLA prints in its header: the proto leaves it
                            // out.
                            if partitions > 1 && m.num_partitions() == 1 {
                                m.header_attrs
                                    .push(("num_partitions".into(), partitions.to_string()));
                            }
                            header["optimized_hlo"] = json!(hlo::print::module_to_string(&m))
                        }
                        Err(e) => {
                            return Err(fail(
                                "unsupported",
                                "execute",
                                format!("reading XLA's optimized module: {e}"),
                            ))
                        }
                    }
                }
                Ok((format, _)) => {
                    return Err(fail(
                        "unsupported",
                        "execute",
                        format!("the optimized program comes in format {format:?}"),
                    ))
                }
                Err(e) => return Err(pjrt_fail("execute", e)),
            }
        }
        if let Some(d) = &dump_dir {
            let new: Vec<String> = list(Some(d)).difference(&before_files).cloned().collect();
            if let Some(bo) = new
                .iter()
                .find(|f| f.ends_with(".before_optimizations.txt"))
            {
                if let Ok(t) = std::fs::read_to_string(d.join(bo)) {
                    header["before_optimizations_hlo"] = json!(t);
                }
            }
            if dump_to.is_some() {
                header["dump_dir"] = json!(d.display().to_string());
                header["dump_files"] = json!(new);
            }
        }
        header["kept"] = json!(cacheable);
        if cacheable {
            self.kept.push(kept);
            while self.kept.len() > EXECUTABLES_KEPT {
                self.kept.remove(0);
            }
        }
        Ok((header, bufs))
    }

    fn execute(
        &mut self,
        kept: &Kept,
        h: &Value,
        bufs: &[Vec<u8>],
        mut timings: serde_json::Map<String, Value>,
    ) -> Result<(Value, Vec<Vec<u8>>), Failure> {
        let (params, result) = (&kept.params, &kept.result);
        check_inputs(params, h, bufs)?;
        self.stage("execute")?;
        let t = Instant::now();
        let devices = kept.spmd.as_ref().map_or(1, |s| s.partitions);
        // Per device, its arguments: the whole input, or its shard of it.
        let mut args: Vec<Vec<_>> = (0..devices)
            .map(|_| Vec::with_capacity(params.len()))
            .collect();
        for (k, (p, data)) in params.iter().zip(bufs).enumerate() {
            let ty = ffi::buffer_type(p.ty.name()).ok_or_else(|| {
                fail(
                    "unsupported",
                    "execute",
                    format!("element type {} through PJRT", p.ty),
                )
            })?;
            let m2m = p.minor_to_major();
            let row_major: Vec<i64> = (0..p.dims.len() as i64).rev().collect();
            let layout = (m2m != row_major).then_some(m2m.as_slice());
            for (d, list) in args.iter_mut().enumerate() {
                let (dims, piece) = match &kept.spmd {
                    None => (p.dims.clone(), std::borrow::Cow::Borrowed(data.as_slice())),
                    Some(s) => {
                        let split = &s.params[k];
                        let shard = split.shard_dims(&p.dims);
                        // A device the assignment leaves out gets padding; nothing reads it.
                        let start = split
                            .shard_start(d as i64, &p.dims)
                            .unwrap_or_else(|| p.dims.clone());
                        let piece =
                            hlo::sharding::extract(data, &p.dims, p.ty.byte_size(), &start, &shard);
                        (shard, std::borrow::Cow::Owned(piece))
                    }
                };
                let packed = pack_input(p.ty, &piece);
                list.push(
                    self.plugin
                        .buffer_from_host(d, ty, &dims, &packed, layout)
                        .map_err(|e| pjrt_fail("execute", e))?,
                );
            }
        }
        let outs = kept
            .exe
            .execute(&args)
            .map_err(|e| pjrt_fail("execute", e))?;
        let leaves = result_leaves(result);
        let mut descs = Vec::new();
        let mut data = Vec::new();
        for k in 0..outs[0].len() {
            // The leaf's global array: device 0's buffer, or its shards put together.
            let readers: Vec<i64> = match &kept.spmd {
                None => vec![0],
                Some(s) => s.results[k].readers(),
            };
            let mut global: Option<(hlo::PrimitiveType, &'static str, Vec<i64>, Vec<u8>)> = None;
            for d in readers {
                let b = outs.get(d as usize).and_then(|o| o.get(k)).ok_or_else(|| {
                    fail(
                        "rejected",
                        "execute",
                        format!("no result {k} from device {d}"),
                    )
                })?;
                let ty = b.element_type().map_err(|e| pjrt_fail("execute", e))?;
                let name = ffi::buffer_type_name(ty).ok_or_else(|| {
                    fail("unsupported", "execute", format!("result buffer type {ty}"))
                })?;
                let dims = b.dims().map_err(|e| pjrt_fail("execute", e))?;
                let bytes = b.to_host(dims.len()).map_err(|e| pjrt_fail("execute", e))?;
                let ty = hlo::PrimitiveType::from_name(name).expect("a known type name");
                let n: usize = dims.iter().map(|&d| d.max(0) as usize).product();
                let bytes =
                    unpack_output(ty, n, bytes).map_err(|m| fail("rejected", "execute", m))?;
                let Some(s) = &kept.spmd else {
                    global = Some((ty, name, dims, bytes));
                    break;
                };
                let full = leaves
                    .get(k)
                    .map(|a| a.dims.clone())
                    .unwrap_or_else(|| dims.clone());
                let split = &s.results[k];
                if split.shard_dims(&full) != dims {
                    return Err(fail(
                        "rejected",
                        "execute",
                        format!(
                            "result {k}'s shard on device {d} is {dims:?}; its sharding makes it {:?}",
                            split.shard_dims(&full)
                        ),
                    ));
                }
                let n_full: usize = full.iter().map(|&d| d.max(0) as usize).product();
                let g = global.get_or_insert_with(|| {
                    (ty, name, full.clone(), vec![0u8; n_full * ty.byte_size()])
                });
                let start = split.shard_start(d, &full).unwrap_or_default();
                hlo::sharding::insert(&mut g.3, &full, ty.byte_size(), &start, &dims, &bytes);
            }
            let (_, name, dims, bytes) = global
                .ok_or_else(|| fail("rejected", "execute", format!("result {k} has no device")))?;
            descs.push(json!({"dtype": name, "dims": dims}));
            data.push(bytes);
        }
        timings.insert("execute_ms".into(), json!(ms(t)));
        let header = json!({
            "kind": "result",
            "ok": true,
            "timings": timings,
            "result_shape": shape_json(result),
            "outputs": descs,
        });
        Ok((header, data))
    }
}

/// The array leaves of a result shape, in order.
fn result_leaves(s: &Shape) -> Vec<hlo::ArrayShape> {
    match s {
        Shape::Array(a) => vec![a.clone()],
        Shape::Tuple(t) => t.iter().flat_map(result_leaves).collect(),
        _ => Vec::new(),
    }
}

/// The splits of an SPMD program's parameters and result leaves, as XLA's compiled program
/// shards them: what the plugin's shardings extension says, else the shardings on the entry of
/// the module XLA compiled (after sharding propagation and partitioning); replicated where
/// there is none.
fn spmd_of(
    exe: &Executable<'static>,
    partitions: usize,
    params: &[hlo::ArrayShape],
    result: &Shape,
) -> Result<Spmd, Failure> {
    let leaves = result_leaves(result);
    let decode = |b: &Vec<u8>| hlo::proto::OpSharding::decode(b.as_slice()).ok();
    let (param_shardings, result_shardings) = match exe
        .shardings()
        .map_err(|e| pjrt_fail("compile", e))?
    {
        Some((p, o)) if p.len() == params.len() && o.len() == leaves.len() => (
            p.iter().map(decode).collect::<Vec<_>>(),
            o.iter().map(decode).collect::<Vec<_>>(),
        ),
        _ => {
            let (format, bytes) = exe
                .optimized_program()
                .map_err(|e| pjrt_fail("compile", e))?;
            let proto = match format.as_str() {
                "hlo_with_config" => hlo::proto::HloModuleProtoWithConfig::decode(bytes.as_slice())
                    .ok()
                    .and_then(|p| p.hlo_module),
                "hlo" | "" => hlo::proto::HloModuleProto::decode(bytes.as_slice()).ok(),
                _ => None,
            }
            .ok_or_else(|| {
                fail(
                    "unsupported",
                    "compile",
                    format!(
                        "the compiled SPMD program's shardings cannot be read (format {format:?})"
                    ),
                )
            })?;
            let (p, root) = hlo::sharding::entry_shardings(&proto);
            let o = hlo::sharding::leaf_shardings(root.as_ref(), leaves.len());
            (p, o.into_iter().map(Some).collect())
        }
    };
    let split = |s: Option<&hlo::proto::OpSharding>, rank: usize, what: String| {
        s.map_or(Ok(DeviceSplit::Replicated), |s| {
            DeviceSplit::from_proto(s, rank)
        })
        .map_err(|m| fail("unsupported", "compile", format!("{what}: {m}")))
    };
    let splits =
        |shardings: &[Option<hlo::proto::OpSharding>], shapes: &[hlo::ArrayShape], what: &str| {
            shapes
                .iter()
                .enumerate()
                .map(|(k, a)| {
                    split(
                        shardings.get(k).and_then(Option::as_ref),
                        a.dims.len(),
                        format!("{what} {k}"),
                    )
                })
                .collect::<Result<Vec<_>, _>>()
        };
    let params = splits(&param_shardings, params, "parameter")?;
    let results = splits(&result_shardings, &leaves, "result")?;
    Ok(Spmd {
        partitions,
        params,
        results,
    })
}

/// Makes every tuple-shaped entry parameter a `tuple` of new parameters, one per array leaf
/// (numbered in depth-first order over the parameters in their order), so that the host can
/// pass leaves: what jaxlib's route does to tuple parameters too. A module without tuple
/// parameters is left as it is.
fn flatten_tuple_parameters(m: &mut Module) {
    use hlo::{Attr, Instruction};
    let entry = &m.computations[m.entry];
    if !entry
        .instructions
        .iter()
        .any(|i| i.opcode == Opcode::Parameter && i.shape.is_tuple())
    {
        return;
    }
    // First leaf number of each parameter, in parameter order.
    let mut first = std::collections::HashMap::new();
    let mut next = 0i64;
    for (k, i) in entry.parameters() {
        first.insert(k, next);
        next += i
            .shape
            .leaves()
            .len()
            .max(if i.shape.is_tuple() { 0 } else { 1 }) as i64;
    }
    let old = entry.instructions.clone();
    let root = entry.root;
    let mut new: Vec<Instruction> = Vec::with_capacity(old.len() * 2);
    let mut remap = vec![0usize; old.len()];
    fn build(shape: &Shape, name: &str, number: &mut i64, new: &mut Vec<Instruction>) -> usize {
        match shape {
            Shape::Tuple(items) => {
                let ops: Vec<usize> = items
                    .iter()
                    .enumerate()
                    .map(|(j, s)| build(s, &format!("{name}.{j}"), number, new))
                    .collect();
                let mut t = Instruction::new(name.to_string(), Opcode::Tuple, shape.clone());
                t.operands = ops;
                new.push(t);
            }
            s => {
                let mut p = Instruction::new(format!("{name}.leaf"), Opcode::Parameter, s.clone());
                p.parameter_number = Some(*number);
                *number += 1;
                new.push(p);
            }
        }
        new.len() - 1
    }
    for (k, i) in old.iter().enumerate() {
        if i.opcode == Opcode::Parameter {
            let mut number = first.get(&k).copied().unwrap_or(0);
            if i.shape.is_tuple() {
                remap[k] = build(&i.shape, &i.name, &mut number, &mut new);
            } else {
                let mut p = i.clone();
                p.parameter_number = Some(number);
                new.push(p);
                remap[k] = new.len() - 1;
            }
            continue;
        }
        let mut c = i.clone();
        c.operands = c.operands.iter().map(|&o| remap[o]).collect();
        for (_, a) in c.attrs.iter_mut() {
            if let Attr::Instrs(v) = a {
                *v = v.iter().map(|&o| remap[o]).collect();
            }
        }
        new.push(c);
        remap[k] = new.len() - 1;
    }
    let entry = &mut m.computations[m.entry];
    entry.instructions = new;
    entry.root = remap[root];
    // The layout the header gave names the tuple parameters; the leaves keep theirs.
    m.header_attrs
        .retain(|(k, _)| k != "entry_computation_layout");
}

/// Makes a root whose tuple nests tuples a flat tuple of its array leaves (depth-first), read
/// with `get-tuple-element`s; any other root is left as it is.
fn flatten_nested_result(m: &mut Module) {
    use hlo::Instruction;
    let entry = &mut m.computations[m.entry];
    let root = entry.root;
    let shape = entry.instructions[root].shape.clone();
    let nested = shape
        .tuple_elements()
        .is_some_and(|t| t.iter().any(Shape::is_tuple));
    if !nested {
        return;
    }
    let base = entry.instructions[root].name.clone();
    let mut leaves = Vec::new();
    fn walk(
        s: &Shape,
        of: usize,
        path: &str,
        base: &str,
        ins: &mut Vec<Instruction>,
        leaves: &mut Vec<usize>,
    ) {
        match s {
            Shape::Tuple(t) => {
                for (j, e) in t.iter().enumerate() {
                    let mut g = Instruction::new(
                        format!("{base}.flat{path}.{j}"),
                        Opcode::GetTupleElement,
                        e.clone(),
                    );
                    g.operands = vec![of];
                    g.set_attr("index", hlo::Attr::Int(j as i64));
                    ins.push(g);
                    let id = ins.len() - 1;
                    walk(e, id, &format!("{path}.{j}"), base, ins, leaves);
                }
            }
            _ => leaves.push(of),
        }
    }
    walk(
        &shape,
        root,
        "",
        &base,
        &mut entry.instructions,
        &mut leaves,
    );
    let flat = Shape::Tuple(
        leaves
            .iter()
            .map(|&k| entry.instructions[k].shape.clone())
            .collect(),
    );
    let mut t = Instruction::new(format!("{base}.flat"), Opcode::Tuple, flat);
    t.operands = leaves;
    entry.instructions.push(t);
    entry.root = entry.instructions.len() - 1;
    m.header_attrs
        .retain(|(k, _)| k != "entry_computation_layout");
}

/// The inputs must match the entry's parameters one for one.
fn check_inputs(params: &[hlo::ArrayShape], h: &Value, bufs: &[Vec<u8>]) -> Result<(), Failure> {
    let got = h
        .get("inputs")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if got.len() != params.len() || bufs.len() < got.len() {
        return Err(fail(
            "bad_inputs",
            "execute",
            format!(
                "the entry computation takes {} array leaves, got {} inputs",
                params.len(),
                got.len()
            ),
        ));
    }
    for (i, (p, g)) in params.iter().zip(&got).enumerate() {
        let dtype = g.get("dtype").and_then(Value::as_str).unwrap_or("");
        let dims: Vec<i64> = g
            .get("dims")
            .and_then(Value::as_array)
            .map(|d| d.iter().filter_map(Value::as_i64).collect())
            .unwrap_or_default();
        if dtype != p.ty.name() || dims != p.dims {
            return Err(fail(
                "bad_inputs",
                "execute",
                format!(
                    "input {i} is {dtype}{dims:?}, the parameter is {}{:?}",
                    p.ty, p.dims
                ),
            ));
        }
        let n: usize = p.dims.iter().map(|&d| d.max(0) as usize).product();
        if bufs[i].len() != n * p.ty.byte_size() {
            return Err(fail(
                "bad_inputs",
                "execute",
                format!(
                    "input {i} has {} bytes, needs {}",
                    bufs[i].len(),
                    n * p.ty.byte_size()
                ),
            ));
        }
    }
    Ok(())
}

/// Sub-byte inputs as PJRT takes them from the host: one element per byte, low bits only.
fn pack_input(ty: hlo::PrimitiveType, data: &[u8]) -> Vec<u8> {
    let bits = ty.bit_width();
    if bits >= 8 || ty == hlo::PrimitiveType::Pred {
        return data.to_vec();
    }
    data.iter()
        .map(|&b| b & ((1u16 << bits) - 1) as u8)
        .collect()
}

/// Output bytes in hlo-diff's storage: one byte per element, signed sub-byte types
/// sign-extended; packed sub-byte data (two 4-bit elements a byte) unpacked.
fn unpack_output(ty: hlo::PrimitiveType, n: usize, bytes: Vec<u8>) -> Result<Vec<u8>, String> {
    let bits = ty.bit_width() as usize;
    if bits >= 8 || ty == hlo::PrimitiveType::Pred {
        if bytes.len() != n * ty.byte_size() {
            return Err(format!(
                "{} result of {n} elements came back as {} bytes",
                ty,
                bytes.len()
            ));
        }
        return Ok(bytes);
    }
    let elems: Vec<u8> = if bytes.len() == n {
        bytes
    } else if bytes.len() == (n * bits).div_ceil(8) {
        let per = 8 / bits;
        (0..n)
            .map(|i| (bytes[i / per] >> ((i % per) * bits)) & ((1u16 << bits) - 1) as u8)
            .collect()
    } else {
        return Err(format!(
            "{ty} result of {n} elements came back as {} bytes",
            bytes.len()
        ));
    };
    let mask = ((1u16 << bits) - 1) as u8;
    Ok(elems
        .into_iter()
        .map(|b| {
            let v = b & mask;
            if ty.is_signed_integer() && (v >> (bits - 1)) & 1 == 1 {
                v | !mask
            } else {
                v
            }
        })
        .collect())
}

fn shape_json(s: &Shape) -> Value {
    match s {
        Shape::Tuple(t) => json!({"tuple": t.iter().map(shape_json).collect::<Vec<_>>()}),
        Shape::Token => json!({"token": true}),
        Shape::Opaque | Shape::Buffer(_) => json!({"token": true}),
        Shape::Array(a) => json!({"array": {"dtype": a.ty.name(), "dims": a.dims}}),
    }
}

fn list(d: Option<&Path>) -> BTreeSet<String> {
    d.and_then(|d| std::fs::read_dir(d).ok())
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
