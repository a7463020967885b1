//! The notifier's worker: one task, apart from every game task, that holds the notices owed
//! until their quiet interval has passed, and delivers them.
//!
//! A seat has at most one notice waiting: a later one takes the earlier one's reasons and
//! replaces it in the outbox (coalescing), and the quiet interval runs from the later one. A
//! notice is removed from the outbox once every target has it or was given up on; one whose
//! delivery was cut short by a stop stays and is sent after the next start. That is "exactly
//! once" as far as a server can make it: a crash after a receiver took a notice and before its
//! removal was stored sends it again, with the same idempotency key.

use super::deliver::{self, Tries, Undelivered};
use super::{describe, due_after, logged, seat_of, standing, Message, Notifier, Owed, Standing};
use crate::operations::metrics::METRICS;
use crate::store::GameKey;
use lettre::{AsyncSmtpTransport, Tokio1Executor};
use protocol::wire::NotifyTarget;
use protocol::Side;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinSet;
use tokio::time::Instant;
use tracing::{debug, info, warn};

/// A notice waiting for its quiet interval to pass.
struct Waiting {
    key: Vec<u8>,
    owed: Owed,
    due: Instant,
    /// The outbox write, awaited before the notice goes.
    written: Option<crate::store::Durable>,
}

pub(super) struct Worker {
    notifier: Arc<Notifier>,
    waiting: HashMap<(GameKey, Side), Waiting>,
    /// The waiting notices in the order they fall due: the next due and every due one found
    /// without looking through all that wait, so a burst of thousands costs each notice
    /// the same (`asl-load correspondence`, BENCHMARKS.md). Holds exactly `waiting`'s seats.
    queue: BTreeSet<(Instant, (GameKey, Side))>,
    /// Outbox keys being delivered now.
    delivering: HashSet<Vec<u8>>,
    /// Deliveries this hour per seat: when the hour began, and how many.
    sent: HashMap<(GameKey, Side), (Instant, u32)>,
    /// When `sent` was last cleared of hours that have turned.
    sent_swept: Instant,
    http: reqwest::Client,
    smtp: Option<Arc<AsyncSmtpTransport<Tokio1Executor>>>,
    /// Set when the server stops; deliveries make no further try then.
    stopping: watch::Receiver<bool>,
}

/// How long a stop waits for deliveries under way: a request already sent gets its answer
/// (and its notice its removal from the outbox), none is started.
const STOP_WAIT: Duration = Duration::from_secs(20);

/// Notices delivered at once. A receiver that hangs holds a slot for a request's timeout;
/// past this the others wait their turn, so a crowd of slow webhooks cannot make the server
/// hold thousands of requests open.
pub const DELIVERIES_AT_ONCE_MAX: usize = 64;

const HOUR: Duration = Duration::from_secs(3600);

/// How often the hourly send counts are cleared of hours that have turned.
const SENT_SWEEP_EVERY: Duration = Duration::from_secs(60);

impl Worker {
    pub(super) fn new(notifier: Arc<Notifier>) -> Result<Worker, super::StartError> {
        let http = deliver::http_client(&notifier.guard)?;
        let smtp = match &notifier.config.smtp {
            Some(relay) => Some(Arc::new(deliver::smtp_transport(relay)?)),
            None => None,
        };
        Ok(Worker {
            notifier,
            waiting: HashMap::new(),
            queue: BTreeSet::new(),
            delivering: HashSet::new(),
            sent: HashMap::new(),
            sent_swept: Instant::now(),
            http,
            smtp,
            stopping: watch::channel(false).1,
        })
    }

