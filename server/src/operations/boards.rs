//! The operator's VASL board archives (`--boards DIR`, `ASL_BOARDS`): read from disk here, on
//! first use, and shared by every game on a board (`protocol::board::vasl::library`).

use std::path::Path;
use std::sync::Arc;

use protocol::board::vasl::library::{self, Boards};

/// The boards in `dir`, with VASL's terrain codes from `module` (`ASL_VASL_MODULE`) when given.
pub fn open(dir: &Path, module: Option<&Path>) -> Result<Arc<Boards>, String> {
    if !dir.is_dir() {
        return Err(format!(
            "{}: not a directory of VASL board archives",
            dir.display()
        ));
    }
    let module = match module {
        None => None,
        Some(path) => Some((path.display().to_string(), read(path)?)),
    };
    let base = dir.to_path_buf();
    let boards = Boards::in_directory(
        dir.display().to_string(),
        Box::new(move |name| read(&base.join(name)).ok()),
        module,
    )?;
    let boards = Arc::new(boards);
    // A stored game replayed after a restart finds its boards here.
    library::install(boards.clone());
    Ok(boards)
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    library::read_capped(file, &path.display().to_string())
}

/// Board images kept in memory once served, at most this many bytes in all: a VASL geomorphic
/// board's GIF is 0.2–1 MB, so this holds every board of several campaigns. Past it an image is
/// read from its archive for each request: still served, only slower, and memory stays bounded
/// whatever boards the directory holds.
pub const BOARD_IMAGES_CACHED_BYTES_MAX: usize = 64 << 20;

/// How long a browser may keep an image asked for by its archive's digest (`?v=`): a year, the
/// longest HTTP caches honour. The same digest is the same bytes forever, so it never goes stale.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// One board's image as served: the bytes, their type and the archive's digest (hex), which is
/// the image's ETag and the `v` a page asks for it by.
#[derive(Clone, Debug)]
pub struct ServedImage {
    pub bytes: axum::body::Bytes,
    pub content_type: &'static str,
    pub digest: String,
}

/// The images served so far, by board number, read once from the operator's archives.
#[derive(Debug)]
pub struct BoardImages {
    cached: std::sync::Mutex<std::collections::BTreeMap<u16, ServedImage>>,
    /// [`BOARD_IMAGES_CACHED_BYTES_MAX`] (smaller in tests).
    bytes_max: usize,
}

impl Default for BoardImages {
    fn default() -> BoardImages {
        BoardImages {
            cached: Default::default(),
            bytes_max: BOARD_IMAGES_CACHED_BYTES_MAX,
        }
    }
}

impl BoardImages {
    /// Board `number`'s image: from memory, or read from its archive (and kept, room allowing).
    fn get(&self, boards: &Boards, number: u16) -> Result<ServedImage, String> {
        if let Some(image) = self.cached.lock().expect("board images lock").get(&number) {
            return Ok(image.clone());
        }
        use protocol::board::vasl::library::ImageError;
        let (image, digest) = boards.image(&number.to_string()).map_err(|e| match e {
            ImageError::Missing(detail) => {
                tracing::debug!(board = number, %detail, "board image asked for, no archive");
                format!("This server has no board {number} among its VASL board archives.\n")
            }
            ImageError::Archive(e) => {
                tracing::warn!(board = number, error = %e, "board image unreadable");
                format!("Board {number}'s archive holds no image to show: {e}.\n")
            }
        })?;
        let served = ServedImage {
            bytes: image.bytes.into(),
            content_type: image.content_type,
            digest: data_encoding::HEXLOWER.encode(&digest),
        };
        let mut cached = self.cached.lock().expect("board images lock");
        let held: usize = cached.values().map(|i| i.bytes.len()).sum();
        if held + served.bytes.len() <= self.bytes_max {
            cached.insert(number, served.clone());
        }
        Ok(served)
    }
}

