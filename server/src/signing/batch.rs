//! The server's receipt signer, shared by every game task: heads asked for at about the same
//! moment, across all games, are signed together under one signature over their Merkle root
//! (`protocol::record::signed::sign_batch`). An ed25519 signature is the costliest step of a
//! command's receipt; under load one signature serves a whole group commit's commands.
//!
//! No thread of its own, and no waiting on a clock: the first request finding nobody signing
//! becomes the *leader*. If another command is on its way to a receipt (stored or being
//! stored, its head not asked for yet: [`Signer::coming`]), the leader yields to the runtime
//! once — the game tasks woken by the same group commit run meanwhile and queue their heads —
//! then takes the queue (at most [`BATCH_HEADS_MAX`], its own head first), signs it, and hands
//! every follower its receipt. Leadership then passes to the oldest follower still queued (its
//! head arrived while the batch was signed), or lapses when the queue is empty: no request is
//! left waiting without a leader, and no leader signs for longer than one batch. A game alone
//! signs at once: a yield with nothing else to run would park the thread for a moment and
//! wake another to take over its work, which costs more than it saves.
//!
//! Leadership is a token ([`Leadership`]) that passes it on when dropped: a leader whose game
//! task is cancelled mid-batch, or a follower handed leadership that is gone before it takes
//! it, hands it on, so no follower is stranded.

use protocol::record::signed::{sign_batch, Head, ServerKey, ServerSigningKey, SignedHead};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Most heads signed under one signature. Each adds a hash or two to the batch and a step to
/// the proofs only when the batch doubles; this bounds the work one leader does for the others
/// (its own game waits for it) and keeps every proof within 10 steps, far inside
/// `PROOF_DEPTH_MAX`. Heads past it wait for the next batch.
pub const BATCH_HEADS_MAX: usize = 1024;

const _: () = assert!(BATCH_HEADS_MAX <= 1 << protocol::record::signed::PROOF_DEPTH_MAX);

/// Signs heads in batches; cheap to clone, one per server.
#[derive(Clone)]
pub struct Signer {
    inner: Arc<Inner>,
}

struct Inner {
    key: Arc<ServerSigningKey>,
    queue: Mutex<Queue>,
    /// Commands on their way to a receipt: live [`Coming`]s.
    coming: AtomicUsize,
}

/// A command on its way to a receipt, from the moment its records go to the store until its
/// head is asked for: while one exists, a leader waits a moment for its head. Dropped when the
/// head is asked for, or with a command that never gets that far.
pub struct Coming(Arc<Inner>);

impl Drop for Coming {
    fn drop(&mut self) {
        self.0.coming.fetch_sub(1, Ordering::SeqCst);
    }
}

#[derive(Default)]
struct Queue {
    /// Whether a leader exists (a [`Leadership`] token is alive).
    leading: bool,
    /// The followers, oldest first.
    waiting: VecDeque<Waiter>,
}

struct Waiter {
    head: Head,
    reply: oneshot::Sender<Settled>,
}

/// What a follower is sent.
enum Settled {
    Signed(SignedHead),
    /// Its head was not signed yet: it now leads, and signs it with the next batch.
    Lead(Leadership),
}

/// The right to sign the next batch: one exists while `leading` is set. Dropped — used, or
/// lost with a cancelled task or an unread message — it passes leadership on.
struct Leadership {
    inner: Option<Arc<Inner>>,
}

impl Drop for Leadership {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            hand_over(&inner);
        }
    }
}

/// Gives leadership to the oldest follower still waiting, or ends it if none is.
fn hand_over(inner: &Arc<Inner>) {
    loop {
        let next = {
            let mut queue = inner.queue.lock().expect("signer queue");
            match queue.waiting.pop_front() {
                Some(next) => next,
                None => {
                    queue.leading = false;
                    return;
                }
            }
        };
        let token = Leadership {
            inner: Some(inner.clone()),
        };
        match next.reply.send(Settled::Lead(token)) {
            Ok(()) => return,
            // That follower is gone: the token comes back unsent, and must not recurse here.
            Err(Settled::Lead(mut token)) => {
                token.inner = None;
            }
            Err(Settled::Signed(_)) => unreachable!("a leadership was sent"),
        }
    }
}

