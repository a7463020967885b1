//! Backups: every game written out as a verified export file (`protocol::export`, the file
//! `asl verify` reads) beside its metadata, and restored from those into an empty store.
//!
//! A backup of a running server reads each game through the store's committer
//! ([`SledStore::snapshot`]), between two groups of writes, so each file is the game's whole log
//! as it stood at one moment, never half a command. Each file is read back from the disk and
//! verified end to end before the backup counts it. A restore verifies every file and checks
//! the metadata's dice seeds against the log before writing anything of that game.
//!
//! A backup holds the server's signing key as well (`crate::signing::key`, in the key's own file
//! name, owner-only): players' receipts and exports are signed with it, and a server restored
//! under another key could check none of them. Keep a backup directory as private as the data
//! directory.
//!
//! The running server takes backup requests on a Unix socket in its data directory
//! ([`ADMIN_SOCKET`]), which only the directory's owner can reach: the backup is written by the
//! server process, into a directory the operator names.

use crate::store::envelope::{self, GameMeta};
use crate::store::{EventStore, GameKey, SledStore, StoreError};
use data_encoding::HEXLOWER;
use protocol::export::{self, Header};
use protocol::record::signed::{ServerKey, ServerSigningKey, SignedHead, Stream};
use protocol::Game;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why a backup or a restore (or a game of it) did not go through; each names the file,
/// directory or game at fault.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    #[error("cannot create the backup directory {} owner-only: {why}", dir.display())]
    CreateDir { dir: PathBuf, why: String },
    #[error("cannot list the games: {0}")]
    List(StoreError),
    #[error("{0}")]
    Key(#[from] crate::signing::key::KeyError),
    #[error("{} holds another server's signing key: back up into a directory of this server's own", .0.display())]
    OtherKey(PathBuf),
    #[error("{0}")]
    Store(#[from] StoreError),
    #[error("its metadata is gone")]
    MetaGone,
    #[error("it has no events (a creation that was never acknowledged)")]
    NoEvents,
    #[error("its log is damaged at {0}")]
    Damaged(String),
    #[error("its log does not replay ({0:?})")]
    NoReplay(protocol::game::ReplayError),
    #[error("cannot write {}: {why}", path.display())]
    Write { path: PathBuf, why: String },
    #[error("cannot sync {}: {why}", dir.display())]
    Sync { dir: PathBuf, why: String },
    #[error("cannot read back {}: {why}", path.display())]
    ReadBack { path: PathBuf, why: String },
    #[error("the file written does not verify: {0}")]
    WrittenInvalid(export::VerifyError),
    #[error("the data directory already holds {0} games; restore only into an empty one")]
    NotEmpty(usize),
    #[error("cannot read {}: {why}", dir.display())]
    ReadDir { dir: PathBuf, why: String },
    /// One file of a restore, and why it stopped the restore.
    #[error("{}: {why}", path.display())]
    InFile {
        path: PathBuf,
        why: Box<BackupError>,
    },
    #[error("cannot read it: {0}")]
    Read(String),
    #[error("it does not verify: {0}")]
    Invalid(export::VerifyError),
    #[error("`{0}` is not a game id")]
    NotGameId(String),
    #[error("cannot read its metadata {}: {why}", path.display())]
    MetaRead { path: PathBuf, why: String },
    #[error("{} is not lowercase hex", .0.display())]
    MetaHex(PathBuf),
    #[error("{0}")]
    Meta(#[from] envelope::MetaError),
    #[error("it is not text")]
    NotText,
    #[error("an envelope line is not hex")]
    EnvelopeHex,
    #[error("{0}")]
    Log(String),
    #[error("its metadata does not fit its log: {0}")]
    Seeds(protocol::referee::RefereeError),
    #[error("the backup stopped: {0}")]
    Stopped(String),
    #[error("the server did not take the request: {0}")]
    Request(String),
    /// The running server's own words for why its backup failed.
    #[error("{0}")]
    Server(String),
    #[error("the server answered `{0}`")]
    Answer(String),
    #[error("no answer from the server: {0}")]
    NoAnswer(String),
}

/// The admin socket's name inside the data directory.
pub const ADMIN_SOCKET: &str = "admin.sock";

/// The suffix of a game's export file in a backup; its metadata is in `<id>.meta`.
pub const EXPORT_SUFFIX: &str = ".asl-log";
pub const META_SUFFIX: &str = ".meta";

/// What a backup or restore did. Sent whole, as JSON, from a running server to the
/// `asl-server backup` that asked (`admin`), so the command reads what failed, not words.
#[derive(Debug, Default, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Report {
    /// Games written (backup) or loaded (restore), each verified.
    pub games: usize,
    pub events: u64,
    /// Games that could not be copied, with why: a damaged log is named, not copied.
    pub failed: Vec<(String, String)>,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} games ({} events), each verified",
            self.games, self.events
        )?;
        for (game, why) in &self.failed {
            write!(f, "\n  not copied: game {game}: {why}")?;
        }
        Ok(())
    }
}

