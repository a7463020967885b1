//! Turn notices (issue 41, `docs/notifications.md`): a word to a seat whose player is away
//! when the game comes to wait on it — its turn, a prompt it must answer, an undo or an end
//! its opponent asks for, the game over, its clock running low.
//!
//! - A seat registers targets with its own token (`ClientMessage::Notify`): webhooks, signed
//!   with a secret made for the seat and shown once, and e-mail addresses, each used only once
//!   the seat gives back the code mailed to it (`Notifier::ask_to_confirm`). Registrations
//!   are kept in the store's notification space, so they survive a restart.
//! - A game task sees hand-overs through its [`Watch`] (`watch.rs`), built from each side's own
//!   projection and own stream, so a notice says nothing the side may not know. The notices a
//!   command owes are worked out before its events are stored, and stored **with** them, in the
//!   outbox (`EventStore::append_with_notify`: one write), so no stop loses one a stored
//!   hand-over owes; once stored they are handed to the [`Notifier`]'s bounded queue. The game
//!   task never waits on the notifier.
//! - The notifier's worker (`worker.rs`) coalesces a seat's notices over the quiet interval,
//!   cancels them when the seat's player joins, bounds sends per seat and hour, delivers
//!   (`deliver.rs`: webhook with HMAC-SHA256 and back-off, e-mail over SMTP) and removes each
//!   from the outbox once delivered. On start it sends what the outbox still owes.

mod address;
mod deliver;
mod watch;
mod worker;

pub use address::{forbidden, AddressGuard};
pub use deliver::{sign, IDEMPOTENCY_HEADER, SIGNATURE_HEADER};
pub use watch::{awaits, reasons_for, Owing, Watch};

use crate::operations::config::Config;
use crate::store::{EventStore, GameKey};
use protocol::wire::NotifyTarget;
use protocol::Side;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{mpsc, watch as tokio_watch};
use tracing::warn;

pub use crate::operations::config::SmtpRelay;

/// Why a notice goes: the reasons a coalesced notice carries, in the order they arose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The side to act is now this side.
    YourTurn,
    /// A prompt waits on this side: a WA chance, a HIP moment, a WA challenge, a lost sewer
    /// stack to designate (B9.322, B9.324, B8.41).
    Prompt,
    /// The opponent asked to take back its last events; they wait on this side's consent.
    UndoRequested,
    /// The opponent offered to end the game where it stands.
    EndProposed,
    /// The opponent entered an adjudicated outcome, which this side accepts or disputes.
    AdjudicationToAnswer,
    /// The game is over.
    GameOver,
    /// This side's clock dropped below the operator's threshold (`Watch::clock_low`).
    ClockLow,
    /// The opponent's clock ran out: this side may claim the game or give time.
    OpponentOutOfTime,
}

impl Reason {
    fn words(self) -> &'static str {
        match self {
            Reason::YourTurn => "it is your turn",
            Reason::Prompt => "a question waits for your answer",
            Reason::UndoRequested => "your opponent asks to undo",
            Reason::EndProposed => "your opponent offers to end the game",
            Reason::AdjudicationToAnswer => "an adjudication waits for you to accept or dispute it",
            Reason::GameOver => "the game is over",
            Reason::ClockLow => "your clock is running low",
            Reason::OpponentOutOfTime => {
                "your opponent's clock ran out: claim the game on time or give time"
            }
        }
    }
}

/// What a notice says: the webhook's JSON body, and the e-mail's text. Built field by field
/// from the side's own projection (`Watch`), never from the game itself: nothing here is
/// hidden from the side it goes to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notice {
    /// Always `"asl.notice"`, so a receiver can tell these bodies from others.
    pub kind: String,
    /// The body's format; 1.
    pub format: u16,
    /// The game's id (32 hex digits).
    pub game: String,
    /// The seat the notice is for.
    pub side: Side,
    /// That side's name in the scenario.
    pub side_name: String,
    pub scenario: String,
    /// Why it goes, oldest first (several when notices were coalesced).
    pub reasons: Vec<Reason>,
    pub turn: u16,
    /// 1 or 2: the first or second Player Turn.
    pub player_turn: u8,
    /// The phase, as players abbreviate it (`MPh`).
    pub phase: String,
    /// The name of the side whose input the game awaits; `None` once it is over.
    pub to_act: Option<String>,
    /// The hand-over this notice is for: the length of the seat's own stream of events when it
    /// arose (what the seat itself is told as its version).
    pub handover: u64,
    /// `game:side:handover`: the same on every try, and after a restart, of one notice; a
    /// receiver that has seen it may ignore it (`docs/notifications.md`).
    pub idempotency_key: String,
    /// One line in words.
    pub text: String,
}

