// The inference-only program whose stripped AArch64 size tools/size_check.sh measures
// (docs/performance.md): load a library-format model, run it on zeros, print one number.
#include <onemodel/runtime/session.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  om::Session session;
  om::Status st = om::Session::try_load(argv[1], {om::ArithmeticMode::Exact}, &session);
  if (!st.is_ok()) return std::fprintf(stderr, "%s\n", st.message().c_str()), 1;
  std::vector<float> x(64 * 4, 0.5f);
  const int64_t dims[2] = {64, 4};
  om::TensorView in;
  in.dims = dims;
  in.rank = 2;
  in.data = x.data();
  om::TensorView out;
  st = session.try_run(&in, 1, &out, 1);
  if (!st.is_ok()) return std::fprintf(stderr, "%s\n", st.message().c_str()), 1;
  std::printf("%g\n", double(static_cast<const float*>(out.data)[0]));
  return 0;
}
