//! Saving a finished game's export from the page, as `asl export` writes it (`docs/review.md`):
//! before the game is over the page offers nothing to save; once it is, a spectator's page reads
//! the stored log page by page and makes the very file `asl export` makes — the same bytes,
//! its blake3 checksum computed in the page — which verifies end to end. Needs Chromium
//! (`apt-get install chromium`).

#[path = "support/page.rs"]
mod page;

use client::connection::Reply;
use client::Connection;
use e2e::chromium::Browser;
use e2e::TestServer;
use page::{chromium_binary, text, SETTLED, WAIT};
use protocol::Command;
use server::operations::config::Config;

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_games_page_saves_the_export_asl_export_writes() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap();
    let mut browser = Browser::launch(&chromium_binary()).await;
    let spectator = browser
        .open(&format!(
            "http://{}/watch#game={}&token={}",
            server.addr, created.game, created.tokens.spectator
        ))
        .await;
    browser
        .wait_for(&spectator, "the spectator's page", SETTLED, WAIT)
        .await;
    // A game going on has no export yet: the button waits for its end.
    assert_eq!(
        browser
            .eval(
                &spectator,
                "document.getElementById('export-save').disabled && \
                 !document.getElementById('export').hidden"
            )
            .await,
        true
    );

    // The German concedes: the game is over.
    let mut german = Connection::connect(&server.url).await.unwrap();
    german
        .join(&created.game, &created.tokens.side_a, None)
        .await
        .unwrap();
    let reply = german.command(1, Command::Concede, None).await.unwrap();
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    german.close().await;

    browser
        .wait_for(
            &spectator,
            "the game over and the save offered",
            "window.aslWatch.live && window.aslWatch.live.over === true && \
             !document.getElementById('export-save').disabled",
            WAIT,
        )
        .await;
    browser
        .eval(
            &spectator,
            "document.getElementById('export').open = true; \
             document.getElementById('export-save').focus(); \
             document.getElementById('export-save').click()",
        )
        .await;
    browser
        .wait_for(
            &spectator,
            "the export made",
            "window.aslWatch.exported !== null",
            WAIT,
        )
        .await;
    let made = text(&mut browser, &spectator, "window.aslWatch.exported").await;

    // The same file the CLI writes, byte for byte, and it verifies: chain, rolls, checksum.
    let mut cli = Connection::connect(&server.url).await.unwrap();
    cli.join(&created.game, &created.tokens.spectator, None)
        .await
        .unwrap();
    let written = client::commands::export::read_export(&mut cli)
        .await
        .unwrap();
    cli.close().await;
    assert_eq!(made, written);
    let verified = protocol::export::verify(made.as_bytes(), &mut |_, _| {})
        .unwrap_or_else(|e| panic!("the page's export does not verify: {e}"));
    assert!(verified.entries.len() > 1, "{}", verified.entries.len());
    // The scenario inside the first event makes the file several of blake3's chunks long.
    assert!(made.len() > 3 * 1024, "{} bytes", made.len());

    // The page offers the file to save, and says so.
    assert_eq!(
        text(
            &mut browser,
            &spectator,
            "(() => { const a = document.getElementById('export-link'); \
             return [a.hidden, a.download, a.href.startsWith('blob:')].join(' '); })()"
        )
        .await,
        format!("false {}.log true", created.game)
    );
    let report = text(
        &mut browser,
        &spectator,
        "document.getElementById('export-report').textContent",
    )
    .await;
    assert!(report.starts_with("Saved "), "{report}");
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
