//! Real VASL board archives, when `ASL_VASL_BOARDS` names a directory of them (never part of
//! the repository): every `bd*` file there must read, and its grid must match its metadata.

use protocol::board::vasl::{archive, codes::TerrainTable};
use protocol::ReadScenario;

#[test]
fn real_board_archives_read_when_a_directory_is_named() {
    let Some(dir) = std::env::var_os("ASL_VASL_BOARDS") else {
        eprintln!("skipped: ASL_VASL_BOARDS names no directory of VASL board archives");
        return;
    };
    let table = TerrainTable::builtin();
    let mut read = 0;
    for entry in std::fs::read_dir(&dir).expect("ASL_VASL_BOARDS is a directory") {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if !name.starts_with("bd") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let board = archive::read(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut counts = std::collections::BTreeMap::new();
        for code in &board.grid.terrain {
            *counts.entry(*code).or_insert(0usize) += 1;
        }
        let unknown: Vec<_> = counts.keys().filter(|c| table.get(**c).is_none()).collect();
        assert!(
            unknown.is_empty(),
            "{name}: codes {unknown:?} are not VASL's"
        );
        let names: Vec<String> = counts
            .iter()
            .map(|(c, n)| format!("{}={n}", table.get(*c).unwrap().name))
            .collect();
        eprintln!(
            "{name}: {} v{} {}x{} hills={} grid {}x{}: {}",
            board.metadata.name,
            board.metadata.version,
            board.metadata.columns,
            board.metadata.rows,
            board.metadata.has_hills,
            board.grid.width,
            board.grid.height,
            names.join(", ")
        );
        read += 1;
    }
    assert!(read > 0, "no bd* archive in {}", dir.to_string_lossy());
}

#[test]
fn a_scenario_on_four_real_boards_fits_a_frame() {
    let Some(dir) = std::env::var_os("ASL_VASL_BOARDS") else {
        eprintln!("skipped: ASL_VASL_BOARDS names no directory of VASL board archives");
        return;
    };
    let dir = std::path::PathBuf::from(dir);
    let boards = protocol::board::vasl::library::Boards::new(
        dir.display().to_string(),
        TerrainTable::builtin(),
        Box::new(move |name| {
            protocol::board::vasl::library::archive_names(name)
                .iter()
                .find_map(|f| std::fs::read(dir.join(f)).ok())
                .ok_or_else(|| protocol::board::vasl::library::BoardError::NotIn {
                    board: name.to_string(),
                    place: "the test's boards".into(),
                    tried: protocol::board::vasl::library::archive_names(name).join(", "),
                })
        }),
    );
    let text = "name = \"x\"\nturns = 1\nfirst = \"a\"\nsides = [{ id = \"a\", name = \"A\" }, { id = \"b\", name = \"B\" }]\n[map]\nboards = [[\"1\", \"2r\"], [\"3\", \"4\"]]\n";
    let s = protocol::Scenario::from_toml_on(text, Some(&boards)).unwrap();
    let json = protocol::wire::to_json(&s).len();
    let bincode = protocol::wire::to_bincode(&s).len();
    eprintln!(
        "4 boards: {} hexes, {} hexsides, JSON {json} bytes, bincode {bincode} bytes",
        s.hexes.len(),
        s.hexsides.len()
    );
    assert!(json < protocol::wire::FRAME_BYTES_MAX / 2);
}