impl Signer {
    pub fn new(key: Arc<ServerSigningKey>) -> Signer {
        Signer {
            inner: Arc::new(Inner {
                key,
                queue: Mutex::new(Queue::default()),
                coming: AtomicUsize::new(0),
            }),
        }
    }

    /// The signing key itself, for what is signed alone (an export's head).
    pub fn key(&self) -> &ServerSigningKey {
        &self.inner.key
    }

    /// The public key receipts are signed under.
    pub fn public(&self) -> ServerKey {
        ServerKey::of(&self.inner.key)
    }

    /// Counts a command on its way to a receipt until the token is dropped.
    pub fn coming(&self) -> Coming {
        self.inner.coming.fetch_add(1, Ordering::SeqCst);
        Coming(self.inner.clone())
    }

    /// `head` signed, in a batch with whatever other heads are asked for at the same moment.
    pub async fn sign(&self, head: Head) -> SignedHead {
        let waiting = {
            let mut queue = self.inner.queue.lock().expect("signer queue");
            if queue.leading {
                let (reply, answer) = oneshot::channel();
                queue.waiting.push_back(Waiter {
                    head: head.clone(),
                    reply,
                });
                Some(answer)
            } else {
                queue.leading = true;
                None
            }
        };
        let leadership = match waiting {
            None => {
                let token = Leadership {
                    inner: Some(self.inner.clone()),
                };
                // Lets the other tasks ready now (those a group commit woke with this one)
                // queue their heads. Cancelled here, the token hands leadership on.
                if self.inner.coming.load(Ordering::SeqCst) > 0 {
                    tokio::task::yield_now().await;
                }
                token
            }
            Some(answer) => match answer.await {
                Ok(Settled::Signed(signed)) => return signed,
                Ok(Settled::Lead(token)) => token,
                // A leader that panicked mid-batch dropped its followers' replies (its token
                // still handed leadership on): this head is signed alone.
                Err(_) => {
                    return sign_batch(&self.inner.key, vec![head])
                        .pop()
                        .expect("a batch of one signs one head")
                }
            },
        };
        let signed = self.sign_queued(head);
        drop(leadership);
        signed
    }

