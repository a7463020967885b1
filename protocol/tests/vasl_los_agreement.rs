//! Agreement with VASL's own LOS engine on real boards. Needs two directories kept outside the
//! repository: `ASL_VASL_BOARDS` (VASL board archives, `bdNN`) and `ASL_VASL_LOS_REF` (TSV
//! files of VASL's verdicts: `layout from to blocked hindrances reason`, one pair a line,
//! layout `1` for one board or `1,2r/3,4` for boards in rows, `r` = rotated). Prints, per file,
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

fn load_map(
    layout: &str,
    dir: &Path,
    table: &Arc<TerrainTable>,
    cache: &mut BTreeMap<u16, Arc<BoardArchive>>,
) -> BoardMap {
    let rows = layout
        .split('/')
        .map(|row| {
            row.split(',')
                .map(|b| {
                    let rotated = b.ends_with('r');
                    let number: u16 = b.trim_end_matches('r').parse().expect("board number");
                    let archive = cache
                        .entry(number)
                        .or_insert_with(|| {
                            let path = dir.join(format!("bd{number:02}"));
                            let bytes = std::fs::read(&path)
                                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                            Arc::new(archive::read(&bytes).expect("archive reads"))
                        })
                        .clone();
                    Placed {
                        number,
                        rotated,
                        archive,
                    }
                })
                .collect()
        })
        .collect();
    BoardMap::new(rows, table.clone()).expect("map builds")
}

fn hex(layout: &str, name: &str) -> Hex {
    let full = if layout.contains(',') || layout.contains('/') {
        name.to_string()
    } else {
        format!("{layout}{name}")
    };
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
            .map(|b| b.trim_end_matches('r'))
            .filter(|b| !b.is_empty())
            .filter(|b| {
                b.parse::<u16>()
                    .map_or(true, |n| !boards.join(format!("bd{n:02}")).exists())
            })
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
        let (mut pairs, mut same, mut both_see, mut same_hind) = (0usize, 0usize, 0usize, 0usize);
        let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
        let mut shown = Vec::new();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            if f.len() < 5 {
                continue;
            }
            let layout = f[0];
            let map = maps
                .entry(layout.to_string())
                .or_insert_with(|| load_map(layout, boards, &table, &mut cache));
            let (a, b) = (hex(layout, f[1]), hex(layout, f[2]));
            let vasl_blocked = f[3] == "1";
            let vasl_hind: u8 = f[4].parse().unwrap_or(0);
            let ours = map.los(a, 0, b, 0).expect("hexes on the map");
            pairs += 1;
            let why = f.get(5).copied().unwrap_or("");
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
                                "  {} {}->{}: ours clear h={} ; VASL clear h={}",
                                layout, f[1], f[2], ours.hindrances, vasl_hind
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
                        "  {} {}->{}: ours {} ({}) at {:?} ; VASL {} h={} {}",
                        layout,
                        f[1],
                        f[2],
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
