//! Turn notices end to end (issue 41, `docs/notifications.md`): a real server, a webhook
//! receiver and an SMTP sink started here on 127.0.0.1. Registration with a seat's token only;
//! a notice on each hand-over to a seat whose player is away, none while connected; signed
//! bodies that verify; retries after a receiver's 500; nothing a hidden unit does reaches the
//! other side; a notice owed at a stop sent exactly once after the restart; private addresses
//! refused without the operator's leave.

use e2e::receiver::{Received, Receiver};
use e2e::smtp::SmtpSink;
use e2e::{ask, Socket, TestServer};
use futures_util::{SinkExt, StreamExt};
use hmac::{Hmac, Mac};
use protocol::wire::{ClientMessage, ErrorCode, NotifyTarget, ServerMessage, Tokens};
use protocol::{Command, Outcome};
use server::operations::config::Config;
use server::store::{EventStore, MemoryStore};
use sha2::Sha256;
use std::sync::Arc;
use std::time::Duration;

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");
/// A safeguard on every wait for a message: generous for a loaded machine, never the thing a
/// test asserts.
const WAIT: Duration = Duration::from_secs(20);

/// Notices at once (no quiet interval), retried after 10 ms, to receivers on loopback.
fn config() -> Config {
    Config {
        notify_allow_private: true,
        notify_quiet: Duration::ZERO,
        notify_retry_first: Duration::from_millis(10),
        ..Config::default()
    }
}

async fn socket(url: &str) -> Socket {
    tokio_tungstenite::connect_async(format!("{url}/v1"))
        .await
        .expect("connect")
        .0
}

async fn create(url: &str) -> (String, Tokens) {
    let mut ws = socket(url).await;
    match ask(
        &mut ws,
        &ClientMessage::CreateGame {
            scenario: SCENARIO.into(),
            admin_token: None,
        },
        WAIT,
    )
    .await
    {
        ServerMessage::Created { game, tokens, .. } => (game, tokens),
        other => panic!("expected created, got {other:?}"),
    }
}

async fn register(url: &str, game: &str, token: &str, target: NotifyTarget) -> ServerMessage {
    let mut ws = socket(url).await;
    ask(
        &mut ws,
        &ClientMessage::Notify {
            game: game.into(),
            token: token.into(),
            target,
        },
        WAIT,
    )
    .await
}

/// Registers a webhook and returns the secret shown.
async fn webhook(url: &str, game: &str, token: &str, hook: &str) -> String {
    match register(url, game, token, NotifyTarget::Webhook { url: hook.into() }).await {
        ServerMessage::Notifying {
            targets,
            secret: Some(secret),
            ..
        } => {
            assert_eq!(targets, vec![format!("webhook {hook}")]);
            secret
        }
        other => panic!("expected notifying with a secret, got {other:?}"),
    }
}

async fn join(url: &str, game: &str, token: &str) -> Socket {
    let mut ws = socket(url).await;
    let join = ClientMessage::Join {
        game: game.into(),
        token: token.into(),
        since: None,
    };
    match ask(&mut ws, &join, WAIT).await {
        ServerMessage::Joined { .. } => ws,
        other => panic!("expected joined, got {other:?}"),
    }
}

async fn command(ws: &mut Socket, command: Command) {
    let sent = ClientMessage::Command {
        id: 1,
        command,
        key: None,
    };
    match ask(ws, &sent, WAIT).await {
        ServerMessage::Accepted { .. } => {}
        other => panic!("expected accepted, got {other:?}"),
    }
}

/// Closes a player's connection and reads until the server has closed its side: the server
/// hands the game its `leave` before it lets the socket go, so every command sent after this
/// returns finds the player gone.
async fn leave(mut ws: Socket) {
    ws.send(tokio_tungstenite::tungstenite::Message::Close(None))
        .await
        .unwrap();
    while let Some(Ok(_)) = ws.next().await {}
}

