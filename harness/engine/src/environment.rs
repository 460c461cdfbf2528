//! Where a result was obtained: the host's CPU and its vector features, the GPU, the Python and
//! jax/jaxlib versions, the XLA flags, and what the oracle decided about the host.
//!
//! XLA CPU compiles for the CPU it runs on, so the same module can give different bits on two
//! hosts (f64 -> f16 rounds once with AVX512-FP16 and twice without, see `interp::host`).
//! Every finding carries an [`Environment`] (`meta.environment`), a campaign's `report.json`
//! has one, `hlo-diff doctor` prints it, and `hlo-diff recheck` warns when the host that
//! rechecks a finding differs from the one that found it ([`differences`]).
//!
//! - The CPU comes from `/proc/cpuinfo` ([`parse_cpuinfo`]: model name, vendor, logical
//!   processors, the [`VECTOR_FEATURES`] among its flags); elsewhere from CPUID on x86-64 and
//!   the standard library's feature detection on AArch64 ([`cpu`]).
//! - The GPU comes from the CUDA driver API through `cudarc`, loaded at run time: no CUDA is
//!   needed to build, and without a driver library (or a device) [`gpu`] is `None` at once.
//! - The versions come from the XLA worker's greeting (`WorkerPool::info`), passed in.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

/// The CPU flags that change what XLA CPU's generated code computes or how (vector widths,
/// native half/bfloat16 arithmetic and conversions, matrix units), as Linux's `/proc/cpuinfo`
/// spells them (x86 `flags`, AArch64 `Features`). Reported in this order.
pub const VECTOR_FEATURES: &[&str] = &[
    // x86-64
    "sse4_1",
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx512f",
    "avx512dq",
    "avx512cd",
    "avx512bw",
    "avx512vl",
    "avx512ifma",
    "avx512vbmi",
    "avx512_vbmi2",
    "avx512_vnni",
    "avx512_bitalg",
    "avx512_vpopcntdq",
    "avx512_bf16",
    "avx512_fp16",
    "avx_vnni",
    "avx_vnni_int8",
    "avx_ne_convert",
    "avx_ifma",
    "amx_tile",
    "amx_int8",
    "amx_bf16",
    "amx_fp16",
    "amx_complex",
    // AArch64
    "asimd",
    "fphp",
    "asimdhp",
    "asimddp",
    "asimdfhm",
    "bf16",
    "i8mm",
    "sve",
    "sve2",
    "svebf16",
    "svei8mm",
    "sme",
];

/// The host CPU.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cpu {
    /// `model name` (x86), or the implementer and part (AArch64); `unknown` when nothing says.
    pub model: String,
    /// `vendor_id` (x86), `CPU implementer` (AArch64), or the architecture.
    pub vendor: String,
    /// Logical processors.
    pub cores: usize,
    /// The [`VECTOR_FEATURES`] this CPU has, in that order.
    pub features: Vec<String>,
}

/// Parses the text of Linux's `/proc/cpuinfo` (x86-64 or AArch64 layout). `cores` counts the
/// `processor` entries (0 when there are none; [`cpu`] then asks the standard library).
pub fn parse_cpuinfo(text: &str) -> Cpu {
    let mut model = None;
    let mut vendor = None;
    let mut implementer = None;
    let mut part = None;
    let mut flags: Option<Vec<&str>> = None;
    let mut cores = 0;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let (key, value) = (key.trim(), value.trim());
        match key {
            "processor" => cores += 1,
            "model name" | "Model name" if model.is_none() => model = Some(value.to_string()),
            "vendor_id" if vendor.is_none() => vendor = Some(value.to_string()),
            "CPU implementer" if implementer.is_none() => implementer = Some(value.to_string()),
            "CPU part" if part.is_none() => part = Some(value.to_string()),
            "flags" | "Features" if flags.is_none() => {
                flags = Some(value.split_whitespace().collect())
            }
            _ => {}
        }
    }
    let flags = flags.unwrap_or_default();
    let model = model
        .or_else(|| match (&implementer, &part) {
            (Some(i), Some(p)) => Some(format!("implementer {i} part {p}")),
            _ => None,
        })
        .unwrap_or_else(|| "unknown".to_string());
    let vendor = vendor
        .or_else(|| implementer.map(|i| arm_implementer(&i)))
        .unwrap_or_else(|| "unknown".to_string());
    Cpu {
        model,
        vendor,
        cores,
        features: VECTOR_FEATURES
            .iter()
            .filter(|f| flags.contains(f))
            .map(|f| f.to_string())
            .collect(),
    }
}

