//! Real boards on the watch page: the server is pointed at synthesised VASL archives whose
//! images are painted from their grids at a board's real size (1800 × 645, a dot on every
//! hex's centre), and headless Chromium opens the watch link. Each board's image is served by
//! the server and laid under its hexes: the centre of hex 1E5 on screen falls on the pixel of
//! board 1's image where VASL puts E5's centre, and so does 2E5's on board 2, which the
//! scenario turns 180°. Zooming keeps it so; the LOS thread is drawn over the artwork, its
//! reason naming the hex that blocks it; a board
//! whose image the server cannot give is drawn from its terrain as on any map.
//!
//! Needs Chromium (`apt-get install chromium`; `.ci/run` installs it). A screenshot is saved
//! under the target directory; with `ASL_UPDATE_SCREENSHOT=1` it also replaces
//! `docs/real-boards.png`, the one the README shows.

use client::commands::new::{new, NewArgs};
use client::commands::{boards::BoardsArg, ServerArg};
use e2e::chromium::{self, Browser, Tab};
use e2e::TestServer;
use protocol::board::vasl::synth::{code, SynthBoard};
use serde_json::Value;
use server::operations::config::Config;
use std::path::Path;
use std::time::Duration;

const PAGE_WAIT_MAX: Duration = Duration::from_secs(20);

const SCENARIO: &str = r#"name = "Two real boards"
turns = 2
first = "german"
sides = [{ id = "german", name = "German" }, { id = "russian", name = "Russian" }]

[map]
boards = [["1", "2r"]]

[[units]]
id = "ge"
side = "german"
kind = "squad"
ratings = "4-6-7"
hex = "1D5"

[[units]]
id = "ru"
side = "russian"
kind = "squad"
ratings = "4-4-7"
hex = "2E5"
"#;

/// E5's centre on a board's image, in its pixels: column E (index 4) is even, so row 5 is
/// place 4, 32.25 + 64.5 × 4 down.
const E5_PIXEL: (f64, f64) = (4.0 * 1800.0 / 32.0, 32.25 + 64.5 * 4.0);
/// How far (image pixels) a hex's centre on screen may lie from its pixel: rounding of the
/// layout to screen pixels, well under the 4-pixel dot the image has there.
const PLACEMENT_SLACK_PX: f64 = 2.0;

fn synthesise(dir: &Path) {
    let mut one = SynthBoard::geomorphic("01");
    one.hex("E5".parse().unwrap(), code::WOODS, 38.0);
    one.hex("H3".parse().unwrap(), code::STONE_BUILDING, 20.0);
    one.image = Some(one.painted_png());
    std::fs::write(dir.join("bd01"), one.archive()).unwrap();
    let mut two = SynthBoard::geomorphic("02");
    two.hex("E5".parse().unwrap(), code::GRAIN, 38.0);
    two.image = Some(two.painted_png());
    std::fs::write(dir.join("bd02"), two.archive()).unwrap();
}

/// Where `hex`'s centre on screen falls on its board's image, in the image's own pixels
/// (turned back for a board turned 180°), from the hex's and the image's boxes on screen.
async fn image_pixel_under(browser: &mut Browser, tab: &Tab, hex: &str) -> (f64, f64) {
    let board = &hex[..1];
    let found = browser
        .eval(
            tab,
            &format!(
                "(() => {{
                  const h = document.querySelector('.hex-cell[data-hex=\"{hex}\"] polygon').getBoundingClientRect();
                  const i = document.querySelector('image.board-image[data-board=\"{board}\"]');
                  const r = i.getBoundingClientRect();
                  const x = h.left + h.width / 2, y = h.top + h.height / 2;
                  let u = (x - r.left) / r.width * 1800, v = (y - r.top) / r.height * 645;
                  if (i.hasAttribute('transform')) {{ u = 1800 - u; v = 645 - v; }}
                  return [u, v];
                }})()"
            ),
        )
        .await;
    (found[0].as_f64().unwrap(), found[1].as_f64().unwrap())
}

