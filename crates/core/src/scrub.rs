//! Text from outside the process made safe to show and store. A server's error messages,
//! error codes, labels and headers, and the strings of a file, may hold control characters
//! (a terminal obeys them: it retitles, clears, recolours) and may echo what a request
//! carried (a session token, a password). Before such text is printed, drawn, exported or
//! put in a table, `text` escapes its control characters, replaces the secrets this process
//! knows and cuts the user and password out of every URL in it.
//!
//! The secrets are process-wide: they are learnt where they enter (a URL given by the user,
//! credentials the AWS SDK resolves) and scrubbed wherever server text is read, which is
//! layers away from there. A server may echo a secret in another form than it was sent
//! (`echo.rs`): a part of it, base64, percent-encoded, JSON-escaped; each is removed.

mod echo;

use base64::Engine as _;
use std::borrow::Cow;
use std::sync::{LazyLock, PoisonError, RwLock};

/// What a removed secret reads as.
pub const REDACTED: &str = "***";

/// Shorter secrets are not searched for: they would also match ordinary words (a URL's
/// password is still cut out of URLs whatever its length).
const MIN_SECRET_CHARS: usize = 4;

static SECRETS: LazyLock<RwLock<echo::Known>> = LazyLock::new(RwLock::default);

/// Removes `secret`, in every form a server could echo it in, from every text scrubbed from
/// now on.
pub fn remember(secret: &str) {
    if secret.chars().count() < MIN_SECRET_CHARS {
        return;
    }
    SECRETS
        .write()
        .unwrap_or_else(PoisonError::into_inner)
        .learn(secret);
}

/// Remembers the password of `url` as typed, percent-decoded, and inside the Basic
/// authorization a client sends for it (a server that echoes headers echoes that).
pub fn remember_url(url: &str) {
    let start = url.find("://").map_or(0, |i| i + 3);
    let Some(span) = userinfo(url, start) else {
        return;
    };
    let info = url[span].trim_end_matches('@');
    let (user, password) = info.split_once(':').unwrap_or((info, ""));
    let basic =
        |u: &str, p: &str| base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
    for p in [password.to_string(), percent_decoded(password)] {
        remember(&p);
    }
    if !password.is_empty() {
        remember(&basic(user, password));
        remember(&basic(&percent_decoded(user), &percent_decoded(password)));
    }
}

/// A URL as given (it may not parse, it may lack its scheme) without a user or password,
/// its control characters escaped.
pub fn url(u: &str) -> String {
    let cut = match u.find("://") {
        Some(_) => without_userinfo(u),
        None => match userinfo(u, 0) {
            Some(span) => Cow::Owned(u[span.end..].to_string()),
            None => Cow::Borrowed(u),
        },
    };
    controls(&cut).into_owned()
}

/// Text from a server or a file, ready to show or store: URLs without user or password,
/// known secrets replaced, control characters escaped.
pub fn text(s: &str) -> String {
    let cut = without_userinfo(s);
    let out = SECRETS
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .masked(&cut);
    controls(&out).into_owned()
}

/// Whether a terminal could act on `c`: C0 and C1 controls, DEL, and the bidirectional
/// overrides that make text display in another order than it reads.
fn is_hostile(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every control character written out as `\u{1b}`, the way Rust spells it.
pub fn controls(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hostile) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| {
                if is_hostile(c) {
                    c.escape_unicode().to_string()
                } else {
                    c.to_string()
                }
            })
            .collect(),
    )
}

/// `s` with the user and password cut out of every `scheme://user:password@host` in it.
fn without_userinfo(s: &str) -> Cow<'_, str> {
    let mut cuts = Vec::new();
    let mut from = 0;
    while let Some(i) = s[from..].find("://") {
        let start = from + i + 3;
        match userinfo(s, start) {
            Some(span) => {
                from = span.end;
                cuts.push(span);
            }
            None => from = start,
        }
    }
    if cuts.is_empty() {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut kept = 0;
    for c in cuts {
        out.push_str(&s[kept..c.start]);
        kept = c.end;
    }
    out.push_str(&s[kept..]);
    Cow::Owned(out)
}

/// The user and password (with their `@`) of the URL whose authority starts at `start`.
/// A URL that does not parse is cut all the same: a password holding `/`, `?` or `#`
/// makes the part before `@` no host, and then the cut reaches the last `@`.
fn userinfo(s: &str, start: usize) -> Option<std::ops::Range<usize>> {
    let rest = &s[start..];
    let token = &rest[..rest.find(char::is_whitespace).unwrap_or(rest.len())];
    let authority_end = token.find(['/', '?', '#']).unwrap_or(token.len());
    let at = match token[..authority_end].rfind('@') {
        Some(at) => at,
        None if !is_host(&token[..authority_end]) => token.rfind('@')?,
        None => return None,
    };
    Some(start..start + at + 1)
}

/// `host`, `host:port`, `[v6]:port`: what may stand before a URL's path.
fn is_host(s: &str) -> bool {
    let (host, port) = match s.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((_, after)) => ("v6", after.strip_prefix(':').unwrap_or(after)),
            None => return false,
        },
        None => s.split_once(':').unwrap_or((s, "")),
    };
    let host_char = |c: char| c.is_alphanumeric() || "-._~%".contains(c);
    host.chars().all(host_char) && port.chars().all(|c| c.is_ascii_digit())
}

fn percent_decoded(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_user_and_password_even_when_they_do_not_parse() {
        for (given, shown) in [
            ("http://admin:pw@127.0.0.1:99999", "http://127.0.0.1:99999"),
            ("admin:pw@127.0.0.1:8", "127.0.0.1:8"),
            ("http://u:p/a?s#s@host:1/x", "http://host:1/x"),
            ("http://u@host/a", "http://host/a"),
            ("http://host/x?mail=a@b", "http://host/x?mail=a@b"),
            ("http://[::1]:9/x@y", "http://[::1]:9/x@y"),
            ("localhost:8080", "localhost:8080"),
            ("http://h\u{1b}]0;x\u{7}", "http://h\\u{1b}]0;x\\u{7}"),
        ] {
            assert_eq!(url(given), shown, "{given}");
        }
    }

    #[test]
    fn text_cuts_every_url_escapes_controls_and_replaces_secrets() {
        remember("tok-3e1f-unit-secret");
        remember("abc");
        let t = text(
            "GET http://a:b@h/x failed, then https://c:d@k:1: tok-3e1f-unit-secret abc\u{1b}[2J\u{9b}\u{202e}",
        );
        assert_eq!(
            t,
            "GET http://h/x failed, then https://k:1: *** abc\\u{1b}[2J\\u{9b}\\u{202e}"
        );
        assert_eq!(controls("plain ü"), Cow::Borrowed("plain ü"));
    }

    #[test]
    fn a_url_password_is_remembered_in_every_form_a_server_could_echo() {
        remember_url("http://ops:p%40ss-unit-77@127.0.0.1:1");
        let basic = base64::engine::general_purpose::STANDARD.encode("ops:p@ss-unit-77");
        let t = text(&format!("p%40ss-unit-77 p@ss-unit-77 Basic {basic}"));
        assert_eq!(t, "*** *** Basic ***");
    }
}
