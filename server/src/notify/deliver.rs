//! Delivering one notice to one target: a webhook POST signed with the seat's secret, or an
//! e-mail through the operator's relay, each tried up to `notify_tries_max` times with the
//! pause doubling from `notify_retry_first`.

use super::{AddressGuard, Notice, SmtpRelay};
use hmac::{Hmac, Mac};
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use sha2::Sha256;
use std::time::Duration;

/// The header carrying the body's signature: `sha256=` and the HMAC-SHA256 of the exact body
/// bytes under the seat's secret, in lowercase hex.
pub const SIGNATURE_HEADER: &str = "X-ASL-Signature";

/// The header carrying the notice's idempotency key (`game:side:handover`), as in its body.
pub const IDEMPOTENCY_HEADER: &str = "X-ASL-Idempotency-Key";

/// How long one webhook request or SMTP conversation may take.
pub const SEND_TIMEOUT: Duration = Duration::from_secs(15);

/// The signature header's value for `body` under `secret` (the secret as its hex text is
/// shown to the player: the key is those bytes of text, so a receiver pastes it as given).
pub fn sign(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes any key");
    mac.update(body);
    format!(
        "sha256={}",
        data_encoding::HEXLOWER.encode(&mac.finalize().into_bytes())
    )
}

/// The pause before try `n` (from 1): `first`, doubled each time.
pub fn backoff(first: Duration, n: u32) -> Duration {
    first.saturating_mul(1 << n.saturating_sub(1).min(16))
}

/// Whether a failed answer may go better if tried again: server errors, timeouts, "too many
/// requests". Any other 4xx will not change, so the notice is given up at once.
fn worth_retrying(status: reqwest::StatusCode) -> bool {
    status.is_server_error()
        || status == reqwest::StatusCode::REQUEST_TIMEOUT
        || status == reqwest::StatusCode::TOO_MANY_REQUESTS
}

/// The notifier's HTTP client: the guard as its resolver, no redirects, a timeout, and no proxy
/// (not even one the environment names): through a proxy the webhook's host would be resolved
/// and reached by the proxy, past the guard.
pub fn http_client(guard: &AddressGuard) -> Result<reqwest::Client, super::StartError> {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(SEND_TIMEOUT)
        .dns_resolver(super::address::resolver(guard))
        .user_agent(concat!("asl-server/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| super::StartError::Http(e.to_string()))
}

/// What tries allow.
#[derive(Clone)]
pub struct Tries {
    pub max: u32,
    pub first_pause: Duration,
    /// Set when the server stops: no further try is made, and the notice stays owed.
    pub stopping: tokio::sync::watch::Receiver<bool>,
}

/// Why a notice did not reach a target.
#[derive(Debug)]
pub enum Undelivered {
    /// Tried as often as allowed, or refused for good: the target is done with it.
    GaveUp(String),
    /// The server is stopping: the notice stays in the outbox for the next start.
    Stopped,
}

impl Tries {
    /// Waits out the pause before try `n`, unless the server stops meanwhile.
    async fn pause(&mut self, n: u32) -> Result<(), Undelivered> {
        if *self.stopping.borrow() {
            return Err(Undelivered::Stopped);
        }
        if n > 1 {
            tokio::select! {
                _ = tokio::time::sleep(backoff(self.first_pause, n - 1)) => {}
                _ = self.stopping.changed() => return Err(Undelivered::Stopped),
            }
        }
        Ok(())
    }
}

/// POSTs `body` to `url`, signed; `Ok` once it answers 2xx.
pub async fn webhook(
    client: &reqwest::Client,
    guard: &AddressGuard,
    url: &str,
    secret: &str,
    notice: &Notice,
    body: &[u8],
    mut tries: Tries,
) -> Result<(), Undelivered> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| Undelivered::GaveUp(format!("bad URL: {e}")))?;
    let signature = sign(secret, body);
    let mut last = String::new();
    for n in 1..=tries.max.max(1) {
        tries.pause(n).await?;
        guard
            .check_literal(&parsed)
            .map_err(|e| Undelivered::GaveUp(e.to_string()))?;
        let sent = client
            .post(parsed.clone())
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(SIGNATURE_HEADER, &signature)
            .header(IDEMPOTENCY_HEADER, &notice.idempotency_key)
            .body(body.to_vec())
            .send()
            .await;
        match sent {
            Ok(answer) if answer.status().is_success() => return Ok(()),
            Ok(answer) if !worth_retrying(answer.status()) => {
                return Err(Undelivered::GaveUp(format!(
                    "the webhook answered {}",
                    answer.status()
                )))
            }
            Ok(answer) => last = format!("answered {}", answer.status()),
            // Without the URL: the reason is logged, and the URL's path and query may be
            // the receiver's secret.
            Err(e) => last = e.without_url().to_string(),
        }
    }
    Err(Undelivered::GaveUp(format!(
        "the webhook failed {} times; last: {last}",
        tries.max
    )))
}