/// `GET /boards/<number>/image[?v=<digest>]`: board `number`'s own image from the operator's
/// archive, for the page to draw under the hexes. Anyone may ask (the artwork is the player's
/// own board, not a fact of any game); only the image the archive's metadata names is ever read
/// out. Asked for with the digest the game's scenario names (`v`), it may be cached for good;
/// an archive that is not that one any more is a 404, so a page never lays other artwork under
/// a game's hexes. Every failure is a 4xx with a sentence, and the page draws the terrain itself.
pub fn image_response(
    boards: Option<&Boards>,
    images: &BoardImages,
    number: &str,
    query: Option<&str>,
    if_none_match: Option<&axum::http::HeaderValue>,
) -> axum::response::Response {
    use axum::http::{header, StatusCode};
    use axum::response::IntoResponse;
    let text = |status: StatusCode, body: String| {
        (
            status,
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            body,
        )
            .into_response()
    };
    let Some(number) = board_number(number) else {
        return text(
            StatusCode::BAD_REQUEST,
            format!(
                "`{number}` is not a board: boards are named by VASL's number, 1 to 999 \
                 (`/boards/12/image`).\n"
            ),
        );
    };
    let Some(boards) = boards else {
        return text(
            StatusCode::NOT_FOUND,
            "This server has no board archives (its operator starts it with `--boards DIR`).\n"
                .into(),
        );
    };
    let image = match images.get(boards, number) {
        Ok(image) => image,
        Err(why) => return text(StatusCode::NOT_FOUND, why),
    };
    let wanted = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|pair| pair.strip_prefix("v="));
    if let Some(wanted) = wanted {
        if !wanted.eq_ignore_ascii_case(&image.digest) {
            return text(
                StatusCode::NOT_FOUND,
                format!(
                    "This server's board {number} is another archive than the one asked for \
                     (digest {}…, not {}).\n",
                    &image.digest[..12],
                    wanted.chars().take(12).collect::<String>()
                ),
            );
        }
    }
    let etag = format!("\"{}\"", image.digest);
    let cache = if wanted.is_some() {
        IMMUTABLE
    } else {
        "no-cache"
    };
    let fresh = if_none_match
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let headers = [
        (header::ETAG, etag),
        (header::CACHE_CONTROL, cache.to_string()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
    ];
    if fresh {
        return (StatusCode::NOT_MODIFIED, headers).into_response();
    }
    (
        headers,
        [(header::CONTENT_TYPE, image.content_type)],
        image.bytes,
    )
        .into_response()
}

