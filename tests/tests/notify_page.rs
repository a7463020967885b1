//! Turn notices registered from the play page (issue 41, `docs/notifications.md`), as `asl
//! notify` does: a seat gives an e-mail address, the page asks for the code the server mailed
//! to it, and the address is confirmed once the code is given back — a wrong code is refused
//! in the form and the game's connection goes on. A webhook shows its signing secret once;
//! "nothing" removes every target. A spectator's page has no such form. A real server, an
//! SMTP sink and a webhook receiver on 127.0.0.1, and Chromium (`apt-get install chromium`).

#[path = "support/page.rs"]
mod page;

use e2e::chromium::{Browser, Tab};
use e2e::receiver::Receiver;
use e2e::smtp::SmtpSink;
use e2e::TestServer;
use page::{chromium_binary, text, SETTLED, WAIT};
use server::operations::config::Config;

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");

/// A server that may post to loopback and mails through `sink`, when there is one.
async fn server(dir: &std::path::Path, sink: Option<&SmtpSink>) -> TestServer {
    let smtp = sink.map(|sink| server::notify::SmtpRelay {
        host: "127.0.0.1".into(),
        port: sink.addr.port(),
        from: "referee@example.org".into(),
        starttls: false,
    });
    let config = Config {
        notify_allow_private: true,
        smtp,
        ..Config::default()
    };
    TestServer::start(&dir.join("data"), config).await
}

/// A new game's page links: the German's, the Russian's and the spectator's.
async fn create(server: &TestServer) -> [String; 3] {
    let created = client::Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap();
    let tokens = created.tokens;
    [tokens.side_a, tokens.side_b, tokens.spectator].map(|token| {
        format!(
            "http://{}/watch#game={}&token={token}",
            server.addr, created.game
        )
    })
}

/// The targets the page lists, one a line.
const TARGETS: &str = "[...document.querySelectorAll('#notify-targets li')]\
    .map(li => li.textContent).join('\\n')";

/// Opens the notices and fills their form with `kind` (as chosen from its list) and `value`.
async fn fill(browser: &mut Browser, tab: &Tab, kind: &str, value: &str) {
    browser
        .eval(
            tab,
            &format!(
                "(() => {{ document.getElementById('notices').open = true; \
                 const k = document.getElementById('notify-kind'); k.value = {kind:?}; \
                 k.dispatchEvent(new Event('change')); \
                 const v = document.getElementById('notify-value'); v.value = {value:?}; \
                 v.focus(); return true; }})()"
            ),
        )
        .await;
}

/// Fills the notice form and registers by pressing Enter in its field, as a keyboard user does.
async fn register_by_keyboard(browser: &mut Browser, tab: &Tab, kind: &str, value: &str) {
    fill(browser, tab, kind, value).await;
    browser.enter(tab).await;
}

/// Fills the notice form and registers with its button.
async fn register_by_button(browser: &mut Browser, tab: &Tab, kind: &str, value: &str) {
    fill(browser, tab, kind, value).await;
    browser
        .eval(
            tab,
            "document.querySelector('#notify-form button[type=submit]').click()",
        )
        .await;
}

