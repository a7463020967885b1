//! Receipts as the page keeps them, as the CLI does in `receipts/` (docs/review.md): the
//! signed head of the seat's own stream from each `joined` and `accepted`, kept by the browser
//! under a tag of the token (never the token), and shown when the page is opened again. A
//! server restarted from an older copy of its data, which no longer holds events it signed
//! for the German, is caught by the German's next page: it says the game went back instead of
//! serving the older position. Needs Chromium (`apt-get install chromium`).

#[path = "support/page.rs"]
mod page;

use e2e::chromium::{Browser, Tab};
use e2e::{copy_dir, TestServer};
use page::*;
use protocol::record::signed::ServerSigningKey;
use server::operations::config::Config;
use std::sync::Arc;

const SCENARIO: &str = include_str!("../../scenarios/b9-41-wall-advantage.toml");

fn config(key: &ServerSigningKey) -> Config {
    Config {
        signing_key: Arc::new(key.clone()),
        ..Config::default()
    }
}

/// The receipt the browser keeps for this page's game, as JSON text ("null" when none).
const KEPT: &str = "JSON.stringify(Object.keys(localStorage) \
    .filter((k) => k.startsWith('asl-receipt:' + window.aslWatch.game + ':')) \
    .map((k) => JSON.parse(localStorage.getItem(k)))[0] ?? null)";

/// Ends the German's step from the page (N, then Enter), and waits until it is kept.
async fn done(browser: &mut Browser, tab: &Tab) {
    browser.type_key(tab, "n").await;
    send(browser, tab).await;
    browser
        .wait_for(tab, "the page to settle", SETTLED, WAIT)
        .await;
}

/// Leaves the page as if its tab were closed: its connection closed, and no reconnection (which
/// would keep a receipt behind the test's back).
async fn leave(browser: &mut Browser, tab: &Tab) {
    browser
        .eval(
            tab,
            "window.aslWatch.fatal = true; window.aslWatch.ws.close(); true",
        )
        .await;
}

/// The version of the receipt kept, once it is the page's own version.
async fn kept_at_head(browser: &mut Browser, tab: &Tab) -> u64 {
    let version = browser.eval(tab, "window.aslWatch.version").await;
    browser
        .wait_for(
            tab,
            "the receipt of the page's head kept",
            &format!("JSON.parse({KEPT})?.version === {version}"),
            WAIT,
        )
        .await;
    version.as_u64().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_opened_on_a_rolled_back_server_says_so() {
    let key = ServerSigningKey::from_bytes(&[36; 32]);
    let (data, old) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let server = TestServer::start(data.path(), config(&key)).await;
    let addr = server.addr;
    let created = client::Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap();
    let link = format!(
        "http://{addr}/watch#game={}&token={}",
        created.game, created.tokens.side_a
    );
    let mut browser = Browser::launch(&chromium_binary()).await;
    let first = browser.open(&link).await;
    browser
        .wait_for(&first, "the German's page", SETTLED, WAIT)
        .await;
    let joined_at = kept_at_head(&mut browser, &first).await;
    done(&mut browser, &first).await;
    let after_done = kept_at_head(&mut browser, &first).await;
    assert!(after_done > joined_at, "{after_done} > {joined_at}");
    let kept = text(&mut browser, &first, KEPT).await;
    assert!(
        !kept.contains(&created.tokens.side_a),
        "the token is not kept: {kept}"
    );
    assert!(
        browser
            .eval(&first, "Object.keys(localStorage).join(' ')")
            .await
            .as_str()
            .is_some_and(|keys| !keys.contains(&created.tokens.side_a)),
        "nor named"
    );
    leave(&mut browser, &first).await;
    server.stop().await;
    copy_dir(data.path(), old.path());

    // The same server again: the page opened afresh shows its receipt, which holds, and plays.
    let server = TestServer::start_at(data.path(), config(&key), addr).await;
    let second = browser.open(&link).await;
    browser
        .wait_for(&second, "the German's page again", SETTLED, WAIT)
        .await;
    assert_eq!(
        browser.eval(&second, "window.aslWatch.side").await,
        "A",
        "joined as the German with the receipt shown"
    );
    done(&mut browser, &second).await;
    let further = kept_at_head(&mut browser, &second).await;
    assert!(further > after_done, "{further} > {after_done}");
    leave(&mut browser, &second).await;
    server.stop().await;

    // The older copy served at the same address: the page opened on it says the game went back.
    let server = TestServer::start_at(old.path(), config(&key), addr).await;
    let third = browser.open(&link).await;
    browser
        .wait_for(
            &third,
            "the page to say the game went back",
            "!document.getElementById('fatal').hidden",
            WAIT,
        )
        .await;
    assert_eq!(
        text(
            &mut browser,
            &third,
            "document.getElementById('fatal-title').textContent"
        )
        .await,
        "This server's copy of the game went back"
    );
    let detail = text(
        &mut browser,
        &third,
        "document.getElementById('fatal-detail').textContent",
    )
    .await;
    assert!(detail.contains("rolled back"), "{detail}");
    browser.close().await;
    server.stop().await;
}

/// A server whose signing key was made anew cannot check the receipt kept under the old one:
/// the page joins without it and says so, rather than lock the player out, and keeps the new
/// server's receipt from then on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receipt_under_another_key_does_not_lock_the_page_out() {
    let data = tempfile::tempdir().unwrap();
    let old_key = ServerSigningKey::from_bytes(&[37; 32]);
    let server = TestServer::start(data.path(), config(&old_key)).await;
    let addr = server.addr;
    let created = client::Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap();
    let link = format!(
        "http://{addr}/watch#game={}&token={}",
        created.game, created.tokens.side_a
    );
    let mut browser = Browser::launch(&chromium_binary()).await;
    let first = browser.open(&link).await;
    browser
        .wait_for(&first, "the German's page", SETTLED, WAIT)
        .await;
    kept_at_head(&mut browser, &first).await;
    let old_signer = text(
        &mut browser,
        &first,
        &format!("JSON.stringify(JSON.parse({KEPT}).signer)"),
    )
    .await;
    leave(&mut browser, &first).await;
    server.stop().await;

    let new_key = ServerSigningKey::from_bytes(&[38; 32]);
    let server = TestServer::start_at(data.path(), config(&new_key), addr).await;
    let second = browser.open(&link).await;
    browser
        .wait_for(&second, "the German's page again", SETTLED, WAIT)
        .await;
    // Said while the page plays on: the German ends his step, and it is still said.
    let warned = "document.getElementById('status').textContent \
        .includes(\"The server could not check this browser's receipt\")";
    browser
        .wait_for(
            &second,
            "the page to say the receipt went unchecked",
            warned,
            WAIT,
        )
        .await;
    done(&mut browser, &second).await;
    kept_at_head(&mut browser, &second).await;
    assert_eq!(browser.eval(&second, warned).await, true);
    let new_signer = text(
        &mut browser,
        &second,
        &format!("JSON.stringify(JSON.parse({KEPT}).signer)"),
    )
    .await;
    assert_ne!(old_signer, new_signer, "the new server's receipt is kept");
    browser.close().await;
    server.stop().await;
}
