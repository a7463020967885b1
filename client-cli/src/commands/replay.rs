//! `asl replay`: the position at any moment of a game — an event number, `end`, or the start of
//! a phase (`turn 3 German MPh`) — with units, Wall Advantage, MF used and sewer stacks; from an
//! export file offline, or from a live game over the socket (`get_state_at`). `--record`
//! prints the game record up to that moment, `--stats` the dice statistics.

use super::verify::{check, read_export};
use super::ServerArg;
use crate::connection::{Connection, ConnectionError, LogPage, BUFFERED_BYTES_MAX};
use crate::follower::Follower;
use crate::record::Record;
use crate::{Failure, Status};
use protocol::event::GameCreated;
use protocol::export::EXPORT_EVENTS_MAX;
use protocol::export::{render_position, replay_to, Moment};
use protocol::fair_dice::DiceStats;
use protocol::game::view::Viewed;
use protocol::record::stream::StreamHash;
use protocol::wire::{Sequenced, LOG_PAGE_EVENTS_MAX};
use protocol::{Event, Game, Side, Viewer};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
pub struct ReplayArgs {
    /// An export file (`asl export`) to replay offline; or give `--game` and `--token` to ask
    /// a server about a live game.
    #[arg(required_unless_present = "game", conflicts_with_all = ["game", "token"])]
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub server: ServerArg,
    /// A live game's id.
    #[arg(long, requires = "token")]
    pub game: Option<String>,
    /// A side's token or the spectator token: a live game is shown as its holder may see it.
    #[arg(long, requires = "game")]
    pub token: Option<String>,
    /// The moment: an event number (the position just after it), `end`, or the start of a
    /// phase, "turn 3 German MPh".
    #[arg(long, default_value = "end")]
    pub to: String,
    /// From a file: show the position as this side (or `spectator`) saw it, instead of all of it.
    #[arg(long = "as")]
    pub viewer: Option<String>,
    /// Also print the game record up to the moment.
    #[arg(long)]
    pub record: bool,
    /// Also print the dice statistics up to the moment, per side and purpose.
    #[arg(long)]
    pub stats: bool,
}

pub async fn replay(args: &ReplayArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    match (&args.file, &args.game, &args.token) {
        (Some(file), _, _) => replay_file(args, file, out),
        (None, Some(game), Some(token)) => replay_live(args, game, token, out).await,
        _ => Err(Failure::Input(
            "give an export file, or --game and --token".into(),
        )),
    }
}

fn replay_file(
    args: &ReplayArgs,
    file: &std::path::Path,
    out: &mut (dyn Write + Send),
) -> Result<Status, Failure> {
    let verified = match read_export(file)?.and_then(|bytes| check(&bytes, None)) {
        Ok(v) => v,
        Err(e) => {
            writeln!(out, "invalid: {e}")?;
            return Ok(Status::Invalid);
        }
    };
    let scenario = &verified.game.scenario;
    let moment = Moment::parse(&args.to, scenario).map_err(|e| Failure::Input(e.to_string()))?;
    let game = replay_to(&verified.entries, &moment).map_err(|e| Failure::Input(e.to_string()))?;
    let events: Vec<Sequenced> = verified.entries[..game.version as usize]
        .iter()
        .map(|e| Sequenced {
            seq: e.seq,
            viewed: Viewed {
                event: e.event.clone(),
                renamed: vec![],
                weapons: vec![],
            }
            .into(),
            hash: StreamHash(verified.hashes[e.seq as usize - 1].0),
        })
        .collect();
    if args.record {
        print_record(&events, out)?;
    }
    if args.stats {
        print_stats(&game, &events, out)?;
    }
    let version = game.version;
    let head = verified.hashes[version as usize - 1];
    let Some(who) = &args.viewer else {
        out.write_all(render_position(&game).as_bytes())?;
        writeln!(out, "Log head after event {version}: {head}")?;
        return Ok(Status::Success);
    };
    // As the viewer saw it: numbered in the viewer's own stream, whose head at this moment is
    // what that viewer's receipt holds, not the log's.
    let viewer = viewer_named(&game, who)?;
    let streams = protocol::record::stream::Streams::of_log(
        verified.entries[..version as usize]
            .iter()
            .map(|e| &e.event),
    );
    let seen = streams.len(viewer);
    let mut shown = game.project(viewer);
    shown.version = seen;
    out.write_all(render_position(&shown).as_bytes())?;
    writeln!(
        out,
        "Stream head of {} after its event {seen}: {}",
        viewer_label(&game, viewer),
        streams.hash(viewer, seen)
    )?;
    writeln!(out, "Log head after event {version}: {head}")?;
    Ok(Status::Success)
}

/// A viewer as the report names it: a side's name, or "the spectators".
fn viewer_label(game: &Game, viewer: Viewer) -> String {
    match viewer {
        Viewer::Side(side) => game.side_name(side).to_string(),
        Viewer::Spectator => "the spectators".into(),
    }
}

