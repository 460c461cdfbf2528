//! The engine and tools.
