//! The games this server serves: created here, or stored and loaded on first join by
//! replaying their logs. Starting the server lists the games and serves at once, while a
//! background check reads every stored game's hash chain (no replay), so damage is found and
//! named at the start rather than when someone joins; the replay waits for the first join. A game whose log is damaged is kept as unavailable —
//! named, with the reason and the first bad event — and never rewritten; the other games are
//! served as usual.

use crate::games::task::{random_bytes, GameHandle, GameLimits, GameTask, Request, Unloader};
use crate::operations::config::Config;
use crate::operations::metrics::METRICS;
use crate::store::envelope::{self, GameMeta, META_FORMAT};
use crate::store::{without_panics, EventStore, GameKey, StoreError};
use data_encoding::HEXLOWER;
use protocol::event::{ClockStarted, GameCreated};
use protocol::game::Viewer;
use protocol::wire::{ErrorCode, GameId, Tokens};
use protocol::{Event, Scenario, Side};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, OnceCell, OwnedSemaphorePermit, Semaphore};
use tracing::{error, info};

/// Bytes [`Registry::wake_clocks`] reads of a game's log at a start: enough for its first two
/// events, whatever the scenario's size.
const WAKE_READ_BYTES: usize = 4 * 1024 * 1024;

/// Games [`Registry::wake_clocks`] reads at once, and games it loads at once: enough to keep
/// both the store's reads and the replays (each on a blocking thread) busy on a few cores.
const WAKE_AT_ONCE: usize = 16;

/// When a stored game's clock must be looked at, from its first events alone: `None` for a
/// game without a clock (or whose first events cannot be read: its load, on a join, says
/// why). A log that is just `GameCreated` and `ClockStarted` — a game nobody has moved in
/// since its clock started — runs out at the start's moment plus the starting bank, whichever
/// side's clock runs; any longer log's deadline is known only once it is replayed, so it is
/// due at once (0).
fn wake_due(store: &dyn EventStore, key: &GameKey) -> Option<u64> {
    let records = store.load_range(key, 1, WAKE_READ_BYTES).ok()?;
    let first_two = &records[..records.len().min(2)];
    let verified = envelope::verify(first_two).ok()?;
    let Some(Event::ClockStarted(ClockStarted { control, at })) =
        verified.entries.get(1).map(|e| &e.event)
    else {
        return None;
    };
    let longer = records.len() > 2 || !store.load_range(key, 3, 1).ok()?.is_empty();
    if longer {
        return Some(0);
    }
    let fresh = protocol::game::timing::Timing::started(*control, Some(Side::A), *at);
    Some(fresh.deadline().unwrap_or(0))
}

/// The timed games found by [`Registry::wake_clocks`]'s index and not yet loaded, the
/// soonest due first; closed once the index is read, so the loaders stop when it is empty.
#[derive(Default)]
struct WakeQueue {
    due: Mutex<WakeDue>,
    pushed: tokio::sync::Notify,
}

#[derive(Default)]
struct WakeDue {
    games: std::collections::BinaryHeap<std::cmp::Reverse<(u64, GameKey)>>,
    slots: HashMap<GameKey, Arc<Slot>>,
    closed: bool,
}

impl WakeQueue {
    fn push(&self, due: u64, key: GameKey, slot: Arc<Slot>) {
        let mut queue = self.due.lock().expect("wake queue lock");
        queue.games.push(std::cmp::Reverse((due, key)));
        queue.slots.insert(key, slot);
        drop(queue);
        self.pushed.notify_one();
    }

    /// No more games will be pushed.
    fn close(&self) {
        self.due.lock().expect("wake queue lock").closed = true;
        self.pushed.notify_waiters();
    }

    /// The soonest due game left, waiting for the index if none is; `None` once the index is
    /// read and every game taken.
    async fn pop(&self) -> Option<(GameKey, Arc<Slot>)> {
        loop {
            // Registered before looking, so a push or the close between the look and the
            // wait is not missed.
            let pushed = self.pushed.notified();
            {
                let mut queue = self.due.lock().expect("wake queue lock");
                if let Some(std::cmp::Reverse((_, key))) = queue.games.pop() {
                    let slot = queue.slots.remove(&key).expect("a queued game's slot");
                    return Some((key, slot));
                }
                if queue.closed {
                    return None;
                }
            }
            pushed.await;
        }
    }
}

/// A game as the registry knows it: its stored metadata, and its writer task once loaded.
struct Slot {
    /// The metadata bytes as stored; decoded when the game is loaded.
    meta: Vec<u8>,
    /// Set by the first join (or at creation). A `OnceCell` so that joins racing to load the
    /// same game wait for one load and never start two writer tasks for one log.
    loaded: OnceCell<Loaded>,
    /// A live game's place under `loaded_games_max`, given back when the slot is dropped
    /// (the game unloaded, or the server stopping).
    place: Mutex<Option<OwnedSemaphorePermit>>,
    /// When the game was last joined or created (milliseconds of the registry's clock): the
    /// least recently used idle game is the one unloaded to make room.
    used: AtomicU64,
}

impl Slot {
    /// A stored game, not loaded.
    fn stored(meta: Vec<u8>, used: u64) -> Slot {
        Slot {
            meta,
            loaded: OnceCell::new(),
            place: Mutex::new(None),
            used: AtomicU64::new(used),
        }
    }

    /// The live game's handle, if only the registry holds it and this slot: nobody is joined,
    /// joining or sending it anything, so it can be let go.
    fn idle_handle(self: &Arc<Slot>) -> Option<&GameHandle> {
        match self.loaded.get() {
            Some(Loaded::Live(handle))
                if Arc::strong_count(self) == 1
                    && handle.inbox.strong_count() == 1
                    && handle.reads.strong_count() == 1 =>
            {
                Some(handle)
            }
            _ => None,
        }
    }
}

/// How long a load or creation waits for the place of a game just unloaded (its task
/// returning) before it is refused.
const PLACE_WAIT: Duration = Duration::from_secs(5);

/// The registry's map of games, shared with each game's [`Unloader`].
type Games = Arc<Mutex<HashMap<GameKey, Arc<Slot>>>>;

#[derive(Clone)]
enum Loaded {
    Live(GameHandle),
    Unavailable(Unservable),
    /// Metadata without events: a creation that crashed before it was acknowledged.
    Missing,
}

pub struct Registry {
    games: Games,
    /// One permit per game in memory (`loaded_games_max`).
    places: Arc<Semaphore>,
    /// The clock of `Slot::used`.
    epoch: Instant,
    /// The writer tasks and the chain check, awaited at shutdown so that nothing holds the
    /// store afterwards.
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Set at shutdown to end the background work early: the chain check, the waking of
    /// games under a clock.
    checking: Arc<AtomicBool>,
    store: Arc<dyn EventStore>,
    config: Config,
    /// Turn notices (`crate::notify`): each game task gets a watch of its own.
    notifier: std::sync::OnceLock<Arc<crate::notify::Notifier>>,
    /// Signs every game's receipts, in batches across games (`crate::signing::batch`).
    signer: crate::signing::batch::Signer,
    /// The other server nodes sharing a NATS store, when there are any (`crate::games::cluster`).
    cluster: Option<Arc<crate::games::cluster::Cluster>>,
    /// Shares the hexes and LOS maps of games on the same map (`protocol`'s `Interner`).
    interner: Arc<protocol::board::scenario::Interner>,
    /// The players' runtime, the one the registry is opened on: every game's task runs there,
    /// whichever connection created or loaded the game. A spectator's or a review's connection
    /// is served on the audience's threads (`crate::network::audience`), and a game spawned
    /// from there ran at the audience's priority and was let go with it at shutdown.
    players: tokio::runtime::Handle,
}