/// The name of an AArch64 `CPU implementer` code (the common ones), else the code.
fn arm_implementer(code: &str) -> String {
    match code.to_ascii_lowercase().as_str() {
        "0x41" => "ARM".into(),
        "0x42" => "Broadcom".into(),
        "0x43" => "Cavium".into(),
        "0x46" => "Fujitsu".into(),
        "0x48" => "HiSilicon".into(),
        "0x4e" => "NVIDIA".into(),
        "0x51" => "Qualcomm".into(),
        "0x61" => "Apple".into(),
        "0xc0" => "Ampere".into(),
        _ => format!("implementer {code}"),
    }
}

/// This host's CPU (read once): `/proc/cpuinfo` where there is one, else what the CPU itself
/// says (CPUID on x86-64, feature detection on AArch64).
pub fn cpu() -> Cpu {
    static CPU: OnceLock<Cpu> = OnceLock::new();
    CPU.get_or_init(|| {
        let logical = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        match std::fs::read_to_string("/proc/cpuinfo") {
            Ok(text) if !text.trim().is_empty() => {
                let mut c = parse_cpuinfo(&text);
                if c.cores == 0 {
                    c.cores = logical;
                }
                c
            }
            _ => Cpu {
                cores: logical,
                ..detected_cpu()
            },
        }
    })
    .clone()
}