/// One game's export file, built from its stored records and checked before it is returned;
/// its head signed with `signer`, the server's key (`docs/review.md`).
pub fn export_text(
    key: &GameKey,
    records: &[(u64, Vec<u8>)],
    signer: &ServerSigningKey,
) -> Result<String, BackupError> {
    let verified = envelope::verify(records).map_err(|e| BackupError::Damaged(e.to_string()))?;
    let game =
        Game::replay(verified.entries.iter().map(|e| &e.event)).map_err(BackupError::NoReplay)?;
    let header = Header {
        game: envelope::game_id(key),
        events: records.len() as u64,
        head: verified.head(),
        state_hash: game.state_hash(),
        signed: Some(SignedHead::sign(
            signer,
            &envelope::game_id(key),
            Stream::FullLog,
            records.len() as u64,
            verified.head(),
        )),
    };
    let lines: Vec<String> = records.iter().map(|(_, r)| HEXLOWER.encode(r)).collect();
    Ok(export::render(&header, &lines))
}

/// Writes every game of `store` into `dir` (created if missing): `<id>.asl-log` and
/// `<id>.meta`, each export read back and verified. A game that cannot be copied is reported,
/// and the others are still written.
pub fn backup(
    store: &SledStore,
    dir: &Path,
    signer: &ServerSigningKey,
) -> Result<Report, BackupError> {
    // Owner-only: the metadata holds the games' dice seeds, the key file the signing key.
    crate::signing::private::create_dir(dir).map_err(|e| BackupError::CreateDir {
        dir: dir.to_path_buf(),
        why: e.to_string(),
    })?;
    let mut report = Report::default();
    let games = store.games().map_err(BackupError::List)?;
    // The key first: a backup without it could not check the receipts players hold.
    match crate::signing::key::load(dir)? {
        Some(held) if ServerKey::of(&held) == ServerKey::of(signer) => {}
        Some(_) => return Err(BackupError::OtherKey(dir.to_path_buf())),
        None => crate::signing::key::write(dir, signer)?,
    }
    for (key, _) in games {
        let id = envelope::game_id(&key);
        match backup_game(store, &key, dir, signer) {
            Ok(events) => {
                report.games += 1;
                report.events += events;
            }
            Err(why) => report.failed.push((id, why.to_string())),
        }
    }
    sync_dir(dir)?;
    Ok(report)
}

fn backup_game(
    store: &SledStore,
    key: &GameKey,
    dir: &Path,
    signer: &ServerSigningKey,
) -> Result<u64, BackupError> {
    let (meta, records) = store.snapshot(key)?;
    let meta = meta.ok_or(BackupError::MetaGone)?;
    if records.is_empty() {
        return Err(BackupError::NoEvents);
    }
    let text = export_text(key, &records, signer)?;
    let id = envelope::game_id(key);
    let path = dir.join(format!("{id}{EXPORT_SUFFIX}"));
    write_durably(&path, text.as_bytes())?;
    write_durably(
        &dir.join(format!("{id}{META_SUFFIX}")),
        format!("{}\n", HEXLOWER.encode(&meta)).as_bytes(),
    )?;
    let written = std::fs::read(&path).map_err(|e| BackupError::ReadBack {
        path: path.clone(),
        why: e.to_string(),
    })?;
    export::verify_backup(&written, &mut |_, _| {}).map_err(BackupError::WrittenInvalid)?;
    Ok(records.len() as u64)
}