/// The relay's transport, built once.
pub fn smtp_transport(
    relay: &SmtpRelay,
) -> Result<AsyncSmtpTransport<Tokio1Executor>, super::StartError> {
    let builder = if relay.starttls {
        AsyncSmtpTransport::<Tokio1Executor>::starttls_relay(&relay.host).map_err(|e| {
            super::StartError::Smtp {
                host: relay.host.clone(),
                why: e.to_string(),
            }
        })?
    } else {
        AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&relay.host)
    };
    Ok(builder.port(relay.port).timeout(Some(SEND_TIMEOUT)).build())
}

/// The relay's sender address as a mailbox; a notice or a confirmation that cannot have one
/// is given up, naming it.
fn sender(relay: &SmtpRelay) -> Result<lettre::message::Mailbox, Undelivered> {
    relay.from.parse().map_err(|e| {
        Undelivered::GaveUp(format!(
            "the sender address `{}` is not valid: {e}",
            relay.from
        ))
    })
}

/// Sends `notice` to `address` through the relay.
pub async fn email(
    transport: &AsyncSmtpTransport<Tokio1Executor>,
    relay: &SmtpRelay,
    address: &str,
    notice: &Notice,
    tries: Tries,
) -> Result<(), Undelivered> {
    let from = sender(relay)?;
    let mut text = notice.text.clone();
    text.push_str(&format!(
        "\n\nGame {}\nYou play: {} (side {:?})\nNotice: {}\n",
        notice.game, notice.side_name, notice.side, notice.idempotency_key
    ));
    let subject = format!("ASL: {}", notice.text);
    send(transport, from, address, subject, text, tries).await
}

/// Mails `address` the code that confirms it for `game`'s seat (`Notifier::ask_to_confirm`):
/// in the server's words alone, naming no scenario, side or anything else a player wrote.
pub async fn confirmation(
    transport: &AsyncSmtpTransport<Tokio1Executor>,
    relay: &SmtpRelay,
    address: &str,
    game: &str,
    code: &str,
    tries: Tries,
) -> Result<(), Undelivered> {
    let from = sender(relay)?;
    // Lines short and ASCII, so that the message goes as 7-bit text, the command whole.
    let text = format!(
        "A player of an ASL game on this referee server asked for its\n\
         turn notices to be sent to this address. The game:\n\
         {game}\n\n\
         If that was you, give this code with your seat's token:\n\n\
         \x20   --confirm {code}\n\n\
         (asl notify --game GAME --token YOUR-TOKEN --confirm CODE)\n\n\
         If not, ignore this message: an address whose code is not given\n\
         is sent no notice, and the code lapses in {} hours.\n",
        super::CONFIRM_CODE_VALID.as_secs() / 3600
    );
    let subject = "ASL: confirm turn notices to this address".to_string();
    send(transport, from, address, subject, text, tries).await
}

