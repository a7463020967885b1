//! A real full disk, not a simulated one: appends until the filesystem refuses them, then
//! frees space and checks that the store resumes without a restart, reads having gone on
//! meanwhile without the refused write, and that the reopened log is whole. Needs a small
//! filesystem of its own, so it is ignored by default; as root:
//!
//! ```sh
//! mkdir -p /tmp/fullfs && mount -t tmpfs -o size=3m tmpfs /tmp/fullfs
//! FULL_DIR=/tmp/fullfs/data cargo test -p asl-server --test full_disk -- --ignored --nocapture
//! ```
//!
//! The everyday test of the same path (with the failure injected) is in
//! `server/src/store/sled_store.rs`.

use server::store::{EventStore, SledStore};
#[test]
#[ignore = "needs a small filesystem of its own: see the module comment"]
fn a_full_disk_is_survived_without_a_restart() {
    let dir = std::path::PathBuf::from(std::env::var("FULL_DIR").unwrap());
    let filler = dir.parent().unwrap().join("filler");
    let g = [3u8; 16];
    let mut seq = 1;
    {
        let store = SledStore::open(&dir).unwrap();
        let avail = 600 * 1024;
        let statfs_free = fs_free(dir.parent().unwrap());
        std::fs::write(&filler, vec![0u8; (statfs_free - avail) as usize]).unwrap();
        let err = loop {
            match store.append(&g, seq, vec![vec![seq as u8; 1000]]).wait() {
                Ok(()) => seq += 1,
                Err(e) => break e,
            }
            assert!(seq < 100_000);
        };
        println!("failed after {} appends: {err}", seq - 1);
        let again = store.append(&g, seq, vec![vec![1; 1000]]).wait();
        println!("while full: {again:?}");
        assert_eq!(
            store.load(&g).unwrap().len() as u64,
            seq - 1,
            "reads while full hold what was acknowledged"
        );
        std::fs::remove_file(&filler).unwrap();
        for _ in 0..5 {
            store
                .append(&g, seq, vec![vec![seq as u8; 1000]])
                .wait()
                .unwrap();
            seq += 1;
        }
        println!("resumed; log ends at {}", seq - 1);
    }
    let store = SledStore::open(&dir).unwrap();
    let log = store.load(&g).unwrap();
    assert_eq!(log.len() as u64, seq - 1);
    assert!(log.iter().enumerate().all(|(i, (s, _))| *s == i as u64 + 1));
    println!("reopened: {} records, in order", log.len());
}
/// Bytes free on the filesystem holding `p`, from `df`.
fn fs_free(p: &std::path::Path) -> u64 {
    let out = std::process::Command::new("df")
        .arg("-B1")
        .arg("--output=avail")
        .arg(p)
        .output()
        .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}