fn write_durably(path: &Path, bytes: &[u8]) -> Result<(), BackupError> {
    use std::io::Write;
    let written = (|| {
        // Owner-only, and never through a link planted where the file goes.
        let mut file = crate::signing::private::rewrite(path)?;
        file.write_all(bytes)?;
        file.sync_data()
    })();
    written.map_err(|e| BackupError::Write {
        path: path.to_path_buf(),
        why: e.to_string(),
    })
}

fn sync_dir(dir: &Path) -> Result<(), BackupError> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| BackupError::Sync {
            dir: dir.to_path_buf(),
            why: e.to_string(),
        })
}

/// Loads every export in `dir` into `store`, which must hold no games: each file verified end
/// to end, its metadata read and its dice seeds checked against the log, then written and
/// made durable. Any bad file stops the restore before that game is written, naming it.
pub fn restore(store: Arc<SledStore>, dir: &Path) -> Result<Report, BackupError> {
    let held = store.games()?.len();
    if held > 0 {
        return Err(BackupError::NotEmpty(held));
    }
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| BackupError::ReadDir {
            dir: dir.to_path_buf(),
            why: e.to_string(),
        })?
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.path())
        .filter(|p| p.to_string_lossy().ends_with(EXPORT_SUFFIX))
        .collect();
    names.sort();
    let mut report = Report::default();
    for path in names {
        let events = restore_game(&store, &path).map_err(|why| BackupError::InFile {
            path: path.clone(),
            why: Box::new(why),
        })?;
        report.games += 1;
        report.events += events;
    }
    Ok(report)
}

fn restore_game(store: &Arc<SledStore>, path: &Path) -> Result<u64, BackupError> {
    let bytes = std::fs::read(path).map_err(|e| BackupError::Read(e.to_string()))?;
    let verified = export::verify_backup(&bytes, &mut |_, _| {}).map_err(BackupError::Invalid)?;
    let key = envelope::game_key(&verified.header.game)
        .ok_or_else(|| BackupError::NotGameId(verified.header.game.clone()))?;
    let meta_path = path.with_file_name(format!("{}{META_SUFFIX}", verified.header.game));
    let meta_text = std::fs::read_to_string(&meta_path).map_err(|e| BackupError::MetaRead {
        path: meta_path.clone(),
        why: e.to_string(),
    })?;
    let meta_bytes = HEXLOWER
        .decode(meta_text.trim().as_bytes())
        .map_err(|_| BackupError::MetaHex(meta_path.clone()))?;
    let meta = GameMeta::decode(&meta_bytes)?;
    // The envelopes as stored: the last lines before the checksum, after the header (whose
    // length depends on the export format: a signed head adds lines).
    let text = std::str::from_utf8(&bytes).map_err(|_| BackupError::NotText)?;
    let lines: Vec<&str> = text.lines().collect();
    let envelopes = lines.len() - 1;
    let events = verified.header.events as usize;
    let records: Vec<(u64, Vec<u8>)> = lines[envelopes - events..envelopes]
        .iter()
        .zip(1..)
        .map(|(line, seq)| Some((seq, HEXLOWER.decode(line.as_bytes()).ok()?)))
        .collect::<Option<_>>()
        .ok_or(BackupError::EnvelopeHex)?;
    // The seeds in the metadata must be the ones the log commits to.
    let checked = envelope::verify(&records).map_err(|e| BackupError::Log(e.to_string()))?;
    // Loaded as a game is served: every event through the referee, with the metadata's seeds.
    protocol::referee::Referee::load(checked.entries, meta.seeds.clone())
        .map_err(BackupError::Seeds)?;
    let meta_stored = store.put_meta(&key, meta.encode());
    let events = records.len() as u64;
    let appended = store.append(&key, 1, records.into_iter().map(|(_, r)| r).collect());
    meta_stored.wait()?;
    appended.wait()?;
    Ok(events)
}

#[cfg(unix)]
pub mod admin {
    //! The running server's side of `asl-server backup`: one request a connection, one line
    //! each way. `backup DIR` answers `ok REPORT` or `error WHY` (newlines in either are sent
    //! as `\n` escapes, one line).

    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::net::{UnixListener, UnixStream};
    use tracing::{info, warn};

    /// Bytes a request line may take: a path, with room to spare.
    const REQUEST_BYTES_MAX: u64 = 8 * 1024;

