//! Taking back from any moment of the record, as `undo #N` does in a script (docs/review.md):
//! a move the German made from another client (a page reloaded, the CLI) is not this page's
//! last command, which is all Z takes back; the German clicks the moment before the move in
//! the record, asks to take back to it, the referee previews the undo, the Russian consents
//! from his prompt, and the squad is back where it stood. Needs Chromium (`apt-get install
//! chromium`).

#[path = "support/page.rs"]
mod page;

use client::{Connection, Reply};
use page::*;
use protocol::Command;

const WALL_AND_SEWER: &str = include_str!("../../scenarios/wall-and-sewer.toml");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_takes_back_to_a_moment_picked_in_the_record() {
    let (_dir, server, mut browser, [german, russian]) = start(WALL_AND_SEWER).await;
    let players = [&german, &russian];
    play_until(&mut browser, players, &at("MPh, ATTACKER")).await;
    settle(&mut browser, players).await;
    let before = browser.eval(&german, "window.aslWatch.version").await;
    let before = before.as_u64().unwrap();

    // The German moves 467b from F5 to F6 from another client, with the page's own token.
    let game = text(&mut browser, &german, "window.aslWatch.game").await;
    let token = text(&mut browser, &german, "window.aslWatch.token").await;
    let mut other = Connection::connect(&server.url).await.unwrap();
    other.join(&game, &token, None).await.unwrap();
    let step: Command =
        serde_json::from_value(serde_json::json!({"move": {"units": ["467b"], "to": "55F6"}}))
            .unwrap();
    let reply = other.command(1, step, None).await.unwrap();
    assert!(matches!(reply, Reply::Accepted { .. }), "{reply:?}");
    other.close().await;
    browser
        .wait_for(
            &german,
            "the move on the German's page",
            &format!("{SETTLED} && window.aslWatch.live.units['467b'].hex === '55F6'"),
            WAIT,
        )
        .await;

    // At the live position there is no earlier moment to go back to.
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('undo-to').hidden")
            .await,
        true,
        "at the live position there is nothing to go back to"
    );

    // The moment before the move, picked in the record; the undo asked from there.
    browser
        .eval(
            &german,
            &format!("document.querySelector('#events li[data-seq=\"{before}\"]').click()"),
        )
        .await;
    browser
        .wait_for(
            &german,
            "the earlier moment shown, and the way back offered",
            &format!(
                "window.aslWatch.shown && window.aslWatch.shown.version === {before} && \
                 window.aslWatch.shown.units['467b'].hex === '55F5' && \
                 !document.getElementById('undo-to').hidden"
            ),
            WAIT,
        )
        .await;
    browser
        .eval(&german, "document.getElementById('undo-to').click()")
        .await;
    let asked = send(&mut browser, &german).await;
    assert!(
        asked.starts_with(&format!(
            "Ask your opponent to take back events #{}–#",
            before + 1
        )),
        "{asked}"
    );
    // Back to the live position, where the request waits on the Russian.
    browser
        .eval(&german, "document.getElementById('live').click()")
        .await;
    settle(&mut browser, players).await;
    assert!(prompt(&mut browser, &russian)
        .await
        .contains("Your opponent asks to take back events"));
    browser.type_key(&russian, "1").await;
    let consented = send(&mut browser, &russian).await;
    assert!(
        consented.starts_with("Consent to the undo: "),
        "{consented}"
    );
    browser
        .wait_for(
            &german,
            "467b back in F5",
            &format!("{SETTLED} && window.aslWatch.live.units['467b'].hex === '55F5'"),
            WAIT,
        )
        .await;
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "the pages reported errors: {errors:#?}");
    browser.close().await;
    server.stop().await;
}
