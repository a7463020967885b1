//! The server's HTTP side, on the websocket's own port: the spectator page (so that watching a
//! game needs a link and a browser, not a second server or an install), the websocket upgrade
//! to the game protocol at [`WIRE_PATH`], `/metrics`, `/healthz`, the server's public
//! signing key at [`KEY_PATH`], and each board's image from the operator's VASL archives at
//! `/boards/<number>/image` (`boards::image_response`).
//!
//! Requests are parsed by hyper and routed by axum, never by hand. Each TCP connection serves
//! one request (no keep-alive): a page asset, a metric scrape, or the upgrade, after which the
//! socket is handed to `connection`. The request head must arrive within the handshake timeout
//! and fit [`REQUEST_HEAD_BYTES_MAX`] (else 431), bodies are refused past
//! [`REQUEST_BODY_BYTES_MAX`] (413), `/` redirects to the page, unknown paths get 404 and other
//! methods 405. The page's assets are compressed when the browser accepts gzip.
//!
//! Websocket upgrades carrying a foreign `Origin` are refused with 403: a browser always sends
//! `Origin`, so a page on another site cannot make a visitor's browser create games or send
//! commands with a token it holds. Clients that are not browsers send no `Origin` and are served.
//!
//! A browser's request must also name this server in `Host` (DNS rebinding, issue 36): a page
//! at `evil.example`, its name then pointed at 127.0.0.1, is same-origin with itself, so its
//! `Origin` matches its `Host`; only the name tells it apart. A request from a browser (one
//! carrying `Origin` or a `Sec-Fetch-*` header, which every current browser sends) is served
//! only when its `Host` is an IP address, `localhost`, the host of `--public-url`, or that of
//! an allowed origin; else 421. Scrapers and scripts, which send neither, are served as before.

use crate::operations::metrics::{Counted, Kind, METRICS};
use crate::{Admitted, Shared};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use protocol::phase::{Role, STEPS};
use protocol::record::signed::{ServerKey, KEY_PATH};
use protocol::wire::{FRAME_BYTES_MAX, WATCH_PATH, WIRE_PATH};
use std::borrow::Cow;
use std::net::SocketAddr;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;
use tokio::net::TcpStream;
use tokio::sync::oneshot;
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::Role as WsRole;
use tokio_tungstenite::WebSocketStream;
use tower::ServiceExt;
use tower_http::compression::CompressionLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tracing::debug;

/// Largest request head (request line and headers) the server reads. A browser's GET is well
/// under 2 KiB even with many cookies; anything larger is refused with 431 before it can make
/// the server buffer more. (hyper's smallest read buffer, so it is also where hyper stops.)
pub const REQUEST_HEAD_BYTES_MAX: usize = 8 * 1024;

/// Largest request body accepted. Nothing the server answers takes a body; game traffic is
/// websocket frames, limited by `FRAME_BYTES_MAX`.
pub const REQUEST_BODY_BYTES_MAX: usize = 1024;

/// Headers one request may carry.
pub const REQUEST_HEADERS_MAX: usize = 64;

/// What a connection task learns from its one HTTP request: the socket, once upgraded, to serve
/// as a websocket.
type Handoff = Arc<Mutex<Option<oneshot::Sender<hyper::upgrade::OnUpgrade>>>>;

/// Per-connection facts the routes need, put on each request.
#[derive(Clone)]
struct Peer {
    /// Where the request comes from: `/metrics` answers loopback without a token.
    addr: SocketAddr,
    /// Why the connection is refused, if it is (server full, per-IP cap).
    refusal: Option<String>,
    handoff: Handoff,
}

/// Most bytes the future of [`serve`] may take: every connection holds one for as long as it
/// lives, so what a rare path awaits (joining through another node: a websocket client with
/// TLS) is boxed rather than held inline. Checked by a test, in the build where Cargo has
/// unified the most features.
pub const CONNECTION_TASK_BYTES_MAX: usize = 8 * 1024;

