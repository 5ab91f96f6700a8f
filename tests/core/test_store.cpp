// The tensor store: growing and fixed stores, scopes, alignment, use-after-release detection
// and storage versions.
#include <doctest/doctest.h>

#include <string>

#include "onemodel/onemodel.h"
#include "test_util.h"

using testutil::contains;
using testutil::error_of;

namespace {

uintptr_t addr(const om::Tensor& t) { return reinterpret_cast<uintptr_t>(t.storage().data()); }

}  // namespace

TEST_CASE("a growing store adds blocks and tracks used and peak bytes") {
  om::Store store(1024);
  CHECK_FALSE(store.is_fixed());
  CHECK(store.used() == 0);
  om::StoreGuard guard(store);
  CHECK(&om::Store::current() == &store);
  std::vector<om::Tensor> keep;
  for (int i = 0; i < 10; ++i) keep.push_back(om::zeros({100}));  // 400 bytes -> 448 with alignment
  CHECK(store.used() >= 10 * 400);
  CHECK(store.capacity() >= store.used());
  CHECK(store.peak() == store.used());
  // A request larger than the block size gets a block of its own.
  om::Tensor big = om::zeros({10000});
  CHECK(store.capacity() >= 40000);
  for (const om::Tensor& t : keep) CHECK(t.to_vector<float>() == std::vector<float>(100, 0.0f));
}

TEST_CASE("the current store is restored when a StoreGuard ends") {
  om::Store& before = om::Store::current();
  {
    om::Store a(4096);
    om::StoreGuard ga(a);
    {
      om::Store b(4096);
      om::StoreGuard gb(b);
      CHECK(&om::Store::current() == &b);
    }
    CHECK(&om::Store::current() == &a);
  }
  CHECK(&om::Store::current() == &before);
}

TEST_CASE("a fixed store refuses to grow: OutOfMemory names the request and the capacity") {
  om::Store store = om::Store::fixed(1024);
  CHECK(store.is_fixed());
  CHECK(store.capacity() == 1024);
  om::StoreGuard guard(store);
  om::Tensor a = om::zeros({128});  // 512 bytes
  om::Error e = error_of([] { om::zeros({1000}); });
  CHECK(e.kind() == om::ErrorKind::OutOfMemory);
  INFO(e.what());
  CHECK(contains(e.what(), "4000"));  // the request in bytes
  CHECK(contains(e.what(), "1024"));  // the capacity
  CHECK(contains(e.what(), "Store::fixed"));
  // What fits still fits after the refusal, and a is untouched.
  om::Tensor b = om::ones({128});
  CHECK(b.to_vector<float>() == std::vector<float>(128, 1.0f));
  CHECK(a.to_vector<float>() == std::vector<float>(128, 0.0f));
  CHECK(error_of([] { om::zeros({1}); }).kind() == om::ErrorKind::OutOfMemory);
}

TEST_CASE("a fixed store is reusable after its scope releases") {
  om::Store store = om::Store::fixed(4096);
  om::StoreGuard guard(store);
  for (int step = 0; step < 100; ++step) {
    om::StoreScope scope;
    om::Tensor x = om::full({256}, double(step));  // 1024 bytes each
    om::Tensor y = om::add(x, x);
    om::Tensor z = om::mul(y, 0.5);
    CHECK(z.get<float>({3}) == float(step));
  }
  CHECK(store.used() == 0);
  CHECK(store.peak() <= 4096);
}

TEST_CASE("StoreScope releases everything allocated inside it and the memory is reused") {
  om::Store store(1 << 16);
  om::StoreGuard guard(store);
  om::Tensor outer = om::ones({10});
  const size_t used_before = store.used();
  uintptr_t first = 0;
  {
    om::StoreScope scope;
    om::Tensor t = om::zeros({1000});
    first = addr(t);
    CHECK(store.used() > used_before);
  }
  CHECK(store.used() == used_before);
  {
    om::StoreScope scope;
    om::Tensor t = om::zeros({1000});
    CHECK(addr(t) == first);  // the same bytes again: release is a mark reset
  }
  CHECK(outer.to_vector<float>() == std::vector<float>(10, 1.0f));
}

TEST_CASE("scopes nest; releasing the outer one releases the inner allocations too") {
  om::Store store(1 << 16);
  om::StoreGuard guard(store);
  om::Tensor in_outer, in_inner, after_inner;
  {
    om::StoreScope outer;
    in_outer = om::ones({4});
    {
      om::StoreScope inner;
      in_inner = om::ones({4});
    }
    // The outer scope's tensors survive the inner release; the inner one's do not.
    CHECK(in_outer.to_vector<float>() == std::vector<float>(4, 1.0f));
    CHECK(error_of([&] { in_inner.to_vector<float>(); }).kind() == om::ErrorKind::UseAfterRelease);
    after_inner = om::full({4}, 2.0);  // allocated in the outer scope after the inner ended
    CHECK(after_inner.to_vector<float>() == std::vector<float>(4, 2.0f));
  }
  CHECK(error_of([&] { in_outer.to_vector<float>(); }).kind() == om::ErrorKind::UseAfterRelease);
  CHECK(error_of([&] { after_inner.to_vector<float>(); }).kind() == om::ErrorKind::UseAfterRelease);
  CHECK(store.used() == 0);
}

