//! `asl notify`: where the server tells this seat that the game waits on it — a webhook, an
//! e-mail address, or nothing (`docs/notifications.md`). Set with the seat's own token (a saved
//! game's side name finds it); a spectator token is refused by the server.

use super::{GameArgs, ServerArg};
use crate::connection::Connection;
use crate::{printable, Failure, Status};
use protocol::wire::NotifyTarget;
use std::io::Write;

/// Longest secret a server may send: 64 hex digits are 32 bytes, as this server makes them.
const SECRET_CHARS_MAX: usize = 256;
/// Most targets printed: a server answering with more is not followed further.
const TARGETS_SHOWN_MAX: usize = 16;

#[derive(clap::Args, Clone, Debug, PartialEq, Eq)]
#[group(id = "target", required = true, multiple = false)]
pub struct NotifyArgs {
    #[command(flatten)]
    pub server: ServerArg,
    #[command(flatten)]
    pub game: GameArgs,
    /// POST a signed JSON notice to this http(s) URL. The first webhook of a seat makes its
    /// signing secret, printed this once: keep it.
    #[arg(long, group = "target")]
    pub webhook: Option<String>,
    /// Send an e-mail to this address (the server's operator must have set an SMTP relay).
    #[arg(long, group = "target")]
    pub email: Option<String>,
    /// Remove every target of this seat, and its secret.
    #[arg(long, group = "target")]
    pub off: bool,
    /// The code the server e-mailed to an address given with `--email`: the address gets
    /// notices only once its code is given.
    #[arg(long, group = "target", value_name = "CODE")]
    pub confirm: Option<String>,
}

impl NotifyArgs {
    fn target(&self) -> NotifyTarget {
        match (&self.webhook, &self.email, &self.confirm) {
            (Some(url), _, _) => NotifyTarget::Webhook { url: url.clone() },
            (None, Some(address), _) => NotifyTarget::Email {
                address: address.clone(),
            },
            (None, None, Some(code)) => NotifyTarget::Confirm { code: code.clone() },
            (None, None, None) => NotifyTarget::Off,
        }
    }
}

pub async fn notify(args: &NotifyArgs, out: &mut (dyn Write + Send)) -> Result<Status, Failure> {
    let mut connection = Connection::connect(&args.server.url).await?;
    let (targets, secret) = connection
        .notify(&args.game.game, &args.game.token, args.target())
        .await?;
    connection.close().await;
    if targets.is_empty() {
        writeln!(out, "No notifications for this seat.")?;
    } else {
        writeln!(out, "Notifications for this seat go to:")?;
        for target in targets.iter().take(TARGETS_SHOWN_MAX) {
            writeln!(out, "  {}", printable(target))?;
        }
    }
    if let Some(secret) = secret {
        if secret.len() > SECRET_CHARS_MAX {
            return Err(Failure::Server(format!(
                "the server sent a webhook secret longer than {SECRET_CHARS_MAX} characters"
            )));
        }
        writeln!(
            out,
            "Webhook secret (shown this once; each body is signed with it, header X-ASL-Signature: sha256=HMAC-SHA256(secret, body)):\n  {}",
            printable(&secret)
        )?;
    }
    Ok(Status::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: NotifyArgs,
    }

    fn parse(args: &[&str]) -> Result<NotifyArgs, clap::Error> {
        let mut all = vec!["asl", "--game", "g", "--token", "t"];
        all.extend_from_slice(args);
        Cli::try_parse_from(all).map(|c| c.args)
    }

    #[test]
    fn exactly_one_target_is_given() {
        assert_eq!(
            parse(&["--webhook", "https://example.org/h"])
                .unwrap()
                .target(),
            NotifyTarget::Webhook {
                url: "https://example.org/h".into()
            }
        );
        assert_eq!(parse(&["--off"]).unwrap().target(), NotifyTarget::Off);
        assert_eq!(
            parse(&["--confirm", "ABCD-EFGH"]).unwrap().target(),
            NotifyTarget::Confirm {
                code: "ABCD-EFGH".into()
            }
        );
        assert!(parse(&["--confirm", "ABCD-EFGH", "--email", "a@b.c"]).is_err());
        assert!(parse(&[]).is_err());
        assert!(parse(&["--off", "--email", "a@b.c"]).is_err());
    }
}