fn verify(secret: &str, received: &Received) {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(&received.body);
    let expected = format!("sha256={}", hex(&mac.finalize().into_bytes()));
    assert_eq!(
        received.header("x-asl-signature"),
        Some(expected.as_str()),
        "the signature is HMAC-SHA256 over the exact body"
    );
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn body(received: &Received) -> serde_json::Value {
    serde_json::from_slice(&received.body).expect("a JSON body")
}

/// The seat's notices in the outbox.
fn owed(store: &dyn EventStore) -> usize {
    store
        .notify_records()
        .unwrap()
        .iter()
        .filter(|(k, _)| k[0] == b'o')
        .count()
}

#[tokio::test]
async fn a_hand_over_to_an_absent_seat_sends_one_signed_notice_retried_after_a_failure() {
    let mut receiver = Receiver::start(&[500]).await;
    let store = Arc::new(MemoryStore::new());
    let server = TestServer::start_on(store.clone(), config()).await;
    let (game, tokens) = create(&server.url).await;

    // Only a seat's token registers.
    match register(&server.url, &game, &tokens.spectator, NotifyTarget::Off).await {
        ServerMessage::Error { code, .. } => assert_eq!(code, ErrorCode::ReadOnly),
        other => panic!("a spectator registered: {other:?}"),
    }
    match register(&server.url, &game, "not-a-token", NotifyTarget::Off).await {
        ServerMessage::Error { code, .. } => assert_eq!(code, ErrorCode::BadToken),
        other => panic!("a bad token registered: {other:?}"),
    }
    let secret = webhook(&server.url, &game, &tokens.side_b, &receiver.url()).await;
    // Registering again shows no secret: it is shown once.
    match register(
        &server.url,
        &game,
        &tokens.side_b,
        NotifyTarget::Webhook {
            url: receiver.url(),
        },
    )
    .await
    {
        ServerMessage::Notifying { secret: None, .. } => {}
        other => panic!("expected notifying without a secret, got {other:?}"),
    }

    // The German ends its RPh; its own end-of-RPh step passes by itself (no German unit could
    // claim WA, B9.322), and the Russian, who could, acts.
    let mut german = join(&server.url, &game, &tokens.side_a).await;
    command(&mut german, Command::Done).await;

    let first = receiver.next(WAIT).await.expect("a first try");
    assert_eq!(first.status, 500);
    let second = receiver.next(WAIT).await.expect("a try after the 500");
    assert_eq!(second.status, 200);
    assert_eq!(first.body, second.body, "each try sends the same notice");
    verify(&secret, &second);
    let notice = body(&second);
    assert_eq!(notice["kind"], "asl.notice");
    assert_eq!(notice["game"], game.as_str());
    assert_eq!(notice["side"], "B");
    assert_eq!(notice["side_name"], "Russian");
    assert_eq!(notice["reasons"], serde_json::json!(["your_turn"]));
    assert_eq!(notice["to_act"], "Russian");
    assert_eq!(notice["phase"], "RPh");
    let key = notice["idempotency_key"].as_str().unwrap();
    assert_eq!(second.header("x-asl-idempotency-key"), Some(key));
    assert!(key.starts_with(&format!("{game}:B:")));

    // The Russian comes, plays its step: the German, connected, is sent nothing.
    let mut russian = join(&server.url, &game, &tokens.side_b).await;
    command(&mut russian, Command::Done).await;
    // The German's turn again, but it is here; its seat is not even registered.
    leave(german).await;
    leave(russian).await;
    server.stop().await;
    assert!(receiver.drain().is_empty(), "one notice, tried twice");
    assert_eq!(owed(&*store), 0, "a delivered notice leaves the outbox");
}

/// Plays the same public game, with the German away and registered; with `busy`, the Russian
/// also adjudicates outcomes for its hidden (HIP) half-squad. Returns the German's notices.
async fn german_notices(busy: bool) -> Vec<serde_json::Value> {
    let mut receiver = Receiver::start(&[]).await;
    let store = Arc::new(MemoryStore::new());
    let server = TestServer::start_on(store.clone(), config()).await;
    let (game, tokens) = create(&server.url).await;
    webhook(&server.url, &game, &tokens.side_a, &receiver.url()).await;
    webhook(&server.url, &game, &tokens.side_b, &receiver.url()).await;
    let mut russian = join(&server.url, &game, &tokens.side_b).await;
    let mut german = join(&server.url, &game, &tokens.side_a).await;
    command(&mut german, Command::Done).await;
    leave(german).await;
    if busy {
        for outcome in [Outcome::Pin, Outcome::Break, Outcome::Rally] {
            command(
                &mut russian,
                Command::Adjudicate {
                    unit: "r3".into(),
                    outcome,
                    note: "`r3` under fire".into(),
                },
            )
            .await;
        }
    }
    // Into the German's Prep Fire Phase: the German is owed its turn.
    command(&mut russian, Command::Done).await;
    let notice = receiver.next(WAIT).await.expect("the German's notice");
    leave(russian).await;
    server.stop().await;
    let mut all = vec![notice];
    all.extend(receiver.drain());
    assert_eq!(owed(&*store), 0);
    all.iter()
        .map(|r| {
            let mut b = body(r);
            // The game's id is random per game; all else must match.
            let id = b["game"].as_str().unwrap().to_string();
            let text = serde_json::to_string(&b).unwrap().replace(&id, "GAME");
            b = serde_json::from_str(&text).unwrap();
            b
        })
        .collect()
}

#[tokio::test]
async fn a_hidden_units_activity_sends_no_notice_and_changes_none() {
    let quiet = german_notices(false).await;
    let busy = german_notices(true).await;
    // The Russian was connected throughout: it had nothing. The German had its turn, once.
    assert_eq!(quiet.len(), 1, "{quiet:?}");
    assert_eq!(quiet[0]["side"], "A");
    assert_eq!(quiet[0]["reasons"], serde_json::json!(["your_turn"]));
    assert_eq!(quiet[0]["phase"], "PFPh");
    assert_eq!(busy, quiet, "the hidden unit's activity shows in no notice");
    assert!(!serde_json::to_string(&busy).unwrap().contains("r3"));
}

#[tokio::test]
async fn a_notice_owed_when_the_server_stops_is_sent_once_after_it_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let mut receiver = Receiver::start(&[]).await;
    // A long quiet interval: the notice is owed, and still waiting, when the server stops.
    let waiting = Config {
        notify_quiet: Duration::from_secs(3600),
        ..config()
    };
    let server = TestServer::start(dir.path(), waiting).await;
    let (game, tokens) = create(&server.url).await;
    let secret = webhook(&server.url, &game, &tokens.side_b, &receiver.url()).await;
    let mut german = join(&server.url, &game, &tokens.side_a).await;
    command(&mut german, Command::Done).await;
    leave(german).await;
    server.stop().await;
    assert!(
        receiver.drain().is_empty(),
        "nothing sent before the quiet interval"
    );

    // Restarted: the registration is still there and the owed notice goes, once.
    let server = TestServer::start(dir.path(), config()).await;
    let sent = receiver
        .next(WAIT)
        .await
        .expect("the owed notice after the restart");
    verify(&secret, &sent);
    let notice = body(&sent);
    assert_eq!(notice["side"], "B");
    assert_eq!(notice["reasons"], serde_json::json!(["your_turn"]));
    server.stop().await;
    // And a third start owes nothing: the outbox is empty, the registration kept.
    let server = TestServer::start(dir.path(), config()).await;
    server.stop().await;
    assert!(receiver.drain().is_empty(), "sent exactly once");
    let store = server::store::SledStore::open(dir.path()).unwrap();
    assert_eq!(owed(&store), 0);
    let registrations = store
        .notify_records()
        .unwrap()
        .into_iter()
        .filter(|(k, _)| k[0] == b'r')
        .count();
    assert_eq!(registrations, 1);
}

