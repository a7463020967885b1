//! `asl-server salvage` (issue 36): a data directory damaged the ways a disk or an operator
//! damages one — bytes flipped in sled's log, the log cut short, `blobs/` gone, the journal
//! hurt, sled's files gone altogether — and every game whose chain still verifies copied into a
//! new directory a server starts on and serves as before. What salvage says it copied whole is
//! the game as it was (same log, same state hash); what it says it cut short or lost really
//! is; the damaged directory is never changed; and random damage never makes it panic.

mod common;

use common::{ask, copy_dir, join, Running};
use protocol::wire::{ClientMessage, ErrorCode, ServerMessage, Tokens};
use protocol::Command;
use server::operations::config::Config;
use server::store::salvage::{salvage, Outcome, SalvageError, SalvageReport};
use server::store::{envelope, EventStore, SledStore};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

/// One game as its players last saw it.
struct Played {
    game: String,
    tokens: Tokens,
    version: u64,
    state_hash: String,
    log: Vec<(u64, Vec<u8>)>,
}

fn version_and_hash(answer: &ServerMessage) -> (u64, String) {
    match answer {
        ServerMessage::Joined {
            version,
            state_hash,
            ..
        } => (*version, format!("{state_hash:?}")),
        other => panic!("expected joined, got {other:?}"),
    }
}

/// Four games of 1, 4, 5 and 6 events on a stopped server's data directory in `dir`.
async fn played(dir: &Path) -> Vec<Played> {
    let server = Running::start(Arc::new(SledStore::open(dir).unwrap()), Config::default()).await;
    let mut games = vec![];
    for dones in 0..4u64 {
        let (game, tokens) = common::create(&server.url, SCENARIO).await;
        for _ in 0..dones {
            // The German ends the RPh (whose two end steps pass by themselves here, B9.322:
            // three events), then the PFPh and the MPh (one each).
            let token = &tokens.side_a;
            let (mut ws, _) = join(&server.url, &game, token).await;
            let answer = ask(
                &mut ws,
                ClientMessage::Command {
                    id: 1,
                    command: Command::Done,
                    key: None,
                },
            )
            .await;
            assert!(
                matches!(answer, ServerMessage::Accepted { .. }),
                "{answer:?}"
            );
        }
        let (version, state_hash) =
            version_and_hash(&join(&server.url, &game, &tokens.side_a).await.1);
        assert_eq!(version, [1, 4, 5, 6][dones as usize]);
        games.push(Played {
            game,
            tokens,
            version,
            state_hash,
            log: vec![],
        });
    }
    server.stop().await;
    let store = SledStore::open(dir).unwrap();
    for played in &mut games {
        played.log = store
            .load(&envelope::game_key(&played.game).unwrap())
            .unwrap();
        assert_eq!(played.log.len() as u64, played.version);
    }
    games
}

/// Every file below `dir` with a hash of its bytes (a link's: of what it names) and its mode:
/// what "unchanged" means.
fn fingerprint(dir: &Path) -> BTreeMap<PathBuf, (u32, [u8; 32])> {
    use std::os::unix::fs::MetadataExt;
    let mut all = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).unwrap() {
            let entry = entry.unwrap();
            let meta = std::fs::symlink_metadata(entry.path()).unwrap();
            if meta.is_dir() {
                stack.push(entry.path());
                all.insert(entry.path(), (meta.mode(), [0; 32]));
            } else if meta.is_symlink() {
                // A link is what it names, never followed.
                let target = std::fs::read_link(entry.path()).unwrap();
                let named = blake3::hash(target.as_os_str().as_encoded_bytes());
                all.insert(entry.path(), (meta.mode(), *named.as_bytes()));
            } else {
                let bytes = std::fs::read(entry.path()).unwrap();
                all.insert(
                    entry.path(),
                    (meta.mode(), *blake3::hash(&bytes).as_bytes()),
                );
            }
        }
    }
    all
}