/// Serves one accepted TCP connection: one HTTP request within the handshake timeout, then,
/// if it was a websocket upgrade, the game protocol until the connection ends.
pub async fn serve(stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>, admitted: Admitted) {
    // Counted as an HTTP connection until it is served or upgraded: sockets that never send a
    // byte show here until the handshake deadline drops them.
    let exchanging = Counted::new(Kind::Http);
    let (handoff, upgraded) = oneshot::channel();
    let info = Peer {
        addr: peer,
        refusal: admitted.refusal.clone(),
        handoff: Arc::new(Mutex::new(Some(handoff))),
    };
    let router = router(shared.clone());
    let service =
        hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
            request.extensions_mut().insert(info.clone());
            let answer = router.clone().oneshot(request.map(Body::new));
            async move {
                let mut response = answer.await?;
                // One request per connection. (Said in the response rather than by turning
                // keep-alive off, which would also mark a 101 `Connection: close`.)
                if response.status() != StatusCode::SWITCHING_PROTOCOLS {
                    response
                        .headers_mut()
                        .insert(header::CONNECTION, HeaderValue::from_static("close"));
                }
                Ok::<_, std::convert::Infallible>(response)
            }
        });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(shared.config.handshake_timeout)
        .max_buf_size(REQUEST_HEAD_BYTES_MAX)
        .max_headers(REQUEST_HEADERS_MAX);
    let connection = http
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    match tokio::time::timeout(shared.config.handshake_timeout, connection).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => debug!(%peer, error = %e, "HTTP request not served"),
        Err(_) => {
            METRICS.refused("handshake_timeout");
            debug!(%peer, "request head or handshake not complete in time");
            return;
        }
    }
    drop(exchanging);
    let Ok(upgrade) = upgraded.await else { return };
    let Ok(Ok(upgraded)) = tokio::time::timeout(shared.config.handshake_timeout, upgrade).await
    else {
        return;
    };
    // Back to the TCP stream itself, with whatever the client sent after its request.
    let Ok(parts) = upgraded.downcast::<TokioIo<TcpStream>>() else {
        return;
    };
    let stream = parts.io.into_inner();
    let config = Some(crate::operations::config::websocket_config());
    let ws = if parts.read_buf.is_empty() {
        WebSocketStream::from_raw_socket(stream, WsRole::Server, config).await
    } else {
        WebSocketStream::from_partially_read(
            stream,
            parts.read_buf.to_vec(),
            WsRole::Server,
            config,
        )
        .await
    };
    match admitted.refusal.clone() {
        Some(why) => {
            crate::network::connection::serve_seat_only(ws, peer, shared, admitted, &why).await
        }
        None => crate::network::connection::serve(ws, peer, shared, admitted).await,
    }
}

/// Every route. Each connection's facts arrive as a request extension ([`Peer`]).
fn router(shared: Arc<Shared>) -> Router {
    let page = Router::new()
        .route("/watch", get(page_asset))
        .route("/watch/", get(page_asset))
        .route("/watch/watch.js", get(page_asset))
        .route("/watch/watch.css", get(page_asset))
        .fallback(not_found)
        .layer(CompressionLayer::new());
    Router::new()
        .route("/", get(|| async { Redirect::to(WATCH_PATH) }))
        .route(WIRE_PATH, get(upgrade))
        .route("/metrics", get(metrics))
        .route("/healthz", get(healthz))
        .route(KEY_PATH, get(server_key))
        .route("/boards/{number}/image", get(board_image))
        .merge(page)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::middleware::from_fn(refuse_when_full))
        .layer(axum::middleware::from_fn_with_state(
            shared.clone(),
            refuse_foreign_host,
        ))
        .layer(RequestBodyLimitLayer::new(REQUEST_BODY_BYTES_MAX))
        .with_state(shared)
}

/// A connection over a limit gets a 503 for any page; the websocket upgrade goes through, so
/// the client is told why in the protocol's own words (`limit_reached`, close 1013).
async fn refuse_when_full(request: Request, next: axum::middleware::Next) -> Response {
    let refusal = request
        .extensions()
        .get::<Peer>()
        .and_then(|p| p.refusal.clone());
    match refusal {
        Some(why) if request.uri().path() != WIRE_PATH => {
            let mut response =
                (StatusCode::SERVICE_UNAVAILABLE, format!("{why}\n")).into_response();
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("5"));
            response
        }
        _ => next.run(request).await,
    }
}

