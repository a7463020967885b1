//! The play page in a real browser during a set-up step (A12.12): the Russian's page says it
//! is its set-up step, shades its set-up area and lists what is left to place, in natural
//! order; a click on a hex of its area places the picked unit after the referee's preview,
//! with the support weapons picked for it (A4.43); the German's page shows whose set-up it is,
//! what it waits for, and nothing of what the Russian placed. Needs Chromium, as
//! `play_page.rs`.

#[path = "support/page.rs"]
mod page;

use client::Connection;
use e2e::chromium::{self, Browser};
use e2e::TestServer;
use page::{click_hex, previewed, text, SETTLED, WAIT};
use server::operations::config::Config;

const SCENARIO: &str = include_str!("../../protocol/tests/positions/scenarios/setup.toml");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_side_sets_up_from_the_page_and_the_other_sees_nothing_of_it() {
    let binary = chromium::find().expect(
        "this test needs Chromium: `apt-get install chromium` (or set ASL_CHROMIUM); `.ci/run` installs it",
    );
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(SCENARIO, None)
        .await
        .unwrap();
    let link = |token: &str| {
        format!(
            "http://{}/watch#game={}&token={token}",
            server.addr, created.game
        )
    };
    let mut browser = Browser::launch(&binary).await;
    let russian = browser.open(&link(&created.tokens.side_b)).await;
    let german = browser.open(&link(&created.tokens.side_a)).await;
    for tab in [&russian, &german] {
        browser.wait_for(tab, "the board", SETTLED, WAIT).await;
    }

    let phase = "document.getElementById('phase').textContent";
    let prompt = "document.getElementById('prompt').textContent";
    for tab in [&german, &russian] {
        // The set-up step, before Turn 1: no Player Turn or ATTACKER yet.
        assert_eq!(
            text(&mut browser, tab, phase).await,
            "Set-up step: the Russian"
        );
        assert_eq!(
            text(
                &mut browser,
                tab,
                "document.getElementById('turn').textContent + '|' + \
                 document.getElementById('player-turn').textContent + '|' + \
                 document.getElementById('attacker').textContent"
            )
            .await,
            "Before Game Turn 1||"
        );
    }
    // The Russian's own set-up area is shaded on its map, nothing on the German's.
    assert_eq!(
        browser
            .eval(
                &russian,
                "[document.querySelector('.setup-area[data-hex=\"1B2\"]') !== null, \
                 document.querySelector('.setup-area[data-hex=\"1H3\"]') === null]"
            )
            .await,
        serde_json::json!([true, true])
    );
    assert_eq!(
        browser
            .eval(&german, "document.querySelectorAll('.setup-area').length")
            .await,
        0
    );
    // Only placing, Done and the game's own actions: no moving, no Claim or Forfeit WA.
    assert_eq!(
        browser
            .eval(
                &russian,
                "['move', 'claim_wa', 'forfeit_wa', 'double_time', 'attack', 'done'].map(a => \
                 document.querySelector(`#actions button[data-action=\"${a}\"]`).hidden)"
            )
            .await,
        serde_json::json!([true, true, true, true, true, false])
    );
    let waiting = text(&mut browser, &german, prompt).await;
    assert!(
        waiting.contains("Waiting on the Russian's set-up (A12.12)"),
        "{waiting}"
    );
    let left = text(&mut browser, &russian, prompt).await;
    assert!(
        left.contains("Your set-up (A12.12): 6 left to place"),
        "{left}"
    );
    assert!(left.contains("r1 squad 4-4-7 (may be concealed)"), "{left}");

    // A click on 1B2 places the first unit left, r1, once the referee's preview allows it.
    browser
        .eval(
            &russian,
            "document.querySelector('.hex-cell[data-hex=\"1B2\"] polygon').dispatchEvent(new MouseEvent('click'))",
        )
        .await;
    let preview = browser
        .wait_for(
            &russian,
            "the referee's preview",
            "(() => { const t = document.getElementById('proposal-text').textContent; \
             return !document.getElementById('proposal').hidden && !t.endsWith('asking the referee…') && t; })()",
            WAIT,
        )
        .await;
    assert!(
        preview.as_str().unwrap().starts_with("Set up r1 in 1B2"),
        "{preview}"
    );
    browser.press(&russian, "Enter", 13).await;
    browser
        .wait_for(
            &russian,
            "r1 placed",
            &format!("{SETTLED} && window.aslWatch.live.units['r1'] !== undefined && window.aslWatch.live.units['r1'].hex === '1B2'"),
            WAIT,
        )
        .await;
    let left = text(&mut browser, &russian, prompt).await;
    assert!(left.contains("5 left to place"), "{left}");
    // Set up in the open, r1 carries no HIP marker, nor says HIP when pointed at.
    assert_eq!(
        browser
            .eval(
                &russian,
                "[document.querySelector('.counter[data-unit=\"r1\"] .badge.hip') === null, \
                 document.querySelector('.counter[data-unit=\"r1\"] title').textContent.includes('HIP')]"
            )
            .await,
        serde_json::json!([true, false])
    );
    // r4, which an SSR lets set up HIP, picked and placed HIP: it carries the marker.
    browser
        .eval(
            &russian,
            "[...document.querySelectorAll('#prompt button.answer')].find(b => b.textContent.endsWith('r4')).click()",
        )
        .await;
    browser
        .eval(
            &russian,
            "[...document.querySelectorAll('#prompt button.answer')].find(b => b.textContent.endsWith('HIP')).click()",
        )
        .await;
    browser.eval(&russian, &click_hex("1C4")).await;
    let preview = previewed(&mut browser, &russian).await;
    assert!(preview.starts_with("Set up r4 in 1C4, hidden"), "{preview}");
    browser.press(&russian, "Enter", 13).await;
    browser
        .wait_for(
            &russian,
            "r4 placed HIP",
            &format!("{SETTLED} && document.querySelector('.counter[data-unit=\"r4\"] .badge.hip') !== null"),
            WAIT,
        )
        .await;
    // Done says it ends the set-up, not a phase of play.
    browser.type_key(&russian, "n").await;
    let done = previewed(&mut browser, &russian).await;
    assert!(
        done.starts_with("End set-up (A12.12); next: the German's set-up"),
        "{done}"
    );
    browser.press(&russian, "Escape", 27).await;

    // The German's page holds nothing of it: no event, no unit.
    browser.wait_for(&german, "settled", SETTLED, WAIT).await;
    assert_eq!(
        browser
            .eval(
                &german,
                "[window.aslWatch.version, Object.keys(window.aslWatch.live.units).join(' ')].join(' ')"
            )
            .await,
        "1 r0"
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}

/// A wide map (26 columns) whose Russian set-up area is its east end, with two support weapons
/// of the Russian order of battle that no unit possesses (A4.43) and squads `r2` and `r10`.
const WEAPONS_SCENARIO: &str = r#"name = "Set-up weapons on a wide map"
turns = 1
first = "german"
sides = [
    { id = "german", name = "German" },
    { id = "russian", name = "Russian" },
]

[[area]]
from = "1A1"
to = "1Z6"
terrain = "open_ground"

[setup]
order = ["russian", "german"]

[[setup.areas]]
side = "russian"
board = "1"
hexrows = "W-Z"

[[setup.areas]]
side = "german"
board = "1"
hexrows = "A-D"

[[units]]
id = "r10"
side = "russian"
kind = "squad"
ratings = "4-4-7"
offboard = true

[[units]]
id = "r2"
side = "russian"
kind = "squad"
ratings = "4-4-7"
offboard = true

[[units]]
id = "g1"
side = "german"
kind = "squad"
ratings = "4-6-7"
offboard = true

[[weapons]]
id = "rmmg"
name = "MMG"
pp = 2
side = "russian"

[[weapons]]
id = "rdc"
name = "DC"
pp = 2
side = "russian"
"#;

/// The page opens the map at the side's set-up area, lists its units in natural order (`r2`
/// before `r10`), lists the weapons still to give, and gives the ones picked (by click, then
/// by key) to the unit placed next; Done waits until none is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn set_up_weapons_are_given_from_the_page_and_the_area_is_in_view() {
    let binary = chromium::find().expect(
        "this test needs Chromium: `apt-get install chromium` (or set ASL_CHROMIUM); `.ci/run` installs it",
    );
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(&dir.path().join("data"), Config::default()).await;
    let created = Connection::connect(&server.url)
        .await
        .unwrap()
        .create_game(WEAPONS_SCENARIO, None)
        .await
        .unwrap();
    let mut browser = Browser::launch(&binary).await;
    let russian = browser
        .open(&format!(
            "http://{}/watch#game={}&token={}",
            server.addr, created.game, created.tokens.side_b
        ))
        .await;
    browser.wait_for(&russian, "the board", SETTLED, WAIT).await;
    let prompt = "document.getElementById('prompt').textContent";

    // The map is wider than its frame: it opens at the Russian's set-up area in the east.
    let in_view = |hex: &str| {
        format!(
            "(() => {{ const h = document.querySelector('.setup-area[data-hex=\"{hex}\"]').getBoundingClientRect(); \
             const f = document.getElementById('board-scroll').getBoundingClientRect(); \
             const x = h.left + h.width / 2; \
             return document.getElementById('board').getBoundingClientRect().width > f.width && \
             x > f.left && x < f.right; }})()"
        )
    };
    assert_eq!(browser.eval(&russian, &in_view("1X3")).await, true);

    // Natural order: r2 before r10, in the list and in the picks (r2 picked first).
    let left = text(&mut browser, &russian, prompt).await;
    let (two, ten) = (
        left.find("r2 squad").unwrap(),
        left.find("r10 squad").unwrap(),
    );
    assert!(two < ten, "{left}");
    assert!(
        left.contains("2 support weapon(s) to give (A4.43): rdc DC, rmmg MMG"),
        "{left}"
    );

    // The MMG picked by a click goes with r2, placed in 1X2.
    browser
        .eval(
            &russian,
            "document.querySelector('#prompt button.weapon-give[data-weapon=\"rmmg\"]').click()",
        )
        .await;
    browser.eval(&russian, &click_hex("1X2")).await;
    let preview = previewed(&mut browser, &russian).await;
    assert_eq!(preview, "Set up r2 in 1X2 with MMG (rmmg): allowed");
    browser.press(&russian, "Enter", 13).await;
    browser
        .wait_for(
            &russian,
            "the MMG held by r2",
            &format!("{SETTLED} && window.aslWatch.live.weapons.rmmg && window.aslWatch.live.weapons.rmmg.held_by === 'r2'"),
            WAIT,
        )
        .await;
    let left = text(&mut browser, &russian, prompt).await;
    assert!(
        left.contains("1 support weapon(s) to give (A4.43): rdc DC"),
        "{left}"
    );
    // The set-up step as the README shows it, on a desktop and on a phone: saved under the
    // target directory, and with `ASL_UPDATE_SCREENSHOT=1` into docs/.
    for (width, height, mobile, suffix) in
        [(1100, 760, false, "desktop"), (390, 844, true, "phone")]
    {
        browser.viewport(&russian, width, height, mobile).await;
        browser
            .wait_for(
                &russian,
                "the page laid out at the new width",
                &format!("window.innerWidth === {width}"),
                WAIT,
            )
            .await;
        // The frame resized: bring the shaded area back to its middle, as the page opens it.
        browser
            .eval(
                &russian,
                "(() => { const f = document.getElementById('board-scroll'); \
                 const h = document.querySelector('.setup-area[data-hex=\"1X2\"]').getBoundingClientRect(); \
                 const r = f.getBoundingClientRect(); \
                 f.scrollLeft += h.left - r.left - r.width / 2; window.scrollTo(0, 0); return true; })()",
            )
            .await;
        let shot = browser.screenshot(&russian).await;
        assert!(shot.starts_with(b"\x89PNG"), "a PNG");
        let file = format!("setup-{suffix}.png");
        std::fs::write(
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(&file),
            &shot,
        )
        .unwrap();
        if std::env::var_os("ASL_UPDATE_SCREENSHOT").is_some() {
            std::fs::write(
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("..")
                    .join("docs")
                    .join(&file),
                &shot,
            )
            .unwrap();
        }
    }
    browser.viewport(&russian, 1100, 760, false).await;

    // The DC picked by its key (1) goes with r10; then nothing is left and Done is allowed.
    browser.type_key(&russian, "1").await;
    assert_eq!(
        browser
            .eval(
                &russian,
                "document.querySelector('#prompt button.weapon-give[data-weapon=\"rdc\"]').getAttribute('aria-pressed')"
            )
            .await,
        "true"
    );
    browser.eval(&russian, &click_hex("1Y3")).await;
    let preview = previewed(&mut browser, &russian).await;
    assert_eq!(preview, "Set up r10 in 1Y3 with DC (rdc): allowed");
    browser.press(&russian, "Enter", 13).await;
    browser
        .wait_for(
            &russian,
            "the DC held by r10",
            &format!("{SETTLED} && window.aslWatch.live.weapons.rdc && window.aslWatch.live.weapons.rdc.held_by === 'r10'"),
            WAIT,
        )
        .await;
    assert!(!text(&mut browser, &russian, prompt)
        .await
        .contains("to give"));
    browser.type_key(&russian, "n").await;
    let done = previewed(&mut browser, &russian).await;
    assert_eq!(
        done,
        "End set-up (A12.12); next: the German's set-up: allowed"
    );
    let errors = browser.page_errors().await;
    assert!(errors.is_empty(), "{errors:?}");
    browser.close().await;
    server.stop().await;
}
