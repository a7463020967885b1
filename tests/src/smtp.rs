//! An SMTP sink for the notification tests: a small SMTP server on `127.0.0.1:0` that accepts
//! every message (no TLS, no authentication) and hands each, with its envelope, to the test.

use std::net::SocketAddr;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

/// Largest message the sink keeps.
const MESSAGE_BYTES_MAX: usize = 256 * 1024;

#[derive(Clone, Debug)]
pub struct Mail {
    pub from: String,
    pub to: Vec<String>,
    /// Headers and body as sent (dot-stuffing undone).
    pub data: String,
}

pub struct SmtpSink {
    pub addr: SocketAddr,
    mails: mpsc::UnboundedReceiver<Mail>,
    task: tokio::task::JoinHandle<()>,
}

impl SmtpSink {
    pub async fn start() -> SmtpSink {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local addr");
        let (tx, mails) = mpsc::unbounded_channel();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let tx = tx.clone();
                tokio::spawn(async move {
                    let _ = session(socket, tx).await;
                });
            }
        });
        SmtpSink { addr, mails, task }
    }

    /// The next message, or `None` if none comes within `wait` (a safeguard).
    pub async fn next(&mut self, wait: std::time::Duration) -> Option<Mail> {
        tokio::time::timeout(wait, self.mails.recv())
            .await
            .ok()
            .flatten()
    }
}

impl Drop for SmtpSink {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn session(
    socket: tokio::net::TcpStream,
    mails: mpsc::UnboundedSender<Mail>,
) -> std::io::Result<()> {
    let (read, mut write) = socket.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 sink ESMTP\r\n").await?;
    let (mut from, mut to) = (String::new(), Vec::new());
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let command = line.trim_end().to_string();
        let verb = command.split(' ').next().unwrap_or("").to_ascii_uppercase();
        let reply: &[u8] = match verb.as_str() {
            "EHLO" => b"250-sink\r\n250 8BITMIME\r\n",
            "HELO" => b"250 sink\r\n",
            "MAIL" => {
                from = address_in(&command);
                to.clear();
                b"250 OK\r\n"
            }
            "RCPT" => {
                to.push(address_in(&command));
                b"250 OK\r\n"
            }
            "DATA" => {
                write.write_all(b"354 go on\r\n").await?;
                let mut data = String::new();
                loop {
                    line.clear();
                    if lines.read_line(&mut line).await? == 0 {
                        return Ok(());
                    }
                    if line == ".\r\n" {
                        break;
                    }
                    let text = line.strip_prefix('.').unwrap_or(&line);
                    if data.len() < MESSAGE_BYTES_MAX {
                        data.push_str(text);
                    }
                }
                let _ = mails.send(Mail {
                    from: from.clone(),
                    to: to.clone(),
                    data,
                });
                b"250 queued\r\n"
            }
            "QUIT" => {
                write.write_all(b"221 bye\r\n").await?;
                return Ok(());
            }
            "RSET" | "NOOP" => b"250 OK\r\n",
            _ => b"502 not here\r\n",
        };
        write.write_all(reply).await?;
    }
}

/// The address between `<` and `>` of a `MAIL FROM:` or `RCPT TO:` line.
fn address_in(command: &str) -> String {
    command
        .split_once('<')
        .and_then(|(_, rest)| rest.split_once('>'))
        .map(|(address, _)| address.to_string())
        .unwrap_or_default()
}