#[cfg(target_arch = "x86_64")]
fn detected_cpu() -> Cpu {
    use std::arch::x86_64::__cpuid;
    // `__cpuid` is an unsafe fn in older Rust and a safe one in recent releases.
    #[allow(unused_unsafe)]
    let leaf = |l: u32| unsafe { __cpuid(l) };
    let bytes = |rs: [u32; 4]| -> Vec<u8> { rs.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let l0 = leaf(0);
    let vendor = String::from_utf8_lossy(&bytes([l0.ebx, l0.edx, l0.ecx, 0])[..12]).into_owned();
    let model = if leaf(0x8000_0000).eax >= 0x8000_0004 {
        let bytes: Vec<u8> = (0x8000_0002u32..=0x8000_0004)
            .flat_map(|l| {
                let r = leaf(l);
                bytes([r.eax, r.ebx, r.ecx, r.edx])
            })
            .collect();
        String::from_utf8_lossy(&bytes)
            .trim_matches(char::from(0))
            .trim()
            .to_string()
    } else {
        "unknown".to_string()
    };
    macro_rules! has {
        ($($name:tt => $flag:literal),* $(,)?) => {{
            let mut v: Vec<&str> = Vec::new();
            $(if std::arch::is_x86_feature_detected!($name) { v.push($flag); })*
            v
        }};
    }
    let mut found = has!(
        "sse4.1" => "sse4_1", "sse4.2" => "sse4_2", "avx" => "avx", "avx2" => "avx2",
        "fma" => "fma", "f16c" => "f16c", "avx512f" => "avx512f", "avx512dq" => "avx512dq",
        "avx512cd" => "avx512cd", "avx512bw" => "avx512bw", "avx512vl" => "avx512vl",
    );
    if interp::host::HostCpu::detect().avx512fp16 {
        found.push("avx512_fp16");
    }
    Cpu {
        model,
        vendor,
        cores: 0,
        features: VECTOR_FEATURES
            .iter()
            .filter(|f| found.contains(f))
            .map(|f| f.to_string())
            .collect(),
    }
}

#[cfg(target_arch = "aarch64")]
fn detected_cpu() -> Cpu {
    macro_rules! has {
        ($($name:tt => $flag:literal),* $(,)?) => {{
            let mut v: Vec<&str> = Vec::new();
            $(if std::arch::is_aarch64_feature_detected!($name) { v.push($flag); })*
            v
        }};
    }
    let found = has!(
        "neon" => "asimd", "fp16" => "asimdhp", "dotprod" => "asimddp", "bf16" => "bf16",
        "i8mm" => "i8mm", "sve" => "sve", "sve2" => "sve2",
    );
    Cpu {
        model: "unknown".into(),
        vendor: "aarch64".into(),
        cores: 0,
        features: VECTOR_FEATURES
            .iter()
            .filter(|f| found.contains(f))
            .map(|f| f.to_string())
            .collect(),
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
fn detected_cpu() -> Cpu {
    Cpu {
        model: "unknown".into(),
        vendor: std::env::consts::ARCH.into(),
        cores: 0,
        features: Vec::new(),
    }
}

/// The first CUDA device, as the driver describes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Gpu {
    pub name: String,
    /// `major.minor`, e.g. `9.0`.
    pub compute_capability: String,
    pub memory_bytes: u64,
    /// The kernel driver's release (`/proc/driver/nvidia/version`, e.g. `550.54.15`), else the
    /// CUDA version the driver supports.
    pub driver_version: String,
    /// The CUDA version the driver supports (`cuDriverGetVersion`), e.g. `12.4`.
    pub cuda_driver_api: String,
    /// CUDA devices on this host.
    pub count: usize,
}

/// The first CUDA device through the driver library, loaded at run time (`cudarc`); `None`
/// without a driver library, a device, or an answer within 20 s. Never fails (see
/// [`gpu_probe`] for why it is `None`).
pub fn gpu() -> Option<Gpu> {
    gpu_probe().unwrap_or(None)
}

const PROBE_THREAD: &str = "hlo-diff-gpu-probe";

/// [`gpu`], with the reason when a driver library was there but could not be used: a symbol
/// missing from an old driver (older than CUDA 12.0), or no answer within 20 s. `Ok(None)`: no
/// driver library, or no device.
pub fn gpu_probe() -> Result<Option<Gpu>, String> {
    // A panic inside cudarc (a missing symbol) is caught and becomes the reason; the probe
    // thread's panics are not printed.
    static QUIET: OnceLock<()> = OnceLock::new();
    QUIET.get_or_init(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if std::thread::current().name() != Some(PROBE_THREAD) {
                previous(info)
            }
        }));
    });
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name(PROBE_THREAD.into())
        .spawn(move || {
            let r = std::panic::catch_unwind(probe_gpu).map_err(|p| {
                let why = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "a panic".into());
                format!("the CUDA driver library could not be used: {why}")
            });
            let _ = tx.send(r);
        })
        .map_err(|e| format!("cannot start the GPU probe: {e}"))?;
    match rx.recv_timeout(Duration::from_secs(20)) {
        Ok(r) => r,
        Err(_) => Err("the CUDA driver did not answer within 20 s".into()),
    }
}