/// What a `/metrics` request may read.
#[derive(Debug, PartialEq, Eq)]
enum MetricsAccess {
    /// Every metric: the request bears the operator's token.
    Operator,
    /// The public metrics only (`Metrics::encode_public`): no token is set and the request
    /// comes from the server's own machine, where a player of a local game may sit too.
    Public,
    Refused,
}

/// What `/metrics` may serve: every metric with the token, when one is set (compared as
/// digests, in constant time); the public ones to loopback when none is set; else nothing.
fn metrics_access(
    headers: &HeaderMap,
    peer: Option<SocketAddr>,
    token: Option<&str>,
) -> MetricsAccess {
    match token {
        Some(token) => {
            let bearer = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .is_some_and(|offered| {
                    blake3::hash(offered.trim().as_bytes()) == blake3::hash(token.as_bytes())
                });
            if bearer {
                MetricsAccess::Operator
            } else {
                MetricsAccess::Refused
            }
        }
        None if peer.is_some_and(|p| p.ip().is_loopback()) => MetricsAccess::Public,
        None => MetricsAccess::Refused,
    }
}

/// A browser's request naming a host this server is not (DNS rebinding) gets 421.
async fn refuse_foreign_host(
    State(shared): State<Arc<Shared>>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    if from_browser(request.headers())
        && !host_allowed(
            request.headers(),
            shared.config.public_url.as_deref(),
            &shared.config.allowed_origins,
        )
    {
        METRICS.refused("host");
        return (
            StatusCode::MISDIRECTED_REQUEST,
            "This server does not answer to that host name: reach it by its address, or have its operator name the host with --public-url.\n",
        )
            .into_response();
    }
    next.run(request).await
}

/// Whether a request comes from a browser: it sends `Origin` (always on a websocket) or the
/// `Sec-Fetch-*` headers (on every request).
fn from_browser(headers: &HeaderMap) -> bool {
    headers.contains_key(header::ORIGIN)
        || headers
            .keys()
            .any(|name| name.as_str().starts_with("sec-fetch-"))
}

/// The host of `authority` (`host[:port]`, `[v6]:port`) in lower case, without its port.
fn host_of(authority: &str) -> String {
    let authority = authority.trim();
    let host = if let Some(rest) = authority.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// The host of a URL (`wss://games.example:443/x` → `games.example`).
fn host_of_url(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    host_of(rest.split(['/', '?', '#']).next().unwrap_or(""))
}

/// Whether `Host` names this server: an IP address (no name to rebind), `localhost`, the host
/// of the public URL, or the host of an allowed origin. No `Host` at all is not a browser's.
fn host_allowed(headers: &HeaderMap, public_url: Option<&str>, allowed: &[String]) -> bool {
    let Some(host) = headers.get(header::HOST) else {
        return true;
    };
    let Ok(host) = host.to_str() else {
        return false;
    };
    let host = host_of(host);
    host.parse::<std::net::IpAddr>().is_ok()
        || host == "localhost"
        || public_url.is_some_and(|url| host_of_url(url) == host)
        || allowed.iter().any(|origin| host_of_url(origin) == host)
}

async fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        format!("The spectator page is at {WATCH_PATH}; the game protocol at {WIRE_PATH}.\n"),
    )
        .into_response()
}

async fn method_not_allowed() -> Response {
    let mut response = (
        StatusCode::METHOD_NOT_ALLOWED,
        "This server answers GET and HEAD only.\n",
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
    response
}

async fn healthz() -> &'static str {
    "ok\n"
}

/// The server's public key in hex and a newline, for `asl verify --server-key`
/// (`docs/review.md`).
async fn server_key(State(shared): State<Arc<Shared>>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        format!("{}\n", ServerKey::of(&shared.config.signing_key)),
    )
        .into_response()
}