#[tokio::test]
async fn an_email_notice_goes_through_the_relay() {
    let (mut sink, _dir, server) = with_relay().await;
    let (game, tokens) = create(&server.url).await;
    match register(
        &server.url,
        &game,
        &tokens.side_b,
        NotifyTarget::Email {
            address: "russian@example.org".into(),
        },
    )
    .await
    {
        ServerMessage::Notifying {
            targets, secret, ..
        } => {
            assert_eq!(
                targets,
                vec![
                    "email russian@example.org (unconfirmed: give the code e-mailed to it)"
                        .to_string()
                ]
            );
            assert_eq!(secret, None, "no webhook, no secret");
        }
        other => panic!("expected notifying, got {other:?}"),
    }
    let code = code_in(&sink.next(WAIT).await.expect("the confirmation").data);
    match register(
        &server.url,
        &game,
        &tokens.side_b,
        NotifyTarget::Confirm { code },
    )
    .await
    {
        ServerMessage::Notifying { targets, .. } => {
            assert_eq!(targets, vec!["email russian@example.org".to_string()]);
        }
        other => panic!("expected notifying, got {other:?}"),
    }
    let mut german = join(&server.url, &game, &tokens.side_a).await;
    command(&mut german, Command::Done).await;
    let mail = sink.next(WAIT).await.expect("an e-mail");
    assert_eq!(mail.from, "referee@example.org");
    assert_eq!(mail.to, vec!["russian@example.org".to_string()]);
    assert!(mail.data.contains("it is your turn"), "{}", mail.data);
    assert!(mail.data.contains(&game), "{}", mail.data);
    leave(german).await;
    server.stop().await;
}