fn probe_gpu() -> Option<Gpu> {
    use cudarc::driver::{result, sys};
    // SAFETY: only tries to open the library (dlopen), nothing is called.
    if !unsafe { sys::is_culib_present() } {
        return None;
    }
    result::init().ok()?;
    let count = result::device::get_count().ok()?;
    if count < 1 {
        return None;
    }
    let dev = result::device::get(0).ok()?;
    let name = result::device::get_name(dev).ok()?;
    use sys::CUdevice_attribute::{
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR as MAJOR,
        CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR as MINOR,
    };
    // SAFETY: `dev` came from `device::get`.
    let (major, minor, memory) = unsafe {
        (
            result::device::get_attribute(dev, MAJOR).ok()?,
            result::device::get_attribute(dev, MINOR).ok()?,
            result::device::total_mem(dev).ok()?,
        )
    };
    let mut v: std::ffi::c_int = 0;
    // SAFETY: writes one int.
    let cuda = match unsafe { sys::cuDriverGetVersion(&mut v) }.result() {
        Ok(()) => format!("{}.{}", v / 1000, (v % 1000) / 10),
        Err(_) => "unknown".into(),
    };
    Some(Gpu {
        name,
        compute_capability: format!("{major}.{minor}"),
        memory_bytes: memory as u64,
        driver_version: nvidia_kernel_driver().unwrap_or_else(|| cuda.clone()),
        cuda_driver_api: cuda,
        count: count as usize,
    })
}

/// The NVIDIA kernel module's release from `/proc/driver/nvidia/version` (Linux).
fn nvidia_kernel_driver() -> Option<String> {
    let text = std::fs::read_to_string("/proc/driver/nvidia/version").ok()?;
    parse_nvidia_version(&text)
}

/// `NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 ...` -> `550.54.15`.
fn parse_nvidia_version(text: &str) -> Option<String> {
    let line = text.lines().find(|l| l.starts_with("NVRM version"))?;
    line.split_whitespace()
        .find(|w| {
            w.contains('.')
                && w.chars().next().is_some_and(|c| c.is_ascii_digit())
                && w.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
        .map(str::to_string)
}

/// The XLA flags in effect.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct XlaFlags {
    /// The `XLA_FLAGS` environment variable (the workers inherit it), `None` when unset.
    pub env: Option<String>,
    /// The environment every XLA worker is started with ([`crate::worker::worker_env`]).
    pub worker_env: BTreeMap<String, String>,
    /// DebugOptions set on every compile (`--xla-option name=value`).
    pub options: Vec<(String, String)>,
}

/// What `interp::host` decided: the host the oracle imitates.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OracleHost {
    pub avx512fp16: bool,
    /// How the oracle narrows f64 to f16: `direct` (one rounding) or `via-f32`.
    pub narrowing: String,
    /// `cpu` (detected), or `HLO_DIFF_ORACLE_HOST=<value>`.
    pub source: String,
}

impl OracleHost {
    pub fn get() -> OracleHost {
        let host = interp::host::HostCpu::get();
        let source = match std::env::var(interp::host::HOST_ENV) {
            Ok(v) if interp::host::HostCpu::parse(&v).is_some() && v.trim() != "detect" => {
                format!("{}={v}", interp::host::HOST_ENV)
            }
            _ => "cpu".into(),
        };
        OracleHost {
            avx512fp16: host.avx512fp16,
            narrowing: match host.narrowing() {
                interp::variant::Narrowing::Direct => "direct",
                interp::variant::Narrowing::ViaF32 => "via-f32",
            }
            .into(),
            source,
        }
    }
}

/// The Python the XLA workers run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Python {
    pub executable: String,
    /// `None` when no worker could start.
    pub version: Option<String>,
    pub numpy: Option<String>,
    pub ml_dtypes: Option<String>,
}

/// The operating system.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Os {
    pub os: String,
    pub arch: String,
    /// The kernel release (`/proc/sys/kernel/osrelease`), when there is one.
    pub kernel: Option<String>,
}

impl Os {
    pub fn get() -> Os {
        Os {
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
            kernel: std::fs::read_to_string("/proc/sys/kernel/osrelease")
                .ok()
                .map(|s| s.trim().to_string()),
        }
    }
}

/// Everything about where a result was obtained (see the module documentation). Its JSON is
/// what `hlo-diff doctor --json` prints, a finding's `meta.environment` and a campaign report's
/// `environment`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    /// `None` when no worker could start.
    pub jax: Option<String>,
    pub jaxlib: Option<String>,
    pub python: Python,
    pub cpu: Cpu,
    pub xla_flags: XlaFlags,
    pub gpu: Option<Gpu>,
    pub oracle_host: OracleHost,
    pub os: Os,
    /// The `pjrt` backend's plugin, when a campaign or command ran one (`None` otherwise, and
    /// then left out of the JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pjrt: Option<Pjrt>,
}

