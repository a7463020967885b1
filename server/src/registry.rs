//! The games this server serves: created here, or rebuilt at start by replaying their logs.
//! A game whose log is damaged is kept as unavailable — named, with the reason and the first
//! bad event — and never rewritten; the other games are served as usual.

use crate::config::Config;
use crate::game::{GameHandle, GameTask};
use crate::log::{self, GameMeta, META_FORMAT};
use crate::store::{EventStore, GameKey};
use protocol::game::Viewer;
use protocol::wire::{ErrorCode, GameId, Tokens};
use protocol::{Event, Scenario, Side};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tracing::{error, info};

enum Entry {
    Live(GameHandle),
    Unavailable(String),
}

pub struct Registry {
    games: Mutex<HashMap<GameKey, Entry>>,
    /// The writer tasks, awaited at shutdown so that nothing holds the store afterwards.
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    store: Arc<dyn EventStore>,
    config: Config,
}

/// A refusal to hand out a game, as it goes on the wire.
pub type Refusal = (ErrorCode, String);

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    getrandom::fill(&mut bytes).expect("the operating system provides randomness");
    bytes
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn digest(token: &str) -> [u8; 32] {
    *blake3::hash(token.as_bytes()).as_bytes()
}

impl Registry {
    /// Rebuilds every stored game by replaying its log.
    pub fn open(store: Arc<dyn EventStore>, config: Config) -> Result<Registry, String> {
        let registry = Registry {
            games: Mutex::new(HashMap::new()),
            tasks: Mutex::new(Vec::new()),
            store,
            config,
        };
        let games = registry.store.games().map_err(|e| e.to_string())?;
        let (mut live, mut broken) = (0, 0);
        for (key, meta) in games {
            match registry.load(key, &meta) {
                Ok(Some(handle)) => {
                    registry.insert(key, Entry::Live(handle));
                    live += 1;
                }
                // Metadata without events: a creation that crashed before it was acknowledged.
                Ok(None) => {}
                Err(why) => {
                    error!(game = %log::game_id(&key), %why, "game cannot be served");
                    registry.insert(key, Entry::Unavailable(why));
                    broken += 1;
                }
            }
        }
        info!(live, broken, "games loaded");
        Ok(registry)
    }

    fn insert(&self, key: GameKey, entry: Entry) {
        self.games.lock().expect("registry lock").insert(key, entry);
    }

    fn load(&self, key: GameKey, meta: &[u8]) -> Result<Option<GameHandle>, String> {
        let meta = GameMeta::decode(meta)?;
        let records = self.store.load(&key).map_err(|e| e.to_string())?;
        if records.is_empty() {
            return Ok(None);
        }
        let verified = log::verify(&records).map_err(|e| e.to_string())?;
        let task = GameTask::from_log(
            key,
            verified,
            self.store.clone(),
            self.config.connections_per_game_max,
        )?;
        Ok(Some(self.spawn(task, meta)))
    }

    fn spawn(&self, task: GameTask, meta: GameMeta) -> GameHandle {
        let (inbox, rx) = mpsc::channel(self.config.game_inbox_max);
        let task = tokio::spawn(task.run(rx));
        self.tasks.lock().expect("registry lock").push(task);
        GameHandle {
            inbox,
            meta: Arc::new(meta),
        }
    }

    /// Creates a game: fresh id and tokens, metadata and the `GameCreated` event made durable,
    /// then its writer task started. The tokens are returned once and stored only as digests.
    pub async fn create(&self, scenario: Scenario) -> Result<(GameId, Tokens), Refusal> {
        if self.games.lock().expect("registry lock").len() >= self.config.games_max {
            return Err((
                ErrorCode::LimitReached,
                format!(
                    "this server holds {} games, its limit",
                    self.config.games_max
                ),
            ));
        }
        let key: GameKey = random_bytes();
        let tokens = Tokens {
            side_a: hex(&random_bytes::<32>()),
            side_b: hex(&random_bytes::<32>()),
            spectator: hex(&random_bytes::<32>()),
        };
        let meta = GameMeta {
            format: META_FORMAT,
            token_digests: [
                digest(&tokens.side_a),
                digest(&tokens.side_b),
                digest(&tokens.spectator),
            ],
        };
        let created = Event::GameCreated { scenario };
        let (record, head) = log::encode(1, log::GENESIS, &created);
        let store = self.store.clone();
        let meta_bytes = meta.encode();
        let stored = tokio::task::spawn_blocking(move || {
            store.put_meta(&key, &meta_bytes)?;
            store.append(&key, 1, &[record])
        })
        .await;
        match stored {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err((ErrorCode::Storage, e.to_string())),
            Err(e) => return Err((ErrorCode::Storage, e.to_string())),
        }
        let verified = log::VerifiedLog {
            events: vec![created],
            head,
        };
        let task = GameTask::from_log(
            key,
            verified,
            self.store.clone(),
            self.config.connections_per_game_max,
        )
        .map_err(|e| (ErrorCode::Storage, e))?;
        let handle = self.spawn(task, meta);
        self.insert(key, Entry::Live(handle));
        let id = log::game_id(&key);
        info!(game = %id, "game created");
        Ok((id, tokens))
    }

    /// Finds a game and works out who the token belongs to. Unknown ids and wrong tokens are
    /// told apart (a game id is not a secret; a token is), and tokens are compared as digests
    /// in constant time.
    pub fn join(&self, id: &str, token: &str) -> Result<(GameHandle, Viewer), Refusal> {
        let unknown = || {
            (
                ErrorCode::UnknownGame,
                format!("there is no game `{id}` on this server"),
            )
        };
        let key = log::game_key(id).ok_or_else(unknown)?;
        let games = self.games.lock().expect("registry lock");
        let handle = match games.get(&key) {
            None => return Err(unknown()),
            Some(Entry::Unavailable(why)) => {
                return Err((
                    ErrorCode::GameUnavailable,
                    format!("game `{id}` cannot be served: its log is damaged at {why}"),
                ))
            }
            Some(Entry::Live(handle)) => handle.clone(),
        };
        let offered = blake3::Hash::from_bytes(digest(token));
        let viewers = [
            Viewer::Side(Side::A),
            Viewer::Side(Side::B),
            Viewer::Spectator,
        ];
        // blake3::Hash compares in constant time; check all three so timing says nothing
        // about which one matched.
        let mut matched = None;
        for (digest, viewer) in handle.meta.token_digests.iter().zip(viewers) {
            if offered == blake3::Hash::from_bytes(*digest) {
                matched = Some(viewer);
            }
        }
        let viewer = matched.ok_or((
            ErrorCode::BadToken,
            format!("that token is not one of game `{id}`'s"),
        ))?;
        Ok((handle, viewer))
    }

    /// Stops every game: their handles are dropped, so each writer task ends once the
    /// connections holding a handle are gone; returns when all have ended.
    pub async fn shutdown(&self) {
        self.games.lock().expect("registry lock").clear();
        let tasks = std::mem::take(&mut *self.tasks.lock().expect("registry lock"));
        for task in tasks {
            let _ = task.await;
        }
    }
}
