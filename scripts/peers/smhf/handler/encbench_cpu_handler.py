"""multi-model-server handler = the real sagemaker-huggingface-inference-toolkit HuggingFaceHandlerService with ONE
override: get_device() returns -1 (CPU) instead of calling _is_gpu_available(), which raises "At least one of
TensorFlow 2.0 or PyTorch should be installed" when neither is installed (no CPU torch wheel is reachable here).
Everything else (finding model_fn/predict_fn in model/code/inference.py, JSON/CSV decoding, Accept handling,
mapping exceptions to HTTP 400) is the toolkit's own code. MMS loads the single class defined in this module."""
from sagemaker_huggingface_inference_toolkit.handler_service import HuggingFaceHandlerService


class EncbenchCpuHandlerService(HuggingFaceHandlerService):
    def get_device(self):
        return -1
