//! Headless Chromium driven over the Chrome DevTools Protocol, for tests of the spectator page.
//!
//! CDP needs nothing but the browser and a websocket, which the tests speak already: no
//! chromedriver whose version must match the browser's, no Node. One browser process per test,
//! with a fresh profile in a temporary directory; when the [`Browser`] is dropped, it and every
//! process it started are killed and the profile is removed.
//! Every wait is bounded.

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// How long the browser may take to start and open its DevTools socket.
pub const LAUNCH_WAIT_MAX: Duration = Duration::from_secs(30);
/// How long one DevTools command may take to answer (a screenshot is the slowest).
pub const COMMAND_WAIT_MAX: Duration = Duration::from_secs(20);
/// How often [`Tab::wait_for`] evaluates its condition again.
const POLL_PAUSE: Duration = Duration::from_millis(50);

/// Where to look for the browser: `ASL_CHROMIUM` if set, then the names Debian and others use.
const CANDIDATES: [&str; 3] = ["chromium", "chromium-browser", "google-chrome"];

/// Flags for a quiet, disposable browser. Without the background-networking ones Chromium
/// spends its start-up on connections (updates, sync, field trials) that the sandbox refuses.
const FLAGS: &[&str] = &[
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-port=0",
    "--window-size=1280,900",
];

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The Chromium binary, or `None` when none is installed.
pub fn find() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("ASL_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|dir| CANDIDATES.iter().map(move |name| dir.join(name)))
        .find(|candidate| candidate.is_file())
}

pub struct Browser {
    process: Child,
    /// The browser's process group (its own pid): its renderers and helpers are in it too.
    group: Option<i32>,
    socket: Socket,
    next_id: u64,
    profile: tempfile::TempDir,
    /// What the pages reported as errors (uncaught exceptions, `console.error`, error log
    /// entries such as a refused resource), as the browser sent them meanwhile.
    errors: Vec<String>,
}

/// One page of the browser; its commands go through the browser's socket with its session id.
pub struct Tab {
    session: String,
}

