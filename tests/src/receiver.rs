//! A webhook receiver for the notification tests: a small HTTP/1.1 server on `127.0.0.1:0`
//! that answers each POST with the next status of its script (then 200), and hands each
//! request — headers and exact body bytes — to the test.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// Largest request the receiver reads; a notice is far smaller.
const REQUEST_BYTES_MAX: usize = 64 * 1024;

/// One request as received.
#[derive(Clone, Debug)]
pub struct Received {
    pub path: String,
    /// Header names in lowercase, with their values.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The status it was answered with.
    pub status: u16,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct Receiver {
    pub addr: SocketAddr,
    requests: mpsc::UnboundedReceiver<Received>,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    /// Starts a receiver answering its first requests with `statuses`, in order, then 200.
    pub async fn start(statuses: &[u16]) -> Receiver {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let script = Arc::new(Mutex::new(
            statuses.iter().copied().collect::<VecDeque<_>>(),
        ));
        let (tx, requests) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let (script, tx) = (script.clone(), tx.clone());
                tokio::spawn(async move {
                    let Some((path, headers, body)) = read_request(&mut socket).await else {
                        return;
                    };
                    let status = script.lock().unwrap().pop_front().unwrap_or(200);
                    let reply = format!(
                        "HTTP/1.1 {status} X\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                    );
                    let _ = socket.write_all(reply.as_bytes()).await;
                    let _ = socket.shutdown().await;
                    let _ = tx.send(Received {
                        path,
                        headers,
                        body,
                        status,
                    });
                });
            }
        });
        Receiver {
            addr,
            requests,
            task,
        }
    }

    /// `http://127.0.0.1:PORT/hook`.
    pub fn url(&self) -> String {
        format!("http://{}/hook", self.addr)
    }

    /// The next request, or `None` if none comes within `wait` (a test's safeguard, not its
    /// assertion).
    pub async fn next(&mut self, wait: std::time::Duration) -> Option<Received> {
        tokio::time::timeout(wait, self.requests.recv())
            .await
            .ok()
            .flatten()
    }

    /// Every request received so far and not yet taken.
    pub fn drain(&mut self) -> Vec<Received> {
        let mut all = vec![];
        while let Ok(r) = self.requests.try_recv() {
            all.push(r);
        }
        all
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn read_request(
    socket: &mut tokio::net::TcpStream,
) -> Option<(String, Vec<(String, String)>, Vec<u8>)> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 || bytes.len() > REQUEST_BYTES_MAX {
            return None;
        }
        bytes.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8(bytes[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    if length > REQUEST_BYTES_MAX {
        return None;
    }
    let mut body = bytes[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    body.truncate(length);
    Some((path, headers, body))
}
