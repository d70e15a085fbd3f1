//! Reply bodies read with a ceiling: a server that answers a gigabyte (or never stops) must
//! not make the client hold a gigabyte per request in flight. The request timeout runs
//! while a body is read, so an endless trickle ends as a timeout.

use super::ErrorKind;
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;

/// Largest reply body read from an endpoint; a bigger one is `BadResponse`. Far above any
/// encoder's answer (a batch of 256 embeddings of 4096 floats is 20 MiB of JSON) and above
/// SageMaker's own 6 MB.
pub const MAX_REPLY_BYTES: usize = 64 * 1024 * 1024;

/// What is read of an answer about the endpoint (readiness, model config, statistics).
pub const MAX_PROBE_BYTES: usize = 1024 * 1024;

/// Chunks gathered into one body; the usual single chunk is kept without a copy.
struct Gather {
    first: Option<Bytes>,
    rest: Option<BytesMut>,
    len: usize,
    /// What the body said it holds (within the limit): the room a second chunk reserves.
    room: usize,
}

impl Gather {
    fn with_room(declared: Option<u64>, limit: usize) -> Gather {
        Gather {
            first: None,
            rest: None,
            len: 0,
            room: declared.map_or(0, |n| n.min(limit as u64) as usize),
        }
    }

    /// Adds a chunk; `false`, keeping up to `limit` bytes, once the body has more.
    fn add(&mut self, chunk: Bytes, limit: usize) -> bool {
        let fits = self.len + chunk.len() <= limit;
        let chunk = if fits {
            chunk
        } else {
            chunk.slice(..limit - self.len)
        };
        self.len += chunk.len();
        if let Some(rest) = &mut self.rest {
            rest.extend_from_slice(&chunk);
        } else if let Some(first) = self.first.take() {
            let mut rest = BytesMut::with_capacity(self.room.max(self.len));
            rest.extend_from_slice(&first);
            rest.extend_from_slice(&chunk);
            self.rest = Some(rest);
        } else {
            self.first = Some(chunk);
        }
        fits
    }

    fn done(self) -> Bytes {
        match (self.first, self.rest) {
            (Some(f), _) => f,
            (None, Some(r)) => r.freeze(),
            (None, None) => Bytes::new(),
        }
    }
}

/// A hyper reply body to its end; `BadResponse` when it breaks off or outgrows `limit`.
pub(crate) async fn read_hyper(
    mut body: hyper::body::Incoming,
    limit: usize,
) -> Result<Bytes, ErrorKind> {
    let declared = http_body::Body::size_hint(&body).upper();
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(ErrorKind::BadResponse);
    }
    let mut got = Gather::with_room(declared, limit);
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|_| ErrorKind::BadResponse)?;
        if let Ok(data) = frame.into_data()
            && !got.add(data, limit)
        {
            return Err(ErrorKind::BadResponse);
        }
    }
    Ok(got.done())
}

/// A reqwest reply body: `Ok((body, false))` read to its end, `Ok((up to limit bytes,
/// true))` when it has more (the rest is left unread and the connection dropped; nothing
/// is read of a body that declares more).
pub async fn read_reqwest(
    mut resp: reqwest::Response,
    limit: usize,
) -> Result<(Bytes, bool), reqwest::Error> {
    let declared = resp.content_length();
    if declared.is_some_and(|n| n > limit as u64) {
        return Ok((Bytes::new(), true));
    }
    let mut got = Gather::with_room(declared, limit);
    while let Some(chunk) = resp.chunk().await? {
        if !got.add(chunk, limit) {
            return Ok((got.done(), true));
        }
    }
    Ok((got.done(), false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_gather_up_to_the_limit() {
        let mut g = Gather::with_room(None, 5);
        assert!(g.add(Bytes::from_static(b"ab"), 5));
        assert!(g.add(Bytes::from_static(b"cd"), 5));
        assert!(!g.add(Bytes::from_static(b"efg"), 5));
        assert_eq!(&g.done()[..], b"abcde");
        let mut one = Gather::with_room(Some(3), 5);
        assert!(one.add(Bytes::from_static(b"xyz"), 5));
        assert_eq!(&one.done()[..], b"xyz");
        assert_eq!(Gather::with_room(None, 5).done(), Bytes::new());
    }
}
