//! Agreement with VASL's own LOS engine on real boards. Needs two directories kept outside the
//! repository: `ASL_VASL_BOARDS` (VASL board archives, `bdNN`) and `ASL_VASL_LOS_REF` (TSV
//! files of VASL's verdicts: `layout from to blocked hindrances reason [from_level to_level]`,
//! one pair a line, layout `1` for one board or `1,2r/3,4` for boards in rows, `r` = rotated;
//! a board named by letters, such as the Deluxe boards `a`..`h`, is archive `bda` and is given
//! a number of its own here, as the rules' hex names carry a board number; the levels are
//! VASL's Location heights above the hex's ground, a building's upper levels). Prints, per file,
//! how often the engine agrees (verdict, and hindrance count where both see) with a sample of
//! the disagreements, and holds the engine to the targets. Says "skipped" otherwise.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use protocol::board::hex::Hex;
use protocol::board::vasl::archive::{self, BoardArchive};
use protocol::board::vasl::codes::TerrainTable;
use protocol::board::vasl::map::{BoardMap, Placed};

/// Verdict agreement required on every file.
const VERDICT_AGREEMENT_MIN: f64 = 0.99;
/// Hindrance-count agreement required where both engines see.
const HINDRANCE_AGREEMENT_MIN: f64 = 0.95;

/// VASL's verdicts the engine does not follow on purpose, by the start of VASL's reason, with
/// why (`docs/los.md`, "Where the engine and VASL differ"): counted and shown apart, and left
/// out of the agreement the targets hold.
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[(
    "Cannot see through rowhouse/factory wall",
    "rowhouse bars (B23.71) are not modelled: a rowhouse is drawn as any building",
)];

/// The archive's file name and the board number a layout's board token stands for: `12` is
/// `bd12` and board 12; a board named by letters (`a`, the Deluxe boards) is `bda` and board
/// 1000 + its letters' value, a number no geomorphic board has.
fn board_of(token: &str) -> (String, u16) {
    match token.parse::<u16>() {
        Ok(n) => (format!("bd{n:02}"), n),
        Err(_) => (
            format!("bd{token}"),
            1000 + token.bytes().fold(0u16, |n, b| {
                n.wrapping_mul(27).wrapping_add(u16::from(b - b'a' + 1))
            }),
        ),
    }
}

/// The map of a layout, or why the engine cannot read one of its boards.
fn load_map(
    layout: &str,
    dir: &Path,
    table: &Arc<TerrainTable>,
    cache: &mut BTreeMap<u16, Arc<BoardArchive>>,
) -> Result<BoardMap, String> {
    let mut rows = Vec::new();
    for row in layout.split('/') {
        let mut placed = Vec::new();
        for b in row.split(',') {
            // a trailing `r` on a name rotates; board `r` itself is a Deluxe-style name
            let (token, rotated) = match b.strip_suffix('r') {
                Some(t) if !t.is_empty() => (t, true),
                _ => (b, false),
            };
            let (file, number) = board_of(token);
            if let std::collections::btree_map::Entry::Vacant(slot) = cache.entry(number) {
                let path = dir.join(&file);
                let bytes = std::fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                let archive = archive::read(&bytes).map_err(|e| format!("board {token}: {e}"))?;
                slot.insert(Arc::new(archive));
            }
            placed.push(Placed {
                number,
                rotated,
                archive: cache[&number].clone(),
            });
        }
        rows.push(placed);
    }
    BoardMap::new(rows, table.clone()).map_err(|e| format!("map {layout}: {e}"))
}

/// A hex named in VASL's file as a hex of our map: the board's token (prefixed on a map of
/// several boards, the layout itself on one board) turned into its number.
fn hex(layout: &str, name: &str) -> Hex {
    let (token, rest) = if layout.contains(',') || layout.contains('/') {
        let cut = name
            .find(|c: char| c.is_ascii_uppercase())
            .unwrap_or(name.len());
        name.split_at(cut)
    } else {
        (layout, name)
    };
    let full = format!("{}{rest}", board_of(token).1);
    full.parse().unwrap_or_else(|e| panic!("{full}: {e}"))
}

