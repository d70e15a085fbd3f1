"""User script in the HF SageMaker DLC format (model_fn + predict_fn), served by the real toolkit; no torch needed.
A stand-in for an NLI cross-encoder behind a text-classification pipeline, answering in the pipeline's shape:
  {"inputs": [{"text": premise, "text_pair": hypothesis}, ...], "parameters": {"batch_size": N, ...}}
      -> [{"label": "entailment"|"neutral"|"contradiction", "score": float}, ...]   one per input, in order
  {"inputs": {"text": .., "text_pair": ..}}  -> {"label": .., "score": ..}      (a single dict, like the pipeline)
  {"inputs": "text"}                        -> [{"label": .., "score": ..}]    (like the pipeline)
  {"inputs": ["t1", "t2"]}                  -> [{..}, {..}]
  parameters.top_k = k (or null = all 3)  -> each input gets a list of k {"label","score"} sorted by score.
Labels are deterministic: text == text_pair -> entailment; otherwise chosen by a SHA-256 of (text, text_pair);
the three scores sum to 1. Env FAKE_DELAY_MS: sleep that long per request (simulates model time; the worker is
busy meanwhile, so WORKERS and FAKE_DELAY_MS bound the throughput). An input text "__raise__" makes predict_fn
raise, which the toolkit turns into HTTP 400."""
import hashlib
import json
import os
import time

LABELS = ("contradiction", "entailment", "neutral")


def model_fn(model_dir):
    return {"delay_s": float(os.environ.get("FAKE_DELAY_MS", "0") or 0) / 1000.0}


def _scores(text, pair):
    if pair is not None and text == pair:
        probs = {"entailment": 0.9, "neutral": 0.07, "contradiction": 0.03}
    else:
        h = hashlib.sha256(json.dumps([text, pair]).encode("utf-8")).digest()
        top = LABELS[h[0] % 3]
        hi = 0.5 + h[1] / 512.0            # 0.5 .. ~1.0
        rest = [l for l in LABELS if l != top]
        split = (1.0 - hi) * (0.25 + h[2] / 512.0)
        probs = {top: hi, rest[0]: split, rest[1]: 1.0 - hi - split}
    return sorted(({"label": l, "score": round(s, 6)} for l, s in probs.items()), key=lambda d: -d["score"])


def _one(item, top_k):
    if isinstance(item, dict):
        if "text" not in item:
            raise ValueError("each input object needs a 'text' (and optionally 'text_pair') field")
        text, pair = item["text"], item.get("text_pair")
    elif isinstance(item, str):
        text, pair = item, None
    else:
        raise ValueError(f"unsupported input type {type(item).__name__}")
    if text == "__raise__" or pair == "__raise__":   # lets a client provoke a model error (HTTP 400)
        raise ValueError("requested failure")
    ranked = _scores(text, pair)
    if top_k == "legacy":
        return ranked[0]
    return ranked if top_k is None else ranked[:top_k]


def predict_fn(data, model):
    if not isinstance(data, dict) or "inputs" not in data:
        raise ValueError("request body must be a JSON object with an 'inputs' field")
    inputs = data["inputs"]
    params = data.get("parameters") or {}
    bs = params.get("batch_size", 1)
    if not isinstance(bs, int) or isinstance(bs, bool) or bs < 1:
        raise ValueError(f"parameters.batch_size must be a positive integer, got {bs!r}")
    top_k = params["top_k"] if "top_k" in params else "legacy"
    if top_k not in ("legacy", None) and (not isinstance(top_k, int) or top_k < 1):
        raise ValueError(f"parameters.top_k must be a positive integer or null, got {top_k!r}")
    if model["delay_s"]:
        time.sleep(model["delay_s"])
    if isinstance(inputs, list):
        if not inputs:
            raise ValueError("'inputs' is an empty list")
        return [_one(x, top_k) for x in inputs]
    out = _one(inputs, top_k)
    # like the HF text-classification pipeline: a single string gives a one-element list, a single dict gives a dict
    return [out] if isinstance(inputs, str) and top_k == "legacy" else out
