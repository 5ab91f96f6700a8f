// Run an ONNX file (exported by onemodel or another framework) on inputs from .npy files and
// write the outputs as .npy files.
//
//   run_onnx MODEL.onnx NAME=INPUT.npy [NAME=INPUT.npy ...] [--out DIR]
#include <onemodel/onemodel.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: run_onnx MODEL.onnx NAME=INPUT.npy [...] [--out DIR]\n");
    return 2;
  }
  std::filesystem::path out_dir = ".";
  std::vector<std::pair<std::string, om::Tensor>> inputs;
  try {
    for (int i = 2; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--out") && i + 1 < argc) {
        out_dir = argv[++i];
        continue;
      }
      const std::string spec = argv[i];
      const size_t eq = spec.find('=');
      if (eq == std::string::npos) {
        std::fprintf(stderr, "run_onnx: write inputs as NAME=FILE.npy, got '%s'\n", argv[i]);
        return 2;
      }
      inputs.emplace_back(spec.substr(0, eq), om::load_npy(spec.substr(eq + 1)));
    }
    om::Session session = om::Session::from_onnx_file(argv[1]);
    std::printf("%s: inputs", argv[1]);
    for (const auto& n : session.input_names()) std::printf(" %s", n.c_str());
    std::printf(", %zu nodes after the passes\n", session.graph().nodes.size());

    const std::vector<om::Tensor> outputs = session.run(inputs);
    std::filesystem::create_directories(out_dir);
    const std::vector<std::string> names = session.output_names();
    for (size_t i = 0; i < outputs.size(); ++i) {
      const std::string path = (out_dir / (names[i] + ".npy")).string();
      om::save_npy(path, outputs[i]);
      std::cout << names[i] << " -> " << path << "\n" << outputs[i] << "\n";
    }
  } catch (const om::Error& e) {
    std::fprintf(stderr, "run_onnx: %s\n", e.what());
    return 1;
  }
  return 0;
}