    /// Listens on the admin socket in `data_dir` until the task is dropped. The socket is
    /// made owner-only; a stale one (from a server that was killed) is replaced, which is
    /// safe because this process holds the directory's lock.
    pub fn listen(
        data_dir: &Path,
        store: Arc<SledStore>,
        signer: Arc<ServerSigningKey>,
    ) -> std::io::Result<()> {
        let path = data_dir.join(ADMIN_SOCKET);
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        tokio::spawn(async move {
            loop {
                match listener.accept().await {
                    Ok((stream, _)) => {
                        tokio::spawn(serve(stream, store.clone(), signer.clone()));
                    }
                    Err(e) => warn!(error = %e, "admin socket accept failed"),
                }
            }
        });
        Ok(())
    }

    async fn serve(stream: UnixStream, store: Arc<SledStore>, signer: Arc<ServerSigningKey>) {
        use tokio::io::AsyncReadExt;
        let (read, mut write) = stream.into_split();
        let mut line = String::new();
        let mut reader = BufReader::new(read.take(REQUEST_BYTES_MAX));
        if reader.read_line(&mut line).await.is_err() {
            return;
        }
        let answer = match line.trim_end().split_once(' ') {
            Some(("backup", dir)) => {
                let dir = std::path::PathBuf::from(dir);
                info!(dir = %dir.display(), "backup requested");
                let done = tokio::task::spawn_blocking(move || backup(&store, &dir, &signer))
                    .await
                    .unwrap_or_else(|e| Err(BackupError::Stopped(e.to_string())));
                match done {
                    Ok(report) => {
                        info!(%report, "backup written");
                        format!(
                            "ok {}",
                            serde_json::to_string(&report).expect("a report encodes")
                        )
                    }
                    Err(why) => format!("error {why}"),
                }
            }
            _ => "error the only request is `backup DIR`".into(),
        };
        let _ = write
            .write_all(format!("{}\n", answer.replace('\n', "\\n")).as_bytes())
            .await;
    }