/// A PJRT plugin as its worker greeted: where it was loaded from, its platform and the C API
/// version it implements, and the attributes it reports (`xla_version`, StableHLO versions).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Pjrt {
    pub plugin: String,
    pub platform: String,
    pub platform_version: String,
    pub pjrt_api_version: String,
    #[serde(default)]
    pub attributes: BTreeMap<String, String>,
}

impl Pjrt {
    /// From the PJRT worker's greeting (`"api": "pjrt"`); `None` for any other.
    pub fn of_hello(hello: &Value) -> Option<Pjrt> {
        if hello.get("api").and_then(Value::as_str) != Some("pjrt") {
            return None;
        }
        let s = |k: &str| {
            hello
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        Some(Pjrt {
            plugin: s("plugin"),
            platform: s("platform"),
            platform_version: s("platform_version"),
            pjrt_api_version: s("pjrt_api_version"),
            attributes: hello
                .get("plugin_attributes")
                .and_then(Value::as_object)
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or("").to_string()))
                        .collect()
                })
                .unwrap_or_default(),
        })
    }
}

impl Environment {
    /// The environment with the `pjrt` backend's plugin from `Engines::check_available`'s
    /// answer (keyed by backend name), when it holds one.
    pub fn with_pjrt(mut self, xla_info: &Value) -> Environment {
        self.pjrt = xla_info.get("pjrt").and_then(Pjrt::of_hello);
        self
    }

