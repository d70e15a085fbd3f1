//! The forms a server echoes a secret in, and finding them in its text. A gateway that
//! refuses a key quotes part of it (`invalid api key: SECRET123 (prefix sk-)`); one that
//! logs headers echoes them in base64 (`QXV0aG9yaXphdGlvbjog…`), percent-encoded
//! (`Bearer%20sk%2D…`) or escaped inside JSON. Each secret is remembered in each of those
//! forms, and any run of 8 or more bytes of a form found in a text is removed with as much
//! of the form as surrounds it there: a part of a secret that long is no ordinary word.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD_NO_PAD, URL_SAFE_NO_PAD};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt::Write as _;

/// The shortest part of a form that is removed where it appears.
pub(super) const ECHO_BYTES: usize = 8;

/// The secrets learnt so far, each in every form.
#[derive(Default)]
pub(super) struct Known {
    /// The secrets as given, to learn each once.
    secrets: Vec<String>,
    /// Every form of every secret.
    forms: Vec<Vec<u8>>,
    /// Forms shorter than `ECHO_BYTES`: removed only whole, longest first.
    short: Vec<String>,
    /// Each `ECHO_BYTES`-long window of every longer form: which form, and where in it.
    windows: HashMap<[u8; ECHO_BYTES], Vec<(usize, usize)>>,
}

impl Known {
    pub fn learn(&mut self, secret: &str) {
        if self.secrets.iter().any(|s| s == secret) {
            return;
        }
        self.secrets.push(secret.to_string());
        for form in forms(secret) {
            if self.forms.iter().any(|f| *f == form.as_bytes()) {
                continue;
            }
            if form.len() < ECHO_BYTES {
                self.short.push(form);
                continue;
            }
            let index = self.forms.len();
            for (at, w) in form.as_bytes().windows(ECHO_BYTES).enumerate() {
                let key: [u8; ECHO_BYTES] = w.try_into().expect("a window of ECHO_BYTES");
                self.windows.entry(key).or_default().push((index, at));
            }
            self.forms.push(form.into_bytes());
        }
        // Longest first: a secret that contains another is removed whole.
        self.short.sort_by_key(|k| std::cmp::Reverse(k.len()));
    }

    /// `text` with every echo of a secret replaced by `REDACTED`.
    pub fn masked<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let bytes = text.as_bytes();
        let mut spans: Vec<(usize, usize)> = Vec::new();
        if !self.windows.is_empty() {
            for i in 0..bytes.len().saturating_sub(ECHO_BYTES - 1) {
                let key: [u8; ECHO_BYTES] = bytes[i..i + ECHO_BYTES].try_into().expect("a window");
                for &(form, at) in self.windows.get(&key).into_iter().flatten() {
                    spans.push(grown(bytes, &self.forms[form], i, at));
                }
            }
        }
        for short in &self.short {
            spans.extend(
                text.match_indices(short.as_str())
                    .map(|(at, s)| (at, at + s.len())),
            );
        }
        if spans.is_empty() {
            return Cow::Borrowed(text);
        }
        spans.sort_unstable();
        // On character boundaries (a secret's bytes may begin or end inside a character of
        // the text around them), overlapping and touching spans as one.
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (start, end) in spans {
            let (start, end) = (floor_boundary(text, start), ceil_boundary(text, end));
            match merged.last_mut() {
                Some(last) if start <= last.1 => last.1 = last.1.max(end),
                _ => merged.push((start, end)),
            }
        }
        let mut out = String::with_capacity(text.len());
        let mut kept = 0;
        for (start, end) in merged {
            out.push_str(&text[kept..start]);
            out.push_str(super::REDACTED);
            kept = end;
        }
        out.push_str(&text[kept..]);
        Cow::Owned(out)
    }
}