/// A board number as a URL writes it: 1 to 999 in plain decimal, nothing else (no sign, no
/// leading zero, no `r`): one board, one address, so caches hold one copy of it.
fn board_number(text: &str) -> Option<u16> {
    if text.is_empty() || text.len() > 3 || text.starts_with('0') {
        return None;
    }
    if !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{header, HeaderValue, StatusCode};
    use protocol::board::vasl::synth::SynthBoard;

    async fn body(response: axum::response::Response) -> Vec<u8> {
        axum::body::to_bytes(response.into_body(), 1 << 24)
            .await
            .unwrap()
            .to_vec()
    }

    fn directory() -> (tempfile::TempDir, Arc<Boards>, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let mut board = SynthBoard::sized("01", 5, 2, 230, 130);
        board.image = Some(board.painted_png());
        let archive = board.archive();
        std::fs::write(dir.path().join("bd01"), &archive).unwrap();
        let boards = open(dir.path(), None).unwrap();
        (dir, boards, archive)
    }

    #[tokio::test]
    async fn a_boards_image_is_served_with_its_digest_as_etag_and_cached_for_good() {
        let (dir, boards, archive) = directory();
        let digest = data_encoding::HEXLOWER.encode(blake3::hash(&archive).as_bytes());
        let images = BoardImages::default();
        let query = format!("v={digest}");
        let response = image_response(Some(&boards), &images, "1", Some(&query), None);
        assert_eq!(response.status(), StatusCode::OK);
        let headers = response.headers().clone();
        assert_eq!(headers[header::CONTENT_TYPE], "image/png");
        assert_eq!(headers[header::ETAG], format!("\"{digest}\"").as_str());
        assert_eq!(headers[header::CACHE_CONTROL], IMMUTABLE);
        assert_eq!(headers[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
        let png = body(response).await;
        assert_eq!(&png[16..24], &[0, 0, 0, 230, 0, 0, 0, 130]);

        // Read once: served from memory with the archive gone.
        std::fs::remove_file(dir.path().join("bd01")).unwrap();
        let again = image_response(Some(&boards), &images, "1", None, None);
        assert_eq!(again.status(), StatusCode::OK);
        assert_eq!(again.headers()[header::CACHE_CONTROL], "no-cache");
        assert_eq!(body(again).await, png);

        // A browser holding it is told so; another archive's digest is not this image.
        let etag = HeaderValue::from_str(&format!("\"{digest}\"")).unwrap();
        let not_modified = image_response(Some(&boards), &images, "1", None, Some(&etag));
        assert_eq!(not_modified.status(), StatusCode::NOT_MODIFIED);
        assert!(body(not_modified).await.is_empty());
        let other = image_response(Some(&boards), &images, "1", Some("v=00ff"), None);
        assert_eq!(other.status(), StatusCode::NOT_FOUND);
        assert!(String::from_utf8(body(other).await)
            .unwrap()
            .contains("another archive"));
    }

    #[test]
    fn images_are_kept_up_to_the_limit_and_served_from_the_archive_past_it() {
        let (dir, boards, _) = directory();
        let mut two = SynthBoard::sized("02", 5, 2, 230, 130);
        two.image = Some(two.painted_png());
        std::fs::write(dir.path().join("bd02"), two.archive()).unwrap();
        let size = |n: u16| boards.image(&n.to_string()).unwrap().0.bytes.len();
        // Room for board 1's image exactly: it is kept; board 2's is one past, so it is not.
        let images = BoardImages {
            cached: Default::default(),
            bytes_max: size(1),
        };
        images.get(&boards, 1).unwrap();
        images.get(&boards, 2).unwrap();
        std::fs::remove_file(dir.path().join("bd01")).unwrap();
        std::fs::remove_file(dir.path().join("bd02")).unwrap();
        assert!(images.get(&boards, 1).is_ok(), "kept");
        assert!(
            images.get(&boards, 2).is_err(),
            "not kept: read again, and gone"
        );
    }

    #[tokio::test]
    async fn a_board_the_server_lacks_or_a_bad_number_is_said_in_words() {
        let (dir, boards, _) = directory();
        let images = BoardImages::default();
        let missing = image_response(Some(&boards), &images, "2", None, None);
        assert_eq!(missing.status(), StatusCode::NOT_FOUND);
        let text = String::from_utf8(body(missing).await).unwrap();
        assert!(text.contains("no board 2"), "{text}");
        let place = dir.path().display().to_string();
        assert!(
            !text.contains(&place),
            "the operator's directory stays private: {text}"
        );

        let none = image_response(None, &images, "1", None, None);
        assert_eq!(none.status(), StatusCode::NOT_FOUND);
        assert!(String::from_utf8(body(none).await)
            .unwrap()
            .contains("--boards"));

        for bad in ["0", "01", "1000", "1r", "-1", "", "x", "1%2F..", "１"] {
            let response = image_response(Some(&boards), &images, bad, None, None);
            assert_eq!(response.status(), StatusCode::BAD_REQUEST, "{bad}");
        }
        assert_eq!(board_number("999"), Some(999));

        // An archive whose image is not an image is refused by name, never sent as one.
        let board = SynthBoard::sized("03", 5, 2, 230, 130);
        let sneaky = board.metadata_xml().replace("bd03.png", "LOSData");
        std::fs::write(
            dir.path().join("bd03"),
            board.archive_with(&sneaky, &board.los_data()),
        )
        .unwrap();
        let response = image_response(Some(&boards), &images, "3", None, None);
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert!(String::from_utf8(body(response).await)
            .unwrap()
            .contains("not a GIF, PNG or JPEG"));
    }
}
