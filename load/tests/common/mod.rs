//! The `asl-server` binary the drills run. It belongs to another package, so cargo does not
//! build it for this one's tests (`CARGO_BIN_EXE_*` names only this package's binaries): it is
//! built here, beside `asl-load`, with the same profile — a no-op when it is up to date, as it
//! is after `cargo test --workspace`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub fn server_bin() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let load = Path::new(env!("CARGO_BIN_EXE_asl-load"));
        let profile_dir = load
            .parent()
            .expect("asl-load lies in a profile's directory");
        let mut build = Command::new(std::env::var_os("CARGO").unwrap_or("cargo".into()));
        build.args([
            "build",
            "--quiet",
            "-p",
            "asl-server",
            "--bin",
            "asl-server",
        ]);
        // The target directory holding the profile's, so the server lands beside asl-load.
        if let Some(target_dir) = profile_dir.parent() {
            build.arg("--target-dir").arg(target_dir);
        }
        match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => {}
            Some("release") => {
                build.arg("--release");
            }
            Some(profile) => {
                build.args(["--profile", profile]);
            }
            None => panic!("asl-load at {} has no profile directory", load.display()),
        }
        let status = build.status().expect("run cargo to build asl-server");
        assert!(status.success(), "building asl-server failed: {status}");
        let server = load.with_file_name("asl-server");
        assert!(server.is_file(), "no asl-server at {}", server.display());
        server
    })
}