/// An e-mail relay with a sink on loopback, and a server that sends through it.
async fn with_relay() -> (SmtpSink, tempfile::TempDir, TestServer) {
    let sink = SmtpSink::start().await;
    let relay = server::notify::SmtpRelay {
        host: "127.0.0.1".into(),
        port: sink.addr.port(),
        from: "referee@example.org".into(),
        starttls: false,
    };
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(
        dir.path(),
        Config {
            smtp: Some(relay),
            ..config()
        },
    )
    .await;
    (sink, dir, server)
}

/// Anyone's address could be registered, and sent notices whose scenario name the registering
/// player wrote. An address now gets one message first, in the server's own words with a code,
/// and no notice until the seat gives that code back (`asl notify --confirm CODE`).
#[tokio::test]
async fn an_address_gets_no_notice_until_its_owner_confirms_it() {
    let (mut sink, _dir, server) = with_relay().await;
    let (game, tokens) = create(&server.url).await;
    let address = NotifyTarget::Email {
        address: "someone.else@example.org".into(),
    };
    match register(&server.url, &game, &tokens.side_b, address.clone()).await {
        ServerMessage::Notifying { targets, .. } => assert_eq!(
            targets,
            vec!["email someone.else@example.org (unconfirmed: give the code e-mailed to it)"]
        ),
        other => panic!("expected notifying, got {other:?}"),
    }
    let mail = sink.next(WAIT).await.expect("the confirmation");
    assert_eq!(mail.to, vec!["someone.else@example.org".to_string()]);
    // The server's words only: nothing the scenario's author wrote.
    assert!(!mail.data.contains("Village"), "{}", mail.data);
    assert!(!mail.data.contains("it is your turn"), "{}", mail.data);
    let code = code_in(&mail.data);
    // A hand-over to the seat, whose address is not confirmed: no notice.
    let mut german = join(&server.url, &game, &tokens.side_a).await;
    command(&mut german, Command::Done).await;
    assert!(sink.next(Duration::from_millis(500)).await.is_none());
    // A wrong code is refused, saying why, and confirms nothing.
    match register(
        &server.url,
        &game,
        &tokens.side_b,
        NotifyTarget::Confirm {
            code: "0000-0000".into(),
        },
    )
    .await
    {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::BadNotifyTarget);
            assert!(message.contains("code"), "{message}");
        }
        other => panic!("expected an error, got {other:?}"),
    }
    // The other seat's token cannot confirm it.
    match register(
        &server.url,
        &game,
        &tokens.side_a,
        NotifyTarget::Confirm { code: code.clone() },
    )
    .await
    {
        ServerMessage::Error { code, .. } => assert_eq!(code, ErrorCode::BadNotifyTarget),
        other => panic!("expected an error, got {other:?}"),
    }
    match register(
        &server.url,
        &game,
        &tokens.side_b,
        NotifyTarget::Confirm { code },
    )
    .await
    {
        ServerMessage::Notifying { targets, .. } => {
            assert_eq!(targets, vec!["email someone.else@example.org"])
        }
        other => panic!("expected notifying, got {other:?}"),
    }
    // Confirmed: what next waits on the seat is a notice.
    command(&mut german, Command::ProposeEnd).await;
    let mail = sink.next(WAIT).await.expect("a notice");
    assert!(mail.data.contains(&game), "{}", mail.data);
    assert!(mail.data.contains("offers to end"), "{}", mail.data);
    leave(german).await;
    server.stop().await;
}