impl Notice {
    fn summary(&self) -> String {
        let why: Vec<&str> = self.reasons.iter().map(|r| r.words()).collect();
        let acting = match &self.to_act {
            Some(name) => format!("; the {name} side acts"),
            None => String::new(),
        };
        format!(
            "{} ({}): {} — Game Turn {}, Player Turn {}, {}{acting}",
            self.scenario,
            self.side_name,
            why.join("; "),
            self.turn,
            self.player_turn,
            self.phase
        )
    }
}

/// A notice in the outbox: written with the events that owe it (`Watch::foresee`), rewritten
/// as targets are served, removed when every target has it (or was given up on).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Owed {
    notice: Notice,
    /// When it was owed, in milliseconds since the Unix epoch: the quiet interval runs from
    /// here, across restarts too.
    owed_ms: u64,
    /// Targets (their descriptions) that have it already.
    done: Vec<String>,
    /// The log record that owes it (a hand-over's notice; a clock-low notice has none): a
    /// notice found in the outbox goes only once the log holds that very record. With sled or
    /// in memory it always does, the two being one write; the NATS store writes the outbox
    /// first (`crate::store::nats`), so a stop between the two may leave a notice whose
    /// command was never stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    by: Option<OwedBy>,
}

/// The record of a game's log that owes a notice: its sequence and the blake3 hash of its
/// stored bytes, in hex.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwedBy {
    seq: u64,
    record: String,
}

impl OwedBy {
    /// The last record of an append (`seq`, `record`): the one that makes the hand-over.
    pub fn of(seq: u64, record: &[u8]) -> OwedBy {
        OwedBy {
            seq,
            record: blake3::hash(record).to_hex().to_string(),
        }
    }
}

/// What the log says of the record that owes a notice.
#[derive(Debug, PartialEq, Eq)]
enum Standing {
    /// The log holds it: the notice is owed.
    Stored,
    /// The log holds another record in its place: its command was never stored.
    Superseded,
    /// The log does not reach it (yet).
    Unknown,
}

/// Where `by` stands in `game`'s log in `store`.
fn standing(store: &dyn EventStore, game: &GameKey, by: &OwedBy) -> Standing {
    match store.load_range(game, by.seq, 1) {
        Ok(records) => match records.first() {
            Some((seq, record)) if *seq == by.seq => {
                if blake3::hash(record).to_hex().as_str() == by.record {
                    Standing::Stored
                } else {
                    Standing::Superseded
                }
            }
            _ => Standing::Unknown,
        },
        Err(_) => Standing::Unknown,
    }
}

/// A seat's registration as stored.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Registration {
    /// The key webhook bodies are signed with, hex; made with the seat's first webhook.
    secret: Option<String>,
    /// What notices go to: webhooks, and e-mail addresses their owners confirmed.
    targets: Vec<NotifyTarget>,
    /// Addresses given and mailed a code, not confirmed yet: sent nothing else.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    unconfirmed: Vec<Unconfirmed>,
    /// When the seat's last code was mailed (ms since the Unix epoch): the next waits
    /// [`CONFIRM_MAIL_INTERVAL`] after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mailed_ms: Option<u64>,
    /// Wrong codes given since the last right one; at [`CONFIRM_TRIES_MAX`] the seat's
    /// unconfirmed addresses are dropped.
    #[serde(default, skip_serializing_if = "is_zero")]
    wrong: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// An e-mail address a seat gave, mailed a code that its owner has not given back yet.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
struct Unconfirmed {
    address: String,
    /// The code's blake3 hash, hex: the store keeps nothing that would confirm the address.
    code: String,
    /// When the code was mailed (ms since the Unix epoch); it lapses [`CONFIRM_CODE_VALID`]
    /// after.
    mailed_ms: u64,
}

/// How long a mailed code confirms its address.
pub const CONFIRM_CODE_VALID: Duration = Duration::from_secs(24 * 3600);
/// Least time between two codes mailed for one seat: whoever gives an address that is not
/// his makes the server mail it at most 6 times an hour per seat, in the server's own words.
pub const CONFIRM_MAIL_INTERVAL: Duration = Duration::from_secs(10 * 60);
/// Codes mailed to one mailbox in [`CONFIRM_MAILS_PER_ADDRESS_WINDOW`], from every seat of
/// every game this server holds: the per-seat interval bounds one seat, but a player who
/// creates games (20 an hour an address, with open creation) has two seats a game, and could
/// have a stranger's address mailed more every hour he kept at it. A mailbox is its address
/// in lower case, its local part without a `+tag` or dots: the one mailbox providers deliver
/// `some.one+1@…` and `Someone@…` to (two people whose local parts differ only so share a
/// count, which costs them no more than a wait). Counted in memory: a restart, which a player
/// cannot cause, begins the count again.
pub const CONFIRM_MAILS_PER_ADDRESS_MAX: usize = 6;
/// The window [`CONFIRM_MAILS_PER_ADDRESS_MAX`] counts over.
pub const CONFIRM_MAILS_PER_ADDRESS_WINDOW: Duration = Duration::from_secs(24 * 3600);
/// Wrong codes a seat may give before its unconfirmed addresses are dropped (a code has 40
/// bits, so guessing is hopeless either way; this keeps it so).
pub const CONFIRM_TRIES_MAX: u32 = 5;

