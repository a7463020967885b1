//! A hidden unit put on board at will from the page, as `place UNIT` does in a script (A12.3):
//! the Russian's "More" form places his HIP half-squad, concealed and without a WA claim; the
//! referee previews it, and after it the German's page shows a "?" where it stands — never
//! the unit. Needs Chromium (`apt-get install chromium`).

#[path = "support/page.rs"]
mod page;

use page::*;

const VILLAGE: &str = include_str!("../../scenarios/village-outskirts.toml");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hidden_unit_is_placed_on_board_from_the_more_form() {
    let (_dir, server, mut browser, [german, russian]) = start(VILLAGE).await;
    let players = [&german, &russian];
    settle(&mut browser, players).await;
    assert_eq!(
        browser
            .eval(&russian, "window.aslWatch.live.units.r3.hidden")
            .await,
        true,
        "r3 starts hidden"
    );
    let on_board = "Object.values(window.aslWatch.live.units).some((u) => u.hex === '12E5')";
    assert_eq!(
        browser.eval(&german, on_board).await,
        false,
        "the German sees nothing in 12E5"
    );

    browser
        .eval(
            &russian,
            "document.getElementById('forms').open = true; \
             document.getElementById('more-command').value = 'place_hidden'; \
             document.getElementById('more-units').value = 'r3'; \
             document.getElementById('more-hex').value = ''; \
             document.getElementById('more-form').requestSubmit()",
        )
        .await;
    let placed = send(&mut browser, &russian).await;
    assert!(
        placed.starts_with("Place r3 on board (A12.3): "),
        "{placed}"
    );
    settle(&mut browser, players).await;
    assert_eq!(
        browser
            .eval(
                &russian,
                "[window.aslWatch.live.units.r3.hidden, window.aslWatch.live.units.r3.concealed].join()"
            )
            .await,
        "false,true"
    );
    // The German sees a "?" in 12E5, and not the half-squad.
    assert_eq!(browser.eval(&german, on_board).await, true);
    assert_eq!(
        browser
            .eval(&german, "window.aslWatch.live.units.r3 === undefined")
            .await,
        true
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
