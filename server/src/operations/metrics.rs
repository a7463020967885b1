//! What an operator can watch (`GET /metrics`, Prometheus text format through
//! `prometheus-client`): connections by kind, games loaded, commands, refusals by rule, the
//! store's appends and their latency, slow readers cut off, log lines dropped.
//!
//! The metrics are process-wide: one server runs per process in production. Tests that run
//! several servers in one process see their sums, so they read differences, never totals.
//!
//! Two expositions: the operator's, every metric (`encode`), and the public one
//! (`encode_public`), served to the server's own machine when no metrics token is set. The
//! public one holds only what moves with connections and loading — never a counter that moves
//! as a player's command is decided, stored or signed, since a command of a hidden unit
//! (A12.3) would move it while the opponent's stream stays still (issue 36).

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;
use std::sync::LazyLock;

/// A connection's kind, as counted in `asl_connections`.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Kind {
    /// Connected, not (yet) joined or reviewing.
    Unjoined,
    Player,
    Spectator,
    Review,
    /// In its HTTP exchange: a page request, `/metrics`, `/healthz`, or a websocket handshake
    /// not yet complete.
    Http,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Unjoined => "unjoined",
            Kind::Player => "player",
            Kind::Spectator => "spectator",
            Kind::Review => "review",
            Kind::Http => "http",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabel {
    kind: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RuleLabel {
    rule: &'static str,
}

pub struct Metrics {
    registry: Registry,
    /// The metrics anyone on the server's machine may read without the token: connections by
    /// kind and games loaded, which no command moves.
    public: Registry,
    connections: Family<KindLabel, Gauge>,
    pub games_loaded: Gauge,
    pub games_unloaded: Counter,
    pub commands: Counter,
    refusals: Family<RuleLabel, Counter>,
    pub append_events: Histogram,
    pub append_seconds: Histogram,
    pub slow_readers_dropped: Counter,
    pub log_lines_dropped: Counter,
    pub signed_batch_heads: Histogram,
    store_group_writes: Histogram,
    store_flush_seconds: Histogram,
}

/// The server's metrics.
pub static METRICS: LazyLock<Metrics> = LazyLock::new(Metrics::new);

impl Metrics {
    fn new() -> Metrics {
        let mut registry = Registry::with_prefix("asl");
        let mut public = Registry::with_prefix("asl");
        let connections = Family::<KindLabel, Gauge>::default();
        for r in [&mut registry, &mut public] {
            r.register(
                "connections",
                "Open connections by kind",
                connections.clone(),
            );
        }
        let games_loaded = Gauge::default();
        for r in [&mut registry, &mut public] {
            r.register(
                "games_loaded",
                "Games whose writer task is in memory",
                games_loaded.clone(),
            );
        }
        let games_unloaded = Counter::default();
        registry.register(
            "games_unloaded",
            "Games let go from memory: idle past the idle limit, or making room under the loaded-games limit",
            games_unloaded.clone(),
        );
        let commands = Counter::default();
        registry.register(
            "commands",
            "Players' commands decided (rate() gives commands per second)",
            commands.clone(),
        );
        let refusals = Family::<RuleLabel, Counter>::default();
        registry.register(
            "refusals",
            "Requests or connections refused by a server limit, by the limit's name",
            refusals.clone(),
        );
        let append_events = Histogram::new(exponential_buckets(1.0, 2.0, 10));
        registry.register(
            "store_append_events",
            "Events made durable by one append (one command's events)",
            append_events.clone(),
        );
        let append_seconds = Histogram::new(exponential_buckets(0.000_125, 2.0, 16));
        registry.register(
            "store_append_seconds",
            "Time from handing a command's events to the store until they are durable (flush latency as a game sees it)",
            append_seconds.clone(),
        );
        let slow_readers_dropped = Counter::default();
        registry.register(
            "slow_readers_dropped",
            "Connections cut off for falling behind their outbound queue or a send timeout",
            slow_readers_dropped.clone(),
        );
        let log_lines_dropped = Counter::default();
        registry.register(
            "log_lines_dropped",
            "Log lines that could not be written (a full disk, a closed pipe)",
            log_lines_dropped.clone(),
        );
        let signed_batch_heads = Histogram::new(exponential_buckets(1.0, 2.0, 11));
        registry.register(
            "signed_batch_heads",
            "Receipts signed under one signature by the batching signer (`signer.rs`)",
            signed_batch_heads.clone(),
        );
        let store_group_writes = Histogram::new(exponential_buckets(1.0, 2.0, 12));
        registry.register(
            "store_group_writes",
            "Writes (appends and metadata) committed under one flush by the sled store's group commit",
            store_group_writes.clone(),
        );
        let store_flush_seconds = Histogram::new(exponential_buckets(0.000_125, 2.0, 16));
        registry.register(
            "store_flush_seconds",
            "Time the sled store's committer spends writing and flushing one group",
            store_flush_seconds.clone(),
        );
        Metrics {
            registry,
            public,
            store_group_writes,
            store_flush_seconds,
            connections,
            games_loaded,
            games_unloaded,
            commands,
            refusals,
            append_events,
            append_seconds,
            slow_readers_dropped,
            log_lines_dropped,
            signed_batch_heads,
        }
    }

    /// Records one group commit of the store: how many writes, and how long until durable.
    pub fn store_flushed(&self, writes: usize, took: std::time::Duration) {
        self.store_group_writes.observe(writes as f64);
        self.store_flush_seconds.observe(took.as_secs_f64());
    }

    /// Counts a refusal by the limit (rule) that caused it.
    pub fn refused(&self, rule: &'static str) {
        self.refusals.get_or_create(&RuleLabel { rule }).inc();
    }

    /// The text exposition of every metric: the operator's.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String cannot fail");
        text
    }

    /// The text exposition of the public metrics (see the module's docs).
    pub fn encode_public(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.public)
            .expect("writing to a String cannot fail");
        text
    }
}