/// The mailbox `address` reaches, as [`CONFIRM_MAILS_PER_ADDRESS_MAX`] counts it: lower case,
/// the local part unquoted (`"b\ob"` is `bob`, RFC 5321 4.1.2) and without a `+tag` or dots,
/// the domain as it is looked up (UTS 46, as lettre sends it: full-width letters and Unicode
/// read as their ASCII name). Each spelling of one mailbox counted apart would let a player
/// have it mailed without end.
fn mailbox(address: &str) -> String {
    let address = address.trim();
    let Some((local, domain)) = address.rsplit_once('@') else {
        return address.to_lowercase();
    };
    let local = match local
        .strip_prefix('"')
        .and_then(|quoted| quoted.strip_suffix('"'))
    {
        Some(quoted) => {
            let mut unquoted = String::with_capacity(quoted.len());
            let mut chars = quoted.chars();
            while let Some(c) = chars.next() {
                unquoted.push(if c == '\\' {
                    chars.next().unwrap_or(c)
                } else {
                    c
                });
            }
            unquoted
        }
        None => local.to_string(),
    }
    .to_lowercase();
    let local = local
        .split_once('+')
        .map_or(local.as_str(), |(base, _)| base);
    let domain = idna::domain_to_ascii(domain).unwrap_or_else(|_| domain.to_lowercase());
    format!("{}@{domain}", local.replace('.', ""))
}

/// Refuses what is not an e-mail address at a domain name. An address whose domain is an IP
/// literal (`bob@[10.0.0.5]`, `bob@[IPv6:::1]`) had the operator's relay deliver to any host
/// the player named, private and loopback ones included, past the checks a webhook's address
/// gets (`address::forbidden`); and one host's address is written many ways (`[IPv6:::1]`,
/// `[IPv6:0::1]`, …), each a mailbox of its own to [`CONFIRM_MAILS_PER_ADDRESS_MAX`], so a
/// player could have one mailbox there sent codes without end.
fn check_email(address: &str) -> Result<(), RegisterError> {
    let parsed = address
        .parse::<lettre::Address>()
        .map_err(|e| RegisterError::NotEmail {
            address: address.to_string(),
            why: e.to_string(),
        })?;
    if parsed.domain().starts_with('[') {
        return Err(RegisterError::DomainLiteral {
            address: address.to_string(),
        });
    }
    Ok(())
}

/// A code as typed: its letters, upper case, without dashes or spaces.
fn code_digest(code: &str) -> String {
    let letters: String = code
        .chars()
        .filter(|c| !matches!(c, '-' | ' '))
        .flat_map(char::to_uppercase)
        .collect();
    blake3::hash(letters.as_bytes()).to_hex().to_string()
}

impl Registration {
    pub fn targets(&self) -> &[NotifyTarget] {
        &self.targets
    }

    /// The seat's targets as its player is told them: the confirmed, then those waiting.
    fn listed(&self) -> Vec<String> {
        let waiting = self.unconfirmed.iter().map(|u| {
            format!(
                "email {} (unconfirmed: give the code e-mailed to it)",
                u.address
            )
        });
        self.targets.iter().map(describe).chain(waiting).collect()
    }

    /// Drops codes that lapsed by `now_ms`.
    fn lapse(&mut self, now_ms: u64) {
        let valid = CONFIRM_CODE_VALID.as_millis() as u64;
        self.unconfirmed
            .retain(|u| now_ms.saturating_sub(u.mailed_ms) < valid);
    }
}

/// How a target is named to its seat and in the outbox.
pub fn describe(target: &NotifyTarget) -> String {
    match target {
        NotifyTarget::Webhook { url } => format!("webhook {url}"),
        NotifyTarget::Email { address } => format!("email {address}"),
        NotifyTarget::Off => "off".into(),
        NotifyTarget::Confirm { .. } => "confirm".into(),
    }
}

/// How a target is named in the operator's log: a webhook by its scheme, host and port, an
/// e-mail address by its domain. A webhook's path, query and user part are often the
/// receiver's own secret (a chat service's hook is its URL), and a seat's address is the
/// player's: neither is the log's to keep.
pub fn logged(target: &NotifyTarget) -> String {
    match target {
        NotifyTarget::Webhook { url } => match reqwest::Url::parse(url) {
            Ok(url) => {
                let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
                let host = url.host_str().unwrap_or_default();
                format!("webhook {}://{host}{port}", url.scheme())
            }
            Err(_) => "webhook (not a URL)".into(),
        },
        NotifyTarget::Email { address } => match address.rsplit_once('@') {
            Some((_, domain)) => format!("email @{domain}"),
            None => "email (not an address)".into(),
        },
        NotifyTarget::Off => "off".into(),
        NotifyTarget::Confirm { .. } => "confirm".into(),
    }
}