/// Salvages `damaged` into a new directory and checks, from the new store's own records, that
/// every game salvage kept is exactly a prefix of what was played (all of it when it says
/// intact, less when it says truncated), that a lost game is not there, and that `damaged` did
/// not change. Returns the report and the new directory.
fn salvage_checked(damaged: &Path, into: &Path, games: &[Played]) -> SalvageReport {
    let before = fingerprint(damaged);
    let report = salvage(damaged, into).unwrap_or_else(|e| panic!("salvage failed: {e}"));
    assert_eq!(
        fingerprint(damaged),
        before,
        "salvage changed the damaged directory"
    );
    let store = SledStore::open(into).unwrap();
    let held = store.games().unwrap();
    for played in games {
        let key = envelope::game_key(&played.game).unwrap();
        let log = store.load(&key).unwrap();
        let listed = held.iter().any(|(k, _)| *k == key);
        match report.outcome(&played.game) {
            Some(Outcome::Intact { events }) => {
                assert_eq!(*events, played.version, "{report}");
                assert_eq!(log, played.log, "{report}");
                assert!(listed);
            }
            Some(Outcome::Unconfirmed { events, .. }) => {
                assert_eq!(*events, log.len() as u64, "{report}");
                assert_eq!(log[..], played.log[..log.len()], "{report}");
                assert!(listed);
            }
            Some(Outcome::Truncated {
                events, claimed, ..
            }) => {
                assert!(events < claimed && *events < played.version, "{report}");
                assert_eq!(log[..], played.log[..*events as usize], "{report}");
                assert!(listed);
            }
            Some(Outcome::Lost { .. }) | None => {
                assert!(log.is_empty(), "{report}");
                assert!(!listed, "{report}");
            }
            Some(Outcome::Empty) => panic!("every game played has events: {report}"),
        }
    }
    // Nothing but the games played: no chain is invented.
    assert!(held.len() <= games.len());
    report
}

/// A server on the salvaged directory serves every game salvage copied whole at the version
/// and state hash its players last saw, and a truncated one at its kept length.
async fn served(into: &Path, games: &[Played], report: &SalvageReport) {
    let server = Running::start(Arc::new(SledStore::open(into).unwrap()), Config::default()).await;
    for played in games {
        let (_, answer) = join(&server.url, &played.game, &played.tokens.side_a).await;
        match report.outcome(&played.game) {
            Some(Outcome::Intact { .. }) => {
                let (version, hash) = version_and_hash(&answer);
                assert_eq!(
                    (version, &hash),
                    (played.version, &played.state_hash),
                    "{report}"
                );
            }
            Some(Outcome::Truncated { events, .. } | Outcome::Unconfirmed { events, .. }) => {
                assert_eq!(version_and_hash(&answer).0, *events, "{report}");
            }
            _ => assert!(
                matches!(
                    answer,
                    ServerMessage::Error {
                        code: ErrorCode::UnknownGame,
                        ..
                    }
                ),
                "{answer:?}"
            ),
        }
    }
    server.stop().await;
}