/// Sends one plain-text message through the relay, tried as a notice is.
async fn send(
    transport: &AsyncSmtpTransport<Tokio1Executor>,
    from: lettre::message::Mailbox,
    address: &str,
    subject: String,
    text: String,
    mut tries: Tries,
) -> Result<(), Undelivered> {
    let to = address
        .parse::<lettre::message::Mailbox>()
        // The reason is logged: it does not repeat the player's address.
        .map_err(|e| Undelivered::GaveUp(format!("the target is not an e-mail address: {e}")))?;
    let message = lettre::Message::builder()
        .from(from)
        .to(to)
        .subject(subject)
        .header(lettre::message::header::ContentType::TEXT_PLAIN)
        .body(text)
        .map_err(|e| Undelivered::GaveUp(format!("the e-mail could not be built: {e}")))?;
    let mut last = String::new();
    for n in 1..=tries.max.max(1) {
        tries.pause(n).await?;
        match transport.send(message.clone()).await {
            Ok(_) => return Ok(()),
            Err(e) if e.is_permanent() => {
                return Err(Undelivered::GaveUp(format!("the relay refused it: {e}")))
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(Undelivered::GaveUp(format!(
        "the relay failed {} times; last: {last}",
        tries.max
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4231 test case 2: key "Jefe".
    #[test]
    fn the_signature_is_hmac_sha256_of_the_body() {
        assert_eq!(
            sign("Jefe", b"what do ya want for nothing?"),
            "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    /// With a proxy in the server's environment (`HTTP_PROXY`), a webhook went to the proxy,
    /// which resolved the player's host itself: the address guard, this client's resolver,
    /// never saw the address the request reached (a name rebound to 169.254.169.254 after
    /// registration). The notifier connects to the webhook's own addresses, each checked.
    #[tokio::test]
    async fn a_proxy_in_the_environment_is_not_used() {
        let proxy = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let at = format!("http://{}", proxy.local_addr().unwrap());
        // Read when the client is built; set for as short a time as that takes.
        std::env::set_var("HTTP_PROXY", &at);
        std::env::set_var("http_proxy", &at);
        let client = http_client(&AddressGuard::new(false));
        std::env::remove_var("HTTP_PROXY");
        std::env::remove_var("http_proxy");
        let client = client.unwrap();
        let sent = tokio::spawn(async move {
            client
                .post("http://hooks.example.invalid/asl")
                .body("{}")
                .send()
                .await
        });
        let reached = tokio::time::timeout(Duration::from_secs(3), proxy.accept()).await;
        assert!(reached.is_err(), "the webhook went through the proxy");
        assert!(
            sent.await.unwrap().is_err(),
            "hooks.example.invalid resolves to nothing"
        );
    }

    /// The reason a webhook was given up on is logged and kept: it names no part of the URL
    /// past its host (a failed connection's error named the whole URL, path and query).
    #[tokio::test]
    async fn a_failed_webhook_is_given_up_without_naming_its_url() {
        // A port nothing listens on.
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let at = closed.local_addr().unwrap();
        drop(closed);
        let guard = AddressGuard::new(true);
        let client = http_client(&guard).unwrap();
        let (_stop, stopping) = tokio::sync::watch::channel(false);
        let tries = Tries {
            max: 1,
            first_pause: Duration::from_millis(1),
            stopping,
        };
        let notice: Notice = serde_json::from_str(
            r#"{"kind":"asl.notice","format":1,"game":"g","side":"B","side_name":"R","scenario":"s","reasons":["your_turn"],"turn":1,"player_turn":1,"phase":"RPh","to_act":"R","handover":3,"idempotency_key":"g:B:3","text":"t"}"#,
        )
        .unwrap();
        let url = format!("http://{at}/hooks/SECRETPATH?token=SECRETQUERY");
        let sent = webhook(&client, &guard, &url, "k", &notice, b"{}", tries).await;
        let Err(Undelivered::GaveUp(why)) = sent else {
            panic!("a closed port took the webhook: {sent:?}");
        };
        assert!(!why.contains("SECRET"), "{why}");
    }

    #[test]
    fn pauses_double() {
        let first = Duration::from_secs(2);
        let pauses: Vec<u64> = (1..=4).map(|n| backoff(first, n).as_secs()).collect();
        assert_eq!(pauses, vec![2, 4, 8, 16]);
    }
}