/// The span of `text` that matches `form` around a window found at `i` (at `at` in the form).
fn grown(text: &[u8], form: &[u8], i: usize, at: usize) -> (usize, usize) {
    let before = (1..=i.min(at))
        .take_while(|&k| text[i - k] == form[at - k])
        .count();
    let (end_t, end_f) = (i + ECHO_BYTES, at + ECHO_BYTES);
    let after = (0..(text.len() - end_t).min(form.len() - end_f))
        .take_while(|&k| text[end_t + k] == form[end_f + k])
        .count();
    (i - before, end_t + after)
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// `secret` as sent, and as a server could echo it: in base64 (standard and URL-safe, at
/// each of the three offsets it can sit at inside a longer encoded string: the characters
/// that depend on its bytes alone), percent-encoded (every byte but letters and digits, in
/// upper and lower case hex), and escaped as a JSON string.
pub(super) fn forms(secret: &str) -> Vec<String> {
    let mut forms = vec![secret.to_string()];
    let bytes = secret.as_bytes();
    for engine in [STANDARD_NO_PAD, URL_SAFE_NO_PAD] {
        for offset in 0..3 {
            let mut shifted = vec![0; offset];
            shifted.extend_from_slice(bytes);
            let encoded = engine.encode(&shifted);
            // The first characters hold bits of what came before; those past the last whole
            // group of three bytes, bits of what comes after.
            let first = [0, 2, 3][offset];
            let last = shifted.len() / 3 * 4;
            if last > first {
                forms.push(encoded[first..last].to_string());
            }
        }
    }
    let mut upper = String::new();
    let mut lower = String::new();
    for &b in bytes {
        if b.is_ascii_alphanumeric() {
            upper.push(b as char);
            lower.push(b as char);
        } else {
            let _ = write!(upper, "%{b:02X}");
            let _ = write!(lower, "%{b:02x}");
        }
    }
    forms.extend([upper, lower]);
    if let Ok(json) = serde_json::to_string(secret) {
        forms.push(json[1..json.len() - 1].to_string());
    }
    forms.retain(|f| f.len() >= super::MIN_SECRET_CHARS);
    forms.dedup();
    forms
}

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::{STANDARD, URL_SAFE};
    use proptest::prelude::*;

    fn known(secret: &str) -> Known {
        let mut k = Known::default();
        k.learn(secret);
        k
    }

    /// Whether a run of `ECHO_BYTES` of any of `forms` is left in `out`.
    fn leaks_any(out: &str, forms: &[String]) -> bool {
        forms
            .iter()
            .flat_map(|f| f.as_bytes().windows(ECHO_BYTES))
            .any(|w| out.as_bytes().windows(ECHO_BYTES).any(|o| o == w))
    }

    /// Whether a run of `ECHO_BYTES` of `secret`, as itself or in one of its forms, is left.
    fn leaks(out: &str, secret: &str) -> bool {
        leaks_any(out, &forms(secret))
    }

    /// The characters of a base64 `encoded` string that the bytes `at..at + len` of what it
    /// encodes decide alone: character `j` holds bits of bytes 3(j/4) + 6(j%4)/8 through
    /// 3(j/4) + (6(j%4)+5)/8. Worked out apart from `forms`, to check it.
    fn decided_by(encoded: &str, at: usize, len: usize) -> String {
        let alone = |j: usize| {
            let (group, k) = (j / 4, j % 4);
            let first = 3 * group + 6 * k / 8;
            let last = 3 * group + (6 * k + 5) / 8;
            first >= at && last < at + len
        };
        (0..encoded.len())
            .filter(|&j| alone(j))
            .map(|j| encoded.as_bytes()[j] as char)
            .collect()
    }

    #[test]
    fn the_echoes_a_gateway_was_seen_to_send_are_removed() {
        let k = known("sk-SECRET123");
        assert_eq!(
            k.masked(r#"{"message": "invalid api key: SECRET123 (prefix sk-)"}"#),
            r#"{"message": "invalid api key: *** (prefix sk-)"}"#
        );
        assert_eq!(
            k.masked("auth=Bearer%20sk%2DSECRET123"),
            "auth=Bearer%20***"
        );
        assert_eq!(
            k.masked("auth=Bearer%20sk%2dSECRET123;"),
            "auth=Bearer%20***;"
        );
        let header = STANDARD.encode("Authorization: Bearer sk-SECRET123");
        let said = format!("headers: {header}");
        let out = k.masked(&said);
        assert!(out.starts_with("headers: QXV0aG9yaXphdGlvbjog") && out.contains("***"));
        assert!(!leaks(&out, "sk-SECRET123"), "{out}");
        // Escaped inside JSON, quotes and backslashes and all.
        let k = known(r#"pa"ss\word-77"#);
        let said = serde_json::json!({"detail": r#"bad key pa"ss\word-77"#}).to_string();
        assert_eq!(k.masked(&said), r#"{"detail":"bad key ***"}"#);
        // Around characters of several bytes, on their boundaries.
        let k = known("ünïcode-sëcret-42");
        assert_eq!(k.masked("«ünïcode-sëcret-42»"), "«***»");
        assert_eq!(k.masked("nothing here"), "nothing here");
    }

    proptest! {
        /// A secret echoed whole or in part (8 bytes or more), in base64 (standard and
        /// URL-safe, inside a longer string at any offset), percent-encoded or in JSON:
        /// nothing of it is left.
        #[test]
        fn a_secret_echoed_in_any_form_leaves_nothing(
            secret in "[A-Za-z0-9._~+/=-]{8,40}",
            prefix in "[ -~]{0,12}",
            suffix in "[ -~]{0,12}",
            cut in 0usize..32,
        ) {
            let k = known(&secret);
            let part = &secret[cut.min(secret.len() - ECHO_BYTES)..];
            let whole = format!("{prefix}{secret}{suffix}");
            let pct = |s: &str| {
                percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
                    .to_string()
            };
            let json = serde_json::to_string(&whole).unwrap();
            // What of the secret each echo holds, worked out with the libraries alone.
            let plain = vec![secret.clone()];
            let echoes = [
                (whole.clone(), plain.clone()),
                (format!("{prefix}{part}{suffix}"), vec![part.to_string()]),
                (pct(&whole), vec![pct(&secret)]),
                (json, vec![serde_json::to_string(&secret).unwrap().trim_matches('"').to_string()]),
                (STANDARD.encode(&whole), vec![decided_by(&STANDARD.encode(&whole), prefix.len(), secret.len())]),
                (URL_SAFE.encode(&whole), vec![decided_by(&URL_SAFE.encode(&whole), prefix.len(), secret.len())]),
            ];
            for (echo, held) in echoes {
                let out = k.masked(&echo);
                prop_assert!(!leaks_any(&out, &held), "{echo} -> {out}");
                prop_assert!(!leaks(&out, &secret), "{echo} -> {out}");
            }
        }
    }
}
