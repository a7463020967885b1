//! Verifying an export from the page as `asl verify --server-key KEY --receipts` does
//! (docs/review.md): a player who kept receipts in this browser while playing gives the server
//! key they trust and chooses the export file; the server checks the file's signature under
//! that key and each receipt the browser kept for the game against the file, by the CLI's own
//! functions, and the review's report says what held. A key the file was not signed with, and
//! a receipt that does not meet the file, are refused with why. On a phone's width the form
//! keeps to the screen. Needs Chromium (`apt-get install chromium`).

#[path = "support/page.rs"]
mod page;

use client::connection::Reply;
use client::Connection;
use e2e::chromium::{Browser, Tab};
use page::{chromium_binary, game_on, link, text, SETTLED, WAIT};
use protocol::record::signed::{ServerKey, ServerSigningKey};
use protocol::Command;
use serde_json::Value;
use server::operations::config::Config;
use std::path::Path;
use std::sync::Arc;

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");

/// The receipts this browser keeps for `game`, as JSON text.
fn kept(game: &str) -> String {
    format!(
        "JSON.stringify(Object.keys(localStorage).filter((k) => k.startsWith('asl-receipt:{game}:')) \
         .map((k) => JSON.parse(localStorage.getItem(k))))"
    )
}

/// Opens the page without a link, gives `key` (the box for receipts left ticked) and chooses
/// `file`; returns the review's report once the export is open, or the refusal in the status.
async fn verify(
    browser: &mut Browser,
    url: &str,
    key: &str,
    file: &Path,
) -> Result<String, String> {
    let tab: Tab = browser.open(url).await;
    browser
        .wait_for(
            &tab,
            "the page without a link",
            "document.getElementById('review').open",
            WAIT,
        )
        .await;
    browser
        .eval(
            &tab,
            &format!(
                "document.getElementById('review-key').value = {}",
                Value::String(key.into())
            ),
        )
        .await;
    browser.choose_file(&tab, "#export-file", file).await;
    browser
        .wait_for(
            &tab,
            "the server's answer to the review",
            "window.aslWatch.fatal || document.getElementById('review-report').textContent !== ''",
            WAIT,
        )
        .await;
    let status = text(
        browser,
        &tab,
        "document.getElementById('status').textContent",
    )
    .await;
    let report = text(
        browser,
        &tab,
        "document.getElementById('review-report').textContent",
    )
    .await;
    if report.is_empty() {
        Err(status)
    } else {
        Ok(report)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_export_is_verified_with_the_trusted_key_and_the_receipts_this_browser_kept() {
    let key = ServerSigningKey::from_bytes(&[41; 32]);
    let config = Config {
        signing_key: Arc::new(key.clone()),
        ..Config::default()
    };
    let (dir, server, created) = game_on(config, SCENARIO).await;
    let mut browser = Browser::launch(&chromium_binary()).await;
    let german = browser
        .open(&link(&server, &created, &created.tokens.side_a))
        .await;
    browser
        .wait_for(&german, "the German's page", SETTLED, WAIT)
        .await;
    browser
        .wait_for(
            &german,
            "the German's receipt kept",
            &format!("JSON.parse({}).length === 1", kept(&created.game)),
            WAIT,
        )
        .await;
    // The game ends (the Russian concedes); its export is what `asl export` writes.
    let mut russian = Connection::connect(&server.url).await.unwrap();
    russian
        .join(&created.game, &created.tokens.side_b, None)
        .await
        .unwrap();
    let reply = russian.command(1, Command::Concede, None).await.unwrap();
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    let export = client::commands::export::read_export(&mut russian)
        .await
        .unwrap();
    russian.close().await;
    let file = dir.path().join("game.log");
    std::fs::write(&file, &export).unwrap();
    let page = format!("http://{}/watch", server.addr);
    let trusted = ServerKey::of(&key).to_string();

    let report = verify(&mut browser, &page, &trusted, &file).await.unwrap();
    assert!(
        report.starts_with("receipt 1: the German player's stream reaches its event "),
        "{report}"
    );
    assert!(
        report.contains(&format!("signed by the server's key {trusted}")),
        "{report}"
    );

    // A key the file was not signed with: refused, as `asl verify` says it is invalid.
    let other = ServerKey::of(&ServerSigningKey::from_bytes(&[42; 32])).to_string();
    let refused = verify(&mut browser, &page, &other, &file)
        .await
        .unwrap_err();
    assert!(
        refused.starts_with("not a valid export: ") && refused.ends_with("(bad_export)"),
        "{refused}"
    );
    let refused = verify(&mut browser, &page, "not a key", &file)
        .await
        .unwrap_err();
    assert!(refused.contains("64 lowercase hex digits"), "{refused}");

    // A receipt this browser kept that the file does not meet (its version changed after the
    // server signed it): the review is refused, naming the receipt.
    browser
        .eval(
            &german,
            &format!(
                "window.aslWatch.fatal = true; window.aslWatch.ws.close(); \
                 for (const k of Object.keys(localStorage).filter((k) => k.startsWith('asl-receipt:{}:'))) {{ \
                 const r = JSON.parse(localStorage.getItem(k)); r.version += 1; \
                 localStorage.setItem(k, JSON.stringify(r)); }} true",
                created.game
            ),
        )
        .await;
    let refused = verify(&mut browser, &page, &trusted, &file)
        .await
        .unwrap_err();
    assert!(
        refused.starts_with("not a valid export: the receipt 1 of those sent: ")
            && refused.ends_with("(bad_export)"),
        "{refused}"
    );

    // On a phone's width the form keeps to the screen.
    let phone = browser.open_phone(&page, 390, 844).await;
    browser
        .wait_for(
            &phone,
            "the page without a link",
            "document.getElementById('review').open",
            WAIT,
        )
        .await;
    assert_eq!(
        browser
            .eval(
                &phone,
                "window.innerWidth === 390 && \
                 document.documentElement.scrollWidth <= window.innerWidth && \
                 ['review-key', 'review-receipts', 'export-file'].every((id) => { \
                 const r = document.getElementById(id).getBoundingClientRect(); \
                 return r.width > 0 && r.left >= 0 && r.right <= window.innerWidth; })"
            )
            .await,
        true,
        "the phone layout holds"
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