    pub(super) async fn run(
        mut self,
        mut inbox: mpsc::Receiver<Message>,
        stopping: watch::Receiver<bool>,
    ) {
        self.stopping = stopping;
        let mut deliveries: JoinSet<Vec<u8>> = JoinSet::new();
        let mut rescan = tokio::time::interval(self.notifier.config.notify_outbox_rescan);
        loop {
            let next = self.queue.first().map(|(due, _)| *due);
            tokio::select! {
                _ = self.stopping.changed() => break,
                message = inbox.recv() => match message {
                    Some(message) => self.take(message),
                    None => break,
                },
                // The first tick is at once: what the outbox owes from before the start.
                _ = rescan.tick() => self.rescan(),
                // Not while every delivery slot is taken: a finished one makes room first.
                _ = tokio::time::sleep_until(next.unwrap_or_else(Instant::now)),
                    if next.is_some() && deliveries.len() < DELIVERIES_AT_ONCE_MAX => {
                    self.dispatch(&mut deliveries);
                }
                Some(done) = deliveries.join_next(), if !deliveries.is_empty() => {
                    if let Ok(key) = done {
                        self.delivering.remove(&key);
                    }
                }
            }
        }
        // Deliveries make no further try; a request under way gets its answer, so a notice
        // delivered is not left owed. What was not delivered stays for the next start.
        let drained = tokio::time::timeout(STOP_WAIT, async {
            while deliveries.join_next().await.is_some() {}
        })
        .await;
        if drained.is_err() {
            deliveries.abort_all();
            while deliveries.join_next().await.is_some() {}
        }
        debug!("notifier stopped");
    }

    fn take(&mut self, message: Message) {
        match message {
            Message::Owed { key, owed, written } => self.wait(key, *owed, written),
            Message::Seen { game, side } => {
                if let Some(gone) = self.unwait(&(game, side)) {
                    debug!("a notice's seat joined its game; not sent");
                    drop(self.notifier.store.put_notify(gone.key, None));
                }
            }
        }
    }

    /// Holds `owed` for its seat, replacing (and taking the reasons of) what waited before.
    fn wait(&mut self, key: Vec<u8>, mut owed: Owed, written: Option<crate::store::Durable>) {
        if self.delivering.contains(&key) {
            return;
        }
        let Some(seat) = seat_of(&key) else { return };
        if let Some(earlier) = self.unwait(&seat) {
            if earlier.key == key {
                // The same notice, found again (a rescan racing its message).
                self.hold(seat, earlier);
                return;
            }
            let mut reasons = earlier.owed.notice.reasons.clone();
            for r in owed.notice.reasons.drain(..) {
                if !reasons.contains(&r) {
                    reasons.push(r);
                }
            }
            owed.notice.reasons = reasons;
            owed.notice.text = owed.notice.summary();
            // The later notice takes the earlier one's place in the outbox; both writes go to
            // the store in this order.
            drop(self.notifier.store.put_notify(earlier.key, None));
            let bytes = serde_json::to_vec(&owed).expect("a notice encodes");
            drop(self.notifier.store.put_notify(key.clone(), Some(bytes)));
        }
        let due = due_after(owed.owed_ms, self.notifier.config.notify_quiet);
        self.hold(
            seat,
            Waiting {
                key,
                owed,
                due,
                written,
            },
        );
    }

    /// Holds `waiting` for `seat` until it is due (no notice waits for the seat already).
    fn hold(&mut self, seat: (GameKey, Side), waiting: Waiting) {
        self.queue.insert((waiting.due, seat));
        self.waiting.insert(seat, waiting);
    }

    /// The notice waiting for `seat`, no longer held.
    fn unwait(&mut self, seat: &(GameKey, Side)) -> Option<Waiting> {
        let waiting = self.waiting.remove(seat)?;
        self.queue.remove(&(waiting.due, *seat));
        Some(waiting)
    }

