//! The reference interpreter (oracle).