fn viewer_named(game: &Game, who: &str) -> Result<Viewer, Failure> {
    if who.eq_ignore_ascii_case("spectator") {
        return Ok(Viewer::Spectator);
    }
    game.scenario
        .side_named(who)
        .map(Viewer::Side)
        .ok_or_else(|| Failure::Input(format!("`{who}` is neither a side nor `spectator`")))
}

async fn replay_live(
    args: &ReplayArgs,
    game: &str,
    token: &str,
    out: &mut (dyn Write + Send),
) -> Result<Status, Failure> {
    let mut connection = Connection::connect(&args.server.url).await?;
    connection.join(game, token, None).await?;
    // The log as this viewer may see it, to find the moment: the sequence of play is public.
    let mut events: Vec<Sequenced> = vec![];
    let mut read = LogRead::default();
    loop {
        let page = connection.get_log(events.len() as u64 + 1).await?;
        if read.take(&mut events, page, connection.last_frame_bytes())? {
            break;
        }
    }
    let mut follower = start(&events)?;
    let scenario = follower.game().scenario.clone();
    let moment = Moment::parse(&args.to, &scenario).map_err(|e| Failure::Input(e.to_string()))?;
    for sequenced in &events[1..] {
        if moment.reached(follower.game()) {
            break;
        }
        follower.advance(sequenced)?;
    }
    if let Moment::Phase { .. } = moment {
        if !moment.reached(follower.game()) {
            return Err(Failure::Input(format!(
                "the game has not reached {}; it is at {}",
                args.to,
                protocol::export::when(follower.game())
            )));
        }
    }
    let version = follower.version();
    if let Moment::Version(v) = moment {
        if v > version {
            return Err(Failure::Input(format!(
                "the game is at event {version}; there is no event {v} yet"
            )));
        }
    }
    let snapshot = connection.get_state_at(version).await?;
    connection.close().await;
    if snapshot.version != version || snapshot.state.state_hash() != snapshot.state_hash {
        return Err(ConnectionError::Unexpected(format!(
            "asked for the state at {version}, got a state at {} that does not match its hash",
            snapshot.version
        ))
        .into());
    }
    let seen = &events[..version as usize];
    if args.record {
        print_record(seen, out)?;
    }
    if args.stats {
        print_stats(&snapshot.state, seen, out)?;
    }
    out.write_all(render_position(&snapshot.state).as_bytes())?;
    writeln!(out, "Log head after event {version}: {}", snapshot.head)?;
    Ok(Status::Success)
}

/// The bytes of the log's pages read so far. A page may be a frame of the largest size holding
/// one event, and a log as many events as an export: the frames held are bounded as a
/// connection bounds the events it buffers ([`BUFFERED_BYTES_MAX`]), so a hostile server
/// cannot fill the client's memory with a long log of large events.
#[derive(Default)]
struct LogRead {
    bytes: usize,
}

impl LogRead {
    /// [`take_log_page`], for a page that came in a frame of `frame_bytes`.
    fn take(
        &mut self,
        events: &mut Vec<Sequenced>,
        page: LogPage,
        frame_bytes: usize,
    ) -> Result<bool, ConnectionError> {
        let bytes = self.bytes.saturating_add(frame_bytes);
        if bytes > BUFFERED_BYTES_MAX {
            return Err(ConnectionError::Unexpected(format!(
                "the log's pages pass {BUFFERED_BYTES_MAX} bytes after {} events, more than a client holds (BUFFERED_BYTES_MAX)",
                events.len()
            )));
        }
        self.bytes = bytes;
        take_log_page(events, page)
    }
}

/// Refuses a page claiming a log of more events than a game's export may hold
/// (`EXPORT_EVENTS_MAX`): what `asl replay` and `asl log` ask of every page, so that paging
/// ends however long a hostile server claims its log is.
pub(crate) fn check_claimed_log(page: &LogPage) -> Result<(), ConnectionError> {
    if page.version > EXPORT_EVENTS_MAX {
        return Err(ConnectionError::Unexpected(format!(
            "the server claims a log of {} events, over the {EXPORT_EVENTS_MAX} a game may hold (EXPORT_EVENTS_MAX)",
            page.version
        )));
    }
    Ok(())
}

/// Adds a page of the log to `events`, read so far from #1; `Ok(true)` once the log is whole.
/// A server is not trusted to stop: each page must go on from the event asked for, one number
/// after another, and a log claiming more events than a game's export may hold
/// (`EXPORT_EVENTS_MAX`) is refused before it is read, so a hostile server cannot fill the
/// client's memory by paging without end.
fn take_log_page(events: &mut Vec<Sequenced>, page: LogPage) -> Result<bool, ConnectionError> {
    let from = events.len() as u64 + 1;
    check_claimed_log(&page)?;
    if page.events.len() as u64 > LOG_PAGE_EVENTS_MAX {
        return Err(ConnectionError::Unexpected(format!(
            "a page of the log holds {} events, over the {LOG_PAGE_EVENTS_MAX} a page may",
            page.events.len()
        )));
    }
    for (expected, event) in (from..).zip(&page.events) {
        if event.seq != expected {
            return Err(ConnectionError::Unexpected(format!(
                "asked for the log from #{from}, got #{} where #{expected} belongs",
                event.seq
            )));
        }
    }
    let done = page.events.is_empty() || from + page.events.len() as u64 > page.version;
    events.extend(page.events);
    Ok(done)
}