    /// Takes up every notice the outbox holds that is neither waiting nor being delivered.
    fn rescan(&mut self) {
        let records = match self.notifier.store.notify_records() {
            Ok(records) => records,
            Err(e) => {
                warn!(error = %e, "cannot read the notification outbox; trying again later");
                return;
            }
        };
        // Registrations made on another node sharing the store come in here too.
        self.notifier.refresh_registrations(&records);
        let known: HashSet<Vec<u8>> = self.waiting.values().map(|w| w.key.clone()).collect();
        let mut found = 0;
        for (key, value) in records {
            if key.first() != Some(&b'o') || known.contains(&key) || self.delivering.contains(&key)
            {
                continue;
            }
            // Nodes sharing a NATS store each see the whole outbox: a notice found there is
            // sent by the node holding its game, not by all of them.
            if let (Some(holds), Some((game, _))) = (&self.notifier.holds, seat_of(&key)) {
                if !holds(&game) {
                    continue;
                }
            }
            match serde_json::from_slice::<Owed>(&value) {
                Ok(owed) => {
                    // A hand-over's notice goes once the log holds the record that owes it
                    // (`Owed::by`): always, where the two were one write; with the NATS store,
                    // which writes the outbox first, not for a command a stop kept out of the
                    // log.
                    if let (Some(by), Some((game, _))) = (&owed.by, seat_of(&key)) {
                        match standing(&*self.notifier.store, &game, by) {
                            Standing::Stored => {}
                            Standing::Superseded => {
                                info!("a notice owed by a command never stored; removed");
                                drop(self.notifier.store.put_notify(key, None));
                                continue;
                            }
                            // Looked at again on the next rescan.
                            Standing::Unknown => continue,
                        }
                    }
                    found += 1;
                    self.wait(key, owed, None);
                }
                Err(_) => {
                    warn!("an owed notice in the store cannot be read; removed");
                    drop(self.notifier.store.put_notify(key, None));
                }
            }
        }
        if found > 0 {
            info!(found, "notices owed found in the outbox");
        }
    }

    /// Starts delivering every notice whose quiet interval has passed, within each seat's
    /// sends per hour (one over it waits for the hour to turn).
    fn dispatch(&mut self, deliveries: &mut JoinSet<Vec<u8>>) {
        let now = Instant::now();
        // Hours that have turned are forgotten, so the counts stay as many as busy seats:
        // looked through once a minute, not at every dispatch.
        if now.duration_since(self.sent_swept) >= SENT_SWEEP_EVERY {
            self.sent
                .retain(|_, (began, _)| now.duration_since(*began) < HOUR);
            self.sent_swept = now;
        }
        let max = self.notifier.config.notify_sends_per_hour_max;
        // The due notices in order, each either sent or put off to its hour's turn: every
        // turn of the loop takes one off the front.
        while deliveries.len() < DELIVERIES_AT_ONCE_MAX {
            let Some(&(due, seat)) = self.queue.first() else {
                break;
            };
            if due > now {
                break;
            }
            let hour = self.sent.entry(seat).or_insert((now, 0));
            if now.duration_since(hour.0) >= HOUR {
                *hour = (now, 0);
            }
            if hour.1 >= max {
                METRICS.refused("notify_sends_per_hour_max");
                let turn = hour.0 + HOUR;
                match self.unwait(&seat) {
                    Some(mut w) => {
                        w.due = turn;
                        self.hold(seat, w);
                    }
                    // `queue` holds only waiting seats; should one be left, it goes.
                    None => {
                        self.queue.remove(&(due, seat));
                    }
                }
                continue;
            }
            hour.1 += 1;
            let waiting = self.unwait(&seat).expect("due, so waiting");
            self.delivering.insert(waiting.key.clone());
            deliveries.spawn(deliver_one(
                self.notifier.clone(),
                self.http.clone(),
                self.smtp.clone(),
                seat,
                waiting,
                self.stopping.clone(),
            ));
        }
    }
}