fn side_byte(side: Side) -> u8 {
    match side {
        Side::A => 0,
        Side::B => 1,
    }
}

fn side_of(byte: u8) -> Option<Side> {
    match byte {
        0 => Some(Side::A),
        1 => Some(Side::B),
        _ => None,
    }
}

/// A registration's key: `r`, the game, the side.
fn registration_key(game: &GameKey, side: Side) -> Vec<u8> {
    let mut key = Vec::with_capacity(18);
    key.push(b'r');
    key.extend_from_slice(game);
    key.push(side_byte(side));
    key
}

/// An owed notice's key: `o`, the game, the side, the hand-over (big-endian).
/// The last byte of a clock-low notice's outbox key, after its hand-over.
const CLOCK_LOW_KEY: u8 = b'c';

/// The store's marker that a clock-low notice (outbox key `outbox`) was owed once.
fn told_key(outbox: &[u8]) -> Vec<u8> {
    let mut key = outbox.to_vec();
    key[0] = b't';
    key
}

fn outbox_key(game: &GameKey, side: Side, handover: u64) -> Vec<u8> {
    let mut key = registration_key(game, side);
    key[0] = b'o';
    key.extend_from_slice(&handover.to_be_bytes());
    key
}

/// The game and seat a key names.
fn seat_of(key: &[u8]) -> Option<(GameKey, Side)> {
    let game: GameKey = key.get(1..17)?.try_into().ok()?;
    Some((game, side_of(*key.get(17)?)?))
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// What the worker is told.
enum Message {
    /// A notice owed, handed to the store under `key`: already durable (a hand-over's, stored
    /// with its events) or to be awaited before it goes (`written`, a clock-low notice's).
    Owed {
        key: Vec<u8>,
        owed: Box<Owed>,
        written: Option<crate::store::Durable>,
    },
    /// The seat's player joined the game: what it was owed, it now sees for itself.
    Seen { game: GameKey, side: Side },
}

/// Why a seat's notification target is not registered, in words for its player.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    #[error("the registration could not be stored: {0}")]
    Store(crate::store::StoreError),
    #[error("this seat has {0} notification targets, the limit; remove them with `asl notify --off` and register again")]
    Limit(usize),
    #[error("no randomness for a secret: {0}")]
    Randomness(String),
    #[error("this server sends no e-mail: its operator has set no SMTP relay (`--smtp-relay`); register a webhook instead")]
    NoEmail,
    #[error("`{address}` is not an e-mail address ({why})")]
    NotEmail { address: String, why: String },
    #[error("`{address}` names its mail host by an IP address (`[…]`): codes and notices are mailed only to an address at a domain name")]
    DomainLiteral { address: String },
    #[error("{0}")]
    Address(#[from] address::AddressError),
    #[error("a code was e-mailed for this seat less than {} minutes ago; give it with `asl notify --confirm CODE`, or ask for another later", CONFIRM_MAIL_INTERVAL.as_secs() / 60)]
    MailedRecently,
    #[error("`{address}` has been mailed as many codes as one address is sent in {hours} hours ({CONFIRM_MAILS_PER_ADDRESS_MAX}, from any game on this server); ask again later", hours = CONFIRM_MAILS_PER_ADDRESS_WINDOW.as_secs() / 3600)]
    AddressMailedOften { address: String },
    #[error("no address of this seat waits for that code (codes lapse after {} hours); {left} more wrong codes drop the seat's unconfirmed addresses", CONFIRM_CODE_VALID.as_secs() / 3600)]
    WrongCode { left: u32 },
    #[error("{CONFIRM_TRIES_MAX} wrong codes: this seat's unconfirmed addresses are dropped; give the address again with `asl notify --email` for a new code")]
    TooManyWrongCodes,
}

/// Why the notifier does not start: the server does not start without it.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("cannot read the notification records: {0}")]
    Records(crate::store::StoreError),
    #[error("cannot build the webhook client: {0}")]
    Http(String),
    #[error("cannot use the SMTP relay {host}: {why}")]
    Smtp { host: String, why: String },
}

/// The server's notifier: the registrations, and the queue to the worker that delivers.
/// Whether this node holds a game, for nodes sharing a NATS store (`crate::games::cluster`):
/// each sends the notices of the games it holds. Given by the crate root, which wires the
/// rooms together, so this room needs nothing from the games above it.
pub type Holds = Arc<dyn Fn(&GameKey) -> bool + Send + Sync>;