/// One connection counted under its current kind for as long as it lives.
pub struct Counted(Kind);

impl Counted {
    pub fn new(kind: Kind) -> Counted {
        gauge(kind).inc();
        Counted(kind)
    }

    /// Moves the connection to another kind (it joined a game, opened a review).
    pub fn become_(&mut self, kind: Kind) {
        if kind != self.0 {
            gauge(self.0).dec();
            gauge(kind).inc();
            self.0 = kind;
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        gauge(self.0).dec();
    }
}

fn gauge(kind: Kind) -> Gauge {
    METRICS
        .connections
        .get_or_create(&KindLabel { kind: kind.label() })
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_names_every_metric() {
        let _c = Counted::new(Kind::Spectator);
        METRICS.refused("spectators_per_game_max");
        let text = METRICS.encode();
        for name in [
            "asl_connections{kind=\"spectator\"}",
            "asl_games_loaded",
            "asl_commands_total",
            "asl_refusals_total{rule=\"spectators_per_game_max\"}",
            "asl_store_append_events_bucket",
            "asl_store_append_seconds_bucket",
            "asl_store_group_writes_bucket",
            "asl_store_flush_seconds_bucket",
            "asl_slow_readers_dropped_total",
            "asl_log_lines_dropped_total",
            "asl_signed_batch_heads_bucket",
        ] {
            assert!(text.contains(name), "{name} missing from\n{text}");
        }
    }

    /// The public exposition moves with connections and loading only: a command decided,
    /// stored and signed leaves it as it was, so the opponent's hidden unit acting shows in
    /// no metric a player on the server's machine may read without the token.
    #[test]
    fn the_public_text_moves_with_no_command() {
        let _c = Counted::new(Kind::Player);
        let public = METRICS.encode_public();
        for name in ["asl_connections{kind=\"player\"}", "asl_games_loaded"] {
            assert!(public.contains(name), "{name} missing from\n{public}");
        }
        let text_without_gauges = |text: &str| -> Vec<String> {
            text.lines()
                .filter(|l| !l.starts_with("asl_connections") && !l.starts_with("asl_games_loaded"))
                .map(str::to_string)
                .collect()
        };
        let before = text_without_gauges(&METRICS.encode_public());
        // What one command of a hidden unit moves: the command, its append, its receipt.
        METRICS.commands.inc();
        METRICS.append_events.observe(1.0);
        METRICS.append_seconds.observe(0.001);
        METRICS.signed_batch_heads.observe(1.0);
        METRICS.store_flushed(1, std::time::Duration::from_millis(1));
        METRICS.refused("commands_per_second_max");
        assert_eq!(text_without_gauges(&METRICS.encode_public()), before);
        for name in [
            "asl_commands",
            "asl_store_",
            "asl_signed_batch",
            "asl_refusals",
        ] {
            assert!(!METRICS.encode_public().contains(name), "{name} is public");
        }
    }
}