/// Whoever gives an address that is not his can have it mailed a code at most once every ten
/// minutes per seat, and cannot guess the code: five wrong codes drop the address.
#[tokio::test]
async fn codes_are_mailed_once_in_ten_minutes_and_five_wrong_ones_drop_the_address() {
    let (mut sink, _dir, server) = with_relay().await;
    let (game, tokens) = create(&server.url).await;
    let email = |address: &str| NotifyTarget::Email {
        address: address.into(),
    };
    let refused = |answer: ServerMessage| match answer {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::BadNotifyTarget);
            message
        }
        other => panic!("expected an error, got {other:?}"),
    };
    register(&server.url, &game, &tokens.side_b, email("one@example.org")).await;
    let code = code_in(&sink.next(WAIT).await.expect("the confirmation").data);
    for again in ["one@example.org", "two@example.org"] {
        let why = refused(register(&server.url, &game, &tokens.side_b, email(again)).await);
        assert!(why.contains("10 minutes"), "{why}");
    }
    assert!(sink.next(Duration::from_millis(300)).await.is_none());
    for n in 1..=5 {
        let wrong = NotifyTarget::Confirm {
            code: format!("AAAA-AAA{n}"),
        };
        let why = refused(register(&server.url, &game, &tokens.side_b, wrong).await);
        if n < 5 {
            assert!(
                why.contains(&format!("{} more wrong codes", 5 - n)),
                "{why}"
            );
        } else {
            assert!(why.contains("dropped"), "{why}");
        }
    }
    let why = refused(
        register(
            &server.url,
            &game,
            &tokens.side_b,
            NotifyTarget::Confirm { code },
        )
        .await,
    );
    assert!(why.contains("no address"), "{why}");
    // Removing the seat's targets does not start the ten minutes again.
    register(&server.url, &game, &tokens.side_b, NotifyTarget::Off).await;
    let why = refused(register(&server.url, &game, &tokens.side_b, email("one@example.org")).await);
    assert!(why.contains("10 minutes"), "{why}");
    assert!(sink.next(Duration::from_millis(300)).await.is_none());
    server.stop().await;
}

/// The interval per seat bounded one seat only: a player with many games (two seats each)
/// could have a stranger's address mailed a code by every one of them, six an hour each. A
/// mailbox is now mailed at most `CONFIRM_MAILS_PER_ADDRESS_MAX` codes a day from the whole
/// server, whichever seats ask; another letter case, a dot or a `+tag` is the same mailbox.
#[tokio::test]
async fn a_mailbox_is_mailed_a_few_codes_a_day_however_many_seats_ask() {
    use server::notify::CONFIRM_MAILS_PER_ADDRESS_MAX;
    let (mut sink, _dir, server) = with_relay().await;
    let mut seats = vec![];
    while seats.len() <= CONFIRM_MAILS_PER_ADDRESS_MAX {
        let (game, tokens) = create(&server.url).await;
        seats.push((game.clone(), tokens.side_a));
        seats.push((game, tokens.side_b));
    }
    let spellings = [
        "stranger@example.org",
        "Stranger@Example.ORG",
        "stranger+chess@example.org",
        "s.tranger@example.org",
    ];
    for (n, (game, token)) in seats.iter().enumerate() {
        let address = spellings[n % spellings.len()].to_string();
        let answer = register(&server.url, game, token, NotifyTarget::Email { address }).await;
        if n < CONFIRM_MAILS_PER_ADDRESS_MAX {
            assert!(
                matches!(answer, ServerMessage::Notifying { .. }),
                "seat {n}: {answer:?}"
            );
            sink.next(WAIT).await.expect("a code");
        } else {
            match answer {
                ServerMessage::Error { code, message } => {
                    assert_eq!(code, ErrorCode::BadNotifyTarget);
                    assert!(message.contains("as many codes"), "{message}");
                }
                other => panic!("seat {n}: expected a refusal, got {other:?}"),
            }
        }
    }
    assert!(sink.next(Duration::from_millis(300)).await.is_none());
    // Another mailbox is mailed as before.
    let (game, token) = &seats[CONFIRM_MAILS_PER_ADDRESS_MAX];
    let other = NotifyTarget::Email {
        address: "someone.else@example.org".into(),
    };
    assert!(matches!(
        register(&server.url, game, token, other).await,
        ServerMessage::Notifying { .. }
    ));
    sink.next(WAIT).await.expect("a code");
    server.stop().await;
}