    /// Asks the server running on `data_dir` for a backup into `dir`; `None` when no server
    /// answers there.
    pub async fn request_backup(
        data_dir: &Path,
        dir: &Path,
    ) -> Option<Result<Report, BackupError>> {
        let mut stream = UnixStream::connect(data_dir.join(ADMIN_SOCKET))
            .await
            .ok()?;
        let request = format!("backup {}\n", dir.display());
        if let Err(e) = stream.write_all(request.as_bytes()).await {
            return Some(Err(BackupError::Request(e.to_string())));
        }
        let mut line = String::new();
        let read = BufReader::new(stream).read_line(&mut line).await;
        let line = line.trim_end().replace("\\n", "\n");
        Some(match (read, line.split_once(' ')) {
            (Ok(_), Some(("ok", report))) => {
                serde_json::from_str(report).map_err(|_| BackupError::Answer(line.clone()))
            }
            (Ok(_), Some(("error", why))) => Err(BackupError::Server(why.to_string())),
            (Ok(_), _) => Err(BackupError::Answer(line.clone())),
            (Err(e), _) => Err(BackupError::NoAnswer(e.to_string())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::event::GameCreated;
    use protocol::Event;
    use protocol::ReadScenario;
    use protocol::Scenario;

    fn created(store: &SledStore, key: GameKey) {
        let scenario =
            Scenario::from_toml(include_str!("../../../scenarios/sewer-infiltration.toml"))
                .unwrap();
        let meta = GameMeta {
            format: envelope::META_FORMAT,
            token_digests: [[1; 32], [2; 32], [3; 32]],
            seeds: vec![[9; 32]],
        };
        let (record, _) = envelope::seal(
            1,
            envelope::GENESIS,
            [4; 16],
            None,
            1,
            &Event::GameCreated(GameCreated { scenario }),
        );
        store.put_meta(&key, meta.encode()).wait().unwrap();
        store.append(&key, 1, vec![record]).wait().unwrap();
    }

    #[test]
    fn a_backup_restores_into_an_empty_store_and_a_bad_file_is_named() {
        let (data, copy, out) = (
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
            tempfile::tempdir().unwrap(),
        );
        let store = SledStore::open(data.path()).unwrap();
        created(&store, [1; 16]);
        created(&store, [2; 16]);
        let signer = crate::signing::key::fresh();
        let report = backup(&store, out.path(), &signer).unwrap();
        assert_eq!((report.games, report.events), (2, 2));
        assert!(report.failed.is_empty());
        // The key goes with the games; again into the same directory is fine, but not
        // another server's backup over this one's.
        let kept = crate::signing::key::load(out.path()).unwrap().unwrap();
        assert_eq!(ServerKey::of(&kept), ServerKey::of(&signer));
        backup(&store, out.path(), &signer).unwrap();
        let err = backup(&store, out.path(), &crate::signing::key::fresh()).unwrap_err();
        assert!(matches!(err, BackupError::OtherKey(_)), "{err}");

        let restored = Arc::new(SledStore::open(copy.path()).unwrap());
        let report = restore(restored.clone(), out.path()).unwrap();
        assert_eq!(report.games, 2);
        assert_eq!(
            restored.load(&[1; 16]).unwrap(),
            store.load(&[1; 16]).unwrap()
        );
        assert_eq!(restored.games().unwrap(), store.games().unwrap());
        // Not into a store that holds games.
        let again = restore(restored, out.path()).unwrap_err();
        assert!(matches!(again, BackupError::NotEmpty(2)), "{again}");

        // A flipped digit in an envelope: the file is named, and nothing is restored.
        let file = out
            .path()
            .join(format!("{}{EXPORT_SUFFIX}", envelope::game_id(&[2; 16])));
        let mut text = std::fs::read_to_string(&file).unwrap();
        let at = text.find("\n0").unwrap() + 10;
        let flipped = if &text[at..at + 1] == "0" { "1" } else { "0" };
        text.replace_range(at..at + 1, flipped);
        std::fs::write(&file, text).unwrap();
        let empty = tempfile::tempdir().unwrap();
        let err =
            restore(Arc::new(SledStore::open(empty.path()).unwrap()), out.path()).unwrap_err();
        assert!(
            matches!(&err, BackupError::InFile { why, .. } if matches!(**why, BackupError::Invalid(_))),
            "{err}"
        );
        assert!(
            err.to_string().contains(&envelope::game_id(&[2; 16])),
            "{err}"
        );
        assert!(err.to_string().contains("does not verify"), "{err}");
    }

    /// Issue 36: a data directory and a backup are owner-only — the journal, sled's files,
    /// the metadata with its dice seeds, the key — and a backup never writes through a link
    /// planted where one of its files goes: that game is reported, the link's target kept.
    #[test]
    fn secrets_are_owner_only_and_a_backup_never_writes_through_a_link() {
        use crate::signing::private::{DIR_MODE, FILE_MODE};
        use std::os::unix::fs::MetadataExt;
        let mode = |path: &Path| std::fs::symlink_metadata(path).unwrap().mode() & 0o777;
        let root = tempfile::tempdir().unwrap();
        let data = root.path().join("data");
        let store = SledStore::open(&data).unwrap();
        created(&store, [1; 16]);
        created(&store, [2; 16]);
        assert_eq!(mode(&data), DIR_MODE);
        for file in ["journal", "db", "conf"] {
            assert_eq!(mode(&data.join(file)), FILE_MODE, "{file}");
        }

        let out = root.path().join("backup");
        let outside = root.path().join("outside");
        std::fs::write(&outside, b"not the server's").unwrap();
        crate::signing::private::create_dir(&out).unwrap();
        let planted = out.join(format!("{}{META_SUFFIX}", envelope::game_id(&[2; 16])));
        std::os::unix::fs::symlink(&outside, &planted).unwrap();
        let report = backup(&store, &out, &crate::signing::key::fresh()).unwrap();
        assert_eq!(report.games, 1);
        assert_eq!(report.failed.len(), 1);
        assert!(
            report.failed[0].1.contains("symbolic link"),
            "{:?}",
            report.failed
        );
        assert_eq!(std::fs::read(&outside).unwrap(), b"not the server's");
        assert_eq!(mode(&out), DIR_MODE);
        for entry in std::fs::read_dir(&out).unwrap() {
            let path = entry.unwrap().path();
            if path != planted {
                assert_eq!(mode(&path), FILE_MODE, "{}", path.display());
            }
        }
    }
}