impl Browser {
    /// Starts `binary` headless and connects to its DevTools socket.
    pub async fn launch(binary: &Path) -> Browser {
        let profile = tempfile::tempdir().expect("a profile directory");
        let mut process = Command::new(binary)
            .args(FLAGS)
            .arg(format!("--user-data-dir={}", profile.path().display()))
            // Its own temporary files (the singleton socket's directory) in the profile too,
            // so that removing the profile leaves nothing behind.
            .env("TMPDIR", profile.path())
            .arg("about:blank")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            // A group of its own, so that ending the browser ends every process it started.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", binary.display()));
        let stderr = process.stderr.take().expect("piped stderr");
        let address = tokio::time::timeout(LAUNCH_WAIT_MAX, async {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if let Some(at) = line.find("ws://") {
                    return Some((line[at..].trim().to_string(), lines));
                }
            }
            None
        })
        .await
        .unwrap_or_else(|_| panic!("{} did not open DevTools in time", binary.display()));
        let Some((address, mut lines)) = address else {
            panic!("{} exited before opening DevTools", binary.display());
        };
        // Keep reading the browser's complaints so a full pipe never blocks it.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let (socket, _) = tokio_tungstenite::connect_async(address.as_str())
            .await
            .expect("connect to DevTools");
        let group = process.id().and_then(|pid| i32::try_from(pid).ok());
        Browser {
            process,
            group,
            socket,
            next_id: 1,
            profile,
            errors: vec![],
        }
    }

    /// Sends one command (to a tab when `session` is given) and returns its result, skipping
    /// the events the browser sends meanwhile.
    async fn call(&mut self, session: Option<&str>, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut command = json!({ "id": id, "method": method, "params": params });
        if let Some(session) = session {
            command["sessionId"] = json!(session);
        }
        self.socket
            .send(Message::text(command.to_string()))
            .await
            .expect("send to DevTools");
        let deadline = Instant::now() + COMMAND_WAIT_MAX;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let frame = tokio::time::timeout(left, self.socket.next())
                .await
                .unwrap_or_else(|_| panic!("DevTools did not answer {method} in time"))
                .expect("DevTools socket open")
                .expect("DevTools frame");
            let Message::Text(text) = frame else { continue };
            let mut reply: Value = serde_json::from_str(text.as_str()).expect("DevTools JSON");
            if reply["id"] != id {
                if let Some(error) = page_error(&reply) {
                    self.errors.push(error);
                }
                continue;
            }
            if let Some(error) = reply.get("error") {
                panic!("DevTools refused {method}: {error}");
            }
            return reply["result"].take();
        }
    }

    /// Opens a new tab at `url`.
    pub async fn open(&mut self, url: &str) -> Tab {
        self.open_sized(url, None).await
    }

    /// Opens a new tab at `url` with its viewport already `(width, height)` as a phone's: the
    /// page loads at that size, as it does on a phone, rather than being resized after.
    pub async fn open_phone(&mut self, url: &str, width: u32, height: u32) -> Tab {
        self.open_sized(url, Some((width, height))).await
    }

    async fn open_sized(&mut self, url: &str, phone: Option<(u32, u32)>) -> Tab {
        let target = self
            .call(None, "Target.createTarget", json!({ "url": "about:blank" }))
            .await;
        let attached = self
            .call(
                None,
                "Target.attachToTarget",
                json!({ "targetId": target["targetId"], "flatten": true }),
            )
            .await;
        let tab = Tab {
            session: attached["sessionId"]
                .as_str()
                .expect("a session id")
                .to_string(),
        };
        self.call(Some(&tab.session), "Page.enable", json!({}))
            .await;
        // Exceptions, `console.error` and error log entries arrive as events from here on.
        self.call(Some(&tab.session), "Runtime.enable", json!({}))
            .await;
        self.call(Some(&tab.session), "Log.enable", json!({})).await;
        if let Some((width, height)) = phone {
            self.viewport(&tab, width, height, true).await;
        }
        self.call(Some(&tab.session), "Page.navigate", json!({ "url": url }))
            .await;
        tab
    }

    /// Evaluates `expression` in the tab and returns its value (promises are awaited).
    pub async fn eval(&mut self, tab: &Tab, expression: &str) -> Value {
        self.try_eval(tab, expression)
            .await
            .unwrap_or_else(|exception| panic!("`{expression}` threw: {exception}"))
    }

    /// Evaluates `expression`, returning what it threw as an error.
    async fn try_eval(&mut self, tab: &Tab, expression: &str) -> Result<Value, Value> {
        let mut result = self
            .call(
                Some(&tab.session),
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            )
            .await;
        match result.get_mut("exceptionDetails") {
            Some(exception) => Err(exception["exception"]["description"].take()),
            None => Ok(result["result"]["value"].take()),
        }
    }

    /// Evaluates `condition` until it is truthy, and returns its value; panics with `what` and
    /// the last value after `wait`. A condition that throws is not true yet: the page may still
    /// be loading.
    pub async fn wait_for(
        &mut self,
        tab: &Tab,
        what: &str,
        condition: &str,
        wait: Duration,
    ) -> Value {
        let deadline = Instant::now() + wait;
        loop {
            let (value, truthy) = match self.try_eval(tab, condition).await {
                Ok(value) => {
                    let truthy = match &value {
                        Value::Null => false,
                        Value::Bool(b) => *b,
                        Value::String(s) => !s.is_empty(),
                        Value::Number(n) => n.as_f64() != Some(0.0),
                        _ => true,
                    };
                    (value, truthy)
                }
                Err(thrown) => (json!({ "threw": thrown }), false),
            };
            if truthy {
                return value;
            }
            if Instant::now() >= deadline {
                panic!("waited {wait:?} for {what}; `{condition}` is {value}");
            }
            tokio::time::sleep(POLL_PAUSE).await;
        }
    }

    /// Presses and releases a key that has a DOM key name and no text (`ArrowLeft`, `End`).
    pub async fn press(&mut self, tab: &Tab, key: &str, key_code: u32) {
        for kind in ["rawKeyDown", "keyUp"] {
            self.call(
                Some(&tab.session),
                "Input.dispatchKeyEvent",
                json!({ "type": kind, "key": key, "code": key, "windowsVirtualKeyCode": key_code }),
            )
            .await;
        }
    }

    /// Presses Enter as a keyboard does, with its text: in a form's field that submits the form
    /// (`press` sends no text, so it only reaches key handlers).
    pub async fn enter(&mut self, tab: &Tab) {
        for kind in ["keyDown", "keyUp"] {
            self.call(
                Some(&tab.session),
                "Input.dispatchKeyEvent",
                json!({ "type": kind, "key": "Enter", "code": "Enter", "text": "\r", "windowsVirtualKeyCode": 13 }),
            )
            .await;
        }
    }

    /// Chooses `file` in the tab's file input `selector`, as a user picking it would.
    pub async fn choose_file(&mut self, tab: &Tab, selector: &str, file: &Path) {
        let document = self
            .call(Some(&tab.session), "DOM.getDocument", json!({}))
            .await;
        let input = self
            .call(
                Some(&tab.session),
                "DOM.querySelector",
                json!({ "nodeId": document["root"]["nodeId"], "selector": selector }),
            )
            .await;
        self.call(
            Some(&tab.session),
            "DOM.setFileInputFiles",
            json!({ "nodeId": input["nodeId"], "files": [file.display().to_string()] }),
        )
        .await;
    }

    /// Sets the tab's viewport, as a phone (`mobile`) or a desktop window.
    pub async fn viewport(&mut self, tab: &Tab, width: u32, height: u32, mobile: bool) {
        self.call(
            Some(&tab.session),
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile }),
        )
        .await;
    }

    /// A PNG of the tab's viewport. The tab is brought to the front first: a background tab
    /// is not painted, so its capture would never come.
    pub async fn screenshot(&mut self, tab: &Tab) -> Vec<u8> {
        self.call(Some(&tab.session), "Page.bringToFront", json!({}))
            .await;
        let shot = self
            .call(
                Some(&tab.session),
                "Page.captureScreenshot",
                json!({ "format": "png" }),
            )
            .await;
        data_encoding::BASE64
            .decode(shot["data"].as_str().expect("screenshot data").as_bytes())
            .expect("base64 screenshot")
    }

    /// Every error the pages reported so far: uncaught exceptions, `console.error` calls and
    /// error log entries (a script or style the page's policy refused, a failed request).
    pub async fn page_errors(&mut self) -> Vec<String> {
        // A round trip first, so what the pages reported before now has arrived.
        self.call(None, "Browser.getVersion", json!({})).await;
        self.errors.clone()
    }

    /// Presses and releases a key that types a character (`n`, `1`), as a keyboard user does.
    pub async fn type_key(&mut self, tab: &Tab, key: &str) {
        let code = key
            .chars()
            .next()
            .map_or(0, |c| c.to_ascii_uppercase() as u32);
        for kind in ["keyDown", "keyUp"] {
            self.call(
                Some(&tab.session),
                "Input.dispatchKeyEvent",
                json!({ "type": kind, "key": key, "text": key, "windowsVirtualKeyCode": code }),
            )
            .await;
        }
    }

    /// Closes the browser; dropping it ends its processes and removes its profile.
    pub async fn close(mut self) {
        let _ = self.socket.close(None).await;
    }
}