/// Delivers one notice to each target of its seat that does not have it yet, recording each
/// success in the outbox; then removes it. Returns its key.
async fn deliver_one(
    notifier: Arc<Notifier>,
    http: reqwest::Client,
    smtp: Option<Arc<AsyncSmtpTransport<Tokio1Executor>>>,
    (game, side): (GameKey, Side),
    waiting: Waiting,
    stopping: watch::Receiver<bool>,
) -> Vec<u8> {
    let Waiting {
        key,
        mut owed,
        written,
        ..
    } = waiting;
    if let Some(written) = written {
        if let Err(e) = written.await {
            warn!(error = %e, "a notice could not be written to the outbox; sending it anyway");
        }
    }
    let registration = notifier.registration(&game, side).unwrap_or_default();
    let config = &notifier.config;
    let tries = Tries {
        max: config.notify_tries_max,
        first_pause: config.notify_retry_first,
        stopping,
    };
    let body = serde_json::to_vec(&owed.notice).expect("a notice encodes");
    for target in registration.targets() {
        let name = describe(target);
        if owed.done.contains(&name) {
            continue;
        }
        let sent = match target {
            NotifyTarget::Webhook { url } => match &registration.secret {
                Some(secret) => {
                    deliver::webhook(
                        &http,
                        &notifier.guard,
                        url,
                        secret,
                        &owed.notice,
                        &body,
                        tries.clone(),
                    )
                    .await
                }
                None => Err(Undelivered::GaveUp("the seat has no secret".into())),
            },
            NotifyTarget::Email { address } => match (&smtp, &config.smtp) {
                (Some(transport), Some(relay)) => {
                    deliver::email(transport, relay, address, &owed.notice, tries.clone()).await
                }
                _ => Err(Undelivered::GaveUp("this server has no SMTP relay".into())),
            },
            NotifyTarget::Off | NotifyTarget::Confirm { .. } => Ok(()),
        };
        match sent {
            Ok(()) => debug!(target = %logged(target), "notice delivered"),
            Err(Undelivered::GaveUp(why)) => given_up(target, &why),
            // Owed still: the next start sends it to the targets that do not have it.
            Err(Undelivered::Stopped) => return key,
        }
        // Delivered or given up, this target is done with this notice.
        owed.done.push(name);
        let bytes = serde_json::to_vec(&owed).expect("a notice encodes");
        let _ = notifier.store.put_notify(key.clone(), Some(bytes)).await;
    }
    if let Err(e) = notifier.store.put_notify(key.clone(), None).await {
        warn!(error = %e, "a delivered notice could not be removed from the outbox; it may be sent again");
    }
    key
}

/// Logs a notice given up on `target`, at the default level, naming the target as
/// [`logged`] does.
fn given_up(target: &NotifyTarget, why: &str) {
    warn!(target = %logged(target), %why, "a notice was given up");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::Mutex;

    /// The lines logged while `f` runs, at the server's default level.
    fn logged_by(f: impl FnOnce()) -> String {
        #[derive(Clone, Default)]
        struct Lines(Arc<Mutex<Vec<u8>>>);
        impl Write for Lines {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter("info")
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        let bytes = lines.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    /// A webhook's URL is the player's credential for his receiver (a chat service's hook
    /// carries its secret in the path or the query, a receiver may take a password in the
    /// URL): the operator's log names the webhook by its scheme and host only, and an e-mail
    /// target by its domain.
    #[test]
    fn a_notice_given_up_is_logged_without_the_targets_secrets() {
        let webhook = NotifyTarget::Webhook {
            url: "https://player:hunter2@hooks.example.org:8443/services/T0/SECRETPATH?token=SECRETQUERY#frag"
                .into(),
        };
        let lines = logged_by(|| given_up(&webhook, "the webhook answered 404 Not Found"));
        assert!(lines.contains("a notice was given up"), "{lines}");
        assert!(lines.contains("https://hooks.example.org:8443"), "{lines}");
        for secret in ["hunter2", "player", "SECRETPATH", "SECRETQUERY", "frag"] {
            assert!(!lines.contains(secret), "{secret}: {lines}");
        }
        let email = NotifyTarget::Email {
            address: "someone.private@mail.example.org".into(),
        };
        let lines = logged_by(|| given_up(&email, "the relay refused it"));
        assert!(lines.contains("mail.example.org"), "{lines}");
        assert!(!lines.contains("someone.private"), "{lines}");
    }
}