    /// Signs `own` with the oldest queued heads (up to [`BATCH_HEADS_MAX`] in all), settles
    /// their followers, and returns `own` signed.
    fn sign_queued(&self, own: Head) -> SignedHead {
        let followers: Vec<Waiter> = {
            let mut queue = self.inner.queue.lock().expect("signer queue");
            let n = queue.waiting.len().min(BATCH_HEADS_MAX - 1);
            queue.waiting.drain(..n).collect()
        };
        let (heads, replies): (Vec<Head>, Vec<_>) = std::iter::once((own, None))
            .chain(followers.into_iter().map(|w| (w.head, Some(w.reply))))
            .unzip();
        crate::operations::metrics::METRICS
            .signed_batch_heads
            .observe(heads.len() as f64);
        let mut signed = sign_batch(&self.inner.key, heads).into_iter();
        let own = signed.next().expect("the batch holds the leader's head");
        for (signed, reply) in signed.zip(replies.into_iter().skip(1)) {
            // A follower gone (its game task dropped) needs nothing.
            let _ = reply
                .expect("every follower has a reply")
                .send(Settled::Signed(signed));
        }
        own
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::game::Viewer;
    use protocol::record::stream::StreamHash;
    use std::time::Duration;

    /// Generous: only a stranded request would ever reach it.
    const WAIT: Duration = Duration::from_secs(30);

    fn key() -> Arc<ServerSigningKey> {
        Arc::new(ServerSigningKey::from_bytes(&[9; 32]))
    }

    fn head(i: u64) -> Head {
        Head::of_stream(
            &format!("g{i}"),
            Viewer::Spectator,
            i,
            StreamHash([i as u8; 32]),
        )
    }

    /// Polls `future` once, as a runtime would, and says whether it is still waiting.
    fn pending<F: std::future::Future>(future: &mut std::pin::Pin<Box<F>>) -> bool {
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        future.as_mut().poll(&mut context).is_pending()
    }

    /// Yields until `n` requests wait behind the leader.
    async fn queued(signer: &Signer, n: usize) {
        while signer.inner.queue.lock().unwrap().waiting.len() < n {
            tokio::task::yield_now().await;
        }
    }

    fn holds(signed: &SignedHead, i: u64, signer: &Signer) {
        signed.check(&signer.public()).unwrap();
        assert_eq!(
            (signed.game.clone(), signed.version),
            (format!("g{i}"), i),
            "each request gets its own head back"
        );
    }

    #[tokio::test]
    async fn a_request_alone_is_signed() {
        let signer = Signer::new(key());
        // Nothing else on its way: signed in its first poll, without yielding.
        let mut alone = Box::pin(signer.sign(head(1)));
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        let std::task::Poll::Ready(signed) =
            std::future::Future::poll(alone.as_mut(), &mut context)
        else {
            panic!("a request alone waited");
        };
        holds(&signed, 1, &signer);
        assert!(signed.batch.as_ref().unwrap().path.is_empty());
        // Leadership lapsed: the next request leads again.
        holds(&signer.sign(head(2)).await, 2, &signer);
        assert!(!signer.inner.queue.lock().unwrap().leading);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn many_requests_at_once_are_signed_together_and_each_holds() {
        let signer = Signer::new(key());
        let mut tasks = tokio::task::JoinSet::new();
        let n = 3 * BATCH_HEADS_MAX as u64 / 2;
        // Each counted on its way before any asks, as a game task counts its command from
        // its append: a leader then waits a moment for the others.
        let coming: Vec<Coming> = (1..=n).map(|_| signer.coming()).collect();
        for (i, coming) in (1..=n).zip(coming) {
            let signer = signer.clone();
            tasks.spawn(async move {
                drop(coming);
                (i, signer.sign(head(i)).await)
            });
        }
        let mut signatures = std::collections::HashSet::new();
        let all = tokio::time::timeout(WAIT, async {
            let mut all = vec![];
            while let Some(done) = tasks.join_next().await {
                all.push(done.unwrap());
            }
            all
        })
        .await
        .expect("no request stranded");
        assert_eq!(all.len() as u64, n);
        for (i, signed) in &all {
            holds(signed, *i, &signer);
            signatures.insert(signed.signature.clone());
            assert!(signed.batch.as_ref().unwrap().path.len() <= 10);
        }
        // Fewer signatures than requests: they were batched (the spawned tasks queue while
        // the first leader yields).
        assert!(
            (signatures.len() as u64) < n,
            "{} signatures",
            signatures.len()
        );
        assert!(!signer.inner.queue.lock().unwrap().leading);
        assert_eq!(signer.inner.coming.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn a_leader_dropped_before_signing_strands_no_follower() {
        let signer = Signer::new(key());
        // Another command on its way: the leader yields once, then would sign. Dropped after
        // its first poll, it never does.
        let _coming = signer.coming();
        let mut leader = Box::pin(signer.sign(head(1)));
        assert!(pending(&mut leader));
        let followers: Vec<_> = (2..=5)
            .map(|i| {
                let signer = signer.clone();
                tokio::spawn(async move { (i, signer.sign(head(i)).await) })
            })
            .collect();
        // Let the followers queue behind the leader.
        queued(&signer, 4).await;
        drop(leader);
        for follower in followers {
            let (i, signed) = tokio::time::timeout(WAIT, follower)
                .await
                .expect("the follower is not stranded")
                .unwrap();
            holds(&signed, i, &signer);
        }
        assert!(!signer.inner.queue.lock().unwrap().leading);
    }

    #[tokio::test]
    async fn leadership_handed_to_a_follower_that_is_gone_passes_on() {
        let signer = Signer::new(key());
        let _coming = signer.coming();
        let mut leader = Box::pin(signer.sign(head(1)));
        assert!(pending(&mut leader));
        // Two followers queue; the first is dropped before the leadership reaches it.
        let mut gone = Box::pin(signer.sign(head(2)));
        assert!(pending(&mut gone));
        let mut unread = Box::pin(signer.sign(head(3)));
        assert!(pending(&mut unread));
        let last = {
            let signer = signer.clone();
            tokio::spawn(async move { signer.sign(head(4)).await })
        };
        queued(&signer, 3).await;
        drop(gone);
        // The leader is dropped: leadership skips the gone follower and is sent to the next,
        // which is dropped with the message unread: the token in it passes leadership on.
        drop(leader);
        drop(unread);
        let signed = tokio::time::timeout(WAIT, last)
            .await
            .expect("the last follower is not stranded")
            .unwrap();
        holds(&signed, 4, &signer);
        assert!(!signer.inner.queue.lock().unwrap().leading);
    }
}
