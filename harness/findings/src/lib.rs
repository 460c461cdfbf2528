//! Layer 3 of the harness: what is kept of a finding.
//!
//! The findings store ([`store`]: on disk first, atomic, deduplicated by signature, resumable),
//! hlo-diff's literal file format, repro directories ([`repro`]) and campaign reports
//! ([`report`], fed by [`summary::CampaignSummary`]).

pub mod bucket;
pub mod inputs;
pub mod registry;
pub mod report;
pub mod repro;
pub mod store;
pub mod summary;
pub mod timings;
