//! The host CPU features XLA CPU's generated code depends on, in one place.
//!
//! XLA CPU compiles for the CPU it runs on (LLVM's host features), and a few results the
//! oracle imitates bit for bit change with them. The one that matters today is AVX512-FP16:
//! with it LLVM treats f16 as a native type, so XLA CPU
//!
//! - narrows f64 (and a c128's real part) to f16 with one rounding (`vcvtsd2sh`), where a host
//!   without it rounds through f32 first (two roundings): `1 + 2^-11 + 2^-40` is f16
//!   1.0009765625 with it and 1.0 without, 65519.99999999 is 65504 with it and inf without;
//! - gives `maximum`/`minimum` of f8e4m3fn, f8e4m3 and f8e3m4 (computed in f16) a NaN of the
//!   sign x86's native max/min leave: the first operand's sign when it is NaN, else for
//!   `maximum` negative only when both operands are negative, for `minimum` negative when
//!   either is; a host without it gives the positive quiet NaN of the type.
//!
//! Everything else measured agrees (f64 -> bf16 and integer -> bf16 go through f32 on both,
//! f64 -> f8 rounds once on both); see KNOWN_DIFFERENCES.md, "What differs by host CPU".
//!
//! The oracle's default evaluation follows the host it runs on, decided once
//! ([`HostCpu::get`]): from the CPU, or from the environment variable `HLO_DIFF_ORACLE_HOST`
//! (`avx512fp16`, `no-avx512fp16` or `detect`), e.g. to match an XLA run with
//! `--xla_cpu_max_isa=AVX2`. [`crate::EvalOptions::host`] overrides it for one evaluation.

use crate::variant::Narrowing;
use std::sync::OnceLock;

/// The environment variable that overrides the detected host (see the module documentation).
pub const HOST_ENV: &str = "HLO_DIFF_ORACLE_HOST";

/// The features of the host CPU that change XLA CPU's results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HostCpu {
    /// AVX512-FP16 (CPUID leaf 7, subleaf 0, EDX bit 23; Sapphire Rapids and later): native
    /// f16 arithmetic and conversions.
    pub avx512fp16: bool,
}

impl HostCpu {
    /// A host with AVX512-FP16 (Sapphire Rapids and later).
    pub const AVX512FP16: HostCpu = HostCpu { avx512fp16: true };
    /// A host without it (older x86-64, with or without AVX-512).
    pub const NO_AVX512FP16: HostCpu = HostCpu { avx512fp16: false };

    /// The host the oracle runs on: `HLO_DIFF_ORACLE_HOST` if set (an unknown value is reported
    /// on stderr and ignored), else [`HostCpu::detect`]. Decided once per process.
    pub fn get() -> HostCpu {
        static HOST: OnceLock<HostCpu> = OnceLock::new();
        *HOST.get_or_init(|| match std::env::var(HOST_ENV) {
            Ok(s) => HostCpu::parse(&s).unwrap_or_else(|| {
                eprintln!(
                    "interp: ignoring {HOST_ENV}={s:?} (expected avx512fp16, no-avx512fp16 or \
                     detect); using the detected host"
                );
                HostCpu::detect()
            }),
            Err(_) => HostCpu::detect(),
        })
    }

    /// `avx512fp16`, `no-avx512fp16`, or `detect` (the CPU's own features).
    pub fn parse(s: &str) -> Option<HostCpu> {
        match s.trim().to_ascii_lowercase().as_str() {
            "avx512fp16" => Some(HostCpu::AVX512FP16),
            "no-avx512fp16" => Some(HostCpu::NO_AVX512FP16),
            "detect" | "" => Some(HostCpu::detect()),
            _ => None,
        }
    }

    /// The features of this CPU, as LLVM's host detection sees them.
    pub fn detect() -> HostCpu {
        HostCpu {
            avx512fp16: detect_avx512fp16(),
        }
    }

    /// How `convert` narrows f64, c128 and integers to f16 on this host.
    pub fn narrowing(&self) -> Narrowing {
        if self.avx512fp16 {
            Narrowing::Direct
        } else {
            Narrowing::ViaF32
        }
    }
}

#[cfg(target_arch = "x86_64")]
fn detect_avx512fp16() -> bool {
    // `is_x86_feature_detected!("avx512fp16")` needs Rust 1.89 (the workspace supports 1.85):
    // CPUID leaf 7 subleaf 0, EDX bit 23, with the OS's AVX-512 state support that the
    // avx512f/bw/vl checks include (AVX512-FP16 implies all three).
    if !(std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vl"))
    {
        return false;
    }
    // `__cpuid_count` is an unsafe fn in older Rust and a safe one in recent releases.
    #[allow(unused_unsafe)]
    let leaf7 = unsafe { std::arch::x86_64::__cpuid_count(7, 0) };
    leaf7.edx & (1 << 23) != 0
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_avx512fp16() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse() {
        assert_eq!(HostCpu::parse("avx512fp16"), Some(HostCpu::AVX512FP16));
        assert_eq!(
            HostCpu::parse(" No-AVX512FP16"),
            Some(HostCpu::NO_AVX512FP16)
        );
        assert_eq!(HostCpu::parse("detect"), Some(HostCpu::detect()));
        assert_eq!(HostCpu::parse("avx2"), None);
    }

    #[test]
    fn narrowing_follows_the_host() {
        assert_eq!(HostCpu::AVX512FP16.narrowing(), Narrowing::Direct);
        assert_eq!(HostCpu::NO_AVX512FP16.narrowing(), Narrowing::ViaF32);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn detection_agrees_with_cpuinfo() {
        // Linux lists the flag as `avx512_fp16`; elsewhere there is nothing to compare with.
        let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
            return;
        };
        let Some(flags) = info.lines().find(|l| l.starts_with("flags")) else {
            return;
        };
        let listed = flags.split_whitespace().any(|f| f == "avx512_fp16");
        assert_eq!(HostCpu::detect().avx512fp16, listed);
    }
}