/// How long a dropped browser waits for its processes to end and its profile to go.
const END_WAIT_MAX: Duration = Duration::from_secs(5);

impl Drop for Browser {
    /// Kills the browser's whole process group, waits for the browser itself to end, then
    /// removes the profile, retrying while a helper that was still writing to it dies: a
    /// profile removed while any of them ran was left behind in the temporary directory.
    fn drop(&mut self) {
        if let Some(group) = self.group {
            // SAFETY: `kill` takes no pointers; a negative pid names the process group.
            unsafe { libc::kill(-group, libc::SIGKILL) };
        }
        let deadline = Instant::now() + END_WAIT_MAX;
        while matches!(self.process.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        let profile = self.profile.path();
        while profile.exists() && Instant::now() < deadline {
            if std::fs::remove_dir_all(profile).is_err() {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}

/// The error a DevTools event reports, if it is one: an uncaught exception, a `console.error`,
/// or a log entry of level error.
fn page_error(event: &Value) -> Option<String> {
    let params = &event["params"];
    match event["method"].as_str()? {
        "Runtime.exceptionThrown" => Some(format!(
            "exception: {}",
            params["exceptionDetails"]["exception"]["description"]
                .as_str()
                .or(params["exceptionDetails"]["text"].as_str())
                .unwrap_or("?")
        )),
        "Runtime.consoleAPICalled" if params["type"] == "error" => Some(format!(
            "console.error: {}",
            params["args"]
                .as_array()
                .map(|args| args
                    .iter()
                    .map(|a| a["value"].to_string())
                    .collect::<Vec<_>>()
                    .join(" "))
                .unwrap_or_default()
        )),
        "Log.entryAdded" if params["entry"]["level"] == "error" => Some(format!(
            "log: {} {}",
            params["entry"]["text"].as_str().unwrap_or("?"),
            params["entry"]["url"].as_str().unwrap_or("")
        )),
        _ => None,
    }
}
