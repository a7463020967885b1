//! Real VASL board archives, when `ASL_VASL_BOARDS` names a directory of them (never part of
//! the repository): every `bd*` file there must read, and its grid must match its metadata.

use protocol::board::vasl::{archive, codes::TerrainTable};

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
