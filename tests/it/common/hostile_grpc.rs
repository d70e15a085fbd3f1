//! A gRPC server that misbehaves on purpose, for the client's reply caps: `ModelInfer` is
//! answered in turn with a good reply, a message declared at 1 GiB whose bytes come until the
//! client stops reading, and a reply that never says how the call ended.

use axum::extract::Path;
use axum::response::IntoResponse;
use bytes::Bytes;
use http_body::Frame;
use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

pub struct Hostile {
    pub url: String,
    sent: Arc<AtomicU64>,
    _stop: tokio::sync::oneshot::Sender<()>,
}

static ZEROS: [u8; 1 << 20] = [0; 1 << 20];

/// Frames in order, then (`endless`) zeros until the stream is dropped.
struct Scripted {
    frames: VecDeque<Frame<Bytes>>,
    endless: Option<Arc<AtomicU64>>,
}

impl http_body::Body for Scripted {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        if let Some(f) = self.frames.pop_front() {
            return Poll::Ready(Some(Ok(f)));
        }
        Poll::Ready(self.endless.as_ref().map(|sent| {
            sent.fetch_add(ZEROS.len() as u64, Ordering::Relaxed);
            Ok(Frame::data(Bytes::from_static(&ZEROS)))
        }))
    }
}

fn reply(frames: Vec<Frame<Bytes>>, endless: Option<Arc<AtomicU64>>) -> axum::response::Response {
    let body = axum::body::Body::new(Scripted {
        frames: frames.into(),
        endless,
    });
    ([("content-type", "application/grpc")], body).into_response()
}

fn ok_trailers() -> Frame<Bytes> {
    let mut t = axum::http::HeaderMap::new();
    t.insert("grpc-status", "0".parse().unwrap());
    Frame::trailers(t)
}

impl Hostile {
    /// Bytes of the endless replies written so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }

    pub fn start() -> Hostile {
        use encbench_wire::grpc::messages as pb;
        let sent = Arc::new(AtomicU64::new(0));
        let calls = Arc::new(AtomicU64::new(0));
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let s = sent.clone();
        let handler = move |Path(method): Path<String>| {
            let (s, calls) = (s.clone(), calls.clone());
            async move {
                let framed = |m: &dyn Fn() -> Bytes| Frame::data(m());
                match method.as_str() {
                    "ServerLive" => reply(
                        vec![
                            framed(&|| {
                                encbench_wire::grpc::frame(&pb::ServerLiveResponse { live: true })
                            }),
                            ok_trailers(),
                        ],
                        None,
                    ),
                    "ModelReady" => reply(
                        vec![
                            framed(&|| {
                                encbench_wire::grpc::frame(&pb::ModelReadyResponse { ready: true })
                            }),
                            ok_trailers(),
                        ],
                        None,
                    ),
                    "ModelInfer" => {
                        let logits = pb::ModelInferResponse {
                            outputs: vec![pb::InferOutputTensor {
                                name: "logits".into(),
                                datatype: "FP32".into(),
                                shape: vec![1, 3],
                                contents: None,
                            }],
                            raw_output_contents: vec![Bytes::from(
                                [0f32, 4.0, 0.0]
                                    .iter()
                                    .flat_map(|x| x.to_le_bytes())
                                    .collect::<Vec<_>>(),
                            )],
                            ..pb::ModelInferResponse::default()
                        };
                        let good = Frame::data(encbench_wire::grpc::frame(&logits));
                        match calls.fetch_add(1, Ordering::Relaxed) % 3 {
                            0 => reply(vec![good, ok_trailers()], None),
                            // A message of 1 GiB, declared.
                            1 => reply(
                                vec![Frame::data(Bytes::from_static(&[0, 0x40, 0, 0, 0]))],
                                Some(s),
                            ),
                            _ => reply(vec![good], None),
                        }
                    }
                    _ => {
                        let mut t = axum::http::HeaderMap::new();
                        t.insert("grpc-status", "12".parse().unwrap());
                        reply(vec![Frame::trailers(t)], None)
                    }
                }
            }
        };
        std::thread::spawn(move || {
            crate::common::runtime().block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                url_tx
                    .send(format!("grpc://{}", listener.local_addr().unwrap()))
                    .unwrap();
                let app = axum::Router::new().route(
                    "/inference.GRPCInferenceService/{method}",
                    axum::routing::post(handler),
                );
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async move {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        Hostile {
            url: url_rx.recv().unwrap(),
            sent,
            _stop: stop,
        }
    }
}