/// Makes `scenario` ready to be played here: the grids of its real boards handed in from the
/// operator's boards (the core reads no board itself), then its map shared with every other
/// game on it. Done when a game is created or loaded; replay then reads only the log and
/// this.
fn prepare(
    scenario: &mut Scenario,
    boards: Option<&protocol::board::vasl::library::Boards>,
    interner: &protocol::board::scenario::Interner,
) {
    if let Some(boards) = boards {
        boards.attach(scenario);
    }
    interner.share(scenario);
}

/// Why the stored games cannot be listed, and so not served.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    #[error("the list of games cannot be read (the store panicked: {0})")]
    Panicked(String),
    #[error("the list of games cannot be read ({0})")]
    Store(StoreError),
}

/// Why a stored game is not served. Damage is what the store's checksums and the hash chain
/// say; a log whose bytes the chain vouches for but this version cannot decode is the
/// reader's fault, kept as it is for a version that reads it, and never named damaged.
#[derive(Clone, Debug)]
enum Unservable {
    Damaged(String),
    Unreadable(String),
}

impl Unservable {
    /// The first bad event of a log whose chain did not verify, by whose fault it is.
    fn of_chain(e: protocol::chain::ChainError) -> Unservable {
        if e.is_damage() {
            Unservable::Damaged(format!("its log is damaged at {e}"))
        } else {
            Unservable::Unreadable(format!("its log cannot be read at {e}"))
        }
    }

    /// What a player asking for the game is told.
    fn refusal(&self, id: &str) -> String {
        match self {
            Unservable::Damaged(why) => format!(
                "game `{id}` cannot be served: {why}; the operator can restore it from a backup"
            ),
            Unservable::Unreadable(why) => format!(
                "game `{id}` cannot be served by this version of the server: {why}; nothing is lost, and a version that reads it will serve it"
            ),
        }
    }

    fn log(&self, key: &GameKey) {
        match self {
            Unservable::Damaged(why) => {
                error!(game = %envelope::game_id(key), %why, "DAMAGED: this game's log fails its check and will not be served; restore it from a backup")
            }
            Unservable::Unreadable(why) => {
                error!(game = %envelope::game_id(key), %why, "UNREADABLE: this version of the server cannot read this game's intact log; it is kept as it is and not served")
            }
        }
    }
}

/// A refusal to hand out a game, as it goes on the wire.
pub type Refusal = (ErrorCode, String);

fn digest(token: &str) -> [u8; 32] {
    *blake3::hash(token.as_bytes()).as_bytes()
}

/// Checks every listed game's chain (until `stop`), marking the damaged ones unavailable and
/// logging each by name.
fn check_all(store: &dyn EventStore, slots: &[(GameKey, Arc<Slot>)], stop: &AtomicBool) {
    let started = std::time::Instant::now();
    let (mut damaged, mut unreadable) = (0, 0);
    for (key, slot) in slots {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        if slot.loaded.initialized() {
            continue;
        }
        if let Err(why) = check_chain(store, key) {
            if matches!(why, Unservable::Damaged(_)) {
                damaged += 1;
            } else {
                unreadable += 1;
            }
            why.log(key);
            // A join that got there first has found the same damage.
            let _ = slot.loaded.set(Loaded::Unavailable(why));
        }
    }
    let took_ms = started.elapsed().as_millis() as u64;
    if damaged + unreadable > 0 {
        error!(
            checked = slots.len(),
            damaged, unreadable, took_ms, "some games cannot be served; the others are"
        );
    } else {
        info!(
            checked = slots.len(),
            took_ms, "every stored game's chain is whole"
        );
    }
}

/// Reads one stored game's log; a store that fails or panics reading it (sled does, on some
/// damage) makes the game unreadable, not the server.
fn read_log(store: &dyn EventStore, key: &GameKey) -> Result<Vec<(u64, Vec<u8>)>, Unservable> {
    let damaged = |why: String| Unservable::Damaged(why);
    without_panics(|| store.load(key))
        .map_err(|panicked| {
            damaged(format!(
                "its log cannot be read (the store panicked: {panicked})"
            ))
        })?
        .map_err(|e| match e {
            // What is left is a prefix whose chain verifies: damage all the same (issue 50).
            StoreError::Missing(why) => damaged(format!("its log is damaged: {why}")),
            e => damaged(format!("its log cannot be read ({e})")),
        })
}

/// Reads one stored game's log and checks its hash chain, naming the first bad event.
fn check_chain(store: &dyn EventStore, key: &GameKey) -> Result<(), Unservable> {
    let records = read_log(store, key)?;
    envelope::verify(&records)
        .map(|_| ())
        .map_err(Unservable::of_chain)
}

/// Reads, verifies and replays one stored game: the blocking part of a load.
fn rebuild(
    store: Arc<dyn EventStore>,
    key: GameKey,
    meta_bytes: &[u8],
    limits: GameLimits,
    maps: (
        Option<Arc<protocol::board::vasl::library::Boards>>,
        Arc<protocol::board::scenario::Interner>,
    ),
) -> Result<Option<(GameTask, GameMeta)>, Unservable> {
    let mut meta = GameMeta::decode(meta_bytes).map_err(|e| Unservable::Damaged(e.to_string()))?;
    let records = read_log(&*store, &key)?;
    if records.is_empty() {
        return Ok(None);
    }
    let mut verified = envelope::verify(&records).map_err(Unservable::of_chain)?;
    if let Some(protocol::chain::Entry {
        event: Event::GameCreated(GameCreated { scenario }),
        ..
    }) = verified.entries.first_mut()
    {
        prepare(scenario, maps.0.as_deref(), &maps.1);
    }
    if meta.seeds.is_empty() {
        // Stored before the server rolled dice (metadata format 1): the game gets its seed
        // now, stored before anything can commit to it.
        meta.seeds.push(random_bytes());
        store.put_meta(&key, meta.encode()).wait().map_err(|e| {
            Unservable::Damaged(format!("its metadata could not be upgraded ({e})"))
        })?;
    }
    // A mark unreadable is a game not to serve blindly: it is named, like damage.
    let marks =
        envelope::GameMarks::decode(meta_bytes).map_err(|e| Unservable::Damaged(e.to_string()))?;
    let task = GameTask::from_log(key, verified, meta.clone(), store, limits)
        .map_err(|e| Unservable::Damaged(e.to_string()))?
        .marked(marks);
    Ok(Some((task, meta)))
}

/// Stops the game task of every game whose lease this node lost: its viewers are told to
/// reconnect (to whichever node owns it now), and the next join here loads it afresh.
async fn give_up_lost(
    cluster: Arc<crate::games::cluster::Cluster>,
    mut lost: mpsc::UnboundedReceiver<GameKey>,
    games: Arc<Mutex<HashMap<GameKey, Arc<Slot>>>>,
) {
    while let Some(key) = lost.recv().await {
        cluster.forget(&key);
        let slot = games.lock().expect("registry lock").get(&key).cloned();
        if let Some(Loaded::Live(handle)) = slot.as_ref().and_then(|s| s.loaded.get()) {
            let why = format!(
                "server node {} lost game `{}`'s lease",
                cluster.node_id,
                envelope::game_id(&key)
            );
            let _ = handle.inbox.send(Request::Relinquish { why }).await;
        }
    }
}

