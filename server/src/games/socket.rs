//! A connection's websocket, shared with the task of the game it joined as a player, so that
//! the game writes that player's frames into the socket itself instead of handing each one to
//! the connection's task to write (issue 55: one task hop fewer between a move and the
//! opponent's socket).
//!
//! The connection still owns its socket: it reads it, writes its own answers, applies every
//! send deadline and closes it. The game only ever *tries* a write, never waits on one: when
//! the socket is in use at that instant, has no room, or frames the game queued earlier have
//! not reached it yet, the frame goes to the connection's queue as before, with the slow-reader
//! protections of that path (`crate::games::task`). A write the game started but the kernel
//! could not take whole is finished by the connection, under its send deadline.
//!
//! Order: a frame is written directly only while none of the game's frames for this connection
//! waits in its queue or backlog (`queued`, counted by the game as a frame enters the queue and
//! by the connection, under the socket's lock, as it hands that frame to the socket), so a
//! viewer's frames reach the socket in the order the game made them.

use crate::games::task::Frame;
use futures_util::{SinkExt, StreamExt};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use tokio::net::TcpStream;
use tokio::sync::Notify;
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::WebSocketStream;

/// What a websocket connection's socket is.
pub type Socket = WebSocketStream<TcpStream>;

/// The socket, as the connection and its game's task share it.
pub struct SharedSocket {
    /// Locked only for one synchronous poll at a time, never across a wait: the game's try
    /// finds it free unless the connection is in the middle of such a poll. `None` once the
    /// connection has taken the socket back to close it (or relay it through another node).
    socket: Mutex<Option<Socket>>,
    /// The game's frames for this connection on their way through its queue, not yet handed
    /// to the socket.
    queued: AtomicUsize,
    /// The codec the client last spoke (the connection answers in it; so does the game).
    json: AtomicBool,
    /// Told when a write the game started could not be finished at once: the connection then
    /// finishes it under its send deadline.
    flush: Notify,
}

/// What came of the game's try to write a frame itself.
#[derive(Debug, PartialEq, Eq)]
pub enum Tried {
    /// The frame is in the socket (perhaps still being flushed by the connection).
    Written,
    /// Not written: it goes through the connection's queue.
    Queue,
}

impl SharedSocket {
    fn lock(&self) -> MutexGuard<'_, Option<Socket>> {
        self.socket
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Writes `frame` into the socket if that can be done now and in order; never waits.
    pub fn try_write(&self, frame: &Frame) -> Tried {
        let Ok(mut socket) = self.socket.try_lock() else {
            return Tried::Queue;
        };
        if self.queued.load(Ordering::Acquire) != 0 {
            return Tried::Queue;
        }
        let Some(ws) = socket.as_mut() else {
            return Tried::Queue;
        };
        // No waker of the game's: a write left unfinished is handed to the connection below,
        // which finishes it with its own. A waker here would be woken by every readiness of
        // the socket (tokio-tungstenite wakes a socket's read and write wakers together), and
        // made the connection flush again for each frame it read. Putting none in the write
        // slot strands no send of the connection's: the read slot holds the connection's own
        // waker from its reads (a seat is joined only after one), and it is woken too.
        let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
        if !matches!(ws.poll_ready_unpin(&mut cx), Poll::Ready(Ok(()))) {
            // No room (or a broken socket, which the connection finds on its next send).
            return Tried::Queue;
        }
        if ws
            .start_send_unpin(frame.encoded(self.json.load(Ordering::Relaxed)))
            .is_err()
        {
            return Tried::Queue;
        }
        if ws.poll_flush_unpin(&mut cx).is_pending() {
            self.flush.notify_one();
        }
        Tried::Written
    }

    /// A frame of the game's for this connection enters its queue (or the game's backlog).
    pub fn queue_one(&self) {
        self.queued.fetch_add(1, Ordering::AcqRel);
    }

    /// A frame counted by [`queue_one`](Self::queue_one) that never reached the queue.
    pub fn unqueue_one(&self) {
        self.queued.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The connection's hold on its socket. Dropping it closes the socket, whoever else holds the
/// shared part.
pub struct Ws(Arc<SharedSocket>);

impl Ws {
    pub fn new(socket: Socket) -> Ws {
        Ws(Arc::new(SharedSocket {
            socket: Mutex::new(Some(socket)),
            queued: AtomicUsize::new(0),
            json: AtomicBool::new(true),
            flush: Notify::new(),
        }))
    }

    /// The part a game's task holds to write this connection's frames.
    pub fn shared(&self) -> Arc<SharedSocket> {
        self.0.clone()
    }

    pub fn set_json(&self, json: bool) {
        self.0.json.store(json, Ordering::Relaxed);
    }

    /// The next frame from the client; `None` once the socket is closed or taken.
    pub fn next(&self) -> impl Future<Output = Option<Result<Message, WsError>>> + Unpin + '_ {
        std::future::poll_fn(move |cx| match self.0.lock().as_mut() {
            Some(ws) => ws.poll_next_unpin(cx),
            None => Poll::Ready(None),
        })
    }

    /// Sends `message` (or, with `None`, finishes what is in the socket's buffer). `queued`:
    /// the message is one of the game's frames taken from the connection's queue.
    pub fn send(
        &self,
        message: Option<Message>,
        queued: bool,
    ) -> impl Future<Output = Result<(), WsError>> + Unpin + '_ {
        let mut message = message;
        std::future::poll_fn(move |cx| {
            let mut socket = self.0.lock();
            let Some(ws) = socket.as_mut() else {
                return Poll::Ready(Err(WsError::AlreadyClosed));
            };
            if let Some(m) = message.take() {
                match ws.poll_ready_unpin(cx) {
                    Poll::Pending => {
                        message = Some(m);
                        return Poll::Pending;
                    }
                    Poll::Ready(Err(e)) => return Poll::Ready(Err(e)),
                    Poll::Ready(Ok(())) => {}
                }
                // Counted off under the lock, in the same step as the frame enters the socket:
                // the game writes directly only once nothing of its waits here.
                if queued {
                    self.0.queued.fetch_sub(1, Ordering::AcqRel);
                }
                if let Err(e) = ws.start_send_unpin(m) {
                    return Poll::Ready(Err(e));
                }
            }
            ws.poll_flush_unpin(cx)
        })
    }

    pub fn close(
        &self,
        frame: Option<CloseFrame>,
    ) -> impl Future<Output = Result<(), WsError>> + Unpin + '_ {
        self.send(Some(Message::Close(frame)), false)
    }

    /// A wait that ends when a write the game started needs the connection to finish it.
    pub fn flush_wanted(shared: &SharedSocket) -> tokio::sync::futures::Notified<'_> {
        shared.flush.notified()
    }

    /// Takes the socket back, for good or until [`put`](Self::put): from then on the game
    /// queues every frame.
    pub fn take(&self) -> Option<Socket> {
        self.0.lock().take()
    }

    pub fn put(&self, socket: Socket) {
        *self.0.lock() = Some(socket);
    }
}

impl Drop for Ws {
    fn drop(&mut self) {
        drop(self.take());
    }
}