fn flip(path: &Path, offsets: &[u64]) {
    let mut bytes = std::fs::read(path).unwrap();
    for at in offsets {
        let at = (*at as usize).min(bytes.len() - 1);
        bytes[at] ^= 0x5a;
    }
    std::fs::write(path, bytes).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_game_that_still_verifies_is_salvaged_and_served() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let games = played(&data).await;
    let db_len = std::fs::metadata(data.join("db")).unwrap().len();

    type Damage = Box<dyn Fn(&Path)>;
    let damages: Vec<(&str, Damage)> = vec![
        ("nothing", Box::new(|_: &Path| {})),
        (
            "db bytes flipped at several offsets",
            Box::new(move |d: &Path| {
                flip(
                    &d.join("db"),
                    &[db_len / 7, db_len / 3, db_len / 2, db_len - 100],
                )
            }),
        ),
        (
            "db cut to half",
            Box::new(move |d: &Path| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .open(d.join("db"))
                    .unwrap()
                    .set_len(db_len / 2)
                    .unwrap()
            }),
        ),
        (
            "blobs gone",
            Box::new(|d: &Path| {
                let _ = std::fs::remove_dir_all(d.join("blobs"));
            }),
        ),
        (
            "journal bytes flipped",
            Box::new(|d: &Path| flip(&d.join("journal"), &[3, 9, 4096 * 2 + 40, 4096 * 5 + 7])),
        ),
        (
            "db gone",
            Box::new(|d: &Path| std::fs::remove_file(d.join("db")).unwrap()),
        ),
        (
            "db's first segment header garbage, journal gone",
            Box::new(|d: &Path| {
                let path = d.join("db");
                let mut bytes = std::fs::read(&path).unwrap();
                bytes[..64].fill(0xee);
                std::fs::write(&path, bytes).unwrap();
                std::fs::remove_file(d.join("journal")).unwrap();
                // The checkpoint manifest names every game (issue 50): gone too, so nothing
                // names them here.
                std::fs::remove_file(d.join("manifest")).unwrap();
            }),
        ),
        (
            "db zeroed",
            Box::new(move |d: &Path| {
                std::fs::write(d.join("db"), vec![0u8; db_len as usize]).unwrap()
            }),
        ),
    ];
    // Every copy of one event of the longest game, wherever sled or the journal keep one: the
    // game can only be kept up to the event before.
    let longest = games.iter().max_by_key(|g| g.version).unwrap();
    let (cut, cut_game) = (longest.log[2].1.clone(), longest.game.clone());
    // Event 1 of the longest game rewritten in sled with a flipped bit (sled's older copy
    // of it stays in its log), and the journal gone: the chain is mended from the copy that
    // event 2 names by its hash.
    let first_key = {
        let mut key = envelope::game_key(&longest.game).unwrap().to_vec();
        key.extend_from_slice(&1u64.to_be_bytes());
        key
    };
    let damages: Vec<(&str, Damage)> = damages
        .into_iter()
        .chain([(
            "event 1 rewritten damaged, journal gone",
            Box::new(move |d: &Path| {
                {
                    let db = sled::open(d).unwrap();
                    let events = db.open_tree("events").unwrap();
                    let mut record = events.get(&first_key).unwrap().unwrap().to_vec();
                    let middle = record.len() / 2;
                    record[middle] ^= 0x10;
                    events.insert(first_key.clone(), record).unwrap();
                    db.flush().unwrap();
                }
                std::fs::remove_file(d.join("journal")).unwrap();
            }) as Damage,
        )])
        .chain([(
            "every copy of event 3 damaged",
            Box::new(move |d: &Path| {
                let mut hit = 0;
                for file in ["db", "journal"] {
                    let path = d.join(file);
                    let mut bytes = std::fs::read(&path).unwrap();
                    let mut at = 0;
                    while let Some(found) =
                        bytes[at..].windows(cut.len()).position(|w| w == &cut[..])
                    {
                        let middle = at + found + cut.len() / 2;
                        bytes[middle] ^= 0x10;
                        hit += 1;
                        at += found + 1;
                    }
                    std::fs::write(&path, bytes).unwrap();
                }
                assert!(hit > 0, "event 3 was found nowhere");
            }) as Damage,
        )])
        .collect();
    for (n, (what, damage)) in damages.iter().enumerate() {
        let damaged = root.path().join(format!("damaged-{n}"));
        std::fs::create_dir(&damaged).unwrap();
        copy_dir(&data, &damaged);
        damage(&damaged);
        let into = root.path().join(format!("salvaged-{n}"));
        let report = tokio::task::block_in_place(|| salvage_checked(&damaged, &into, &games));
        println!("{what}: {report}");
        match *what {
            // Sled's own files whole: every game, whole and confirmed.
            "nothing" | "blobs gone" | "journal bytes flipped" => {
                assert!(report.all_intact(), "{what}: {report}")
            }
            // Sled's index gone: every game is still found (in the journal and the raw
            // files), whole; its end is confirmed by the checkpoint manifest (issue 50), or
            // else said to be unconfirmed.
            "db gone" | "db zeroed" => {
                for played in &games {
                    assert!(
                        matches!(
                            report.outcome(&played.game),
                            Some(Outcome::Unconfirmed { events, .. } | Outcome::Intact { events })
                                if *events == played.version
                        ),
                        "{what}: {report}"
                    );
                }
            }
            // Nothing names the games any more: their chains are found, and reported lost
            // (a lone first event is only counted), never served under a guessed id.
            "db's first segment header garbage, journal gone" => {
                assert!(!report.all_intact(), "{what}: {report}");
                assert!(
                    report
                        .games
                        .iter()
                        .all(|(id, outcome)| id.starts_with("(no id")
                            && matches!(outcome, Outcome::Lost { .. })),
                    "{what}: {report}"
                );
            }
            "event 1 rewritten damaged, journal gone" => {
                assert!(report.all_intact(), "{what}: {report}")
            }
            "every copy of event 3 damaged" => {
                let outcome = report.outcome(&cut_game);
                assert!(
                    matches!(
                        outcome,
                        Some(Outcome::Truncated {
                            events: 2,
                            claimed: 6,
                            ..
                        })
                    ),
                    "{what}: {report}"
                );
                assert!(!report.all_intact());
            }
            _ => {}
        }
        served(&into, &games, &report).await;
        // Each scenario's copies hold a 16 MiB journal or two: gone before the next, so the
        // test needs room for one scenario at a time, not all of them.
        remove(&[&damaged, &into]);
    }
}