#[test]
fn los_agrees_with_vasl_on_real_boards() {
    let (Some(boards), Some(refs)) = (
        std::env::var_os("ASL_VASL_BOARDS"),
        std::env::var_os("ASL_VASL_LOS_REF"),
    ) else {
        eprintln!("skipped: set ASL_VASL_BOARDS and ASL_VASL_LOS_REF to compare with VASL");
        return;
    };
    let boards = Path::new(&boards);
    let shared = boards.join("SharedBoardMetadata.xml");
    let table = Arc::new(match std::fs::read(&shared) {
        Ok(xml) => TerrainTable::parse(&xml).expect("shared metadata reads"),
        Err(_) => TerrainTable::builtin(),
    });
    let mut cache = BTreeMap::new();
    let mut files: Vec<_> = std::fs::read_dir(refs)
        .expect("ASL_VASL_LOS_REF is a directory")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tsv"))
        .collect();
    files.sort();
    let sample: usize = std::env::var("ASL_VASL_LOS_SAMPLE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(8);
    let mut failures = Vec::new();
    eprintln!("file                         pairs  verdict%  hindr%  (both see)");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        // A file whose boards the directory lacks is named and passed over.
        let missing: Vec<String> = text
            .lines()
            .nth(1)
            .map(|l| l.split('\t').next().unwrap_or(""))
            .unwrap_or("")
            .split(['/', ','])
            .map(|b| match b.strip_suffix('r') {
                Some(t) if !t.is_empty() => t,
                _ => b,
            })
            .filter(|b| !b.is_empty())
            .filter(|b| !boards.join(board_of(b).0).exists())
            .map(str::to_string)
            .collect();
        if !missing.is_empty() {
            eprintln!(
                "{}: skipped, boards {missing:?} not in ASL_VASL_BOARDS",
                file.display()
            );
            continue;
        }
        let mut maps: BTreeMap<String, BoardMap> = BTreeMap::new();
        // A board the engine cannot read: the file is named with why, and passed over.
        let mut unreadable = None;
        let (mut pairs, mut same, mut both_see, mut same_hind) = (0usize, 0usize, 0usize, 0usize);
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        let mut shown = Vec::new();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 5 {
                continue;
            }
            let layout = f[0];
            if !maps.contains_key(layout) {
                match load_map(layout, boards, &table, &mut cache) {
                    Ok(map) => {
                        maps.insert(layout.to_string(), map);
                    }
                    Err(why) => {
                        unreadable = Some(why);
                        break;
                    }
                }
            }
            let map = &maps[layout];
            let (a, b) = (hex(layout, f[1]), hex(layout, f[2]));
            // A pair VASL's own engine threw on has no verdict to compare with.
            if f[3] == "E" {
                *kinds.entry("VASL threw, not compared".into()).or_default() += 1;
                continue;
            }
            let vasl_blocked = f[3] == "1";
            let vasl_hind: u8 = f[4].parse().unwrap_or(0);
            // VASL's Location heights are whole levels above the hex's ground; ours half levels
            let level = |i: usize| 2 * f.get(i).and_then(|v| v.parse::<i16>().ok()).unwrap_or(0);
            let (la, lb) = (level(6), level(7));
            let ours = map.los(a, la, b, lb).expect("hexes on the map");
            let why = f.get(5).copied().unwrap_or("");
            if vasl_blocked && !ours.blocked {
                if let Some((_, because)) =
                    KNOWN_DIFFERENCES.iter().find(|(r, _)| why.starts_with(r))
                {
                    *kinds
                        .entry(format!("known difference, not compared: {because}"))
                        .or_default() += 1;
                    continue;
                }
            }
            pairs += 1;
            if ours.blocked == vasl_blocked {
                same += 1;
                if !ours.blocked {
                    both_see += 1;
                    if ours.hindrances == vasl_hind {
                        same_hind += 1;
                    } else {
                        *kinds
                            .entry(format!(
                                "hindrance {} vs VASL {}",
                                ours.hindrances, vasl_hind
                            ))
                            .or_default() += 1;
                        if shown.len() < sample {
                            shown.push(format!(
                                "  {} {}/{}->{}/{}: ours clear h={} ; VASL clear h={}",
                                layout, f[1], la, f[2], lb, ours.hindrances, vasl_hind
                            ));
                        }
                    }
                }
            } else {
                let kind = if vasl_blocked {
                    format!("VASL blocks: {}", why.split('@').next().unwrap_or(""))
                } else {
                    format!("we block: {}", ours.reason)
                };
                *kinds.entry(kind).or_default() += 1;
                if shown.len() < sample {
                    shown.push(format!(
                        "  {} {}/{}->{}/{}: ours {} ({}) at {:?} ; VASL {} h={} {}",
                        layout,
                        f[1],
                        la,
                        f[2],
                        lb,
                        if ours.blocked { "blocked" } else { "clear" },
                        ours.reason,
                        ours.blocked_at,
                        if vasl_blocked { "blocked" } else { "clear" },
                        vasl_hind,
                        why
                    ));
                }
            }
        }
        if let Some(why) = unreadable {
            eprintln!(
                "{}: skipped, the engine cannot read it: {why}",
                file.display()
            );
            continue;
        }
        let verdict = same as f64 / pairs.max(1) as f64;
        let hind = if both_see == 0 {
            1.0
        } else {
            same_hind as f64 / both_see as f64
        };
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        eprintln!(
            "{name:<28} {pairs:>5}  {:>7.2}  {:>6.2}  ({both_see})",
            verdict * 100.0,
            hind * 100.0
        );
        for (k, n) in &kinds {
            eprintln!("    {n:>4} x {k}");
        }
        for s in &shown {
            eprintln!("{s}");
        }
        if verdict < VERDICT_AGREEMENT_MIN || hind < HINDRANCE_AGREEMENT_MIN {
            failures.push(format!(
                "{name}: verdict {:.2}%, hindrances {:.2}%",
                verdict * 100.0,
                hind * 100.0
            ));
        }
    }
    assert!(!files.is_empty(), "no .tsv file in ASL_VASL_LOS_REF");
    assert!(failures.is_empty(), "below target: {failures:?}");
}