/// Waits for the server's answer to the registration sent.
async fn answered(browser: &mut Browser, tab: &Tab) -> String {
    browser
        .wait_for(
            tab,
            "the server's answer to the registration",
            "window.aslWatch.notifyAsked === null && \
             document.getElementById('notify-report').textContent !== ''",
            WAIT,
        )
        .await;
    text(
        browser,
        tab,
        "document.getElementById('notify-report').textContent",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_registers_an_address_on_the_page_and_confirms_it_with_the_mailed_code() {
    let mut sink = SmtpSink::start().await;
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path(), Some(&sink)).await;
    let [_, russian_link, _] = create(&server).await;
    let mut browser = Browser::launch(&chromium_binary()).await;
    let russian = browser.open(&russian_link).await;
    browser
        .wait_for(&russian, "the Russian's page", SETTLED, WAIT)
        .await;
    let connections = browser.eval(&russian, "window.aslWatch.connections").await;

    // An empty field is not sent.
    register_by_keyboard(&mut browser, &russian, "email", " ").await;
    assert_eq!(
        text(
            &mut browser,
            &russian,
            "document.getElementById('notify-report').textContent"
        )
        .await,
        "Give the address first."
    );
    assert_eq!(
        browser.eval(&russian, "window.aslWatch.notifyAsked").await,
        serde_json::Value::Null
    );

    register_by_keyboard(&mut browser, &russian, "email", "russian@example.org").await;
    let report = answered(&mut browser, &russian).await;
    assert!(report.contains("A code was e-mailed"), "{report}");
    assert_eq!(
        text(&mut browser, &russian, TARGETS).await,
        "email russian@example.org (unconfirmed: give the code e-mailed to it)"
    );
    // The form asks for the code next, and the keyboard is in its field.
    assert_eq!(
        text(
            &mut browser,
            &russian,
            "document.getElementById('notify-kind').value + ' ' + \
             document.activeElement.id + ' ' + document.getElementById('notify-what').textContent"
        )
        .await,
        "confirm notify-value Code"
    );
    let mail = sink.next(WAIT).await.expect("the confirmation mail");
    assert_eq!(mail.to, vec!["russian@example.org".to_string()]);
    let code = mail
        .data
        .split("--confirm ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no code in {}", mail.data))
        .to_string();

    // A wrong code is refused in the form, saying why; the page stays on its connection.
    register_by_keyboard(&mut browser, &russian, "confirm", "0000-0000").await;
    let refused = answered(&mut browser, &russian).await;
    assert!(
        refused.starts_with("Not registered: ") && refused.contains("(bad_notify_target)"),
        "{refused}"
    );
    assert_eq!(
        browser
            .eval(
                &russian,
                "document.getElementById('notify-report').classList.contains('refused')"
            )
            .await,
        true
    );
    assert_eq!(
        browser.eval(&russian, "window.aslWatch.connections").await,
        connections,
        "a refused target does not drop the game's connection"
    );
    assert_eq!(browser.eval(&russian, "window.aslWatch.joined").await, true);

    register_by_keyboard(&mut browser, &russian, "confirm", &code).await;
    let report = answered(&mut browser, &russian).await;
    assert!(
        report.starts_with("Notices for your side go to:"),
        "{report}"
    );
    assert_eq!(
        text(&mut browser, &russian, TARGETS).await,
        "email russian@example.org"
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_webhook_shows_its_secret_once_and_nothing_removes_every_target() {
    let receiver = Receiver::start(&[]).await;
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path(), None).await;
    let [german_link, _, spectator_link] = create(&server).await;
    let mut browser = Browser::launch(&chromium_binary()).await;
    // On a phone, the form keeps to the screen.
    let german = browser.open_phone(&german_link, 390, 844).await;
    browser
        .wait_for(&german, "the German's page", SETTLED, WAIT)
        .await;

    // With no relay, an address is refused in the form.
    register_by_keyboard(&mut browser, &german, "email", "german@example.org").await;
    let refused = answered(&mut browser, &german).await;
    assert!(refused.contains("(bad_notify_target)"), "{refused}");

    // A webhook, sent with the form's button: the secret is shown this once.
    register_by_button(&mut browser, &german, "webhook", &receiver.url()).await;
    answered(&mut browser, &german).await;
    assert_eq!(
        text(&mut browser, &german, TARGETS).await,
        format!("webhook {}", receiver.url())
    );
    let secret = text(
        &mut browser,
        &german,
        "document.getElementById('notify-secret').textContent",
    )
    .await;
    assert_eq!(secret.len(), 64, "{secret}");
    assert!(secret.chars().all(|c| c.is_ascii_hexdigit()), "{secret}");
    // Every part of the notices, the 64-digit secret too, within the screen's width.
    // (A page wider than the phone would widen the phone's viewport past its 390 pixels.)
    let fits = "window.innerWidth === 390 && \
        document.documentElement.scrollWidth <= window.innerWidth && \
        [document.getElementById('notices'), ...document.querySelectorAll('#notices *')] \
        .every((e) => { const r = e.getBoundingClientRect(); \
        return r.left >= 0 && r.right <= window.innerWidth; })";
    assert_eq!(
        browser.eval(&german, fits).await,
        true,
        "the phone layout holds"
    );

    register_by_keyboard(&mut browser, &german, "webhook", &receiver.url()).await;
    answered(&mut browser, &german).await;
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('notify-secret') === null")
            .await,
        true,
        "the secret is shown once"
    );

    // Nothing: the field has nothing to give, and every target goes.
    fill(&mut browser, &german, "off", "").await;
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('notify-value').disabled")
            .await,
        true
    );
    register_by_button(&mut browser, &german, "off", "").await;
    assert_eq!(
        answered(&mut browser, &german).await,
        "No notices for your side."
    );

    // A spectator's page has no notice form: it watches.
    let spectator = browser.open(&spectator_link).await;
    browser
        .wait_for(&spectator, "the spectator's page", SETTLED, WAIT)
        .await;
    assert_eq!(
        browser
            .eval(
                &spectator,
                "document.getElementById('notices').getClientRects().length"
            )
            .await,
        0
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
