//! A hostile HTTP/1.1 server on 127.0.0.1: each request is answered as a test's handler
//! says, including bodies no honest server sends (endless, a gigabyte declared, a trickle).
//! Plain std threads, one per connection; the bytes it managed to write are counted, so a
//! test can tell how much of a body the client read before it stopped.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// One request as the handler sees it: header names lowercased.
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    /// Requests this server received before this one (all connections).
    pub index: u64,
}

impl Request {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }
}

pub enum Reply {
    /// A whole answer with a Content-Length.
    Fixed {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A chunked 200 that never ends.
    Endless,
    /// A 200 that declares this many bytes and streams zeros until the client leaves.
    Declared(u64),
    /// A 200 whose chunked body comes one byte per 100 ms, forever.
    Trickle,
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Reply {
        Reply::Fixed {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.as_bytes().to_vec(),
        }
    }

    #[must_use]
    pub fn with_header(mut self, name: &str, value: &str) -> Reply {
        if let Reply::Fixed { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }
}

type Handler = dyn Fn(&Request) -> Reply + Send + Sync;

pub struct Hostile {
    pub url: String,
    written: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    addr: std::net::SocketAddr,
}

impl Hostile {
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let written = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicU64::new(0));
        let handler: Arc<Handler> = Arc::new(handler);
        let (w, s) = (written.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if s.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (h, w, c) = (handler.clone(), w.clone(), count.clone());
                std::thread::spawn(move || serve(conn, &*h, &w, &c));
            }
        });
        Hostile {
            url: format!("http://{addr}"),
            written,
            stop,
            addr,
        }
    }

    /// Bytes of replies written so far, headers included.
    pub fn written(&self) -> u64 {
        self.written.load(Ordering::Relaxed)
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

fn serve(conn: TcpStream, handler: &Handler, written: &AtomicU64, count: &AtomicU64) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(30)));
    let mut reader = BufReader::new(conn.try_clone().unwrap());
    let mut out = conn;
    while let Some(mut req) = read_request(&mut reader) {
        req.index = count.fetch_add(1, Ordering::Relaxed);
        if write_reply(&mut out, handler(&req), written).is_err() {
            return;
        }
    }
}

fn read_request(r: &mut BufReader<TcpStream>) -> Option<Request> {
    let mut line = String::new();
    r.read_line(&mut line).ok().filter(|&n| n > 0)?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut headers = HashMap::new();
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok().filter(|&n| n > 0)?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.insert(k.trim().to_ascii_lowercase(), v.trim().to_string());
        }
    }
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    Some(Request {
        method,
        path,
        headers,
        body,
        index: 0,
    })
}

fn write_reply(out: &mut TcpStream, reply: Reply, written: &AtomicU64) -> std::io::Result<()> {
    let mut send = |bytes: &[u8]| {
        out.write_all(bytes)?;
        written.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        Ok::<_, std::io::Error>(())
    };
    let chunked =
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
    match reply {
        Reply::Fixed {
            status,
            headers,
            body,
        } => {
            let mut head = format!("HTTP/1.1 {status} X\r\ncontent-length: {}\r\n", body.len());
            for (k, v) in headers {
                let _ = write!(head, "{k}: {v}\r\n");
            }
            head.push_str("\r\n");
            send(head.as_bytes())?;
            send(&body)
        }
        Reply::Endless => {
            send(chunked.as_bytes())?;
            let chunk = vec![b' '; 64 * 1024];
            let size = format!("{:x}\r\n", chunk.len());
            loop {
                send(size.as_bytes())?;
                send(&chunk)?;
                send(b"\r\n")?;
            }
        }
        Reply::Declared(n) => {
            send(format!("HTTP/1.1 200 OK\r\ncontent-length: {n}\r\n\r\n").as_bytes())?;
            let chunk = vec![b'0'; 64 * 1024];
            let mut left = n;
            while left > 0 {
                let k = left.min(chunk.len() as u64) as usize;
                send(&chunk[..k])?;
                left -= k as u64;
            }
            Ok(())
        }
        Reply::Trickle => {
            send(chunked.as_bytes())?;
            loop {
                send(b"1\r\n \r\n")?;
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}
