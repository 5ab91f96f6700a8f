// Run a library-format model the way device firmware does: no exceptions on the path (the
// Status-returning Session::try_load / try_prepare / try_run, om::try_load_npy), a fixed
// om::Store for tensors, and a plan made before the loop so run() allocates nothing.
// docs/deploying.md explains each step; this program also compiles in the -fno-exceptions
// variant of the library (make install-no-exceptions).
//
//   deploy_device MODEL.om INPUT.npy
#include <onemodel/onemodel.h>

#include <cinttypes>
#include <cstdio>

namespace {
int fail(const char* what, const om::Status& s) {
  std::fprintf(stderr, "deploy_device: %s: %s (%s)\n", what, s.message().c_str(), om::to_string(s.kind()));
  return 1;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: deploy_device MODEL.om INPUT.npy\n");
    return 2;
  }
  // Every tensor of this program lives in 64 KiB reserved once; running out is an OutOfMemory
  // status naming the request, never a heap allocation.
  om::Store store = om::Store::fixed(64 << 10);
  om::StoreGuard use_store(store);

  om::SessionOptions options;
  options.mode = om::ArithmeticMode::Exact;  // the same bits on x86-64 and AArch64
  om::Session session;
  if (om::Status s = om::Session::try_load(argv[1], options, &session); !s.is_ok()) return fail("loading the model", s);

  om::Tensor input;
  if (om::Status s = om::try_load_npy(argv[2], &input); !s.is_ok()) return fail("reading the input", s);

  om::TensorView in;
  in.name = "features";
  in.dtype = input.dtype();
  in.dims = input.shape().data();
  in.rank = input.shape().size();
  in.data = const_cast<void*>(input.storage().data());
  if (om::Status s = session.try_prepare(&in, 1); !s.is_ok()) return fail("planning", s);

  float logits[64 * 3];  // outputs are copied into the caller's buffer
  uint64_t hash = 1469598103934665603ULL;
  for (int frame = 0; frame < 10; ++frame) {
    om::TensorView out;
    out.data = logits;
    out.capacity = sizeof logits;
    if (om::Status s = session.try_run(&in, 1, &out, 1); !s.is_ok()) return fail("running", s);
    if (frame == 0) {
      const uint8_t* p = reinterpret_cast<const uint8_t*>(logits);
      for (size_t i = 0; i < size_t(out.numel()) * sizeof(float); ++i) hash = (hash ^ p[i]) * 1099511628211ULL;
      std::printf("output %s: %" PRId64 "x%" PRId64 ", first row %.4f %.4f %.4f\n", out.name, out.dims[0], out.dims[1], logits[0],
                  logits[1], logits[2]);
    }
  }
  const om::PlanStats st = session.last_plan_stats();
  std::printf("exact hash fnv1a=%016" PRIx64 "; arena %zu bytes; tensor store %zu of %zu bytes used\n", hash, st.arena_bytes,
              store.peak(), store.capacity());
  return 0;
}
