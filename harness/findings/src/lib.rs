//! Layer 3 of the harness: what is kept of a finding.
//!
//! The findings store ([`store`]: on disk first, atomic, deduplicated by signature, resumable),
//! hlo-diff's literal file format, repro directories ([`repro`]) and campaign reports
//! ([`report`], fed by [`summary::CampaignSummary`]), and the time-to-bug measure over campaign
//! reports ([`time_to_bug`]), with the classes of bugs others reported publicly
//! ([`public_classes`]).

pub mod bucket;
pub mod fuzzing;
pub mod inputs;
pub mod public_classes;
pub mod registry;
pub mod report;
pub mod repro;
pub mod store;
pub mod summary;
pub mod time_to_bug;
pub mod timings;
