//! `hlo-diff doctor`: the environment results depend on — Python, jax and jaxlib versions (from
//! an XLA CPU worker's greeting), the CPU model and vector features, the XLA flags, the GPU,
//! and the host the oracle imitates (`interp::host`). `--json` prints
//! `engine::environment::Environment` as one object: the shape every finding keeps in
//! `meta.environment`.
//!
//! It also starts the `pjrt` backend's worker and records its plugin's path, platform and PJRT
//! C API version (`pjrt` in the JSON; `pjrt_unavailable` with the reason when it cannot run).
//!
//! Exit 0; 3 when no worker can start (no Python, or no jax/jaxlib in it), with the install
//! command, after printing what could be found without one.

use super::{print_json, Exit, Failure, Global};
use engine::environment::Environment;
use engine::worker::{Platform, WorkerBackend, WorkerConfig};

#[derive(Debug, clap::Args)]
pub struct Args {}

pub fn run(_args: Args, global: &Global) -> Result<Exit, Failure> {
    let cfg = WorkerConfig::new(Platform::Cpu)
        .with_python(global.python.clone())
        .with_workers(1);
    let python = cfg.python.clone();
    let (hello, missing) = match WorkerBackend::xla_cpu(cfg).info() {
        Ok(h) => (Some(h), None),
        Err(engine::backend::Outcome::Unavailable { why }) => (None, Some(why)),
        Err(o) => (
            None,
            Some(format!(
                "the XLA worker failed at start-up: {o}\n  install: {}",
                engine::worker::INSTALL_HINT
            )),
        ),
    };
    let mut env = Environment::capture(&python, hello.as_ref(), &[]);
    // The `pjrt` backend's plugin (--pjrt-plugin, $HLO_DIFF_PJRT_PLUGIN, else the one
    // scripts/setup installs): its worker's greeting, or why it cannot start (no exit 3: the
    // jaxlib backends do not need it).
    let plugin = engine::worker::default_pjrt_plugin();
    let pjrt_missing =
        match WorkerBackend::pjrt(WorkerConfig::new(Platform::Cpu).with_workers(1)).info() {
            Ok(h) => {
                env.pjrt = engine::environment::Pjrt::of_hello(&h);
                None
            }
            Err(o) => Some(format!("{}: {o}", plugin.display())),
        };
    if global.json {
        let mut j = env.to_json();
        if let (Some(why), Some(m)) = (&pjrt_missing, j.as_object_mut()) {
            m.insert("pjrt_unavailable".into(), serde_json::json!(why));
        }
        print_json(&j);
    } else {
        out!("{}", text(&env));
        match (&env.pjrt, &pjrt_missing) {
            (Some(p), _) => outln!(
                "pjrt         {} (platform {}, PJRT C API {}, xla_version {})",
                p.plugin,
                p.platform,
                p.pjrt_api_version,
                p.attributes
                    .get("xla_version")
                    .map(String::as_str)
                    .unwrap_or("-")
            ),
            (None, Some(why)) => outln!("pjrt         unavailable: {why}"),
            (None, None) => {}
        }
    }
    match missing {
        None => Ok(Exit::Clean),
        Some(why) => Err(Failure::infrastructure(format!(
            "no XLA worker could start, so jax/jaxlib are unknown: {why}"
        ))),
    }
}

/// The human-readable form.
fn text(e: &Environment) -> String {
    use std::fmt::Write;
    let or = |v: &Option<String>, d: &str| v.clone().unwrap_or_else(|| d.to_string());
    let mut s = String::new();
    let _ = writeln!(
        s,
        "python       {} ({})",
        e.python.executable,
        or(&e.python.version, "cannot start")
    );
    let _ = writeln!(s, "jax          {}", or(&e.jax, "-"));
    let _ = writeln!(s, "jaxlib       {}", or(&e.jaxlib, "-"));
    let _ = writeln!(
        s,
        "cpu          {} ({}, {} logical cores)",
        e.cpu.model, e.cpu.vendor, e.cpu.cores
    );
    let _ = writeln!(
        s,
        "features     {}",
        if e.cpu.features.is_empty() {
            "(none of the vector features hlo-diff tracks)".to_string()
        } else {
            e.cpu.features.join(" ")
        }
    );
    let _ = writeln!(
        s,
        "oracle host  {} AVX512-FP16 (f64->f16 {}; from {})",
        if e.oracle_host.avx512fp16 {
            "with"
        } else {
            "without"
        },
        if e.oracle_host.narrowing == "direct" {
            "rounds once"
        } else {
            "rounds through f32"
        },
        e.oracle_host.source
    );
    let _ = writeln!(
        s,
        "XLA_FLAGS    {}",
        e.xla_flags.env.as_deref().unwrap_or("(unset)")
    );
    let worker_env: Vec<String> = e
        .xla_flags
        .worker_env
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let _ = writeln!(s, "worker env   {}", worker_env.join(" "));
    match &e.gpu {
        Some(g) => {
            let _ = writeln!(
                s,
                "gpu          {} x{} (compute capability {}, {:.1} GiB, driver {}, CUDA {})",
                g.name,
                g.count,
                g.compute_capability,
                g.memory_bytes as f64 / (1u64 << 30) as f64,
                g.driver_version,
                g.cuda_driver_api
            );
        }
        None => match engine::environment::gpu_probe() {
            Err(why) => {
                let _ = writeln!(s, "gpu          none ({why})");
            }
            Ok(_) => {
                let _ = writeln!(s, "gpu          none (no CUDA driver library or device)");
            }
        },
    }
    let _ = writeln!(
        s,
        "os           {} {}{}",
        e.os.os,
        e.os.arch,
        e.os.kernel
            .as_deref()
            .map(|k| format!(", kernel {k}"))
            .unwrap_or_default()
    );
    s
}