/// A board's own image for the page (`boards::image_response`).
async fn board_image(
    State(shared): State<Arc<Shared>>,
    axum::extract::Path(number): axum::extract::Path<String>,
    request: Request,
) -> Response {
    crate::operations::boards::image_response(
        shared.config.boards.as_ref(),
        &shared.board_images,
        &number,
        request.uri().query(),
        request.headers().get(header::IF_NONE_MATCH),
    )
    .await
}

/// The process's metrics, for the operator: every one to a request bearing the metrics token;
/// without a token set, the public ones (connections, games loaded) to loopback. Counters that
/// move as a game's hidden units act are no one else's business (issue 36).
async fn metrics(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let peer = request.extensions().get::<Peer>().map(|p| p.addr);
    let text = match metrics_access(
        request.headers(),
        peer,
        shared.config.metrics_token.as_deref(),
    ) {
        MetricsAccess::Operator => METRICS.encode(),
        MetricsAccess::Public => METRICS.encode_public(),
        MetricsAccess::Refused => {
            METRICS.refused("metrics_token");
            let mut response = (
                StatusCode::UNAUTHORIZED,
                "The metrics are the operator's: send the server's metrics token (Authorization: Bearer); without one set, the server's own machine reads the public ones.\n",
            )
                .into_response();
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"metrics\""),
            );
            return response;
        }
    };
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

async fn page_asset(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let Some(asset) = asset(request.uri().path(), shared.config.idle_timeout) else {
        return not_found().await;
    };
    debug!(path = asset.path, "page served");
    (
        [
            (header::CONTENT_TYPE, asset.content_type),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        asset.body,
    )
        .into_response()
}

/// Whether a websocket request's `Origin` (if any) may open a connection: none (not a browser),
/// the server's own (`Host`), or one the operator allowed.
fn origin_allowed(headers: &HeaderMap, allowed: &[String]) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    if allowed.iter().any(|a| a.eq_ignore_ascii_case(origin)) {
        return true;
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin_host = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"));
    matches!((origin_host, host), (Some(o), Some(h)) if o.eq_ignore_ascii_case(h))
}

fn header_has(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.to_str()
            .is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
    })
}

/// The websocket upgrade (RFC 6455 section 4.2): checked here, the socket handed to the
/// connection task once the 101 is sent.
async fn upgrade(State(shared): State<Arc<Shared>>, mut request: Request) -> Response {
    let headers = request.headers();
    if request.method() != Method::GET
        || !header_has(headers, header::UPGRADE, "websocket")
        || !header_has(headers, header::CONNECTION, "upgrade")
    {
        let mut response = (
            StatusCode::UPGRADE_REQUIRED,
            format!("{WIRE_PATH} speaks the game protocol over a websocket.\n"),
        )
            .into_response();
        response
            .headers_mut()
            .insert(header::UPGRADE, HeaderValue::from_static("websocket"));
        return response;
    }
    if headers
        .get(header::SEC_WEBSOCKET_VERSION)
        .is_none_or(|v| v != "13")
    {
        let mut response =
            (StatusCode::BAD_REQUEST, "Websocket version 13 only.\n").into_response();
        response.headers_mut().insert(
            header::SEC_WEBSOCKET_VERSION,
            HeaderValue::from_static("13"),
        );
        return response;
    }
    let Some(key) = headers.get(header::SEC_WEBSOCKET_KEY) else {
        return (StatusCode::BAD_REQUEST, "Sec-WebSocket-Key is missing.\n").into_response();
    };
    if !origin_allowed(headers, &shared.config.allowed_origins) {
        METRICS.refused("origin");
        return (
            StatusCode::FORBIDDEN,
            "Pages from another origin may not open the game protocol.\n",
        )
            .into_response();
    }
    let accept = derive_accept_key(key.as_bytes());
    let (Some(on_upgrade), Some(peer)) = (
        request
            .extensions_mut()
            .remove::<hyper::upgrade::OnUpgrade>(),
        request.extensions().get::<Peer>().cloned(),
    ) else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    if let Some(handoff) = peer.handoff.lock().expect("handoff lock").take() {
        let _ = handoff.send(on_upgrade);
    }
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header(header::UPGRADE, "websocket")
        .header(header::CONNECTION, "upgrade")
        .header(header::SEC_WEBSOCKET_ACCEPT, accept)
        .body(Body::empty())
        .expect("a valid response")
}