/// The server itself refuses a data directory whose `db` is gone or garbage (issue 36: "one
/// flipped byte stops the whole server"); salvage copies every game out of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_the_server_refuses_is_salvaged() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let games = played(&data).await;
    let damaged = root.path().join("damaged");
    std::fs::create_dir(&damaged).unwrap();
    copy_dir(&data, &damaged);
    std::fs::write(damaged.join("conf"), [0xffu8; 64]).unwrap();
    let len = std::fs::metadata(damaged.join("db")).unwrap().len();
    std::fs::write(damaged.join("db"), vec![0xa5u8; len as usize]).unwrap();
    let refused = {
        let probe = root.path().join("probe");
        std::fs::create_dir(&probe).unwrap();
        copy_dir(&damaged, &probe);
        SledStore::open(&probe).is_err()
    };
    assert!(
        refused,
        "the server opened a data directory whose db and conf are garbage"
    );
    let into = root.path().join("salvaged");
    let report = tokio::task::block_in_place(|| salvage_checked(&damaged, &into, &games));
    // Every game whole: its end confirmed by the checkpoint manifest (issue 50), or said to
    // be unconfirmed.
    for played in &games {
        assert!(
            matches!(
                report.outcome(&played.game),
                Some(Outcome::Unconfirmed { events, .. } | Outcome::Intact { events })
                    if *events == played.version
            ),
            "refused to open: {refused}; {report}"
        );
    }
    served(&into, &games, &report).await;
}

/// The command line: a non-empty target is refused naming it, a damaged directory is salvaged
/// with its report, the exit status says whether every game came whole, and the key is copied
/// owner-only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_command_reports_and_exits_by_outcome() {
    use std::os::unix::fs::MetadataExt;
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let games = played(&data).await;
    server::signing::key::load_or_create(&data).unwrap();
    let run = |from: &Path, to: &Path| {
        std::process::Command::new(env!("CARGO_BIN_EXE_asl-server"))
            .arg("salvage")
            .arg("--from")
            .arg(from)
            .arg("--to")
            .arg(to)
            .output()
            .unwrap()
    };
    let busy = root.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("x"), b"x").unwrap();
    let out = run(&data, &busy);
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("is not empty") && said.contains("busy"),
        "{said}"
    );

    // Not while a server has the directory open.
    {
        let _open = SledStore::open(&data).unwrap();
        let out = run(&data, &root.path().join("live"));
        let said = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("stop it first"), "{said}");
        assert!(!root.path().join("live").exists());
    }

    let whole = root.path().join("whole");
    let out = run(&data, &whole);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        said.contains("4 games copied intact") && said.contains(" 0 lost"),
        "{said}"
    );
    let key = whole.join(server::signing::key::KEY_FILE);
    assert_eq!(std::fs::metadata(&key).unwrap().mode() & 0o777, 0o600);
    assert_eq!(std::fs::metadata(&whole).unwrap().mode() & 0o777, 0o700);
    assert_eq!(
        std::fs::read(&key).unwrap(),
        std::fs::read(data.join(server::signing::key::KEY_FILE)).unwrap()
    );

    std::fs::remove_file(data.join("db")).unwrap();
    let out = run(&data, &root.path().join("part"));
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{said}");
    for played in &games {
        assert!(said.contains(&played.game), "{said}");
    }
    assert!(said.contains("end unconfirmed"), "{said}");
}

