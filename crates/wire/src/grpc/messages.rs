//! The messages of the KServe v2 gRPC service (`inference.GRPCInferenceService`), as the
//! protocol's public definition gives them: KServe's `grpc_predict_v2.proto`, and Triton's
//! `grpc_service.proto` for the extensions it adds (statistics, the repository index).
//! Field numbers and names are the interface; only the fields this project reads or sends
//! are declared, and protobuf skips the others on decoding. Checked field by field against
//! the descriptors of `tritonclient` 2.51 and `kserve` 0.21 (scripts/peers/README.md).

use bytes::Bytes;

/// The service's path prefix: `/inference.GRPCInferenceService/ModelInfer` and so on.
pub const SERVICE: &str = "/inference.GRPCInferenceService/";

#[derive(Clone, PartialEq, prost::Message)]
pub struct ServerLiveRequest {}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ServerLiveResponse {
    #[prost(bool, tag = "1")]
    pub live: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ServerReadyRequest {}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ServerReadyResponse {
    #[prost(bool, tag = "1")]
    pub ready: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ServerMetadataRequest {}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ServerMetadataResponse {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(string, repeated, tag = "3")]
    pub extensions: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelReadyRequest {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelReadyResponse {
    #[prost(bool, tag = "1")]
    pub ready: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelMetadataRequest {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelMetadataResponse {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, repeated, tag = "2")]
    pub versions: Vec<String>,
    #[prost(string, tag = "3")]
    pub platform: String,
    #[prost(message, repeated, tag = "4")]
    pub inputs: Vec<TensorMetadata>,
    #[prost(message, repeated, tag = "5")]
    pub outputs: Vec<TensorMetadata>,
}

/// `ModelMetadataResponse.TensorMetadata`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct TensorMetadata {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub datatype: String,
    #[prost(int64, repeated, tag = "3")]
    pub shape: Vec<i64>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelInferRequest {
    #[prost(string, tag = "1")]
    pub model_name: String,
    #[prost(string, tag = "2")]
    pub model_version: String,
    #[prost(string, tag = "3")]
    pub id: String,
    #[prost(message, repeated, tag = "5")]
    pub inputs: Vec<InferInputTensor>,
    #[prost(message, repeated, tag = "6")]
    pub outputs: Vec<InferRequestedOutputTensor>,
    /// Each input's values, in the order of `inputs`, as raw little-endian bytes (a BYTES
    /// element as a 4-byte length and its bytes): the gRPC form of the binary extension.
    #[prost(bytes = "bytes", repeated, tag = "7")]
    pub raw_input_contents: Vec<Bytes>,
}

/// `ModelInferRequest.InferInputTensor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InferInputTensor {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub datatype: String,
    #[prost(int64, repeated, tag = "3")]
    pub shape: Vec<i64>,
    #[prost(message, optional, tag = "5")]
    pub contents: Option<InferTensorContents>,
}

/// `ModelInferRequest.InferRequestedOutputTensor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InferRequestedOutputTensor {
    #[prost(string, tag = "1")]
    pub name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelInferResponse {
    #[prost(string, tag = "1")]
    pub model_name: String,
    #[prost(string, tag = "2")]
    pub model_version: String,
    #[prost(string, tag = "3")]
    pub id: String,
    #[prost(message, repeated, tag = "5")]
    pub outputs: Vec<InferOutputTensor>,
    /// Outputs sent raw, in the order of `outputs` (Triton's way); an output sent in its
    /// `contents` instead (KServe's Python server) has no entry here.
    #[prost(bytes = "bytes", repeated, tag = "6")]
    pub raw_output_contents: Vec<Bytes>,
}

/// `ModelInferResponse.InferOutputTensor`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InferOutputTensor {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub datatype: String,
    #[prost(int64, repeated, tag = "3")]
    pub shape: Vec<i64>,
    #[prost(message, optional, tag = "5")]
    pub contents: Option<InferTensorContents>,
}

/// Typed values of a tensor not sent raw.
#[derive(Clone, PartialEq, prost::Message)]
pub struct InferTensorContents {
    #[prost(int32, repeated, tag = "2")]
    pub int_contents: Vec<i32>,
    #[prost(int64, repeated, tag = "3")]
    pub int64_contents: Vec<i64>,
    #[prost(float, repeated, tag = "6")]
    pub fp32_contents: Vec<f32>,
    #[prost(double, repeated, tag = "7")]
    pub fp64_contents: Vec<f64>,
    #[prost(bytes = "bytes", repeated, tag = "8")]
    pub bytes_contents: Vec<Bytes>,
}

/// Triton's statistics extension: `name` empty asks for every model.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelStatisticsRequest {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelStatisticsResponse {
    #[prost(message, repeated, tag = "1")]
    pub model_stats: Vec<ModelStatistics>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelStatistics {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(uint64, tag = "4")]
    pub inference_count: u64,
    #[prost(uint64, tag = "5")]
    pub execution_count: u64,
    #[prost(message, optional, tag = "6")]
    pub inference_stats: Option<InferStatistics>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct InferStatistics {
    #[prost(message, optional, tag = "1")]
    pub success: Option<StatisticDuration>,
    #[prost(message, optional, tag = "2")]
    pub fail: Option<StatisticDuration>,
    #[prost(message, optional, tag = "3")]
    pub queue: Option<StatisticDuration>,
    #[prost(message, optional, tag = "4")]
    pub compute_input: Option<StatisticDuration>,
    #[prost(message, optional, tag = "5")]
    pub compute_infer: Option<StatisticDuration>,
    #[prost(message, optional, tag = "6")]
    pub compute_output: Option<StatisticDuration>,
}

#[derive(Clone, Copy, PartialEq, prost::Message)]
pub struct StatisticDuration {
    #[prost(uint64, tag = "1")]
    pub count: u64,
    #[prost(uint64, tag = "2")]
    pub ns: u64,
}

/// Triton's repository extension: the models it has, `ready` asking for the loaded only.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RepositoryIndexRequest {
    #[prost(string, tag = "1")]
    pub repository_name: String,
    #[prost(bool, tag = "2")]
    pub ready: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct RepositoryIndexResponse {
    #[prost(message, repeated, tag = "1")]
    pub models: Vec<ModelIndex>,
}

/// `RepositoryIndexResponse.ModelIndex`.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ModelIndex {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(string, tag = "3")]
    pub state: String,
    #[prost(string, tag = "4")]
    pub reason: String,
}
