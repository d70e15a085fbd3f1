//! How a call ends: the status codes of gRPC, `grpc-message`'s percent-encoding, and the
//! `grpc-timeout` header that carries a call's deadline.

use std::time::Duration;

/// A gRPC status code (the numbers are the protocol's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Code(pub u32);

impl Code {
    pub const OK: Code = Code(0);
    pub const CANCELLED: Code = Code(1);
    pub const UNKNOWN: Code = Code(2);
    pub const INVALID_ARGUMENT: Code = Code(3);
    pub const DEADLINE_EXCEEDED: Code = Code(4);
    pub const NOT_FOUND: Code = Code(5);
    pub const PERMISSION_DENIED: Code = Code(7);
    pub const RESOURCE_EXHAUSTED: Code = Code(8);
    pub const FAILED_PRECONDITION: Code = Code(9);
    pub const OUT_OF_RANGE: Code = Code(11);
    pub const UNIMPLEMENTED: Code = Code(12);
    pub const INTERNAL: Code = Code(13);
    pub const UNAVAILABLE: Code = Code(14);
    pub const DATA_LOSS: Code = Code(15);
    pub const UNAUTHENTICATED: Code = Code(16);

    const NAMES: [&'static str; 17] = [
        "OK",
        "CANCELLED",
        "UNKNOWN",
        "INVALID_ARGUMENT",
        "DEADLINE_EXCEEDED",
        "NOT_FOUND",
        "ALREADY_EXISTS",
        "PERMISSION_DENIED",
        "RESOURCE_EXHAUSTED",
        "FAILED_PRECONDITION",
        "ABORTED",
        "OUT_OF_RANGE",
        "UNIMPLEMENTED",
        "INTERNAL",
        "UNAVAILABLE",
        "DATA_LOSS",
        "UNAUTHENTICATED",
    ];

    /// `NOT_FOUND`, as the protocol names it; a code past the known ones by its number.
    pub fn name(self) -> String {
        Self::NAMES
            .get(self.0 as usize)
            .map_or_else(|| format!("code {}", self.0), |n| (*n).to_string())
    }

    /// A `grpc-status` value; an unreadable one is UNKNOWN, as the protocol says.
    pub fn parse(value: &[u8]) -> Code {
        std::str::from_utf8(value)
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(Code::UNKNOWN, Code)
    }

    /// What a gRPC client takes a non-200 HTTP answer for (a proxy's, or a server that is not
    /// gRPC): the protocol's own table.
    pub fn of_http(status: u16) -> Code {
        match status {
            400 => Code::INTERNAL,
            401 => Code::UNAUTHENTICATED,
            403 => Code::PERMISSION_DENIED,
            404 => Code::UNIMPLEMENTED,
            429 | 502..=504 => Code::UNAVAILABLE,
            _ => Code::UNKNOWN,
        }
    }
}

/// `grpc-message` is percent-encoded UTF-8; a malformed escape is kept as it came.
pub fn decode_message(value: &[u8]) -> String {
    percent_encoding::percent_decode(value)
        .decode_utf8_lossy()
        .into_owned()
}

/// The bytes `grpc-message` escapes: all but printable ASCII, and `%` itself.
const ESCAPED: &percent_encoding::AsciiSet = &percent_encoding::CONTROLS.add(b'%');

/// `message` as `grpc-message` carries it: printable ASCII but `%` as is, the rest escaped.
pub fn encode_message(message: &str) -> String {
    percent_encoding::utf8_percent_encode(message, ESCAPED).to_string()
}

/// A deadline as `grpc-timeout` carries it: at most eight digits and a unit, the finest
/// unit that fits (rounded up, so the server never sees a deadline earlier than the client's).
pub fn timeout_header(d: Duration) -> String {
    let nanos = d.as_nanos();
    let units: [(u128, char); 6] = [
        (1, 'n'),
        (1_000, 'u'),
        (1_000_000, 'm'),
        (1_000_000_000, 'S'),
        (60_000_000_000, 'M'),
        (3_600_000_000_000, 'H'),
    ];
    for (per, unit) in units {
        let n = nanos.div_ceil(per);
        if n < 100_000_000 {
            return format!("{n}{unit}");
        }
    }
    "99999999H".into()
}

/// A `grpc-timeout` value read back (the reference endpoint's side).
pub fn parse_timeout(value: &str) -> Option<Duration> {
    let (digits, unit) = value.split_at(value.len().checked_sub(1)?);
    if digits.is_empty() || digits.len() > 8 {
        return None;
    }
    let n: u64 = digits.parse().ok()?;
    Some(match unit {
        "n" => Duration::from_nanos(n),
        "u" => Duration::from_micros(n),
        "m" => Duration::from_millis(n),
        "S" => Duration::from_secs(n),
        "M" => Duration::from_secs(n * 60),
        "H" => Duration::from_secs(n * 3600),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_have_the_protocols_names() {
        assert_eq!(Code::parse(b"14").name(), "UNAVAILABLE");
        assert_eq!(Code::parse(b"3"), Code::INVALID_ARGUMENT);
        assert_eq!(Code::parse(b"x"), Code::UNKNOWN);
        assert_eq!(Code(99).name(), "code 99");
        assert_eq!(Code::of_http(503), Code::UNAVAILABLE);
        assert_eq!(Code::of_http(404), Code::UNIMPLEMENTED);
    }

    #[test]
    fn messages_round_trip_through_percent_encoding() {
        let m = "unexpected input 'ïd' 100% \n";
        let e = encode_message(m);
        assert_eq!(e, "unexpected input '%C3%AFd' 100%25 %0A");
        assert_eq!(decode_message(e.as_bytes()), m);
        assert_eq!(decode_message(b"50%zz"), "50%zz");
    }

    #[test]
    fn deadlines_travel_in_eight_digits_never_earlier() {
        assert_eq!(timeout_header(Duration::from_secs(70)), "70000000u");
        assert_eq!(timeout_header(Duration::from_millis(5)), "5000000n");
        assert_eq!(timeout_header(Duration::from_mins(10)), "600000m");
        assert_eq!(timeout_header(Duration::from_nanos(100_000_001)), "100001u");
        for d in [1, 999, 123_456_789, 70_000_000_000, 86_400_000_000_000] {
            let d = Duration::from_nanos(d);
            let back = parse_timeout(&timeout_header(d)).unwrap();
            let over = back.checked_sub(d).expect("never earlier");
            assert!(over <= d / 10_000, "{d:?}");
        }
        assert_eq!(parse_timeout("123456789m"), None);
        assert_eq!(parse_timeout("5x"), None);
    }
}