fn assert_on(hex: &str, at: (f64, f64)) {
    let off = ((at.0 - E5_PIXEL.0).powi(2) + (at.1 - E5_PIXEL.1).powi(2)).sqrt();
    assert!(
        off <= PLACEMENT_SLACK_PX,
        "{hex}'s centre falls on image pixel {at:?}, {off:.1} px from E5's {E5_PIXEL:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_boards_own_image_lies_under_its_hexes() {
    let binary = chromium::find().expect(
        "this test needs Chromium: `apt-get install chromium` (or set ASL_CHROMIUM); \
         `.ci/run` installs it",
    );
    let dir = tempfile::tempdir().unwrap();
    let boards = dir.path().join("boards");
    std::fs::create_dir(&boards).unwrap();
    synthesise(&boards);
    let scenario = dir.path().join("real.toml");
    std::fs::write(&scenario, SCENARIO).unwrap();
    let config = Config {
        boards: Some(server::operations::boards::open(&boards, None).unwrap()),
        ..Config::default()
    };
    let server = TestServer::start(&dir.path().join("data"), config).await;
    let mut out = vec![];
    new(
        &NewArgs {
            boards: BoardsArg {
                dir: Some(boards.clone()),
                module: None,
            },
            server: ServerArg {
                url: server.url.clone(),
            },
            scenario,
            json: true,
            admin_token: None,
            save: None,
            clock: None,
        },
        &mut out,
    )
    .await
    .unwrap();
    let created: Value = serde_json::from_slice(&out).unwrap();
    let link = created["watch"].as_str().unwrap().to_string();

    let mut browser = Browser::launch(&binary).await;

    // First without board 2's archive (gone since the game began): board 1 shows its image,
    // board 2 is drawn from the scenario's terrain as on any map.
    let archive = std::fs::read(boards.join("bd02")).unwrap();
    std::fs::remove_file(boards.join("bd02")).unwrap();
    let tab = browser.open(&link).await;
    browser
        .wait_for(
            &tab,
            "board 1's image shown and board 2's given up",
            "window.aslWatch && aslWatch.boardImages[1] === 'shown' && aslWatch.boardImages[2] === 'failed'",
            PAGE_WAIT_MAX,
        )
        .await;
    let drawn = browser
        .eval(
            &tab,
            "[...['1E5', '2E5']].map((h) => getComputedStyle(document.querySelector(`.hex-cell[data-hex=\"${h}\"] polygon`)).fillOpacity)",
        )
        .await;
    assert_eq!(
        drawn,
        serde_json::json!(["0", "1"]),
        "1E5 under artwork, 2E5 drawn"
    );
    let images = browser
        .eval(
            &tab,
            "document.querySelectorAll('image.board-image').length",
        )
        .await;
    assert_eq!(images, 1);
    let errors = browser.page_errors().await;
    assert!(
        errors
            .iter()
            .all(|e| e.contains("404") || e.contains("/boards/2/image")),
        "only the missing image is reported: {errors:?}"
    );

    // With the archive back (a failure is not remembered), a fresh page shows both.
    std::fs::write(boards.join("bd02"), archive).unwrap();
    let errors_before = browser.page_errors().await.len();
    let tab = browser.open(&link).await;
    browser
        .wait_for(
            &tab,
            "both boards' images shown",
            "window.aslWatch && aslWatch.boardImages[1] === 'shown' && aslWatch.boardImages[2] === 'shown'",
            PAGE_WAIT_MAX,
        )
        .await;
    // Served from this server, asked for by the archive's digest the scenario names.
    let href = browser
        .eval(
            &tab,
            "document.querySelector('image.board-image[data-board=\"1\"]').getAttribute('href')",
        )
        .await;
    let digest = browser
        .eval(&tab, "aslWatch.live.scenario.map.rows[0][0].digest")
        .await;
    assert_eq!(
        href.as_str().unwrap(),
        format!("/boards/1/image?v={}", digest.as_str().unwrap())
    );
    assert_on("1E5", image_pixel_under(&mut browser, &tab, "1E5").await);
    assert_on("2E5", image_pixel_under(&mut browser, &tab, "2E5").await);
    // The drawn terrain steps aside for the artwork; the counters stay on top of it.
    let on_image = browser
        .eval(
            &tab,
            "document.querySelector('.hex-cell[data-hex=\"1E5\"]').classList.contains('on-image')",
        )
        .await;
    assert_eq!(on_image, true);
    browser
        .wait_for(
            &tab,
            "the Russian counter in 2E5",
            "document.querySelector('.counter[data-unit=\"ru\"]')?.dataset.hex",
            PAGE_WAIT_MAX,
        )
        .await;

    // Zoom: + twice from the keyboard makes the board 1.25² as wide; the artwork stays under
    // the hexes; 0 fits it again.
    let width = "document.getElementById('board').getBoundingClientRect().width";
    let before = browser.eval(&tab, width).await.as_f64().unwrap();
    browser.type_key(&tab, "+").await;
    browser.type_key(&tab, "+").await;
    let after = browser.eval(&tab, width).await.as_f64().unwrap();
    assert!(
        (after / before - 1.5625).abs() < 0.01,
        "zoomed from {before} to {after}"
    );
    assert_on("1E5", image_pixel_under(&mut browser, &tab, "1E5").await);
    assert_on("2E5", image_pixel_under(&mut browser, &tab, "2E5").await);
    // Shift + arrow pans the frame.
    let scroll = "document.getElementById('board-scroll').scrollLeft";
    let left = browser.eval(&tab, scroll).await.as_f64().unwrap();
    browser
        .eval(
            &tab,
            "document.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowRight', shiftKey: true }))",
        )
        .await;
    let panned = browser.eval(&tab, scroll).await.as_f64().unwrap();
    assert!(panned > left, "Shift + → pans: {left} → {panned}");
    browser.type_key(&tab, "0").await;
    let fitted = browser.eval(&tab, width).await.as_f64().unwrap();
    assert!((fitted - before).abs() < 1.0, "{fitted} vs {before}");

    // The wheel zooms about the pointer: 1E5 stays under it. A drag pans, and is no click.
    let centre = "(() => { const r = document.querySelector('.hex-cell[data-hex=\"1E5\"] polygon').getBoundingClientRect(); return [r.left + r.width / 2, r.top + r.height / 2]; })()";
    let at = browser.eval(&tab, centre).await;
    browser
        .eval(
            &tab,
            &format!(
                "document.getElementById('board-scroll').dispatchEvent(new WheelEvent('wheel',                  {{ deltaY: -100, clientX: {}, clientY: {}, bubbles: true, cancelable: true }}))",
                at[0], at[1]
            ),
        )
        .await;
    let wheeled = browser.eval(&tab, width).await.as_f64().unwrap();
    assert!(
        (wheeled / before - 1.25).abs() < 0.01,
        "{before} → {wheeled}"
    );
    let moved = browser.eval(&tab, centre).await;
    for k in 0..2 {
        let (a, b) = (at[k].as_f64().unwrap(), moved[k].as_f64().unwrap());
        assert!(
            (a - b).abs() < 1.5,
            "1E5 stays under the pointer: {at} → {moved}"
        );
    }
    let scroll_left = browser.eval(&tab, scroll).await.as_f64().unwrap();
    browser
        .eval(
            &tab,
            &format!(
                "(() => {{ const f = document.getElementById('board-scroll');
                  const hex = document.querySelector('.hex-cell[data-hex=\"1E5\"] polygon');
                  const p = (type, x) => new PointerEvent(type, {{ pointerId: 7, pointerType: 'mouse', button: 0, clientX: x, clientY: {y}, bubbles: true }});
                  hex.dispatchEvent(p('pointerdown', {x}));
                  hex.dispatchEvent(p('pointermove', {x} - 60));
                  hex.dispatchEvent(p('pointerup', {x} - 60));
                  hex.dispatchEvent(new MouseEvent('click', {{ bubbles: true }}));
                }})()",
                x = at[0],
                y = at[1]
            ),
        )
        .await;
    let dragged = browser.eval(&tab, scroll).await.as_f64().unwrap();
    assert!(
        (dragged - scroll_left - 60.0).abs() < 1.5,
        "a drag 60 px west pans 60 px east: {scroll_left} → {dragged}"
    );
    let picked = browser
        .eval(&tab, "document.querySelectorAll('.hex.picked').length")
        .await;
    assert_eq!(picked, 0, "the drag picked no hex");
    browser.type_key(&tab, "0").await;

    // The LOS thread is drawn over the artwork.
    browser.type_key(&tab, "l").await;
    for hex in ["1C5", "1G5"] {
        browser
            .eval(
                &tab,
                &format!("document.querySelector('.hex-cell[data-hex=\"{hex}\"] polygon').dispatchEvent(new MouseEvent('click'))"),
            )
            .await;
    }
    browser
        .wait_for(
            &tab,
            "the LOS thread",
            "document.querySelector('#los-thread line') && document.getElementById('board').lastElementChild.id === 'los-thread'",
            PAGE_WAIT_MAX,
        )
        .await;
    // Its reason names the hex that blocks it: the woods in 1E5.
    let why = browser
        .wait_for(
            &tab,
            "the LOS reason",
            "document.getElementById('los-info').textContent.startsWith('LOS 1C5 → 1G5: blocked') && \
             document.getElementById('los-info').textContent",
            PAGE_WAIT_MAX,
        )
        .await;
    assert!(why.as_str().unwrap().contains("Woods in 1E5"), "{why}");
    // Zoomed out as far as it goes, the whole map in its frame, for the screenshot.
    for _ in 0..12 {
        browser.type_key(&tab, "-").await;
    }
    let fits = browser
        .eval(
            &tab,
            "document.getElementById('board').getBoundingClientRect().width <= document.getElementById('board-scroll').clientWidth + 1",
        )
        .await;
    assert_eq!(fits, true, "zoomed out, the whole map fits its frame");
    let shot = browser.screenshot(&tab).await;
    let saved = Path::new(env!("CARGO_TARGET_TMPDIR")).join("real-boards.png");
    std::fs::write(&saved, &shot).unwrap();
    if std::env::var_os("ASL_UPDATE_SCREENSHOT").is_some() {
        std::fs::write(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/real-boards.png"),
            &shot,
        )
        .unwrap();
    }
    let errors = browser.page_errors().await;
    assert_eq!(errors[errors_before..], [] as [String; 0], "{errors:?}");
    browser.close().await;
    server.stop().await;
}
