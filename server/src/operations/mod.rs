//! Running the server: its configuration and limits, startup checks, logging, metrics, the
//! board images it serves, and the rate limits (`budget`) every part counts against.

pub mod boards;
pub(crate) mod budget;
pub mod config;
pub mod logging;
pub mod metrics;
pub mod startup;