/// Random bytes flipped in sled's log, the journal or sled's config, over and over: salvage
/// never panics, never changes the damaged directory, and never copies a game other than as a
/// prefix of what was played.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_damage_never_panics_nor_invents() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let games = played(&data).await;
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |below: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % below.max(1)
    };
    for round in 0..10 {
        let damaged = root.path().join(format!("damaged-{round}"));
        std::fs::create_dir(&damaged).unwrap();
        copy_dir(&data, &damaged);
        let file = ["db", "db", "journal", "conf"][next(4) as usize];
        let path = damaged.join(file);
        let len = std::fs::metadata(&path).unwrap().len();
        let span = if file == "journal" {
            len.min(64 * 1024)
        } else {
            len
        };
        let offsets: Vec<u64> = (0..=next(16)).map(|_| next(span)).collect();
        flip(&path, &offsets);
        let into = root.path().join(format!("salvaged-{round}"));
        let report = tokio::task::block_in_place(|| salvage_checked(&damaged, &into, &games));
        println!("round {round} ({file} at {offsets:?}): {report}");
        remove(&[&damaged, &into]);
    }
}

/// Removes a scenario's directories, failing the test if one cannot be.
fn remove(dirs: &[&Path]) {
    for dir in dirs {
        std::fs::remove_dir_all(dir)
            .unwrap_or_else(|e| panic!("cannot remove {}: {e}", dir.display()));
    }
}

/// A target named through a link that leads into the damaged directory is the damaged
/// directory (issue 50): refused as overlapping, and nothing is written into the damaged one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_target_reached_through_a_link_into_the_damaged_directory_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    drop(SledStore::open(&data).unwrap());
    let link = root.path().join("link");
    std::os::unix::fs::symlink(&data, &link).unwrap();
    let before = fingerprint(&data);
    for to in [link.join("salvaged"), link.join("new/deeper/salvaged")] {
        let refused = tokio::task::block_in_place(|| salvage(&data, &to))
            .map(|r| r.to_string())
            .unwrap_err();
        assert!(matches!(refused, SalvageError::Overlap { .. }), "{refused}");
        assert!(refused.to_string().contains("overlap"), "{refused}");
        assert_eq!(
            fingerprint(&data),
            before,
            "salvage wrote into {}",
            data.display()
        );
    }
    // A target that is itself a link to a directory inside the damaged one, or dangling.
    let inside = root.path().join("inside");
    std::os::unix::fs::symlink(data.join("blobs-to-be"), &inside).unwrap();
    let refused = tokio::task::block_in_place(|| salvage(&data, &inside))
        .map(|r| r.to_string())
        .unwrap_err();
    assert!(
        matches!(
            refused,
            SalvageError::Overlap { .. } | SalvageError::DanglingLink { .. }
        ),
        "{refused}"
    );
    assert_eq!(fingerprint(&data), before);
}

/// Links planted in the damaged directory are never followed (issue 50): a `journal` linked to
/// another data directory's brings none of its games, token digests or seeds into the copy,
/// a linked signing key is not copied, and the report names each link.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_in_the_damaged_directory_are_not_followed() {
    use server::signing::key::KEY_FILE;
    let root = tempfile::tempdir().unwrap();
    let other = root.path().join("other");
    let others = played(&other).await;
    server::signing::key::load_or_create(&other).unwrap();
    let data = root.path().join("data");
    let games = played(&data).await;
    let damaged = root.path().join("damaged");
    std::fs::create_dir(&damaged).unwrap();
    copy_dir(&data, &damaged);
    std::fs::remove_file(damaged.join("journal")).unwrap();
    std::os::unix::fs::symlink(other.join("journal"), damaged.join("journal")).unwrap();
    std::os::unix::fs::symlink(other.join(KEY_FILE), damaged.join(KEY_FILE)).unwrap();
    std::os::unix::fs::symlink(other.join("db"), damaged.join("snap.0000000000000001")).unwrap();
    let _ = std::fs::remove_dir_all(damaged.join("blobs"));
    std::os::unix::fs::symlink(other.join("blobs"), damaged.join("blobs")).unwrap();

    let into = root.path().join("salvaged");
    let report = tokio::task::block_in_place(|| salvage_checked(&damaged, &into, &games));
    let store = SledStore::open(&into).unwrap();
    for theirs in &others {
        let key = envelope::game_key(&theirs.game).unwrap();
        assert!(store.load(&key).unwrap().is_empty(), "{report}");
        assert!(report.outcome(&theirs.game).is_none(), "{report}");
    }
    drop(store);
    assert!(!into.join(KEY_FILE).exists(), "{report}");
    let said = report.to_string();
    for name in ["journal", KEY_FILE, "snap.0000000000000001", "blobs"] {
        let named = format!("{} is a symbolic link", damaged.join(name).display());
        assert!(said.contains(&named), "{named}: {said}");
    }
    assert!(
        !report.all_intact(),
        "the key not copied is a problem: {report}"
    );
}