    /// This host's environment; `hello` is an XLA worker's greeting (`WorkerPool::info`, or
    /// [`hello_of`] of `Engines::check_available`'s answer), `None` when none started;
    /// `python` the Python the workers were asked to run; `xla_options` the DebugOptions set on
    /// every compile.
    pub fn capture(
        python: &Path,
        hello: Option<&Value>,
        xla_options: &[(String, String)],
    ) -> Environment {
        let field = |k: &str| {
            hello
                .and_then(|h| h.get(k))
                .and_then(Value::as_str)
                .map(str::to_string)
        };
        Environment {
            jax: field("jax"),
            jaxlib: field("jaxlib"),
            python: Python {
                executable: field("executable").unwrap_or_else(|| python.display().to_string()),
                version: field("python"),
                numpy: field("numpy"),
                ml_dtypes: field("ml_dtypes"),
            },
            cpu: cpu(),
            xla_flags: XlaFlags {
                env: std::env::var("XLA_FLAGS").ok(),
                worker_env: crate::worker::worker_env(crate::worker::Platform::Cpu)
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
                options: xla_options.to_vec(),
            },
            gpu: gpu(),
            oracle_host: OracleHost::get(),
            os: Os::get(),
            pjrt: hello.and_then(Pjrt::of_hello),
        }
    }

    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// The greeting of the CPU worker in `Engines::check_available`'s answer (keyed by backend
/// name), else of any XLA backend; `None` when there is none.
pub fn hello_of(xla_info: &Value) -> Option<&Value> {
    let m = xla_info.as_object()?;
    m.get("xla-cpu").or_else(|| {
        m.values()
            .find(|v| v.is_object() && v.get("api").and_then(Value::as_str) != Some("pjrt"))
            .or_else(|| m.values().find(|v| v.is_object()))
    })
}

/// How the environment a result was found in (`found`, an [`Environment`]'s JSON) differs from
/// `now`'s in what can change XLA's results: vector features the CPU had or lacked, the jaxlib
/// version, the host the oracle imitated. One sentence each; empty when either side does not
/// say.
pub fn differences(found: &Value, now: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let features = |v: &Value| -> Option<Vec<String>> {
        Some(
            v.get("cpu")?
                .get("features")?
                .as_array()?
                .iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect(),
        )
    };
    if let (Some(a), Some(b)) = (features(found), features(now)) {
        let lost: Vec<&str> = a
            .iter()
            .filter(|f| !b.contains(f))
            .map(String::as_str)
            .collect();
        let gained: Vec<&str> = b
            .iter()
            .filter(|f| !a.contains(f))
            .map(String::as_str)
            .collect();
        if !lost.is_empty() {
            out.push(format!(
                "found on a host with {}, rechecked on one without",
                lost.join(", ")
            ));
        }
        if !gained.is_empty() {
            out.push(format!(
                "found on a host without {}, rechecked on one with",
                gained.join(", ")
            ));
        }
    }
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let pjrt = |v: &Value, k: &str| -> Option<String> {
        let p = v.get("pjrt")?;
        let x = p.get(k).or_else(|| p.get("attributes")?.get(k))?;
        x.as_str().map(str::to_string)
    };
    for k in ["plugin", "pjrt_api_version", "xla_version"] {
        if let (Some(a), Some(b)) = (pjrt(found, k), pjrt(now, k)) {
            if a != b {
                out.push(format!("found with PJRT {k} {a}, rechecked with {b}"));
            }
        }
    }
    if let (Some(a), Some(b)) = (text(found, "jaxlib"), text(now, "jaxlib")) {
        if a != b {
            out.push(format!("found with jaxlib {a}, rechecked with jaxlib {b}"));
        }
    }
    let fp16 = |v: &Value| v.get("oracle_host")?.get("avx512fp16")?.as_bool();
    if let (Some(a), Some(b)) = (fp16(found), fp16(now)) {
        if a != b {
            let with = |x: bool| if x { "with" } else { "without" };
            out.push(format!(
                "the oracle imitated a host {} AVX512-FP16 when it was found, one {} now",
                with(a),
                with(b)
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const X86: &str = include_str!("../tests/data/cpuinfo-x86_64.txt");
    const AARCH64: &str = include_str!("../tests/data/cpuinfo-aarch64.txt");

    #[test]
    fn parses_an_x86_cpuinfo() {
        let c = parse_cpuinfo(X86);
        assert_eq!(c.model, "Intel(R) Xeon(R) Processor");
        assert_eq!(c.vendor, "GenuineIntel");
        assert_eq!(c.cores, 2);
        for f in [
            "avx2",
            "avx512f",
            "avx512_bf16",
            "avx512_fp16",
            "amx_bf16",
            "amx_tile",
        ] {
            assert!(c.features.iter().any(|x| x == f), "{f}: {:?}", c.features);
        }
        // Only vector features, in the table's order; nothing AArch64 on x86.
        assert!(!c.features.iter().any(|x| x == "sse2" || x == "asimd"));
        let pos = |f: &str| c.features.iter().position(|x| x == f).unwrap();
        assert!(pos("avx2") < pos("avx512f") && pos("avx512f") < pos("avx512_fp16"));
    }

    #[test]
    fn parses_an_aarch64_cpuinfo() {
        let c = parse_cpuinfo(AARCH64);
        assert_eq!(c.model, "implementer 0x41 part 0xd40");
        assert_eq!(c.vendor, "ARM");
        assert_eq!(c.cores, 4);
        for f in ["asimd", "asimdhp", "bf16", "i8mm", "sve", "svebf16"] {
            assert!(c.features.iter().any(|x| x == f), "{f}: {:?}", c.features);
        }
        assert!(!c.features.iter().any(|x| x == "sve2" || x == "avx2"));
    }

    #[test]
    fn empty_or_odd_cpuinfo_is_unknown_not_a_panic() {
        let c = parse_cpuinfo("");
        assert_eq!((c.model.as_str(), c.cores), ("unknown", 0));
        assert!(c.features.is_empty());
        let c = parse_cpuinfo("garbage\n::\nflags\t:\nprocessor : x\n");
        assert_eq!(c.cores, 1);
    }

    #[test]
    fn this_host_reads_like_its_cpuinfo() {
        let c = cpu();
        assert!(c.cores >= 1);
        if let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") {
            assert_eq!(c.features, parse_cpuinfo(&text).features);
        }
        // The oracle's host detection and the reported features agree.
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            interp::host::HostCpu::detect().avx512fp16,
            c.features.iter().any(|f| f == "avx512_fp16")
        );
    }

    /// Where there is no `/proc/cpuinfo`, CPUID says the same (for the features it checks).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_cpuid_fallback_agrees_with_cpuinfo() {
        let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let (from_file, from_cpuid) = (parse_cpuinfo(&text), detected_cpu());
        assert_eq!(from_cpuid.vendor, from_file.vendor);
        assert!(!from_cpuid.model.is_empty());
        for f in &from_cpuid.features {
            assert!(from_file.features.contains(f), "{f}: {from_file:?}");
        }
        for f in ["avx2", "avx512f", "avx512_fp16"] {
            assert_eq!(
                from_cpuid.features.iter().any(|x| x == f),
                from_file.features.iter().any(|x| x == f),
                "{f}"
            );
        }
    }

    #[test]
    fn nvidia_driver_version_line() {
        let t = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\nGCC version:  gcc version 12.2.0\n";
        assert_eq!(parse_nvidia_version(t).as_deref(), Some("550.54.15"));
        assert_eq!(parse_nvidia_version("nothing"), None);
    }

    #[test]
    fn gpu_probe_never_fails() {
        // Without a driver library this is `None`; with one, a device or `None`. (How long the
        // probe takes is no test's business: benches measure time.)
        if let Some(g) = gpu() {
            assert!(g.count >= 1 && g.memory_bytes > 0, "{g:?}");
        }
    }

    #[test]
    fn differences_name_features_and_versions() {
        let found = json!({"jaxlib": "0.10.2", "cpu": {"features": ["avx2", "avx512_fp16"]},
                           "oracle_host": {"avx512fp16": true}});
        let now = json!({"jaxlib": "0.10.3", "cpu": {"features": ["avx2", "amx_bf16"]},
                         "oracle_host": {"avx512fp16": false}});
        let d = differences(&found, &now);
        assert!(
            d.contains(&"found on a host with avx512_fp16, rechecked on one without".to_string()),
            "{d:?}"
        );
        assert!(
            d.contains(&"found on a host without amx_bf16, rechecked on one with".to_string()),
            "{d:?}"
        );
        assert!(
            d.contains(&"found with jaxlib 0.10.2, rechecked with jaxlib 0.10.3".to_string()),
            "{d:?}"
        );
        assert_eq!(d.len(), 4, "{d:?}");
        assert!(differences(&found, &found).is_empty());
        // A finding stored before environments were recorded: nothing to compare.
        assert!(differences(&Value::Null, &now).is_empty());
    }

    #[test]
    fn capture_reads_the_worker_greeting() {
        let hello = json!({"jax": "0.10.2", "jaxlib": "0.10.2", "python": "3.11.9",
                           "executable": "/x/python", "numpy": "2.0"});
        let e = Environment::capture(Path::new("/y/python"), Some(&hello), &[]);
        assert_eq!(e.jax.as_deref(), Some("0.10.2"));
        assert_eq!(e.python.executable, "/x/python");
        let v = e.to_json();
        for k in [
            "jax",
            "jaxlib",
            "python",
            "cpu",
            "xla_flags",
            "gpu",
            "oracle_host",
        ] {
            assert!(v.get(k).is_some(), "{k}: {v}");
        }
        let e = Environment::capture(Path::new("/y/python"), None, &[]);
        assert_eq!(e.jax, None);
        assert_eq!(e.python.executable, "/y/python");
        assert_eq!(
            hello_of(&json!({"stablehlo-ref": {"jax": "a"}, "xla-cpu": {"jax": "b"}})).unwrap()
                ["jax"],
            "b"
        );
    }
}