TEST_CASE("every storage is 64-byte aligned whatever the sizes before it") {
  om::Store store(4096);
  om::StoreGuard guard(store);
  const om::DType dtypes[] = {om::DType::f32, om::DType::f16, om::DType::i64, om::DType::i32,
                              om::DType::i8,  om::DType::u8,  om::DType::boolean};
  std::vector<om::Tensor> keep;
  for (int n = 0; n < 300; n += 7) {
    for (om::DType dt : dtypes) {
      keep.push_back(om::zeros({n}, dt));
      CHECK(addr(keep.back()) % om::Store::kAlignment == 0);
    }
  }
  {
    om::StoreScope scope;
    om::Tensor odd = om::zeros({3}, om::DType::u8);
    om::Tensor next = om::zeros({5}, om::DType::u8);
    CHECK(addr(odd) % 64 == 0);
    CHECK(addr(next) % 64 == 0);
    CHECK(addr(next) != addr(odd));
  }
  // Storages of the default store and of a fixed store too.
  CHECK(addr(om::zeros({3}, om::DType::u8)) % 64 == 0);
  om::Store fixed = om::Store::fixed(1000);  // capacity rounded to the alignment
  om::StoreGuard g2(fixed);
  CHECK(addr(om::zeros({1}, om::DType::u8)) % 64 == 0);
  CHECK(addr(om::zeros({1}, om::DType::u8)) % 64 == 0);
}

TEST_CASE("a tensor used after its scope was released throws UseAfterRelease, never reads freed memory") {
  om::Store store(1 << 16);
  om::StoreGuard guard(store);
  om::Tensor dead, dead_view;
  {
    om::StoreScope scope;
    dead = om::arange(6, om::DType::f32).reshape({2, 3});
    dead_view = dead.t();
  }
  {
    // Reuse the released bytes so a read would observe someone else's data.
    om::StoreScope scope;
    om::Tensor other = om::full({6}, 42.0);
    auto expect_release = [](const om::Error& e) {
      INFO(e.what());
      CHECK(e.kind() == om::ErrorKind::UseAfterRelease);
      CHECK(contains(e.what(), "StoreScope"));
    };
    expect_release(error_of([&] { dead.to_vector<float>(); }));
    expect_release(error_of([&] { dead.get<float>({0, 0}); }));
    expect_release(error_of([&] { dead.item<float>(); }));
    expect_release(error_of([&] { dead.data<float>(); }));
    expect_release(error_of([&] { dead.storage(); }));
    expect_release(error_of([&] { dead.fill_(1.0); }));
    expect_release(error_of([&] { dead.set<float>({0, 0}, 1.0f); }));
    expect_release(error_of([&] { dead.mutable_data<float>(); }));
    expect_release(error_of([&] { dead.mutable_storage(); }));
    expect_release(error_of([&] { dead_view.to_vector<float>(); }));
    expect_release(error_of([&] { other.reshape({2, 3}).copy_from(dead); }));
    expect_release(error_of([&] { dead.copy_from(other.reshape({2, 3})); }));
    expect_release(error_of([&] { om::add(dead, dead); }));
    expect_release(error_of([&] { om::relu(dead); }));
    expect_release(error_of([&] { om::matmul(dead, dead_view); }));
    expect_release(error_of([&] { om::sum(dead); }));
    expect_release(error_of([&] { dead.contiguous(); }));
    expect_release(error_of([&] { dead.clone(); }));
    expect_release(error_of([&] { dead.to(om::DType::i64); }));
    expect_release(error_of([&] { om::cat({dead, dead}); }));
    expect_release(error_of([&] { dead.reshape({6}); }));
    CHECK(other.to_vector<float>() == std::vector<float>(6, 42.0f));
  }
}

TEST_CASE("tensors of a destroyed store report UseAfterRelease") {
  om::Tensor t;
  {
    om::Store store(4096);
    om::StoreGuard guard(store);
    t = om::ones({3});
  }
  CHECK(error_of([&] { t.to_vector<float>(); }).kind() == om::ErrorKind::UseAfterRelease);
}

TEST_CASE("backward over a graph whose scope was released is refused") {
  om::Store store(1 << 16);
  om::StoreGuard guard(store);
  om::Tensor w = om::full({3}, 2.0).requires_grad_();
  om::Tensor loss;
  {
    om::StoreScope scope;
    loss = om::sum(om::relu(om::mul(w, w)));
  }
  CHECK(error_of([&] { loss.backward(); }).kind() == om::ErrorKind::UseAfterRelease);
}

TEST_CASE("every mutation bumps the storage version; reads do not") {
  om::Tensor t = om::zeros({2, 3});
  const om::Storage s = t.storage();
  uint64_t v = s.version();
  auto bumped = [&] {
    const uint64_t now = s.version();
    const bool ok = now > v;
    v = now;
    return ok;
  };
  t.to_vector<float>();
  t.get<float>({1, 2});
  t.data<float>();
  t.storage();
  CHECK(s.version() == v);
  t.fill_(1.0);
  CHECK(bumped());
  t.set<float>({0, 1}, 5.0f);
  CHECK(bumped());
  t.mutable_data<float>()[0] = 3.0f;
  CHECK(bumped());
  t.mutable_storage();
  CHECK(bumped());
  t.copy_from(om::ones({2, 3}));
  CHECK(bumped());
  // A view writes into the same storage, so the shared version moves.
  om::Tensor row = t.select(0, 1);
  CHECK(row.storage() == s);
  row.fill_(7.0);
  CHECK(bumped());
  t.t().set<float>({2, 0}, 9.0f);
  CHECK(bumped());
  // Operators read without bumping, and clones have their own storage.
  om::Tensor c = t.clone();
  om::add(t, t);
  CHECK(s.version() == v);
  c.fill_(0.0);
  CHECK(s.version() == v);
  CHECK(t.get<float>({0, 2}) == 9.0f);
}
