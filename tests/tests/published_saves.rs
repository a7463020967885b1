//! Published VASL set-up saves, end to end, when `ASL_VASL_SAVES` names a directory of them and
//! `ASL_BOARDS` VASL's board archives (no third party's save or board is in the repository;
//! the tests that always run synthesise the same shapes): each save becomes a game with no
//! edits (`asl new SAVE.vsav`), is read through the CLI, read again after a restart and after
//! it sat idle long enough to be unloaded, and the side setting up first places a unit by
//! clicks on the page, giving it a weapon of its set-up when it has one.

#[path = "support/saves.rs"]
mod saves;

use client::commands::state::{state, StateArgs};
use client::commands::{GameArgs, ServerArg};
use e2e::chromium::{self, Browser};
use e2e::TestServer;
use saves::{dirs, new_from_save};
use server::operations::config::Config;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);
const SETTLED: &str = "(() => { const p = window.aslWatch; return p.joined && p.live && \
    p.shown === p.live && p.live.version === p.version && !p.stateAsked && p.sent.size === 0 && \
    p.entries.length === p.version; })()";

async fn read(url: &str, game: &str, token: &str) -> serde_json::Value {
    let mut out = vec![];
    state(
        &StateArgs {
            server: ServerArg { url: url.into() },
            game: GameArgs {
                game: game.into(),
                token: token.into(),
            },
            json: true,
        },
        &mut out,
    )
    .await
    .unwrap_or_else(|e| panic!("state: {e:?}"));
    serde_json::from_slice(&out).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn published_saves_become_games_that_survive_and_set_up_by_clicks() {
    let Some((saves, boards)) = dirs() else {
        println!(
            "skipped: set ASL_VASL_SAVES (.vsav files) and ASL_BOARDS (VASL's boards) to run it"
        );
        return;
    };
    let mut seen = 0;
    for entry in std::fs::read_dir(&saves).expect("ASL_VASL_SAVES is a directory") {
        let save = entry.unwrap().path();
        if save.extension().is_none_or(|e| e != "vsav") {
            continue;
        }
        seen += 1;
        if let saves::Kind::Refused(why) = saves::kind(&save) {
            // The import's refusal is what `asl new` prints: no game is made of it.
            println!("{}: refused: {why}", save.display());
            continue;
        }
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let config = || Config {
            boards: Some(server::operations::boards::open(&boards, None).unwrap()),
            game_unload_after_idle: Duration::from_millis(300),
            ..Config::default()
        };
        let server = TestServer::start(&data, config()).await;
        let created = new_from_save(&server.url, &save, &boards).await;
        assert!(created["assumed"].as_array().is_some_and(|a| !a.is_empty()));
        let game = created["game"].as_str().unwrap().to_string();
        let tokens = [
            created["tokens"]["side_a"].as_str().unwrap().to_string(),
            created["tokens"]["side_b"].as_str().unwrap().to_string(),
        ];
        let before = read(&server.url, &game, &tokens[0]).await;
        let addr = server.addr;
        server.stop().await;
        let server = TestServer::start_at(&data, config(), addr).await;
        assert_eq!(
            read(&server.url, &game, &tokens[0]).await,
            before,
            "{}",
            save.display()
        );
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let position = read(&server.url, &game, &tokens[1]).await;

        // A save whose counters all stand on the boards (a game saved in play, a tool's test
        // save) has nothing to set up: its game starts at Turn 1 with each unit in its hex.
        if position["setup"].is_null() {
            let units = position["units"].as_object().expect("the units");
            assert!(!units.is_empty(), "{}", save.display());
            assert!(
                units.values().all(|u| u["hex"].is_string()),
                "{}: no set-up step, yet a unit off the boards",
                save.display()
            );
            println!("{}: every unit on the boards, no set-up", save.display());
            server.stop().await;
            continue;
        }

        // The side setting up first places a unit of its set-up by clicks.
        let Some(binary) = chromium::find() else {
            println!("no Chromium: the page part skipped");
            server.stop().await;
            continue;
        };
        let first = position["setup"]["side"].as_str().expect("a set-up step");
        let token = if first.eq_ignore_ascii_case("a") {
            &tokens[0]
        } else {
            &tokens[1]
        };
        let mut browser = Browser::launch(&binary).await;
        let tab = browser
            .open(&format!(
                "http://{}/watch#game={game}&token={token}",
                server.addr
            ))
            .await;
        browser.wait_for(&tab, "the board", SETTLED, WAIT).await;
        // A hex of the shaded area the referee allows the unit picked into (a Dummy needs
        // Concealment Terrain, A12.12): tried one after another, as a player would.
        let hexes = browser
            .eval(
                &tab,
                "[...document.querySelectorAll('.setup-area')].map(a => a.dataset.hex)",
            )
            .await;
        let hexes: Vec<String> = hexes
            .as_array()
            .expect("the set-up area is shaded")
            .iter()
            .filter_map(|h| h.as_str().map(String::from))
            .collect();
        assert!(!hexes.is_empty(), "{}: no shaded area", save.display());
        let mut placed_in = None;
        for hex in hexes.iter().step_by(7).take(40) {
            browser
                .eval(
                    &tab,
                    &format!("document.querySelector('.hex-cell[data-hex=\"{hex}\"] polygon').dispatchEvent(new MouseEvent('click'))"),
                )
                .await;
            let preview = browser
                .wait_for(
                    &tab,
                    "the referee's preview",
                    "(() => { const t = document.getElementById('proposal-text').textContent; \
                     return !document.getElementById('proposal').hidden && !t.endsWith('asking the referee…') && t; })()",
                    WAIT,
                )
                .await;
            if preview.as_str().unwrap_or_default().ends_with(": allowed") {
                placed_in = Some(hex.clone());
                break;
            }
            browser.press(&tab, "Escape", 27).await;
        }
        let hex = placed_in
            .unwrap_or_else(|| panic!("{}: no hex of the area took the unit", save.display()));
        browser.press(&tab, "Enter", 13).await;
        browser
            .wait_for(
                &tab,
                "a unit placed",
                &format!("{SETTLED} && Object.values(window.aslWatch.live.units).some(u => u.hex === '{hex}')"),
                WAIT,
            )
            .await;
        let shot = browser.screenshot(&tab).await;
        let name = save
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .replace(' ', "-");
        std::fs::write(
            std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}.png")),
            shot,
        )
        .unwrap();
        let errors = browser.page_errors().await;
        assert!(errors.is_empty(), "{}: {errors:?}", save.display());
        browser.close().await;
        server.stop().await;
    }
    assert!(seen > 0, "no .vsav file in ASL_VASL_SAVES");
}