/// One file of the page.
struct Asset {
    path: &'static str,
    content_type: &'static str,
    body: Cow<'static, str>,
}

/// The page's script, after what it needs from the engine, generated so they can never disagree:
/// the sequence of play from `protocol::phase::STEPS` (the state's clock carries only a step
/// index) and the frame limit an export for review must fit.
static SCRIPT: LazyLock<String> = LazyLock::new(|| {
    let steps: Vec<serde_json::Value> = STEPS
        .iter()
        .map(|s| {
            serde_json::json!({
                "name": s.name,
                "phase": s.phase.abbreviation(),
                "rule": s.rule,
                "attacker_acts": s.acting == Role::Attacker,
            })
        })
        .collect();
    format!(
        "// Generated by asl-server from protocol::phase::STEPS, protocol::wire and protocol::export.\n\
         const STEPS = {};\nconst FRAME_BYTES_MAX = {FRAME_BYTES_MAX};\n\
         const EXPORT_BYTES_MAX = {};\nconst EXPORT_EVENTS_MAX = {};\n\
         const REVIEW_RECEIPTS_MAX = {};\n{}",
        serde_json::Value::Array(steps),
        protocol::export::EXPORT_BYTES_MAX,
        protocol::export::EXPORT_EVENTS_MAX,
        protocol::wire::REVIEW_RECEIPTS_MAX,
        include_str!("../../web/watch.js")
    )
});

/// The server's idle timeout, put before the script: a page someone has open only listens, so
/// it pings (`ping`, answered by `pong`) often enough that the server never takes it for a dead
/// connection, however the operator set `idle_timeout`.
fn script(idle_timeout: Duration) -> String {
    format!(
        "const IDLE_TIMEOUT_MS = {};\n{}",
        idle_timeout.as_millis(),
        SCRIPT.as_str()
    )
}

/// Every path the page server answers: the allow-list. Anything else under [`WATCH_PATH`] is a
/// 404, and nothing outside it is read from here.
fn asset(path: &str, idle_timeout: Duration) -> Option<Asset> {
    match path {
        "/watch" | "/watch/" => Some(Asset {
            path: "/watch",
            content_type: "text/html; charset=utf-8",
            body: Cow::Borrowed(include_str!("../../web/watch.html")),
        }),
        "/watch/watch.js" => Some(Asset {
            path: "/watch/watch.js",
            content_type: "text/javascript; charset=utf-8",
            body: Cow::Owned(script(idle_timeout)),
        }),
        "/watch/watch.css" => Some(Asset {
            path: "/watch/watch.css",
            content_type: "text/css; charset=utf-8",
            body: Cow::Borrowed(include_str!("../../web/watch.css")),
        }),
        _ => None,
    }
}

/// The page may load only its own files and talk only to its own server: no fonts, CDNs or
/// trackers can be added by accident, and an injected script could not run.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; \
     frame-ancestors 'none'";

#[cfg(test)]
mod tests {
    use super::*;