impl Registry {
    /// Lists the stored games, so the server serves at once, and starts checking each one's
    /// hash chain in the background: a damaged game is marked unavailable, naming its first
    /// bad event, and logged. Each game is replayed when someone first joins it (a join that
    /// comes before the check reaches its game verifies the chain itself).
    pub fn open(store: Arc<dyn EventStore>, config: Config) -> Result<Registry, ListError> {
        Registry::open_in_cluster(store, config, None)
    }

    /// [`Registry::open`] on a node of a cluster: games are served through leases, and games
    /// whose lease this node lost are given up.
    pub fn open_in_cluster(
        store: Arc<dyn EventStore>,
        config: Config,
        cluster: Option<Arc<crate::games::cluster::Cluster>>,
    ) -> Result<Registry, ListError> {
        let listed = without_panics(|| store.games())
            .map_err(|panicked| ListError::Panicked(panicked.to_string()))?
            .map_err(ListError::Store)?;
        let games: HashMap<GameKey, Arc<Slot>> = listed
            .into_iter()
            .map(|(key, meta)| (key, Arc::new(Slot::stored(meta, 0))))
            .collect();
        info!(
            stored = games.len(),
            "games listed; their chains are checked in the background, and each replays on its first join"
        );
        let stop = Arc::new(AtomicBool::new(false));
        let slots: Vec<(GameKey, Arc<Slot>)> = games.iter().map(|(k, s)| (*k, s.clone())).collect();
        let checker = {
            let (store, stop) = (store.clone(), stop.clone());
            tokio::task::spawn_blocking(move || check_all(&*store, &slots, &stop))
        };
        let games = Arc::new(Mutex::new(games));
        let mut tasks = vec![checker];
        if let Some(lost) = cluster.as_ref().and_then(|c| c.take_lost()) {
            tasks.push(tokio::spawn(give_up_lost(
                cluster.clone().expect("a cluster"),
                lost,
                games.clone(),
            )));
        }
        Ok(Registry {
            games,
            places: Arc::new(Semaphore::new(config.loaded_games_max)),
            epoch: Instant::now(),
            tasks: Mutex::new(tasks),
            checking: stop,
            store,
            signer: crate::signing::batch::Signer::new(config.signing_key.clone()),
            config,
            notifier: std::sync::OnceLock::new(),
            cluster,
            interner: Default::default(),
            players: tokio::runtime::Handle::current(),
        })
    }

    /// Gives every game task loaded from now on a watch for turn notices.
    pub fn notify_with(&self, notifier: Arc<crate::notify::Notifier>) {
        let _ = self.notifier.set(notifier);
    }

    /// The notifier, once set.
    pub fn notifier(&self) -> Option<&Arc<crate::notify::Notifier>> {
        self.notifier.get()
    }

    /// The game and seat `token` is a player's token of, without joining (a notification
    /// registration): a spectator token is refused, as an unknown one is. Looked up in the
    /// store for a game created on another node since this one started.
    pub fn seat(&self, id: &str, token: &str) -> Result<(GameKey, Side), Refusal> {
        let unknown = || {
            (
                ErrorCode::UnknownGame,
                format!("there is no game `{id}` on this server"),
            )
        };
        let key = envelope::game_key(id).ok_or_else(unknown)?;
        let listed = self
            .games
            .lock()
            .expect("registry lock")
            .get(&key)
            .map(|slot| slot.meta.clone());
        let meta = match listed {
            Some(meta) => meta,
            None => self
                .store
                .meta(&key)
                .map_err(|e| {
                    (
                        ErrorCode::Storage,
                        format!("game `{id}` cannot be read: {e}"),
                    )
                })?
                .ok_or_else(unknown)?,
        };
        match Self::token_viewer(id, &meta, token)? {
            Viewer::Side(side) => Ok((key, side)),
            Viewer::Spectator => Err((
                ErrorCode::ReadOnly,
                "a spectator token cannot register notifications; use your seat's token".into(),
            )),
        }
    }

    /// The cluster this node serves games in, if any.
    pub fn cluster(&self) -> Option<&Arc<crate::games::cluster::Cluster>> {
        self.cluster.as_ref()
    }

    /// The public key of the key heads are signed with.
    pub fn server_key(&self) -> protocol::record::signed::ServerKey {
        protocol::record::signed::ServerKey::of(&self.config.signing_key)
    }

    /// The game's writer task, loading the game first if no one has joined it since the start
    /// (or since it was unloaded). Refused when every place in memory holds a game someone is
    /// connected to.
    async fn load(&self, key: GameKey, slot: &Slot) -> Result<Loaded, Refusal> {
        slot.loaded
            .get_or_try_init(|| async {
                let place = self.place().await?;
                let store = self.store.clone();
                let meta = slot.meta.clone();
                let limits = GameLimits::of(&self.config);
                let maps = (self.config.boards.clone(), self.interner.clone());
                // Replay is CPU work proportional to the log (and handing in its boards may
                // read their archives): off the async threads.
                let rebuilt =
                    tokio::task::spawn_blocking(move || rebuild(store, key, &meta, limits, maps))
                        .await
                        .unwrap_or_else(|e| {
                            // A replay that panics is this version's fault, not the log's.
                            Err(Unservable::Unreadable(format!("loading it stopped: {e}")))
                        });
                Ok(match rebuilt {
                    Ok(Some((task, meta))) => {
                        *slot.place.lock().expect("slot lock") = Some(place);
                        Loaded::Live(self.spawn(key, task, meta))
                    }
                    Ok(None) => Loaded::Missing,
                    Err(why) => {
                        why.log(&key);
                        Loaded::Unavailable(why)
                    }
                })
            })
            .await
            .cloned()
    }

    /// A place in memory for one more game: a free one, or one an idle game gives up. Every
    /// idle game is asked in turn, least recently joined first, before the load or creation
    /// is refused: a few games that will not go (busy, or joined meanwhile) cannot keep
    /// the others from making room.
    async fn place(&self) -> Result<OwnedSemaphorePermit, Refusal> {
        let mut tried = HashSet::new();
        loop {
            if let Ok(place) = self.places.clone().try_acquire_owned() {
                return Ok(place);
            }
            match self.unload_idlest(&mut tried).await {
                None => break,
                Some(false) => continue,
                Some(true) => {}
            }
            // The unloaded game's slot, and with it its place, went as its task agreed.
            if let Ok(Ok(place)) =
                tokio::time::timeout(PLACE_WAIT, self.places.clone().acquire_owned()).await
            {
                return Ok(place);
            }
        }
        METRICS.refused("loaded_games_max");
        Err((
            ErrorCode::LimitReached,
            format!(
                "this server holds {} games in memory, its limit, and someone is connected to each; try again later",
                self.config.loaded_games_max
            ),
        ))
    }

    /// Asks the least recently used game nobody is connected to (and not yet in `tried`) to
    /// unload; whether it did, or `None` when there is no such game.
    async fn unload_idlest(&self, tried: &mut HashSet<GameKey>) -> Option<bool> {
        let answer = {
            let games = self.games.lock().expect("registry lock");
            let idlest = games
                .iter()
                .filter(|(key, _)| !tried.contains(*key))
                .filter_map(|(key, slot)| Some((key, slot.idle_handle()?, &slot.used)))
                .min_by_key(|(_, _, used)| used.load(Ordering::Relaxed));
            let (key, handle, _) = idlest?;
            tried.insert(*key);
            let (reply, answer) = oneshot::channel();
            // Nobody else can send it anything: a full inbox means it is busy.
            if handle.inbox.try_send(Request::Unload { reply }).is_err() {
                return Some(false);
            }
            answer
        };
        Some(answer.await.unwrap_or(false))
    }

