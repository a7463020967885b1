//! Running the server: its configuration and limits, startup checks, logging, metrics, the
//! board images it serves, the rate limits (`budget`) every part counts against, and the
//! server's time, which the game clocks are charged by (`clock`).

pub mod boards;
pub(crate) mod budget;
pub mod clock;
pub mod config;
pub mod logging;
pub mod metrics;
pub mod startup;