    /// The size of the future an async fn returns, read off its type without calling it.
    fn future_bytes<A, B, C, D, F: std::future::Future>(_: fn(A, B, C, D) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    #[test]
    fn a_connections_task_stays_small_whatever_the_build_unifies() {
        // Run by `cargo test --workspace`, where the client's TLS is in tokio-tungstenite:
        // a websocket client's connect held inline made this 18,016 B (8,288 B without it).
        let bytes = future_bytes(serve);
        assert!(
            bytes <= CONNECTION_TASK_BYTES_MAX,
            "a connection's task is {bytes} B, over {CONNECTION_TASK_BYTES_MAX} B"
        );
    }

    #[test]
    fn the_script_carries_the_sequence_of_play_and_the_frame_limit() {
        let js = asset("/watch/watch.js", Duration::from_secs(300))
            .unwrap()
            .body;
        assert!(js.starts_with("const IDLE_TIMEOUT_MS = 300000;\n// Generated"));
        assert!(js.contains(&format!("const FRAME_BYTES_MAX = {FRAME_BYTES_MAX};")));
        assert!(
            js.contains(r#""name":"end of RPh (1.32B), ATTACKER""#),
            "{js}"
        );
        let steps = js
            .lines()
            .find(|l| l.starts_with("const STEPS = "))
            .unwrap();
        assert_eq!(steps.matches("\"rule\"").count(), STEPS.len());
    }

    /// The page must stand alone: nothing it loads may come from another origin. (The SVG
    /// namespace is a name, not an address the browser fetches.)
    #[test]
    fn the_page_loads_nothing_from_elsewhere() {
        for path in ["/watch", "/watch/watch.js", "/watch/watch.css"] {
            let body = asset(path, Duration::from_secs(300))
                .unwrap()
                .body
                .replace("http://www.w3.org/2000/svg", "");
            for outside in ["http://", "https://", "//fonts", "@import", "url("] {
                assert!(!body.contains(outside), "{path} mentions {outside}");
            }
        }
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        map
    }

    /// Issue 36: the metrics are the operator's: with a token set, only a request bearing it;
    /// without, loopback reads the public ones and nobody else anything.
    #[test]
    fn metrics_need_the_token_or_loopback() {
        use MetricsAccess::*;
        let local = Some("127.0.0.1:5000".parse().unwrap());
        let remote = Some("203.0.113.9:5000".parse().unwrap());
        let none = HeaderMap::new();
        assert_eq!(metrics_access(&none, local, None), Public);
        assert_eq!(metrics_access(&none, remote, None), Refused);
        let bearer = |t: &str| headers(&[(header::AUTHORIZATION, format!("Bearer {t}").as_str())]);
        assert_eq!(
            metrics_access(&bearer("s3cret"), remote, Some("s3cret")),
            Operator
        );
        assert_eq!(
            metrics_access(&bearer("guess"), remote, Some("s3cret")),
            Refused
        );
        assert_eq!(metrics_access(&none, local, Some("s3cret")), Refused);
    }

    /// Issue 36: a browser must name this server in `Host`; a rebound name is refused.
    #[test]
    fn a_browsers_host_must_be_this_servers() {
        let host = |h: &str| headers(&[(header::HOST, h)]);
        for ok in [
            "127.0.0.1:7878",
            "[::1]:7878",
            "localhost:7878",
            "LOCALHOST",
            "10.0.0.5",
        ] {
            assert!(host_allowed(&host(ok), None, &[]), "{ok}");
        }
        assert!(!host_allowed(&host("evil.example:7878"), None, &[]));
        assert!(!host_allowed(&host("localhost.evil.example"), None, &[]));
        let public = Some("wss://games.example/");
        assert!(host_allowed(&host("games.example"), public, &[]));
        assert!(host_allowed(&host("Games.Example.:443"), public, &[]));
        assert!(!host_allowed(&host("evil.example"), public, &[]));
        let allowed = ["https://club.example:8443".to_string()];
        assert!(host_allowed(&host("club.example:7878"), None, &allowed));
        assert!(host_allowed(&HeaderMap::new(), None, &[]));
        assert!(!from_browser(&host("x")));
        assert!(from_browser(&headers(&[(header::ORIGIN, "http://x")])));
        let fetch = header::HeaderName::from_static("sec-fetch-mode");
        assert!(from_browser(&headers(&[(fetch, "navigate")])));
    }

    #[test]
    fn only_the_servers_own_origin_or_an_allowed_one_may_open_the_protocol() {
        let host = (header::HOST, "games.example:7878");
        assert!(origin_allowed(&headers(std::slice::from_ref(&host)), &[]));
        for own in ["http://games.example:7878", "https://GAMES.example:7878"] {
            assert!(origin_allowed(
                &headers(&[host.clone(), (header::ORIGIN, own)]),
                &[]
            ));
        }
        let foreign = headers(&[host.clone(), (header::ORIGIN, "https://evil.example")]);
        assert!(!origin_allowed(&foreign, &[]));
        assert!(origin_allowed(&foreign, &["https://evil.example".into()]));
        let null = headers(&[host, (header::ORIGIN, "null")]);
        assert!(!origin_allowed(&null, &[]));
    }
}