    /// What lets game `key`'s task go when it is idle: under the registry's lock, nobody may
    /// hold its handle or its slot (no connection joined, joining or about to send it
    /// anything); then its slot is replaced by a stored one with the task's metadata, which
    /// drops the handle and gives back its place.
    fn unloader(&self, key: GameKey) -> Unloader {
        let games = Arc::downgrade(&self.games);
        Box::new(move |meta: Vec<u8>| {
            // A registry gone, or a game not (yet, or no longer) in its map: the task is not
            // the registry's to let go; it ends when its handles are dropped (at shutdown).
            let Some(games) = games.upgrade() else {
                return false;
            };
            let mut games = games.lock().expect("registry lock");
            let Some(slot) = games.get(&key) else {
                return false;
            };
            if slot.idle_handle().is_none() {
                return false;
            }
            let stored = Slot::stored(meta, slot.used.load(Ordering::Relaxed));
            games.insert(key, Arc::new(stored));
            true
        })
    }

    fn spawn(&self, key: GameKey, task: GameTask, meta: GameMeta) -> GameHandle {
        let mut task = task
            .signed_by(self.signer.clone())
            .unloaded_by(self.unloader(key));
        if let Some(notifier) = self.notifier.get() {
            task = task.watched_by(crate::notify::Watch::new(notifier.clone(), key));
        }
        let (inbox, players) = mpsc::channel(self.config.game_inbox_max);
        let (reads, audience) = mpsc::channel(self.config.game_inbox_max);
        let task = self.players.spawn(task.run(players, audience));
        let mut tasks = self.tasks.lock().expect("registry lock");
        // Games come and go: keep only the tasks still running, looked through when the list
        // is full rather than at every spawn, which at a start loading 50,000 timed games
        // made the loading quadratic.
        if tasks.len() == tasks.capacity() {
            tasks.retain(|t| !t.is_finished());
        }
        tasks.push(task);
        GameHandle {
            inbox,
            reads,
            meta: Arc::new(meta),
        }
    }

    /// Creates a game: fresh id and tokens, metadata and the `GameCreated` event made durable,
    /// then its writer task started. The tokens are returned once and stored only as digests.
    pub async fn create(&self, scenario: Scenario) -> Result<(GameId, Tokens), Refusal> {
        self.create_timed(scenario, None).await
    }

    /// [`Registry::create`] under a time control: the log's second event is the server's
    /// `ClockStarted`, at the server's time, stored with `GameCreated` (`docs/clock.md`).
    pub async fn create_timed(
        &self,
        scenario: Scenario,
        clock: Option<protocol::board::time_control::TimeControl>,
    ) -> Result<(GameId, Tokens), Refusal> {
        if self.games.lock().expect("registry lock").len() >= self.config.games_max {
            return Err((
                ErrorCode::LimitReached,
                format!(
                    "this server holds {} games, its limit",
                    self.config.games_max
                ),
            ));
        }
        let place = self.place().await?;
        let key: GameKey = random_bytes();
        let tokens = Tokens {
            side_a: HEXLOWER.encode(&random_bytes::<32>()),
            side_b: HEXLOWER.encode(&random_bytes::<32>()),
            spectator: HEXLOWER.encode(&random_bytes::<32>()),
        };
        let meta = GameMeta {
            format: META_FORMAT,
            token_digests: [
                digest(&tokens.side_a),
                digest(&tokens.side_b),
                digest(&tokens.spectator),
            ],
            // The dice seed, committed to (its hash shown to players) from the start.
            seeds: vec![random_bytes()],
        };
        if let Some(cluster) = &self.cluster {
            cluster
                .claim_new(&key)
                .await
                .map_err(|e| (ErrorCode::Storage, e.to_string()))?;
        }
        let mut scenario = scenario;
        prepare(&mut scenario, self.config.boards.as_deref(), &self.interner);
        let created = Event::GameCreated(GameCreated { scenario });
        // Salted like every envelope: the scenario may hold hidden units.
        let (record, head) =
            envelope::seal(1, envelope::GENESIS, random_bytes(), None, 1, &created);
        let mut entries = vec![protocol::chain::Entry {
            seq: 1,
            by: None,
            first: 1,
            key: None,
            command: None,
            event: created,
        }];
        let mut records = vec![record];
        let mut hashes = vec![head];
        if let Some(control) = clock {
            let started = protocol::chain::Entry::clock_started(control, self.config.time.now_ms());
            let (record, hash) = envelope::seal_entry(head, random_bytes(), &started);
            entries.push(started);
            records.push(record);
            hashes.push(hash);
        }
        // Both writes handed over at once: the store applies them in order, usually under
        // one flush. Metadata without its first event is a creation that never happened.
        let meta_stored = self.store.put_meta(&key, meta.encode());
        let created_stored = self.store.append(&key, 1, records);
        for stored in [meta_stored, created_stored] {
            stored
                .await
                .map_err(|e| (ErrorCode::Storage, e.to_string()))?;
        }
        let verified = envelope::VerifiedLog { entries, hashes };
        let task = GameTask::from_log(
            key,
            verified,
            meta.clone(),
            self.store.clone(),
            GameLimits::of(&self.config),
        )
        .map_err(|e| (ErrorCode::Storage, e.to_string()))?;
        let slot = Slot {
            meta: meta.encode(),
            loaded: OnceCell::new_with(Some(Loaded::Live(self.spawn(key, task, meta)))),
            place: Mutex::new(Some(place)),
            used: AtomicU64::new(self.now()),
        };
        self.games
            .lock()
            .expect("registry lock")
            .insert(key, Arc::new(slot));
        let id = envelope::game_id(&key);
        info!(game = %id, "game created");
        Ok((id, tokens))
    }

    /// Finds a game and works out who the token belongs to. Unknown ids and wrong tokens are
    /// told apart (a game id is not a secret; a token is), and tokens are compared as digests
    /// in constant time. The token is checked against the stored metadata before anything is
    /// loaded or the game's last use is touched: without a token of the game a client can
    /// neither load it, nor pin it, nor steer which idle game is unloaded to make room.
    ///
    /// `since` is the version the client holds; `proven` says it comes from a receipt that
    /// verified under this server's key for this game. For a game this server does not list,
    /// only a proven version raises the operator's ROLLBACK alarm: a bare one is a claim
    /// (ids are not secret, anyone can make one up), and the client is only told that if it
    /// was sent events of the game, the server lost it.
    pub async fn join(
        &self,
        id: &str,
        token: &str,
        since: Option<u64>,
        proven: bool,
    ) -> Result<(GameHandle, Viewer), Refusal> {
        let unknown = || match since.filter(|held| *held > 0) {
            Some(held) => {
                if proven {
                    error!(game = %id, held, "ROLLBACK: a client holds this server's receipt for a game the server does not have at all; restore it from a backup");
                }
                (
                    ErrorCode::UnknownGame,
                    format!("there is no game `{id}` on this server; if you were sent its version {held}, the server lost the game, and its operator can restore it from a backup"),
                )
            }
            None => (
                ErrorCode::UnknownGame,
                format!("there is no game `{id}` on this server"),
            ),
        };
        let key = envelope::game_key(id).ok_or_else(unknown)?;
        let slot = self
            .games
            .lock()
            .expect("registry lock")
            .get(&key)
            .cloned()
            .ok_or_else(unknown)?;
        let viewer = Self::token_viewer(id, &slot.meta, token)?;
        let slot = match slot.loaded.get() {
            // The game's task ended (fenced by another writer, or its lease lost): load it
            // again from the log.
            Some(Loaded::Live(handle)) if handle.inbox.is_closed() => self.reset(key).await?,
            _ => slot,
        };
        slot.used.store(self.now(), Ordering::Relaxed);
        let handle = match self.load(key, &slot).await? {
            Loaded::Missing => return Err(unknown()),
            Loaded::Unavailable(why) => return Err((ErrorCode::GameUnavailable, why.refusal(id))),
            Loaded::Live(handle) => handle,
        };
        Ok((handle, viewer))
    }