/// Bytes this process has had written to storage (`write_bytes` of `/proc/self/io`).
fn bytes_written_by_this_process() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("write_bytes: "))
        .and_then(|n| n.trim().parse().ok())
        .expect("write_bytes in /proc/self/io")
}

/// A large sparse file planted in the damaged directory costs no writes (issue 50): salvage
/// copies only sled's files, and their data, never a hole as zeros. (Where the scratch
/// directory's filesystem counts no writes, tmpfs, this proves less, and still passes.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sparse_file_in_the_damaged_directory_costs_no_writes() {
    const SPARSE_BYTES: u64 = 1 << 30;
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let games = played(&data).await;
    let damaged = root.path().join("damaged");
    std::fs::create_dir(&damaged).unwrap();
    copy_dir(&data, &damaged);
    std::fs::File::create(damaged.join("planted"))
        .unwrap()
        .set_len(SPARSE_BYTES)
        .unwrap();
    let into = root.path().join("salvaged");
    let before = bytes_written_by_this_process();
    let report = tokio::task::block_in_place(|| salvage(&damaged, &into)).unwrap();
    let written = bytes_written_by_this_process() - before;
    assert!(
        written < SPARSE_BYTES / 8,
        "{written} bytes written to salvage {} games: {report}",
        games.len()
    );
    for played in &games {
        assert!(
            matches!(report.outcome(&played.game), Some(Outcome::Intact { .. })),
            "{report}"
        );
    }
}

/// Issue 50: sled cuts its log at a damaged record and drops what followed, silently; here,
/// the last event of the longest game removed from sled's tree as that cut would. The
/// checkpoint manifest still says how far the game reached: a server on the directory names
/// the game, saying acknowledged events are missing, and serves the others; salvage never
/// calls it intact short of that event (it copies it whole if a copy of the event survives
/// in sled's raw files, vouched for by the manifest's hash).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_sled_cut_short_is_named_by_the_server_and_by_salvage() {
    let scratch = tempfile::tempdir().unwrap();
    let damaged = scratch.path().join("damaged");
    let games = played(&damaged).await;
    let cut = games.last().unwrap();
    let key = envelope::game_key(&cut.game).unwrap();
    {
        let db = sled::open(&damaged).unwrap();
        let events = db.open_tree("events").unwrap();
        let mut last = key.to_vec();
        last.extend_from_slice(&cut.version.to_be_bytes());
        assert!(events.remove(last).unwrap().is_some());
        db.flush().unwrap();
    }

    let copy = scratch.path().join("copy");
    std::fs::create_dir_all(&copy).unwrap();
    copy_dir(&damaged, &copy);
    let server = Running::start(Arc::new(SledStore::open(&copy).unwrap()), Config::default()).await;
    for _ in 0..2 {
        match join(&server.url, &cut.game, &cut.tokens.side_a).await.1 {
            ServerMessage::Error { code, message } => {
                assert_eq!(code, ErrorCode::GameUnavailable, "{message}");
                assert!(message.contains("acknowledged are missing"), "{message}");
                assert!(
                    message.contains(&format!("reached event {}", cut.version)),
                    "{message}"
                );
            }
            other => panic!("a log cut short was served: {other:?}"),
        }
    }
    for other in &games[..games.len() - 1] {
        let (version, _) =
            version_and_hash(&join(&server.url, &other.game, &other.tokens.side_a).await.1);
        assert_eq!(version, other.version);
    }
    server.stop().await;

    let into = scratch.path().join("salvaged");
    let report = tokio::task::block_in_place(|| salvage(&damaged, &into)).unwrap();
    match report.outcome(&cut.game) {
        Some(Outcome::Intact { events }) => assert_eq!(*events, cut.version, "{report}"),
        Some(Outcome::Truncated {
            events, claimed, ..
        }) => {
            assert_eq!(*claimed, cut.version, "{report}");
            assert!(*events < cut.version);
        }
        other => panic!("expected intact or truncated, got {other:?}: {report}"),
    }
    remove(&[&into]);
}