/// The code in a confirmation message: the word after `--confirm`.
fn code_in(mail: &str) -> String {
    mail.split("--confirm ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no code in {mail}"))
        .to_string()
}

#[tokio::test]
async fn private_addresses_no_relay_and_too_many_targets_are_refused() {
    let receiver = Receiver::start(&[]).await;
    let strict = TestServer::start_on(Arc::new(MemoryStore::new()), Config::default()).await;
    let (game, tokens) = create(&strict.url).await;
    for url in [
        receiver.url(),
        "http://localhost:9/".into(),
        "http://169.254.169.254/".into(),
    ] {
        match register(
            &strict.url,
            &game,
            &tokens.side_a,
            NotifyTarget::Webhook { url: url.clone() },
        )
        .await
        {
            ServerMessage::Error { code, message } => {
                assert_eq!(code, ErrorCode::BadNotifyTarget);
                assert!(
                    message.contains("--notify-allow-private"),
                    "{url}: {message}"
                );
            }
            other => panic!("{url} was taken: {other:?}"),
        }
    }
    match register(
        &strict.url,
        &game,
        &tokens.side_a,
        NotifyTarget::Email {
            address: "a@example.org".into(),
        },
    )
    .await
    {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::BadNotifyTarget);
            assert!(message.contains("--smtp-relay"), "{message}");
        }
        other => panic!("e-mail without a relay was taken: {other:?}"),
    }
    strict.stop().await;

    let open = TestServer::start_on(Arc::new(MemoryStore::new()), config()).await;
    let (game, tokens) = create(&open.url).await;
    let max = Config::default().notify_targets_per_seat_max;
    for n in 0..max {
        let url = format!("{}/{n}", receiver.url());
        assert!(matches!(
            register(
                &open.url,
                &game,
                &tokens.side_a,
                NotifyTarget::Webhook { url }
            )
            .await,
            ServerMessage::Notifying { .. }
        ));
    }
    let url = format!("{}/one-more", receiver.url());
    match register(
        &open.url,
        &game,
        &tokens.side_a,
        NotifyTarget::Webhook { url },
    )
    .await
    {
        ServerMessage::Error { code, message } => {
            assert_eq!(code, ErrorCode::BadNotifyTarget);
            assert!(message.contains("the limit"), "{message}");
        }
        other => panic!("a target past the limit was taken: {other:?}"),
    }
    match register(&open.url, &game, &tokens.side_a, NotifyTarget::Off).await {
        ServerMessage::Notifying { targets, .. } => assert!(targets.is_empty()),
        other => panic!("expected notifying, got {other:?}"),
    }
    open.stop().await;
}

#[tokio::test]
async fn a_webhook_that_keeps_failing_is_given_up_after_its_tries() {
    let tries = 3;
    let mut receiver = Receiver::start(&[500; 10]).await;
    let store = Arc::new(MemoryStore::new());
    let server = TestServer::start_on(
        store.clone(),
        Config {
            notify_tries_max: tries,
            ..config()
        },
    )
    .await;
    let (game, tokens) = create(&server.url).await;
    webhook(&server.url, &game, &tokens.side_b, &receiver.url()).await;
    let mut german = join(&server.url, &game, &tokens.side_a).await;
    command(&mut german, Command::Done).await;
    let mut keys = vec![];
    for _ in 0..tries {
        let tried = receiver.next(WAIT).await.expect("a try");
        assert_eq!(tried.status, 500);
        keys.push(tried.header("x-asl-idempotency-key").unwrap().to_string());
    }
    leave(german).await;
    // The stop waits for the delivery, which makes no try past the last.
    server.stop().await;
    assert!(receiver.drain().is_empty(), "no try past {tries}");
    assert!(
        keys.windows(2).all(|k| k[0] == k[1]),
        "one notice: {keys:?}"
    );
    assert_eq!(owed(&*store), 0, "given up, it leaves the outbox");
}