    /// Whose `token` is, by the token digests in game `id`'s stored metadata; refused as a bad
    /// token when it is none of them, as an unavailable game when the metadata cannot be read.
    /// Seating a notification and joining refuse in these same words.
    fn token_viewer(id: &str, meta: &[u8], token: &str) -> Result<Viewer, Refusal> {
        let meta = GameMeta::decode(meta).map_err(|why| {
            (
                ErrorCode::GameUnavailable,
                format!("game `{id}` cannot be served: {why}; the operator can restore it from a backup"),
            )
        })?;
        let offered = blake3::Hash::from_bytes(digest(token));
        let viewers = [
            Viewer::Side(Side::A),
            Viewer::Side(Side::B),
            Viewer::Spectator,
        ];
        // blake3::Hash compares in constant time; check all three so timing says nothing
        // about which one matched.
        let mut matched = None;
        for (digest, viewer) in meta.token_digests.iter().zip(viewers) {
            if offered == blake3::Hash::from_bytes(*digest) {
                matched = Some(viewer);
            }
        }
        matched.ok_or_else(|| {
            (
                ErrorCode::BadToken,
                format!("that token is not one of game `{id}`'s"),
            )
        })
    }

    /// Milliseconds since the registry opened: the clock of `Slot::used`.
    fn now(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// Loads every game played under a clock, so that its timer runs again after a start
    /// (`crate::operations::clock`): a clock that runs out while nobody has joined since is
    /// recorded, and an away seat is told when its clock runs low. A game whose clock no
    /// longer runs (over, run out) is let go again when idle. Only a server on its own: in a
    /// cluster a game is loaded by the node its players reach.
    ///
    /// A clock whose deadline falls while the games are being woken is recorded only once its
    /// game is loaded, so the games are loaded soonest deadline first: an index of every
    /// stored game's first events (read off the async threads, [`WAKE_AT_ONCE`] games at a
    /// time) feeds a queue that as many loaders drain, most urgent first, while the index is
    /// still being read (50,000 timed games: `asl-load correspondence`, BENCHMARKS.md).
    pub async fn wake_clocks(&self) {
        use futures_util::StreamExt;
        if self.cluster.is_some() {
            return;
        }
        let slots: Vec<(GameKey, Arc<Slot>)> = self
            .games
            .lock()
            .expect("registry lock")
            .iter()
            .map(|(k, s)| (*k, s.clone()))
            .collect();
        let started = Instant::now();
        let queue = WakeQueue::default();
        let index = async {
            futures_util::stream::iter(slots)
                .for_each_concurrent(WAKE_AT_ONCE, |(key, slot)| {
                    self.index_clock(key, slot, &queue)
                })
                .await;
            queue.close();
        };
        let loaders =
            futures_util::future::join_all((0..WAKE_AT_ONCE).map(|_| self.load_clocks(&queue)));
        tokio::join!(index, loaders);
        info!(
            took_ms = started.elapsed().as_millis() as u64,
            "every game under a running clock is loaded"
        );
    }

    /// Runs [`Registry::wake_clocks`] beside serving, as one of the registry's own tasks: the
    /// shutdown stops it reading or loading more and waits for it, so nothing it started holds
    /// the store once the server has stopped.
    pub fn start_waking(self: &Arc<Self>) {
        let registry = self.clone();
        let waking = tokio::spawn(async move { registry.wake_clocks().await });
        self.tasks.lock().expect("registry lock").push(waking);
    }

    /// [`Registry::wake_clocks`]'s index of one game: queued with its due time if it is timed.
    async fn index_clock(&self, key: GameKey, slot: Arc<Slot>, queue: &WakeQueue) {
        // Stopping: no read begins, so none holds the store past the shutdown.
        if self.checking.load(Ordering::SeqCst) {
            return;
        }
        let store = self.store.clone();
        let due = tokio::task::spawn_blocking(move || wake_due(&*store, &key))
            .await
            .ok()
            .flatten();
        if let Some(due) = due {
            queue.push(due, key, slot);
        }
    }

    /// One of [`Registry::wake_clocks`]'s loaders: the soonest due game left, until none is.
    async fn load_clocks(&self, queue: &WakeQueue) {
        while let Some((key, slot)) = queue.pop().await {
            if self.checking.load(Ordering::SeqCst) {
                continue;
            }
            if let Err((_, why)) = self.load(key, &slot).await {
                tracing::warn!(game = %envelope::game_id(&key), %why, "a game under a clock could not be loaded at start");
            }
        }
    }

    /// With several server nodes: where `id` is served from. `None`: here (this node holds
    /// the game's lease, having taken it if it had lapsed); else the owner's address. A game
    /// created on another node since this one started is looked up in the store.
    pub async fn locate(
        &self,
        cluster: &crate::games::cluster::Cluster,
        id: &str,
    ) -> Result<Option<String>, Refusal> {
        let unknown = || {
            (
                ErrorCode::UnknownGame,
                format!("there is no game `{id}` on this server"),
            )
        };
        let key = envelope::game_key(id).ok_or_else(unknown)?;
        let known = self.games.lock().expect("registry lock").contains_key(&key);
        if !known && self.reset(key).await.is_err() {
            // Not stored: the local join says so, with the rollback check.
            return Ok(None);
        }
        match cluster
            .route(&key)
            .await
            .map_err(|e| (ErrorCode::GameUnavailable, e.to_string()))?
        {
            crate::games::cluster::Route::Local { fresh: true } => {
                self.reset(key).await?;
                Ok(None)
            }
            crate::games::cluster::Route::Local { fresh: false } => Ok(None),
            crate::games::cluster::Route::Remote { address, .. } => Ok(Some(address)),
        }
    }

    /// Replaces `key`'s slot with one not yet loaded, its metadata read again from the store
    /// (another node may have changed it); a task still running for it is told to stop.
    async fn reset(&self, key: GameKey) -> Result<Arc<Slot>, Refusal> {
        let store = self.store.clone();
        let meta = tokio::task::spawn_blocking(move || store.meta(&key))
            .await
            .unwrap_or_else(|e| Err(crate::store::StoreError::Io(e.to_string())))
            .map_err(|e| (ErrorCode::Storage, e.to_string()))?
            .ok_or((
                ErrorCode::UnknownGame,
                format!(
                    "there is no game `{}` on this server",
                    envelope::game_id(&key)
                ),
            ))?;
        let slot = Arc::new(Slot::stored(meta, self.now()));
        let old = self
            .games
            .lock()
            .expect("registry lock")
            .insert(key, slot.clone());
        if let Some(Loaded::Live(handle)) = old.as_ref().and_then(|s| s.loaded.get()) {
            let _ = handle.inbox.try_send(Request::Relinquish {
                why: "the game is loaded again from its log".into(),
            });
        }
        Ok(slot)
    }

    /// Stops every game: their handles are dropped, so each writer task ends once the
    /// connections holding a handle are gone; returns when all have ended.
    pub async fn shutdown(&self) {
        self.checking.store(true, Ordering::SeqCst);
        self.games.lock().expect("registry lock").clear();
        // A task awaited here may have started another (a game woken for its clock as the
        // shutdown began): taken again until none is left.
        loop {
            let tasks = std::mem::take(&mut *self.tasks.lock().expect("registry lock"));
            if tasks.is_empty() {
                break;
            }
            for task in tasks {
                let _ = task.await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::task::Request;
    use crate::store::MemoryStore;
    use protocol::event::{ClockExpired, GameCreated};
    use protocol::fair_dice::Commitment;
    use protocol::wire::ServerMessage;
    use protocol::ReadScenario;

    /// Joins the game's task as `viewer`: its subscriber id and its messages.
    async fn join_task(
        handle: &GameHandle,
        viewer: Viewer,
    ) -> (u64, mpsc::Receiver<crate::games::task::Outbound>) {
        let (out, messages) = mpsc::channel(16);
        let (reply, joined) = tokio::sync::oneshot::channel();
        handle
            .inbox
            .send(Request::Join {
                viewer,
                since: None,
                receipt: None,
                out,
                direct: None,
                progress: Default::default(),
                reply,
            })
            .await
            .unwrap_or_else(|_| panic!("the game task runs"));
        (joined.await.unwrap().unwrap(), messages)
    }

    /// A game stored before the server rolled dice — metadata format 1, envelopes format 1 —
    /// is served: on its first join it gets a seed, stored before anyone sees its commitment.
    #[tokio::test]
    async fn a_game_stored_before_dice_gets_a_seed_when_loaded() {
        #[derive(serde::Serialize)]
        struct MetaV1 {
            format: u16,
            token_digests: [[u8; 32]; 3],
        }
        let store = Arc::new(MemoryStore::new());
        let key: GameKey = [5; 16];
        let old_meta = bincode::serde::encode_to_vec(
            MetaV1 {
                format: 1,
                token_digests: [digest("a"), digest("b"), digest("s")],
            },
            bincode::config::standard(),
        )
        .unwrap();
        let scenario =
            Scenario::from_toml(include_str!("../../../scenarios/sewer-infiltration.toml"))
                .unwrap();
        let (created, _) = protocol::chain::seal_v1(
            1,
            envelope::GENESIS,
            &Event::GameCreated(GameCreated { scenario }),
        );
        store.put_meta(&key, old_meta).await.unwrap();
        store.append(&key, 1, vec![created]).await.unwrap();

        let registry = Registry::open(store.clone(), Config::default()).unwrap();
        let (handle, viewer) = registry
            .join(&envelope::game_id(&key), "b", None, false)
            .await
            .unwrap();
        assert_eq!(viewer, Viewer::Side(Side::B));
        let stored = GameMeta::decode(&store.games().unwrap()[0].1).unwrap();
        assert_eq!(
            stored.seeds.len(),
            1,
            "the upgraded metadata holds the seed"
        );

        let (_, mut messages) = join_task(&handle, viewer).await;
        match &messages.recv().await.unwrap().message {
            ServerMessage::Joined {
                dice_commitment, ..
            } => assert_eq!(*dice_commitment, Commitment::to(&stored.seeds[0])),
            other => panic!("expected joined, got {other:?}"),
        }
        drop(handle);
        registry.shutdown().await;
    }

    /// A game stored in envelope format 3 by a build before `Rout` carried `morale`, its rout
    /// command in that shape, is served: it loads, and its players join the position the rout
    /// left.
    #[tokio::test]
    async fn a_game_stored_with_a_rout_before_its_morale_is_served() {
        use protocol::referee::Referee;
        use protocol::Command;
        let scenario = Scenario::from_toml(include_str!(
            "../../../protocol/tests/positions/scenarios/a10-5-rout.toml"
        ))
        .unwrap();
        // The game as a server creates it, then played offline as that server did.
        let made = Arc::new(MemoryStore::new());
        let registry = Registry::open(made.clone(), Config::default()).unwrap();
        let (id, tokens) = registry.create(scenario).await.unwrap();
        registry.shutdown().await;
        let key = envelope::game_key(&id).unwrap();
        let meta_bytes = made.meta(&key).unwrap().unwrap();
        let meta = GameMeta::decode(&meta_bytes).unwrap();
        let created = envelope::verify(&made.load(&key).unwrap()).unwrap().entries;
        let mut referee = Referee::load(created, meta.seeds.clone()).unwrap();
        let german = referee.game().acting();
        let play = |referee: &mut Referee, by: Side, command: Command| {
            referee
                .play(by, &command, &mut || panic!("no seed is revealed"))
                .unwrap_or_else(|v| panic!("{command:?} refused: {v}"));
        };
        while referee.game().clock.phase() != protocol::phase::Phase::DefensiveFire {
            let by = referee.game().acting();
            play(&mut referee, by, Command::Done);
        }
        play(
            &mut referee,
            german.opponent(),
            Command::Adjudicate {
                unit: "gd".into(),
                outcome: protocol::Outcome::Break,
                note: "DFPh, 1MC failed".into(),
            },
        );
        while referee.game().clock.phase() != protocol::phase::Phase::Rout {
            let by = referee.game().acting();
            play(&mut referee, by, Command::Done);
        }
        let to: protocol::Hex = "3M10".parse().unwrap();
        for command in [
            Command::Drop {
                unit: "gd".into(),
                weapon: "hmg".into(),
            },
            Command::Rout {
                unit: "gd".into(),
                to,
                morale: None,
            },
        ] {
            play(&mut referee, german, command);
        }
        // Stored in format 3, the rout in its shape before `morale`.
        let mut prev = envelope::GENESIS;
        let mut records = vec![];
        for e in referee.entries() {
            let rout = matches!(
                e.command,
                Some(protocol::chain::Issued {
                    command: Command::Rout { .. },
                    ..
                })
            );
            let (bytes, hash) = protocol::chain::seal_entry_v3(prev, [e.seq as u8; 16], e, rout);
            assert_eq!(bytes[0], 3);
            records.push(bytes);
            prev = hash;
        }
        let store = Arc::new(MemoryStore::new());
        store.put_meta(&key, meta_bytes).await.unwrap();
        store.append(&key, 1, records).await.unwrap();

        let registry = Registry::open(store.clone(), Config::default()).unwrap();
        let token = match german {
            Side::A => tokens.side_a,
            Side::B => tokens.side_b,
        };
        let (handle, viewer) = registry.join(&id, &token, None, false).await.unwrap();
        let (_, mut messages) = join_task(&handle, viewer).await;
        match &messages.recv().await.unwrap().message {
            ServerMessage::Joined {
                version,
                state_hash,
                state,
                ..
            } => {
                // The viewer's projection, numbered by its own stream.
                let mut expected = referee.game().project(viewer);
                expected.version = *version;
                assert_eq!(*state_hash, expected.state_hash());
                let gd = protocol::scenario::UnitId::from("gd");
                let state = state.as_ref().expect("a position");
                assert_eq!(state.units.get(&gd).map(|u| u.hex), Some(to));
            }
            other => panic!("expected joined, got {other:?}"),
        }
        assert_eq!(
            referee
                .game()
                .units
                .get(&protocol::scenario::UnitId::from("gd"))
                .map(|u| u.hex),
            Some(to)
        );
        drop(handle);
        registry.shutdown().await;
    }

    /// Fencing: a game task whose append is refused because another writer appended first
    /// (two nodes both believing they own the game) applies and sends nothing of its command,
    /// tells its viewers to reconnect (`moved`), and ends; a later join loads the game again.
    #[tokio::test]
    async fn a_task_fenced_by_another_writer_gives_the_game_up() {
        let store = Arc::new(MemoryStore::new());
        let config = Config {
            node_id: Some("n1".into()),
            ..Config::default()
        };
        let registry = Registry::open(store.clone(), config).unwrap();
        let scenario =
            Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml"))
                .unwrap();
        let acting = protocol::Game::replay([&Event::GameCreated(GameCreated {
            scenario: scenario.clone(),
        })])
        .unwrap()
        .acting();
        let (id, tokens) = registry.create(scenario).await.unwrap();
        let token = match acting {
            Side::A => tokens.side_a,
            Side::B => tokens.side_b,
        };
        let (handle, viewer) = registry.join(&id, &token, None, false).await.unwrap();
        let (subscriber, mut messages) = join_task(&handle, viewer).await;
        match &messages.recv().await.unwrap().message {
            ServerMessage::Joined { owner, .. } => assert_eq!(owner.as_deref(), Some("n1")),
            other => panic!("expected joined, got {other:?}"),
        }

        // Another node, having taken the game over, appends first.
        let key = envelope::game_key(&id).unwrap();
        store
            .append(&key, 2, vec![b"another writer".to_vec()])
            .await
            .unwrap();
        handle
            .inbox
            .send(Request::Command {
                subscriber,
                side: acting,
                id: 1,
                command: Box::new(protocol::Command::Done),
                key: None,
            })
            .await
            .unwrap_or_else(|_| panic!("the game task runs"));
        match &messages.recv().await.unwrap().message {
            ServerMessage::Error { code, message } => {
                assert_eq!(*code, ErrorCode::Moved, "{message}");
                assert!(message.contains("reconnect"), "{message}");
            }
            other => panic!("expected moved, got {other:?}"),
        }
        assert!(
            messages.recv().await.is_none(),
            "the task ended, having sent nothing else"
        );
        assert!(handle.inbox.is_closed());
        let log = store.load(&key).unwrap();
        assert_eq!(log.len(), 2);
        assert_eq!(
            log[1].1,
            b"another writer".to_vec(),
            "nothing of ours was stored"
        );
        drop(handle);
        registry.shutdown().await;
    }

    /// A server stopped while it is still waking its games under a clock lets go of the store
    /// once stopped: the waking is one of the registry's tasks, told to stop and waited for,
    /// so no load it began (nor its read of the store) outlives the shutdown and keeps the
    /// data directory locked from the next start.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_shutdown_during_the_waking_leaves_nothing_holding_the_store() {
        let store = Arc::new(MemoryStore::new());
        let registry = Registry::open(store.clone(), Config::default()).unwrap();
        let control = protocol::board::time_control::TimeControl::parse("live:1m").unwrap();
        for _ in 0..(16 * WAKE_AT_ONCE) {
            registry
                .create_timed(wall_advantage(), Some(control))
                .await
                .unwrap();
        }
        registry.shutdown().await;
        drop(registry);
        let registry = Arc::new(Registry::open(store.clone(), Config::default()).unwrap());
        registry.start_waking();
        registry.shutdown().await;
        drop(registry);
        assert_eq!(
            Arc::strong_count(&store),
            1,
            "something the registry started still holds the store after its shutdown"
        );
    }

    /// Issue 55: a start loads every stored game whose clock runs — more of them than are
    /// woken at once, none ever joined since — and no game without a clock; each one's timer
    /// then records its clock running out with nobody there. `asl-load correspondence` counts
    /// on it for its 50,000 games.
    #[tokio::test]
    async fn a_start_wakes_every_game_under_a_running_clock_and_no_other() {
        use crate::operations::clock::TimeSource;
        const T0: u64 = 1_700_000_000_000;
        let store = Arc::new(MemoryStore::new());
        let time = TimeSource::manual(T0);
        let config = Config {
            time: time.clone(),
            ..Config::default()
        };
        let registry = Registry::open(store.clone(), config.clone()).unwrap();
        let control = protocol::board::time_control::TimeControl::parse("live:1m").unwrap();
        let mut timed = vec![];
        for _ in 0..(2 * WAKE_AT_ONCE + 3) {
            let (id, _) = registry
                .create_timed(wall_advantage(), Some(control))
                .await
                .unwrap();
            timed.push(envelope::game_key(&id).unwrap());
        }
        let mut untimed = vec![];
        for _ in 0..5 {
            let (id, _) = registry.create(wall_advantage()).await.unwrap();
            untimed.push(envelope::game_key(&id).unwrap());
        }
        registry.shutdown().await;

        let registry = Registry::open(store.clone(), config).unwrap();
        registry.wake_clocks().await;
        let loaded = |key: &GameKey| {
            let slot = registry.games.lock().unwrap()[key].clone();
            matches!(slot.loaded.get(), Some(Loaded::Live(_)))
        };
        for key in &timed {
            assert!(loaded(key), "a game under a running clock was left stored");
        }
        for key in &untimed {
            assert!(!loaded(key), "a game without a clock was loaded");
        }
        let expired = |key: &GameKey| {
            envelope::verify(&store.load(key).unwrap())
                .unwrap()
                .entries
                .iter()
                .any(|e| matches!(e.event, Event::ClockExpired(ClockExpired { at, .. }) if at == T0 + 60_000))
        };
        assert!(!timed.iter().any(expired), "no clock has run out yet");
        time.advance(Duration::from_secs(60));
        // Each timer records its expiry as its own command: wait for all of them, bounded.
        for _ in 0..500 {
            if timed.iter().all(expired) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let missing = timed.iter().filter(|key| !expired(key)).count();
        assert_eq!(missing, 0, "clocks ran out with no expiry recorded");
        assert!(!untimed.iter().any(expired));
        registry.shutdown().await;
    }

    /// Issue 55: a clock that ran out while the server was down is recorded as the start
    /// loads its game, with nobody joined — for a game nobody moved in since its clock
    /// started (its deadline read from its first two events) and for one played on (its
    /// deadline known only once replayed) alike.
    #[tokio::test]
    async fn a_clock_that_ran_out_while_the_server_was_down_is_recorded_at_start() {
        use crate::operations::clock::TimeSource;
        const T0: u64 = 1_700_000_000_000;
        let store = Arc::new(MemoryStore::new());
        let time = TimeSource::manual(T0);
        let config = Config {
            time: time.clone(),
            ..Config::default()
        };
        let registry = Registry::open(store.clone(), config.clone()).unwrap();
        let control = protocol::board::time_control::TimeControl::parse("live:1m").unwrap();
        let mut timed = vec![];
        for _ in 0..3 {
            let (id, tokens) = registry
                .create_timed(wall_advantage(), Some(control))
                .await
                .unwrap();
            timed.push((envelope::game_key(&id).unwrap(), id, tokens));
        }
        // One game is played on: its log is longer than its first two events.
        let (played, id, tokens) = &timed[0];
        let acting = protocol::Game::replay([&Event::GameCreated(GameCreated {
            scenario: wall_advantage(),
        })])
        .unwrap()
        .acting();
        let token = match acting {
            Side::A => &tokens.side_a,
            Side::B => &tokens.side_b,
        };
        let (handle, viewer) = registry.join(id, token, None, false).await.unwrap();
        let (subscriber, mut messages) = join_task(&handle, viewer).await;
        handle
            .inbox
            .send(Request::Command {
                subscriber,
                side: acting,
                id: 1,
                command: Box::new(protocol::Command::Done),
                key: None,
            })
            .await
            .unwrap_or_else(|_| panic!("the game task runs"));
        loop {
            match &messages.recv().await.unwrap().message {
                ServerMessage::Accepted { .. } => break,
                other @ ServerMessage::Refused { .. } => panic!("`done` refused: {other:?}"),
                _ => {}
            }
        }
        drop((handle, messages));
        registry.shutdown().await;
        assert!(store.load(played).unwrap().len() > 2);
        assert_eq!(
            wake_due(&*store, played),
            Some(0),
            "a game played on is due at once"
        );
        assert_eq!(
            wake_due(&*store, &timed[1].0),
            Some(T0 + 60_000),
            "a fresh clock's deadline, from its first two events"
        );

        // Down for two minutes: every clock ran out meanwhile.
        time.advance(Duration::from_secs(120));
        let registry = Registry::open(store.clone(), config).unwrap();
        registry.wake_clocks().await;
        let expired_at = |key: &GameKey| {
            envelope::verify(&store.load(key).unwrap())
                .unwrap()
                .entries
                .iter()
                .find_map(|e| match e.event {
                    Event::ClockExpired(ClockExpired { at, .. }) => Some(at),
                    _ => None,
                })
        };
        // Each task records its expiry as its own command: wait for all of them, bounded.
        for _ in 0..500 {
            if timed.iter().all(|(key, _, _)| expired_at(key).is_some()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        for (key, id, _) in &timed {
            assert_eq!(
                expired_at(key),
                Some(T0 + 120_000),
                "game {id}: its expiry is recorded at the start"
            );
        }
        registry.shutdown().await;
    }

    /// The start's index: no clock, no due time; a queue gives the soonest due game first,
    /// waits while the index is still read, and ends once it is closed and empty.
    #[tokio::test]
    async fn the_wake_queue_gives_the_soonest_deadline_first() {
        let store = Arc::new(MemoryStore::new());
        let registry = Registry::open(store.clone(), Config::default()).unwrap();
        let (untimed, _) = registry.create(wall_advantage()).await.unwrap();
        registry.shutdown().await;
        assert_eq!(
            wake_due(&*store, &envelope::game_key(&untimed).unwrap()),
            None
        );
        assert_eq!(wake_due(&*store, &[9; 16]), None, "no such game");

        let queue = Arc::new(WakeQueue::default());
        let slot = || Arc::new(Slot::stored(vec![], 0));
        for (due, key) in [(300, [3; 16]), (100, [1; 16]), (0, [0; 16]), (200, [2; 16])] {
            queue.push(due, key, slot());
        }
        for key in [[0; 16], [1; 16], [2; 16], [3; 16]] {
            assert_eq!(queue.pop().await.map(|(k, _)| k), Some(key));
        }
        // Empty and open: a loader waits for the index.
        let waiting = tokio::spawn({
            let queue = queue.clone();
            async move { queue.pop().await.map(|(k, _)| k) }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "the index is still being read");
        queue.push(50, [5; 16], slot());
        assert_eq!(waiting.await.unwrap(), Some([5; 16]));
        let waiting = tokio::spawn({
            let queue = queue.clone();
            async move { queue.pop().await.map(|(k, _)| k) }
        });
        queue.close();
        assert_eq!(waiting.await.unwrap(), None, "closed and empty");
    }

    fn wall_advantage() -> Scenario {
        Scenario::from_toml(include_str!("../../../scenarios/b9-41-wall-advantage.toml")).unwrap()
    }

    /// Issue 36: the token is checked before anything is loaded. With the one place in memory
    /// held by a game someone is joined to, a wrong token for another stored game is told it
    /// is wrong — it neither loads that game nor asks for a place.
    #[tokio::test]
    async fn a_wrong_token_loads_nothing() {
        let store = Arc::new(MemoryStore::new());
        let registry = Registry::open(store.clone(), Config::default()).unwrap();
        let (stored, _) = registry.create(wall_advantage()).await.unwrap();
        registry.shutdown().await;

        let config = Config {
            loaded_games_max: 1,
            ..Config::default()
        };
        let registry = Registry::open(store.clone(), config).unwrap();
        let (held, held_tokens) = registry.create(wall_advantage()).await.unwrap();
        let (handle, _) = registry
            .join(&held, &held_tokens.side_a, None, false)
            .await
            .unwrap();
        match registry.join(&stored, "not a token", None, false).await {
            Err((code, message)) => assert_eq!(code, ErrorCode::BadToken, "{message}"),
            Ok(_) => panic!("a wrong token joined"),
        }
        let slot = registry.games.lock().unwrap()[&envelope::game_key(&stored).unwrap()].clone();
        assert!(
            !slot.loaded.initialized(),
            "the wrong token loaded the game"
        );
        drop((handle, slot));
        registry.shutdown().await;
    }

    /// Issue 36: games marked rolled back unload like any idle game (the mark goes with their
    /// metadata), and every idle game is asked before room is refused: five marked games
    /// filling memory do not keep a sixth from being created.
    #[tokio::test]
    async fn marked_games_make_room_like_any_idle_game() {
        let store = Arc::new(MemoryStore::new());
        let registry = Registry::open(store.clone(), Config::default()).unwrap();
        let mut games = vec![];
        for _ in 0..5 {
            games.push(registry.create(wall_advantage()).await.unwrap());
        }
        registry.shutdown().await;
        for (id, _) in &games {
            let key = envelope::game_key(id).unwrap();
            let meta = GameMeta::decode(&store.meta(&key).unwrap().unwrap()).unwrap();
            let marks = envelope::GameMarks {
                rolled_back: Some("events 5..=7 are missing".into()),
            };
            store
                .put_meta(&key, meta.encode_marked(&marks))
                .await
                .unwrap();
        }

        let config = Config {
            loaded_games_max: 5,
            game_unload_after_idle: Duration::from_secs(3_600),
            ..Config::default()
        };
        let registry = Registry::open(store.clone(), config).unwrap();
        for (id, tokens) in &games {
            // Loaded, and refused as rolled back by its task; the handle let go at once.
            registry
                .join(id, &tokens.side_a, None, false)
                .await
                .unwrap();
        }
        let (created, tokens) = registry.create(wall_advantage()).await.unwrap();
        let (handle, _) = registry
            .join(&created, &tokens.side_b, None, false)
            .await
            .unwrap();
        // The game that went keeps its mark: loaded again, it is still refused.
        let (gone, gone_tokens) = games
            .iter()
            .find(|(id, _)| {
                let slot = registry.games.lock().unwrap()[&envelope::game_key(id).unwrap()].clone();
                !slot.loaded.initialized()
            })
            .expect("one marked game unloaded");
        drop(handle);
        let (back, viewer) = registry
            .join(gone, &gone_tokens.side_a, None, false)
            .await
            .unwrap();
        let (_, mut messages) = {
            let (out, messages) = mpsc::channel(16);
            let (reply, joined) = oneshot::channel();
            back.inbox
                .send(Request::Join {
                    viewer,
                    since: None,
                    receipt: None,
                    out,
                    direct: None,
                    progress: Default::default(),
                    reply,
                })
                .await
                .unwrap_or_else(|_| panic!("the game task runs"));
            let refused = joined.await.unwrap().unwrap_err();
            assert_eq!(refused.0, ErrorCode::RolledBack, "{}", refused.1);
            ((), messages)
        };
        assert!(messages.try_recv().is_err());
        drop(back);
        registry.shutdown().await;
    }
}