pub struct Notifier {
    store: Arc<dyn EventStore>,
    config: Arc<Config>,
    /// Set in a cluster: which games' owed notices this node sends.
    holds: Option<Holds>,
    registrations: RwLock<HashMap<(GameKey, Side), Registration>>,
    /// The clock-low notices owed so far, by outbox key, kept in the store as markers
    /// ([`told_key`]): a game loaded again after a restart finds its clock low again, and
    /// its seat is not told twice for one hand-over.
    told: Mutex<std::collections::HashSet<Vec<u8>>>,
    queue: mpsc::Sender<Message>,
    guard: AddressGuard,
    /// When each mailbox was mailed a code (ms since the Unix epoch), within
    /// [`CONFIRM_MAILS_PER_ADDRESS_WINDOW`]: against [`CONFIRM_MAILS_PER_ADDRESS_MAX`].
    mailed_to: Mutex<HashMap<String, Vec<u64>>>,
    stop: tokio_watch::Sender<bool>,
    worker: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Notifier {
    /// Reads the registrations from the store and starts the worker, which first sends what
    /// the outbox still owes. Call from within the server's runtime.
    pub fn start(
        store: Arc<dyn EventStore>,
        config: Arc<Config>,
        holds: Option<Holds>,
    ) -> Result<Arc<Notifier>, StartError> {
        let records = store.notify_records().map_err(StartError::Records)?;
        let registrations = registrations_in(&records);
        let told = records
            .iter()
            .filter(|(k, _)| k.first() == Some(&b't'))
            .map(|(k, _)| k.clone())
            .collect();
        let (queue, inbox) = mpsc::channel(config.notify_queue_max);
        let (stop, stopping) = tokio_watch::channel(false);
        let notifier = Arc::new(Notifier {
            store,
            guard: AddressGuard::new(config.notify_allow_private),
            config,
            holds,
            registrations: RwLock::new(registrations),
            told: Mutex::new(told),
            mailed_to: Mutex::new(HashMap::new()),
            queue,
            stop,
            worker: Mutex::new(None),
        });
        let worker = worker::Worker::new(notifier.clone())?;
        *notifier.worker.lock().expect("notifier lock") =
            Some(tokio::spawn(worker.run(inbox, stopping)));
        Ok(notifier)
    }

    /// Stops the worker: deliveries under way are cut short, and what they had not delivered
    /// stays in the outbox for the next start.
    pub async fn stop(&self) {
        let _ = self.stop.send(true);
        let worker = self.worker.lock().expect("notifier lock").take();
        if let Some(worker) = worker {
            let _ = worker.await;
        }
    }

    /// Takes the registrations from the store's records as they are now.
    fn refresh_registrations(&self, records: &[(Vec<u8>, Vec<u8>)]) {
        *self.registrations.write().expect("notifier lock") = registrations_in(records);
    }

    /// Whether `side` of `game` has any target: only then does its game task look for
    /// hand-overs on its behalf.
    pub fn registered(&self, game: &GameKey, side: Side) -> bool {
        self.registrations
            .read()
            .expect("notifier lock")
            .get(&(*game, side))
            .is_some_and(|r| !r.targets.is_empty())
    }

    fn registration(&self, game: &GameKey, side: Side) -> Option<Registration> {
        self.registrations
            .read()
            .expect("notifier lock")
            .get(&(*game, side))
            .cloned()
    }

    /// A hand-over's notice to `notice.side`, owed by the log record `by`: its outbox key and
    /// record, for the game task to store **with** the events (`EventStore::append_with_notify`)
    /// and, once they are stored, to hand over with [`Notifier::owed`].
    fn owing(&self, game: &GameKey, notice: Notice, by: OwedBy) -> (Vec<u8>, Owed) {
        let key = outbox_key(game, notice.side, notice.handover);
        let owed = Owed {
            notice,
            owed_ms: now_ms(),
            done: vec![],
            by: Some(by),
        };
        (key, owed)
    }

    /// Hands a notice owed, and stored, to the worker's bounded queue. A full queue loses
    /// nothing: the worker finds the notice in the outbox on its next look
    /// (`notify_outbox_rescan`).
    fn owed(&self, key: Vec<u8>, owed: Owed, written: Option<crate::store::Durable>) {
        if self
            .queue
            .try_send(Message::Owed {
                key,
                owed: Box::new(owed),
                written,
            })
            .is_err()
        {
            crate::operations::metrics::METRICS.refused("notify_queue_max");
            warn!("the notification queue is full; the notice waits in the outbox");
        }
    }

    /// Owes a clock-low `notice` to its seat: no command owes it (the clock's timer does), so
    /// it is written to the outbox on its own (handed to the store, awaited by the worker
    /// before it goes) and handed to the worker's queue.
    pub(crate) fn owe_clock_low(&self, game: &GameKey, notice: Notice) {
        let mut key = outbox_key(game, notice.side, notice.handover);
        // A clock-low notice is a notice of its own, beside the turn notice of the same
        // hand-over (which may still be under way).
        key.push(CLOCK_LOW_KEY);
        let told = told_key(&key);
        if !self
            .told
            .lock()
            .expect("notifier lock")
            .insert(told.clone())
        {
            return;
        }
        // Written before the notice: a notice owed and lost in a crash is still in the
        // outbox, found by the next start's look.
        drop(self.store.put_notify(told, Some(vec![])));
        let owed = Owed {
            notice,
            owed_ms: now_ms(),
            done: vec![],
            by: None,
        };
        let bytes = serde_json::to_vec(&owed).expect("a notice encodes");
        let written = self.store.put_notify(key.clone(), Some(bytes));
        self.owed(key, owed, Some(written));
    }

    /// The seat's player joined its game: a notice it is owed is not sent.
    pub(crate) fn seen(&self, game: &GameKey, side: Side) {
        if self.registered(game, side) {
            let _ = self.queue.try_send(Message::Seen { game: *game, side });
        }
    }

    /// Sets one of the seat's targets, or removes them all (`NotifyTarget::Off`): checked,
    /// then stored durably before the answer. Returns the seat's targets and, when this made
    /// the seat's webhook secret, the secret, to be shown once.
    pub async fn register(
        &self,
        game: &GameKey,
        side: Side,
        target: NotifyTarget,
    ) -> Result<(Vec<String>, Option<String>), RegisterError> {
        let key = registration_key(game, side);
        if target == NotifyTarget::Off {
            // When the seat's last code was mailed outlives its targets: removing them must
            // not let a code be mailed again sooner.
            let interval = CONFIRM_MAIL_INTERVAL.as_millis() as u64;
            let mailed_ms = self
                .registration(game, side)
                .and_then(|r| r.mailed_ms)
                .filter(|at| now_ms().saturating_sub(*at) < interval);
            if mailed_ms.is_some() {
                let left = Registration {
                    mailed_ms,
                    ..Registration::default()
                };
                self.keep(game, side, left).await?;
            } else {
                self.store
                    .put_notify(key, None)
                    .await
                    .map_err(RegisterError::Store)?;
                self.registrations
                    .write()
                    .expect("notifier lock")
                    .remove(&(*game, side));
            }
            let _ = self.queue.try_send(Message::Seen { game: *game, side });
            return Ok((vec![], None));
        }
        if let NotifyTarget::Confirm { code } = &target {
            return self.confirm(game, side, code).await;
        }
        self.check_target(&target).await?;
        if let NotifyTarget::Email { address } = &target {
            return self.ask_to_confirm(game, side, address).await;
        }
        let mut registration = self.registration(game, side).unwrap_or_default();
        let mut made = None;
        if !registration.targets.contains(&target) {
            let max = self.config.notify_targets_per_seat_max;
            if registration.targets.len() + registration.unconfirmed.len() >= max {
                return Err(RegisterError::Limit(max));
            }
            registration.targets.push(target.clone());
        }
        if matches!(target, NotifyTarget::Webhook { .. }) && registration.secret.is_none() {
            let mut secret = [0u8; 32];
            getrandom::fill(&mut secret).map_err(|e| RegisterError::Randomness(e.to_string()))?;
            let secret = data_encoding::HEXLOWER.encode(&secret);
            registration.secret = Some(secret.clone());
            made = Some(secret);
        }
        let targets = self.keep(game, side, registration).await?;
        Ok((targets, made))
    }

    /// Stores the seat's registration durably, then keeps it: what its player is told.
    async fn keep(
        &self,
        game: &GameKey,
        side: Side,
        registration: Registration,
    ) -> Result<Vec<String>, RegisterError> {
        let bytes = serde_json::to_vec(&registration).expect("a registration encodes");
        self.store
            .put_notify(registration_key(game, side), Some(bytes))
            .await
            .map_err(RegisterError::Store)?;
        let targets = registration.listed();
        self.registrations
            .write()
            .expect("notifier lock")
            .insert((*game, side), registration);
        Ok(targets)
    }

    /// An address given: kept unconfirmed, and mailed a code in the server's own words (no
    /// text a player wrote), which the seat gives back with [`NotifyTarget::Confirm`]. Until
    /// then it is sent no notice. One code per seat per [`CONFIRM_MAIL_INTERVAL`].
    async fn ask_to_confirm(
        &self,
        game: &GameKey,
        side: Side,
        address: &str,
    ) -> Result<(Vec<String>, Option<String>), RegisterError> {
        let mut registration = self.registration(game, side).unwrap_or_default();
        let listed = NotifyTarget::Email {
            address: address.to_string(),
        };
        if registration.targets.contains(&listed) {
            return Ok((registration.listed(), None));
        }
        let now = now_ms();
        registration.lapse(now);
        let interval = CONFIRM_MAIL_INTERVAL.as_millis() as u64;
        if registration
            .mailed_ms
            .is_some_and(|at| now.saturating_sub(at) < interval)
        {
            return Err(RegisterError::MailedRecently);
        }
        registration.unconfirmed.retain(|u| u.address != address);
        let max = self.config.notify_targets_per_seat_max;
        if registration.targets.len() + registration.unconfirmed.len() >= max {
            return Err(RegisterError::Limit(max));
        }
        self.count_mail_to(address, now)?;
        let mut bytes = [0u8; 5];
        getrandom::fill(&mut bytes).map_err(|e| RegisterError::Randomness(e.to_string()))?;
        let letters = data_encoding::BASE32_NOPAD.encode(&bytes);
        let code = format!("{}-{}", &letters[..4], &letters[4..]);
        registration.unconfirmed.push(Unconfirmed {
            address: address.to_string(),
            code: code_digest(&code),
            mailed_ms: now,
        });
        registration.mailed_ms = Some(now);
        let targets = self.keep(game, side, registration).await?;
        if let Some(relay) = self.config.smtp.clone() {
            let game = data_encoding::HEXLOWER.encode(game);
            let address = address.to_string();
            let tries = deliver::Tries {
                max: self.config.notify_tries_max,
                first_pause: self.config.notify_retry_first,
                stopping: self.stop.subscribe(),
            };
            tokio::spawn(async move {
                let sent = match deliver::smtp_transport(&relay) {
                    Ok(transport) => {
                        deliver::confirmation(&transport, &relay, &address, &game, &code, tries)
                            .await
                    }
                    Err(e) => Err(deliver::Undelivered::GaveUp(e.to_string())),
                };
                if let Err(deliver::Undelivered::GaveUp(why)) = sent {
                    let target = logged(&NotifyTarget::Email { address });
                    warn!(%target, %why, "a confirmation code was not mailed");
                }
            });
        }
        Ok((targets, None))
    }

    /// Counts a code about to be mailed to `address` at `now`, or refuses it when its mailbox
    /// has had [`CONFIRM_MAILS_PER_ADDRESS_MAX`] in the window, whichever seats asked. Mailboxes
    /// with no code in the window are forgotten.
    fn count_mail_to(&self, address: &str, now: u64) -> Result<(), RegisterError> {
        let window = CONFIRM_MAILS_PER_ADDRESS_WINDOW.as_millis() as u64;
        let mut mailed_to = self.mailed_to.lock().expect("notifier lock");
        mailed_to.retain(|_, times| {
            times.retain(|at| now.saturating_sub(*at) < window);
            !times.is_empty()
        });
        let times = mailed_to.entry(mailbox(address)).or_default();
        if times.len() >= CONFIRM_MAILS_PER_ADDRESS_MAX {
            return Err(RegisterError::AddressMailedOften {
                address: address.to_string(),
            });
        }
        times.push(now);
        Ok(())
    }

    /// A code given back: the address it was mailed to is confirmed, and gets notices from
    /// now on. A wrong code is counted; [`CONFIRM_TRIES_MAX`] of them drop the seat's
    /// unconfirmed addresses.
    async fn confirm(
        &self,
        game: &GameKey,
        side: Side,
        code: &str,
    ) -> Result<(Vec<String>, Option<String>), RegisterError> {
        let mut registration = self.registration(game, side).unwrap_or_default();
        registration.lapse(now_ms());
        let digest = code_digest(code);
        match registration
            .unconfirmed
            .iter()
            .position(|u| u.code == digest)
        {
            Some(at) => {
                let confirmed = registration.unconfirmed.remove(at);
                let target = NotifyTarget::Email {
                    address: confirmed.address,
                };
                if !registration.targets.contains(&target) {
                    registration.targets.push(target);
                }
                registration.wrong = 0;
                let targets = self.keep(game, side, registration).await?;
                Ok((targets, None))
            }
            None => {
                registration.wrong += 1;
                let wrong = registration.wrong;
                if wrong >= CONFIRM_TRIES_MAX {
                    registration.unconfirmed.clear();
                    registration.wrong = 0;
                }
                self.keep(game, side, registration).await?;
                if wrong >= CONFIRM_TRIES_MAX {
                    Err(RegisterError::TooManyWrongCodes)
                } else {
                    Err(RegisterError::WrongCode {
                        left: CONFIRM_TRIES_MAX - wrong,
                    })
                }
            }
        }
    }

    /// Refuses a target this server cannot or may not send to, saying why.
    async fn check_target(&self, target: &NotifyTarget) -> Result<(), RegisterError> {
        match target {
            NotifyTarget::Off | NotifyTarget::Confirm { .. } => Ok(()),
            NotifyTarget::Email { address } => {
                if self.config.smtp.is_none() {
                    return Err(RegisterError::NoEmail);
                }
                check_email(address)
            }
            NotifyTarget::Webhook { url } => Ok(self.guard.check_url(url).await?),
        }
    }
}

/// The registrations among the notification records.
fn registrations_in(records: &[(Vec<u8>, Vec<u8>)]) -> HashMap<(GameKey, Side), Registration> {
    let mut registrations = HashMap::new();
    for (key, value) in records {
        if key.first() != Some(&b'r') {
            continue;
        }
        match (seat_of(key), serde_json::from_slice::<Registration>(value)) {
            (Some(seat), Ok(registration)) => {
                registrations.insert(seat, registration);
            }
            _ => warn!("a notification registration in the store cannot be read; skipped"),
        }
    }
    registrations
}

/// The quiet interval as a deadline for a notice owed at `owed_ms`.
fn due_after(owed_ms: u64, quiet: Duration) -> tokio::time::Instant {
    let due_ms = owed_ms.saturating_add(quiet.as_millis() as u64);
    let wait = Duration::from_millis(due_ms.saturating_sub(now_ms()));
    tokio::time::Instant::now() + wait
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mailbox is counted once however the address is written: a quoted local part
    /// (`"bob"`, with a quoted pair `"b\ob"`) and a domain in full-width letters or in
    /// Unicode reach the same mailbox as the plain address, and each spelling was a count of
    /// its own, so a player could have a stranger mailed without end under
    /// [`CONFIRM_MAILS_PER_ADDRESS_MAX`]. Every spelling here is one the server takes.
    #[test]
    fn every_spelling_of_an_address_is_one_mailbox() {
        let plain = mailbox("bob@example.com");
        for spelling in [
            "\"bob\"@example.com",
            "\"b\\ob\"@example.com",
            "\"b.o.b+x\"@example.com",
            "bob@\u{ff45}\u{ff58}ample.com",
            "B.ob+tag@EXAMPLE.com",
        ] {
            assert!(spelling.parse::<lettre::Address>().is_ok(), "{spelling}");
            assert_eq!(mailbox(spelling), plain, "{spelling}");
        }
        let unicode = mailbox("bob@ex\u{e4}mple.com");
        assert!("bob@ex\u{e4}mple.com".parse::<lettre::Address>().is_ok());
        assert_eq!(unicode, mailbox("bob@xn--exmple-cua.com"));
        assert_eq!(unicode, mailbox("bob@EX\u{c4}MPLE.com"));
        assert_ne!(mailbox("bobby@example.com"), plain);
        assert_ne!(mailbox("bob@example.org"), plain);
    }

    /// An address at an IP literal is refused: the relay would be sent to any host named,
    /// private ones included, and one host's address has endless spellings, each counted
    /// apart under [`CONFIRM_MAILS_PER_ADDRESS_MAX`]. Before, every one here was taken.
    #[test]
    fn an_address_at_an_ip_literal_is_refused() {
        for literal in [
            "bob@[10.0.0.5]",
            "bob@[127.0.0.1]",
            "bob@[IPv6:::1]",
            "bob@[IPv6:0::1]",
            "bob@[IPv6:0:0::1]",
        ] {
            assert!(literal.parse::<lettre::Address>().is_ok(), "{literal}");
            assert!(
                matches!(
                    check_email(literal),
                    Err(RegisterError::DomainLiteral { .. })
                ),
                "{literal}"
            );
        }
        assert_ne!(mailbox("bob@[IPv6:::1]"), mailbox("bob@[IPv6:0::1]"));
        for address in ["bob@example.com", "\"bob\"@ex\u{e4}mple.com"] {
            assert!(check_email(address).is_ok(), "{address}");
        }
        assert!(matches!(
            check_email("bob@example.com."),
            Err(RegisterError::NotEmail { .. })
        ));
    }

    #[test]
    fn keys_name_their_seat_and_sort_by_hand_over() {
        let game = [7u8; 16];
        let a = outbox_key(&game, Side::B, 2);
        let b = outbox_key(&game, Side::B, 10);
        assert!(a < b);
        assert_eq!(seat_of(&a), Some((game, Side::B)));
        assert_eq!(
            seat_of(&registration_key(&game, Side::A)),
            Some((game, Side::A))
        );
        assert_eq!(seat_of(b"r"), None);
    }

    /// A notice found in the outbox goes only once the log holds the very record that owes it
    /// (the NATS store writes the outbox first): not before, and never once another record
    /// took its place.
    #[test]
    fn a_notice_stands_by_the_record_that_owes_it() {
        let store = crate::store::MemoryStore::new();
        let game = [8u8; 16];
        let by = OwedBy::of(2, b"two");
        assert_eq!(standing(&store, &game, &by), Standing::Unknown);
        store
            .append(&game, 1, vec![b"one".to_vec()])
            .wait()
            .unwrap();
        assert_eq!(standing(&store, &game, &by), Standing::Unknown);
        store
            .append(&game, 2, vec![b"two".to_vec()])
            .wait()
            .unwrap();
        assert_eq!(standing(&store, &game, &by), Standing::Stored);
        let other = OwedBy::of(2, b"another two");
        assert_eq!(standing(&store, &game, &other), Standing::Superseded);
        // Stored before this field existed: owed by nothing named, as a clock-low notice.
        let old: Owed = serde_json::from_str(
            r#"{"notice":{"kind":"asl.notice","format":1,"game":"g","side":"B","side_name":"R","scenario":"s","reasons":["your_turn"],"turn":1,"player_turn":1,"phase":"RPh","to_act":"R","handover":3,"idempotency_key":"g:B:3","text":"t"},"owed_ms":1,"done":[]}"#,
        )
        .unwrap();
        assert!(old.by.is_none());
    }
}