#[tokio::test]
async fn an_end_offered_and_a_concession_are_each_a_notice() {
    let mut receiver = Receiver::start(&[]).await;
    let server = TestServer::start_on(Arc::new(MemoryStore::new()), config()).await;
    let (game, tokens) = create(&server.url).await;
    // Registered through `asl notify`, as a player does.
    let mut out = Vec::new();
    let args = client::commands::notify::NotifyArgs {
        server: client::commands::ServerArg {
            url: server.url.clone(),
        },
        game: client::commands::GameArgs {
            game: game.clone(),
            token: tokens.side_b.clone(),
        },
        webhook: Some(receiver.url()),
        email: None,
        off: false,
        confirm: None,
    };
    client::commands::notify::notify(&args, &mut out)
        .await
        .unwrap();
    let printed = String::from_utf8(out).unwrap();
    assert!(
        printed.contains(&format!("webhook {}", receiver.url())),
        "{printed}"
    );
    assert!(printed.contains("Webhook secret"), "{printed}");

    let mut german = join(&server.url, &game, &tokens.side_a).await;
    command(&mut german, Command::ProposeEnd).await;
    let offered = body(&receiver.next(WAIT).await.expect("the offer's notice"));
    assert_eq!(offered["reasons"], serde_json::json!(["end_proposed"]));
    assert_eq!(offered["to_act"], "German");
    command(&mut german, Command::Concede).await;
    let over = body(&receiver.next(WAIT).await.expect("the end's notice"));
    assert_eq!(over["reasons"], serde_json::json!(["game_over"]));
    assert_eq!(over["to_act"], serde_json::Value::Null);
    assert!(over["handover"].as_u64() > offered["handover"].as_u64());
    leave(german).await;
    server.stop().await;
    assert!(receiver.drain().is_empty());
}

/// A seat past its sends per hour is sent nothing more that hour; what it is owed stays in the
/// outbox (and goes after a restart under a higher limit).
#[tokio::test]
async fn a_seat_past_its_sends_per_hour_waits() {
    let dir = tempfile::tempdir().unwrap();
    let mut receiver = Receiver::start(&[]).await;
    let one_an_hour = Config {
        notify_sends_per_hour_max: 1,
        ..config()
    };
    let server = TestServer::start(dir.path(), one_an_hour).await;
    let (first, tokens) = create(&server.url).await;
    webhook(&server.url, &first, &tokens.side_b, &receiver.url()).await;
    let mut german = join(&server.url, &first, &tokens.side_a).await;
    command(&mut german, Command::Done).await;
    let turn = body(&receiver.next(WAIT).await.expect("the first notice"));
    assert_eq!(turn["reasons"], serde_json::json!(["your_turn"]));
    // Past the limit: the offer is owed, not sent.
    command(&mut german, Command::ProposeEnd).await;
    // Another game's seat, owed after it on the notifier's queue, is sent its notice: by then
    // the offer was taken up, and held.
    let (second, others) = create(&server.url).await;
    webhook(&server.url, &second, &others.side_b, &receiver.url()).await;
    let mut other = join(&server.url, &second, &others.side_a).await;
    command(&mut other, Command::Done).await;
    let elsewhere = body(&receiver.next(WAIT).await.expect("the other game's notice"));
    assert_eq!(elsewhere["game"], second.as_str());
    leave(german).await;
    leave(other).await;
    server.stop().await;
    assert!(
        receiver.drain().is_empty(),
        "the offer waits for the hour to turn"
    );

    let server = TestServer::start(dir.path(), config()).await;
    let offer = body(
        &receiver
            .next(WAIT)
            .await
            .expect("the offer after the restart"),
    );
    assert_eq!(offer["game"], first.as_str());
    assert_eq!(offer["reasons"], serde_json::json!(["end_proposed"]));
    server.stop().await;
    assert!(receiver.drain().is_empty());
}
