//! Giving time from the page, as `give-time DURATION` does in `asl play` (docs/clock.md): a
//! player of a game under a time control writes any duration the CLI reads (`90m`, `1h30m`,
//! `2d`) and the referee's preview answers it; words the CLI would not read are named in the
//! page and nothing is sent, and an amount over what may be given at once is the referee's
//! refusal (`GIVE_TIME_MAX`), shown as it said it. On a phone's width the form keeps to the
//! screen. Needs Chromium (`apt-get install chromium`).

#[path = "support/page.rs"]
mod page;

use e2e::chromium::{Browser, Tab};
use page::{chromium_binary, game_on, link, text, SETTLED, WAIT};
use serde_json::Value;
use server::operations::config::Config;

const SCENARIO: &str = include_str!("../../scenarios/village-outskirts.toml");

/// Writes `amount` in the form and submits it; waits for the referee's answer to the preview
/// when one is asked for, and returns what the page then says (the proposal, or the selection
/// line when the page sent nothing).
async fn give(browser: &mut Browser, tab: &Tab, amount: &str) -> String {
    browser
        .eval(
            tab,
            &format!(
                "document.getElementById('forms').open = true; \
                 document.getElementById('give-time-amount').value = {}; \
                 document.getElementById('selection').textContent = ''; \
                 document.getElementById('give-time-form').requestSubmit()",
                Value::String(amount.into())
            ),
        )
        .await;
    browser
        .wait_for(
            tab,
            "the page's answer to the time given",
            "document.getElementById('selection').textContent.startsWith('Give time:') || \
             (!document.getElementById('proposal').hidden && \
              !document.getElementById('proposal-text').textContent.endsWith('asking the referee…'))",
            WAIT,
        )
        .await;
    text(
        browser,
        tab,
        "document.getElementById('selection').textContent.startsWith('Give time:') ? \
         document.getElementById('selection').textContent : \
         document.getElementById('proposal-text').textContent",
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_player_gives_any_amount_the_cli_reads_and_the_referee_says_the_limit() {
    let time = server::operations::clock::TimeSource::manual(1_767_225_600_000);
    let config = Config {
        time: time.clone(),
        ..Config::default()
    };
    let timed = format!("{SCENARIO}\n[clock]\ncontrol = \"live:30m+30s\"\n");
    let (_dir, server, created) = game_on(config, &timed).await;
    let mut browser = Browser::launch(&chromium_binary()).await;
    let german = browser
        .open(&link(&server, &created, &created.tokens.side_a))
        .await;
    browser
        .wait_for(
            &german,
            "the German's page with both clocks and the form to give time",
            &format!(
                "{SETTLED} && document.querySelectorAll('#clocks .side-clock').length === 2 && \
                 !document.getElementById('give-time-form').hidden"
            ),
            WAIT,
        )
        .await;

    // Words `give-time` would not read: named here, nothing asked of the referee.
    for (amount, said) in [
        ("90", "`90` has no unit"),
        ("1x", "`x` is no unit"),
        ("h", "a number must come before `h`"),
        ("", "a duration is missing"),
    ] {
        let answer = give(&mut browser, &german, amount).await;
        assert!(
            answer.starts_with("Give time: ") && answer.contains(said),
            "{amount}: {answer}"
        );
    }
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('proposal').hidden")
            .await,
        Value::Bool(true),
        "nothing was previewed"
    );

    // More than may be given at once: the referee's refusal, naming its limit.
    let refused = give(&mut browser, &german, "7d1s").await;
    assert!(
        refused.contains("refused") && refused.contains("GIVE_TIME_MAX"),
        "{refused}"
    );
    assert_eq!(
        browser
            .eval(&german, "document.getElementById('confirm').disabled")
            .await,
        Value::Bool(true)
    );

    // An hour and a half, in two units: the Russian's 30 minutes become two hours.
    let allowed = give(&mut browser, &german, "1h30m").await;
    assert!(
        allowed.starts_with("Give the Russian 1h30m: ") && !allowed.contains("refused"),
        "{allowed}"
    );
    browser
        .eval(&german, "document.getElementById('confirm').click()")
        .await;
    browser
        .wait_for(
            &german,
            "the Russian's clock with the time given",
            "document.querySelector('#clocks .side-clock[data-side=\"B\"]').textContent \
             === 'Russian 02:00:00'",
            WAIT,
        )
        .await;
    let outcome = text(
        &mut browser,
        &german,
        "document.getElementById('outcome').textContent",
    )
    .await;
    assert!(outcome.contains("done"), "{outcome}");

    // On a phone's width the form is on the screen and the page does not widen.
    browser.viewport(&german, 390, 844, true).await;
    assert_eq!(
        browser
            .eval(
                &german,
                "document.getElementById('forms').open = true; \
                 (() => { const r = document.getElementById('give-time-form').getBoundingClientRect(); \
                 return window.innerWidth === 390 && r.width > 0 && r.left >= 0 && \
                 r.right <= window.innerWidth && \
                 document.documentElement.scrollWidth <= window.innerWidth; })()"
            )
            .await,
        Value::Bool(true),
        "the phone layout holds"
    );

    // The spectator's page has no form to give time with.
    let watcher = browser
        .open(&link(&server, &created, &created.tokens.spectator))
        .await;
    browser
        .wait_for(&watcher, "the spectator's page", SETTLED, WAIT)
        .await;
    assert_eq!(
        browser
            .eval(&watcher, "document.getElementById('play').hidden")
            .await,
        Value::Bool(true)
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
