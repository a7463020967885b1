//! The README's five-minute walkthrough, exactly as a newcomer runs it: `asl new` on the
//! shipped village scenario, then both players' scripts at once with `asl run`, against a real
//! server. Every line must be accepted, and the two scripts must interleave by the sequence of
//! play however they are scheduled.

use client::commands::new::{new, NewArgs};
use client::commands::run::{run, RunArgs};
use client::commands::state::{state, StateArgs};
use client::commands::{GameArgs, ServerArg};
use client::Status;
use e2e::TestServer;
use server::operations::config::Config;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_walkthrough_plays_through() {
    let dir = tempfile::tempdir().unwrap();
    let server = TestServer::start(dir.path(), Config::default()).await;
    let url = ServerArg {
        url: server.url.clone(),
    };

    let mut out = vec![];
    let status = new(
        &NewArgs {
            boards: Default::default(),
            server: url.clone(),
            scenario: repo("scenarios/village-outskirts.toml"),
            json: true,
            admin_token: None,
            save: None,
            clock: None,
        },
        &mut out,
    )
    .await
    .unwrap();
    assert_eq!(status, Status::Success);
    let created: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let game = created["game"].as_str().unwrap().to_string();
    let token = |key: &str| created["tokens"][key].as_str().unwrap().to_string();

    let player = |token: String, script: &str| {
        let args = RunArgs {
            server: url.clone(),
            game: GameArgs {
                game: game.clone(),
                token,
            },
            script: repo(script),
            no_wait: false,
            keep_going: false,
            fresh: false,
            json: false,
        };
        async move {
            let mut out = vec![];
            let status = tokio::time::timeout(Duration::from_secs(60), run(&args, &mut out))
                .await
                .expect("the script finishes");
            (status, String::from_utf8(out).unwrap())
        }
    };
    let german = tokio::spawn(player(token("side_a"), "scenarios/walkthrough-german.txt"));
    let russian = tokio::spawn(player(token("side_b"), "scenarios/walkthrough-russian.txt"));
    let (german, russian) = (german.await.unwrap(), russian.await.unwrap());
    for (who, (status, text)) in [("German", &german), ("Russian", &russian)] {
        assert_eq!(status, &Ok(Status::Success), "{who}:\n{text}");
        assert!(!text.contains("refused"), "{who}:\n{text}");
    }
    // The MF trace the README quotes: the stack with its leader pays Grain's 1½ MF (B15).
    assert!(
        german
            .1
            .contains("g1+g2+g-ldr 12B4 → 12C4: 1½ MF = 1½ COT (B15)"),
        "{}",
        german.1
    );

    // The Russian Player Turn has begun, and the hidden 2-2-7 never reached the German.
    let mut out = vec![];
    state(
        &StateArgs {
            server: url.clone(),
            game: GameArgs {
                game: game.clone(),
                token: token("side_a"),
            },
            json: true,
        },
        &mut out,
    )
    .await
    .unwrap();
    let text = String::from_utf8(out).unwrap();
    assert!(
        !text.contains("\"r3\""),
        "the German's view names the hidden r3"
    );
    let view: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(view["clock"]["player_turn"], 2, "{text}");
    server.stop().await;
}