/// A follower at the log's start: its first event read as `asl log` reads it (`GameCreated`,
/// numbered 1), then applied.
fn start(events: &[Sequenced]) -> Result<Follower, Failure> {
    let first = events.first().ok_or_else(|| {
        Failure::from(ConnectionError::Unexpected(
            "the log does not start with GameCreated: it is empty".into(),
        ))
    })?;
    let mut follower = super::log::start(first)?;
    follower.advance(first)?;
    Ok(follower)
}

fn print_record(events: &[Sequenced], out: &mut (dyn Write + Send)) -> Result<(), Failure> {
    let mut follower = match events.first().map(|first| &first.viewed.event) {
        Some(Event::GameCreated(GameCreated { scenario })) => {
            Follower::new(Game::new(scenario.clone()))
        }
        _ => return Ok(()),
    };
    let mut record = Record::default();
    for sequenced in events {
        for line in record.follow(&mut follower, sequenced)? {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

fn print_stats(
    game: &Game,
    events: &[Sequenced],
    out: &mut (dyn Write + Send),
) -> Result<(), Failure> {
    let stats = DiceStats::of(events.iter().map(|s| &s.viewed.event));
    writeln!(out, "Dice:")?;
    out.write_all(
        stats
            .render([game.side_name(Side::A), game.side_name(Side::B)])
            .as_bytes(),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::follower::sequenced;
    use protocol::event::GameEnded;

    fn page(version: u64, seqs: std::ops::RangeInclusive<u64>) -> LogPage {
        LogPage {
            version,
            events: seqs
                .map(|seq| sequenced(seq, Event::GameEnded(GameEnded { turns_played: 1 })))
                .collect(),
        }
    }

    /// Each page a server sends may be a frame of the largest size holding one event, and a
    /// log may claim up to `EXPORT_EVENTS_MAX` events: without a bound on the bytes, a hostile
    /// server made `asl replay` hold a million frames of a MiB each. The pages' frames are
    /// held to what a connection buffers (`BUFFERED_BYTES_MAX`), refused on the page past it.
    #[test]
    fn the_pages_of_a_log_are_held_to_the_bytes_a_client_buffers() {
        use protocol::wire::FRAME_BYTES_MAX;
        let mut events = vec![];
        let mut read = LogRead::default();
        let pages = (BUFFERED_BYTES_MAX / FRAME_BYTES_MAX) as u64;
        for seq in 1..=pages {
            assert!(!read
                .take(
                    &mut events,
                    page(EXPORT_EVENTS_MAX, seq..=seq),
                    FRAME_BYTES_MAX
                )
                .unwrap());
        }
        let e = read
            .take(
                &mut events,
                page(EXPORT_EVENTS_MAX, pages + 1..=pages + 1),
                FRAME_BYTES_MAX,
            )
            .unwrap_err();
        assert!(e.to_string().contains("BUFFERED_BYTES_MAX"), "{e}");
        assert_eq!(
            events.len() as u64,
            pages,
            "nothing of the refused page is kept"
        );
    }

    /// A hostile server answering every page with the same events, under a count that never
    /// ends, filled memory page by page; now the repeat is refused at once, and so is a count
    /// no game's log reaches.
    #[test]
    fn a_server_paging_without_end_is_refused() {
        let mut events = vec![];
        take_log_page(&mut events, page(u64::MAX / 2, 1..=3)).unwrap_err();
        let mut events = vec![];
        let e = take_log_page(&mut events, page(EXPORT_EVENTS_MAX + 1, 1..=3)).unwrap_err();
        assert!(e.to_string().contains("EXPORT_EVENTS_MAX"), "{e}");
        assert!(events.is_empty());
        let mut events = vec![];
        assert!(!take_log_page(&mut events, page(1_000, 1..=3)).unwrap());
        let e = take_log_page(&mut events, page(1_000, 1..=3)).unwrap_err();
        assert!(e.to_string().contains("got #1 where #4 belongs"), "{e}");
        let e = take_log_page(&mut events, page(1_000, 5..=6)).unwrap_err();
        assert!(e.to_string().contains("#5 where #4"), "{e}");
        assert_eq!(events.len(), 3, "nothing of a refused page is kept");
        // An honest log: pages in order up to the count, or an empty page, end it.
        assert!(!take_log_page(&mut events, page(6, 4..=5)).unwrap());
        assert!(take_log_page(&mut events, page(6, 6..=6)).unwrap());
        assert_eq!(events.len(), 6);
        let mut events = vec![];
        let empty = LogPage {
            version: 0,
            events: vec![],
        };
        assert!(take_log_page(&mut events, empty).unwrap());
        // A page longer than a page may be.
        let mut events = vec![];
        let e = take_log_page(&mut events, page(5_000, 1..=LOG_PAGE_EVENTS_MAX + 1)).unwrap_err();
        assert!(e.to_string().contains("a page may"), "{e}");
    }
}
