// The inference-only program whose AArch64 size tools/size_check.sh measures
// (docs/performance.md, "Program size on a device"): load a library-format model, run it in Exact
// mode on 0.5s of the shape given, print its first output's first value. Built against the
// -fno-exceptions library, so failures come back as Status.
//   infer_om MODEL D0 D1 ...      (the shape of the model's one input)
#include <onemodel/runtime/session.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 3) return std::fprintf(stderr, "usage: infer_om MODEL D0 D1 ...\n"), 2;
  std::vector<int64_t> dims;
  int64_t n = 1;
  for (int i = 2; i < argc; ++i) dims.push_back(std::atoll(argv[i])), n *= dims.back();
  om::Session session;
  om::Status st = om::Session::try_load(argv[1], {om::ArithmeticMode::Exact}, &session);
  if (!st.is_ok()) return std::fprintf(stderr, "%s\n", st.message().c_str()), 1;
  std::vector<float> x(size_t(n), 0.5f);
  om::TensorView in;
  in.dims = dims.data();
  in.rank = dims.size();
  in.data = x.data();
  std::vector<om::TensorView> out(session.output_names().size());
  st = session.try_run(&in, 1, out.data(), out.size());
  if (!st.is_ok()) return std::fprintf(stderr, "%s\n", st.message().c_str()), 1;
  std::printf("%g\n", double(static_cast<const float*>(out[0].data)[0]));
  return 0;
}
