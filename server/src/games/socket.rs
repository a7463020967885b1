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
//! One command's frames for a connection are written together: buffered one after another
//! and flushed once, so the kernel is asked for one write however many events the command
//! made (`SharedSocket::try_write`).
//!
//! Order: a frame is written directly only while none of the game's frames for this connection
//! waits in its queue or backlog (`queued`, counted by the game as a frame enters the queue and
//! by the connection, under the socket's lock, as it hands that frame to the socket), so a
//! viewer's frames reach the socket in the order the game made them.

use crate::games::task::Outbound;
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

impl SharedSocket {
    fn lock(&self) -> MutexGuard<'_, Option<Socket>> {
        self.socket
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Writes as many of `frames` as can go now and in order, and flushes them together;
    /// never waits. Returns how many were written: always the first ones, the rest to go
    /// through the connection's queue. One command's frames for one connection go out in one
    /// write to the socket (one system call), not one each: the frames were buffered by the
    /// websocket one after another and its flush writes them at once.
    pub fn try_write(&self, frames: &[Outbound]) -> usize {
        if frames.is_empty() {
            return 0;
        }
        let Ok(mut socket) = self.socket.try_lock() else {
            return 0;
        };
        if self.queued.load(Ordering::Acquire) != 0 {
            return 0;
        }
        let Some(ws) = socket.as_mut() else {
            return 0;
        };
        // No waker of the game's: a write left unfinished is handed to the connection below,
        // which finishes it with its own. A waker here would be woken by every readiness of
        // the socket (tokio-tungstenite wakes a socket's read and write wakers together), and
        // made the connection flush again for each frame it read. Putting none in the write
        // slot strands no send of the connection's: the read slot holds the connection's own
        // waker from its reads (a seat is joined only after one), and it is woken too.
        let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
        let json = self.json.load(Ordering::Relaxed);
        let mut written = 0;
        for frame in frames {
            // No room (or a broken socket, which the connection finds on its next send): this
            // frame and those after it are queued, behind the ones already in the socket.
            if !matches!(ws.poll_ready_unpin(&mut cx), Poll::Ready(Ok(()))) {
                break;
            }
            if ws.start_send_unpin(frame.encoded(json)).is_err() {
                break;
            }
            written += 1;
        }
        if written > 0 && ws.poll_flush_unpin(&mut cx).is_pending() {
            self.flush.notify_one();
        }
        written
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

    /// Sends `messages` in order and flushes them together: one write to the socket, however
    /// many (with none, finishes what is in the socket's buffer). `queued`: they are the
    /// game's frames taken from the connection's queue.
    pub fn send(
        &self,
        messages: Vec<Message>,
        queued: bool,
    ) -> impl Future<Output = Result<(), WsError>> + Unpin + '_ {
        let mut messages = std::collections::VecDeque::from(messages);
        std::future::poll_fn(move |cx| {
            let mut socket = self.0.lock();
            let Some(ws) = socket.as_mut() else {
                return Poll::Ready(Err(WsError::AlreadyClosed));
            };
            while let Some(m) = messages.pop_front() {
                match ws.poll_ready_unpin(cx) {
                    Poll::Pending => {
                        messages.push_front(m);
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
        self.send(vec![Message::Close(frame)], false)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::games::task::Frame;
    use protocol::wire::ServerMessage;
    use tokio_tungstenite::tungstenite::protocol::Role;

    /// A connected pair on 127.0.0.1: the server's end as the game shares it, and the
    /// client's websocket (no handshake: both ends are made from raw sockets).
    async fn pair() -> (Ws, WebSocketStream<TcpStream>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap());
        let (client, accepted) = tokio::join!(client, listener.accept());
        let server = WebSocketStream::from_raw_socket(accepted.unwrap().0, Role::Server, None);
        let client = WebSocketStream::from_raw_socket(client.unwrap(), Role::Client, None).await;
        (Ws::new(server.await), client)
    }

    fn pongs(nonces: std::ops::Range<u64>) -> Vec<Outbound> {
        nonces
            .map(|nonce| Frame::new(ServerMessage::Pong { nonce }))
            .collect()
    }

    async fn read_pong(client: &mut WebSocketStream<TcpStream>) -> u64 {
        let message = client.next().await.unwrap().unwrap();
        match protocol::wire::from_bincode::<ServerMessage>(&message.into_data()).unwrap() {
            ServerMessage::Pong { nonce } => nonce,
            other => panic!("expected a pong, got {other:?}"),
        }
    }

    /// A command's frames are written together, all of them, and arrive in order.
    #[tokio::test]
    async fn a_commands_frames_go_into_the_socket_together_and_in_order() {
        let (ws, mut client) = pair().await;
        ws.set_json(false);
        let shared = ws.shared();
        assert_eq!(shared.try_write(&pongs(1..4)), 3);
        assert_eq!(shared.try_write(&[]), 0);
        assert_eq!(shared.try_write(&pongs(4..5)), 1);
        for nonce in 1..5 {
            assert_eq!(read_pong(&mut client).await, nonce);
        }
    }

    /// The connection's frames taken from its queue go out together and in order, each
    /// counted off the game's queued frames as it enters the socket, after which the game
    /// writes directly again.
    #[tokio::test]
    async fn the_connections_queued_frames_go_out_together_and_in_order() {
        let (ws, mut client) = pair().await;
        ws.set_json(false);
        let shared = ws.shared();
        let frames = pongs(1..4);
        for _ in &frames {
            shared.queue_one();
        }
        assert_eq!(shared.try_write(&pongs(9..10)), 0);
        let messages = frames.iter().map(|f| f.encoded(false)).collect();
        ws.send(messages, true).await.unwrap();
        assert_eq!(shared.try_write(&pongs(4..5)), 1);
        for nonce in 1..5 {
            assert_eq!(read_pong(&mut client).await, nonce);
        }
    }

    /// While a frame of the game's waits in the connection's queue, none is written directly
    /// (it would overtake it); nor once the connection has taken its socket back.
    #[tokio::test]
    async fn nothing_is_written_past_a_queued_frame_or_into_a_socket_taken_back() {
        let (ws, mut client) = pair().await;
        ws.set_json(false);
        let shared = ws.shared();
        shared.queue_one();
        assert_eq!(shared.try_write(&pongs(1..3)), 0);
        shared.unqueue_one();
        assert_eq!(shared.try_write(&pongs(3..5)), 2);
        assert_eq!(read_pong(&mut client).await, 3);
        assert_eq!(read_pong(&mut client).await, 4);
        let socket = ws.take().expect("the connection holds its socket");
        assert_eq!(shared.try_write(&pongs(5..6)), 0);
        ws.put(socket);
        assert_eq!(shared.try_write(&pongs(6..7)), 1);
        assert_eq!(read_pong(&mut client).await, 6);
    }
}
